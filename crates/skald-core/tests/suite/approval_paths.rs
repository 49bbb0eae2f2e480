//! An approval names the file a call really acts on: a read outside the working directory asked
//! for through `..` or through a link inside the project is shown by the path it resolves to.

use serde_json::json;
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_testkit::Reply;

use crate::suite::turn::Rig;

/// Runs a turn whose model reads `path` (which needs approval) and returns the inbox item.
async fn parked_read(rig: &Rig, path: &str) -> skald_protocol::InboxItem {
    rig.fake.push(Reply::tool_call("read_file", &json!({ "path": path }).to_string()));
    let opts = ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let receipt = rig.engine.send_message("test", "read it", opts).await.unwrap();
    let outcome = rig.engine.wait_turn(receipt.session_id).await.unwrap();
    assert!(matches!(outcome, TurnOutcome::Parked { .. }), "{outcome:?}");
    let mut items = rig.engine.inbox().await.unwrap().items;
    assert_eq!(items.len(), 1, "{items:?}");
    items.remove(0)
}

#[tokio::test]
async fn a_read_through_a_link_in_the_project_is_asked_for_by_the_links_target() {
    let rig = Rig::new("").await;
    let root = std::fs::canonicalize(rig.dir.path()).unwrap();
    let private = root.join("private");
    std::fs::create_dir_all(&private).unwrap();
    std::fs::write(private.join("id_key"), "KEY\n").unwrap();
    std::os::unix::fs::symlink(&private, rig.work.join("docs")).unwrap();
    let item = parked_read(&rig, "docs/id_key").await;
    let real = private.join("id_key").display().to_string();
    assert_eq!(item.path.as_deref(), Some(real.as_str()));
    assert!(item.summary.starts_with(&format!("read_file {real} ")), "{}", item.summary);
}

#[tokio::test]
async fn a_read_through_dot_dot_is_asked_for_by_the_path_it_reaches() {
    let rig = Rig::new("").await;
    let root = std::fs::canonicalize(rig.dir.path()).unwrap();
    std::fs::write(root.join("outside.txt"), "x\n").unwrap();
    let item = parked_read(&rig, "../outside.txt").await;
    let real = root.join("outside.txt").display().to_string();
    assert_eq!(item.path.as_deref(), Some(real.as_str()));
    assert!(item.summary.contains(&real), "{}", item.summary);
}
