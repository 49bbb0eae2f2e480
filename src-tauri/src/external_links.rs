//! Links out of the app: the window only ever shows the app's own pages; a web or mail link a
//! page follows (a link in model output, `window.open`) goes to the system's browser or mail app.

use tauri::Url;

/// Where a navigation of the main window goes.
#[derive(Debug, PartialEq, Eq)]
pub enum Destination {
    /// The app's own pages (the bundled UI, the dev server, the startup error page).
    App,
    /// A web or mail address: opened outside, never in the window.
    System,
    /// Anything else (`file:`, `javascript:`, unknown schemes): refused.
    Refused,
}

/// Classifies `url`; `dev_url` is the dev server's address in a `tauri dev` run.
pub fn destination(url: &Url, dev_url: Option<&Url>) -> Destination {
    // Tauri serves the UI as tauri://localhost (Linux, macOS) or http://tauri.localhost (Windows).
    let own_host = matches!(url.host_str(), Some("tauri.localhost"));
    let dev = dev_url.is_some_and(|dev| dev.origin() == url.origin());
    match url.scheme() {
        "tauri" | "data" | "about" => Destination::App,
        "http" | "https" if own_host || dev => Destination::App,
        "http" | "https" | "mailto" => Destination::System,
        _ => Destination::Refused,
    }
}

/// The navigation handler: lets the app's own pages load and sends web and mail links to the
/// system instead. Returns whether the window may navigate.
pub fn allow_navigation(url: &Url, dev_url: Option<&Url>) -> bool {
    tracing::debug!(scheme = url.scheme(), host = url.host_str(), "navigation");
    match destination(url, dev_url) {
        Destination::App => true,
        Destination::System => {
            open_outside(url);
            false
        }
        Destination::Refused => {
            tracing::warn!(scheme = url.scheme(), "refused a navigation to an unsupported address");
            false
        }
    }
}

/// The new-window handler (`target="_blank"`, `window.open`): no second webview is ever made;
/// a web or mail link opens in the system's browser or mail app.
pub fn open_new_window(url: &Url) {
    tracing::debug!(scheme = url.scheme(), host = url.host_str(), "new window requested");
    if destination(url, None) == Destination::System {
        open_outside(url);
    } else {
        tracing::warn!(scheme = url.scheme(), "refused to open a window");
    }
}

fn open_outside(url: &Url) {
    // The host only: a link's path and query may carry what the user would not want in a log.
    tracing::info!(
        scheme = url.scheme(),
        host = url.host_str(),
        "opening a link in the system's browser"
    );
    let target = url.to_string();
    // `open` waits up to a quarter second per launcher it tries; the handlers run on the UI thread.
    std::thread::spawn(move || {
        // It starts the system's handler (xdg-open, gio, `open`, ShellExecute) detached.
        if let Err(error) = open::that_detached(&target) {
            tracing::warn!(%error, "cannot open a link in the system's browser");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `None` when a test's own address does not parse.
    fn at(url: &str, dev: Option<&str>) -> Option<Destination> {
        let dev = match dev {
            Some(d) => Some(Url::parse(d).ok()?),
            None => None,
        };
        Some(destination(&Url::parse(url).ok()?, dev.as_ref()))
    }

    #[test]
    fn the_apps_own_pages_stay_in_the_window() {
        assert_eq!(at("tauri://localhost/#chat/web", None), Some(Destination::App));
        assert_eq!(at("http://tauri.localhost/index.html#inbox", None), Some(Destination::App));
        assert_eq!(at("data:text/html,<p>engine failed</p>", None), Some(Destination::App));
        assert_eq!(at("about:blank", None), Some(Destination::App));
        assert_eq!(
            at("http://localhost:5173/#settings", Some("http://localhost:5173/")),
            Some(Destination::App)
        );
    }

    #[test]
    fn web_and_mail_links_go_to_the_system() {
        assert_eq!(at("https://example.com/docs", None), Some(Destination::System));
        assert_eq!(at("http://localhost:5173/", None), Some(Destination::System));
        assert_eq!(
            at("http://localhost:8080/", Some("http://localhost:5173/")),
            Some(Destination::System)
        );
        assert_eq!(at("mailto:dev@example.com", None), Some(Destination::System));
        // A look-alike host is not the app.
        assert_eq!(at("https://tauri.localhost.example.com/", None), Some(Destination::System));
    }

    #[test]
    fn other_schemes_are_refused() {
        assert_eq!(at("file:///etc/passwd", None), Some(Destination::Refused));
        assert_eq!(at("javascript:alert(1)", None), Some(Destination::Refused));
        assert_eq!(at("skald://inbox", None), Some(Destination::Refused));
    }
}
