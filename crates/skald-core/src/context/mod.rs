//! What the model sees: the request's message array, built from stored rows every round (a
//! frame's history is cached and extended with the rows that changed, see `cache`).
//!
//! Order (prefix-cache friendly): static system → scratchpad → compaction summary → history →
//! dynamic tail → tail reminder. Nothing that lives only in memory changes what the model sees.

mod builder;
mod cache;
pub mod call_results;
pub mod compaction;
mod dynamic;
pub mod history;
mod incremental;
mod substitute;
mod system;
pub mod tokens;
mod windows;

pub use builder::{
    BuildSettings, BuiltContext, BuiltRequest, ContextInputs, MemoryFile, MessageBuilder,
};
pub use cache::{CacheStats, ContextCache, DEFAULT_BUDGET_BYTES};
pub use call_results::{INTERRUPTED_RUNNING, hidden_placeholder};
pub use compaction::{CompactionError, CompactionReport, ContextCompactor};
pub use dynamic::{DynamicTail, format_now, os_description};
pub use history::HistoryOptions;
pub use substitute::{ENGINE_KEYS, substitute};
pub use system::{render_static_system, scratchpad_message, summary_message};
pub use windows::LearnedWindows;
