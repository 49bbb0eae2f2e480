//! Approval policy: rules (first match by priority wins), session bypasses and the gate verdict.

pub mod bypass;
pub mod diff;
pub mod gate;
pub mod named_paths;
pub mod protected;
pub mod read_filter;
pub mod rules;
mod word_diff;

pub use bypass::{BypassScope, ScopeMismatch};
pub use rules::{Action, Rule, RuleSet};

/// What the gate decided for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Blocked by policy; never bypassable. The reason reaches the model.
    Deny(String),
    /// A human must decide.
    Require,
}

/// The message the model sees when a human rejects a call.
pub fn rejection_message(note: Option<&str>) -> String {
    match note.map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) => format!("User rejected this tool call. Reason: {n}"),
        None => "User rejected this tool call.".to_string(),
    }
}
