//! What the model sees: the request's message array, rebuilt from stored rows every round.
//!
//! Order (prefix-cache friendly): static system → scratchpad → compaction summary → history →
//! dynamic tail → tail reminder. Nothing that lives only in memory changes what the model sees.

mod builder;
pub mod call_results;
pub mod compaction;
mod dynamic;
pub mod history;
mod system;
pub mod tokens;

pub use builder::{BuildSettings, BuiltContext, ContextInputs, MemoryFile, MessageBuilder};
pub use call_results::{INTERRUPTED_RUNNING, hidden_placeholder};
pub use compaction::{CompactionError, CompactionReport, ContextCompactor};
pub use dynamic::{DynamicTail, format_now};
pub use history::HistoryOptions;
pub use system::{render_static_system, scratchpad_message, summary_message};
