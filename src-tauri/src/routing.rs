//! Delivering `skald://` links from a launch (this one, or a second one forwarded by
//! single-instance) to the window. Links only navigate; they never decide or run anything.

use skald_core::Engine;
use skald_links::LinkTarget;
use tauri::{AppHandle, Manager as _};

use crate::navigation::Navigator;

/// A second launch: bring the window forward and follow the links it was given.
pub fn second_instance(app: &AppHandle, args: &[String]) {
    tracing::info!(args = args.len(), "a second launch was forwarded here");
    app.state::<Navigator>().open(app, None);
    open_links(app, args.iter().map(String::as_str));
}

/// Routes the window to each `skald:` link among `args` (the first is the program).
pub fn open_links<'a>(app: &AppHandle, args: impl IntoIterator<Item = &'a str>) {
    for link in skald_links::links_in_args(args) {
        let target = skald_links::parse(link);
        tracing::info!(?target, "deep link");
        let app = app.clone();
        tauri::async_runtime::spawn(async move {
            let waiting = match &target {
                LinkTarget::Approval(call) => approval_is_waiting(&app, *call).await,
                _ => false,
            };
            app.state::<Navigator>().open(&app, Some(&target.hash(waiting)));
        });
    }
}

/// Whether the inbox holds the call: a forged or stale link then says so instead of routing.
async fn approval_is_waiting(app: &AppHandle, call: i64) -> bool {
    let Some(engine) = app.try_state::<Engine>() else { return false };
    match engine.inbox().await {
        Ok(inbox) => inbox.items.iter().any(|item| item.tool_call_id == call),
        Err(error) => {
            tracing::warn!("cannot read the inbox for a link: {error}");
            false
        }
    }
}
