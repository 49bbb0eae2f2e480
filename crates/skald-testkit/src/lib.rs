//! Dev-only test kit: a strict fake OpenAI-compatible provider for Skald's tests and tools.

mod error;
mod fake_llm;
mod wait;

pub use error::TestkitError;
pub use fake_llm::{
    FakeLlm, FakeLlmOptions, RecordedRequest, Reply, Script, ScriptedToolCall, Usage, WhenEmpty,
    validate_chat_request,
};
pub use wait::{HANG_GUARD, eventually};
