//! The fake provider: scripted replies, strict request validation, SSE rendering and the server.

mod chat;
mod check;
mod keyed;
mod queue;
mod record;
mod render;
mod reply;
mod script;
mod server;
mod validate;

pub use keyed::{KeyedReply, When};
pub use record::RecordedRequest;
pub use reply::{Reply, ScriptedToolCall, Usage, WhenEmpty};
pub use script::Script;
pub use server::{FakeLlm, FakeLlmOptions};
pub use validate::validate_chat_request;
