//! Dev-only test kit: a strict fake OpenAI-compatible provider for Skald's tests and tools, and
//! the reliability matrix's row recorder and renderer.

mod error;
mod fake_llm;
pub mod matrix;

pub use error::TestkitError;
pub use fake_llm::{
    FakeLlm, FakeLlmOptions, RecordedRequest, Reply, Script, ScriptedToolCall, Usage, WhenEmpty,
    validate_chat_request,
};
