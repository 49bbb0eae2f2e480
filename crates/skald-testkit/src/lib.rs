//! Dev-only test kit: a strict fake OpenAI-compatible provider for Skald's tests and tools, and a
//! recording relay for tests against real servers.

mod error;
mod fake_llm;
mod tap;

pub use error::TestkitError;
pub use fake_llm::{
    FakeLlm, FakeLlmOptions, RecordedRequest, Reply, Script, ScriptedToolCall, Usage, WhenEmpty,
    validate_chat_request,
};
pub use tap::{HttpTap, TappedRequest};
