//! Dev-only test kit: a strict fake OpenAI-compatible provider for Skald's tests and tools, and
//! the check that keeps generated files committed and current.

mod error;
mod fake_llm;
mod generated;

pub use error::TestkitError;
pub use fake_llm::{
    FakeLlm, FakeLlmOptions, RecordedRequest, Reply, Script, ScriptedToolCall, Usage, WhenEmpty,
    validate_chat_request,
};
pub use generated::assert_generated_file_is_current;
