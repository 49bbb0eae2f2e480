//! `Caller`: which surface called an operation, as the shell (never the params) says.

/// The surface an operation came from. Shells set it; an operation that records who acted
/// (`decide`, `answer_question`) takes the name from here, so a page cannot claim to be the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// The desktop app's window.
    App,
    /// The desktop tray menu.
    Tray,
    /// A native notification's action.
    Notification,
    /// The web UI or any client of `skald serve`.
    Web,
    /// The `skald` command line.
    Cli,
}

impl Caller {
    /// The name recorded with a decision or an answer (`decided_by`).
    pub fn surface(self) -> &'static str {
        match self {
            Caller::App => "app",
            Caller::Tray => "tray",
            Caller::Notification => "notification",
            Caller::Web => "web",
            Caller::Cli => "cli",
        }
    }
}
