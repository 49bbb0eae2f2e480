//! Dev-only test kit: a strict fake OpenAI-compatible provider for Skald's tests and tools, a
//! recording relay for tests against real servers, the check that keeps generated files
//! committed and current, and the reliability matrix's row recorder and renderer (`matrix`).
//!
//! # The fake provider is strict
//!
//! [`FakeLlm`] answers only what a test scripted ([`FakeLlm::push`] and friends). A request
//! with no reply queued gets HTTP 500 ([`WhenEmpty::Error`], the default) and is recorded as
//! unscripted; a request the validator rejects gets HTTP 400. Engines swallow some model
//! failures on purpose (a failed summary leaves the history uncompacted), so these answers alone
//! would not fail a test. Dropping the [`FakeLlm`] handle therefore panics — failing the test —
//! when any request was unscripted or rejected, or any scripted reply was never requested; the
//! message lists each with its request body. So every test that scripts replies ends with its
//! script consumed, and a test must wait for the work that consumes its last reply.
//!
//! Replies are taken in order (a global FIFO and per-model FIFOs) unless a keyed reply
//! ([`FakeLlm::on`], [`When`]) matches the request's content first: keyed replies answer every
//! matching request, however often it is repeated, which is what a test that kills and resumes
//! the engine needs. A keyed reply no request matched counts as never requested.
//!
//! [`FakeLlm::assert_script_consumed`] runs the same check earlier. A test that breaks these
//! rules on purpose says so: [`FakeLlm::allow_leftover_replies`] (it stops a turn
//! mid-script), [`FakeLlm::allow_unscripted_requests`] and
//! [`FakeLlm::allow_rejected_requests`] (it tests those answers themselves). The check is
//! skipped while the thread is already panicking, so it never hides the first failure.
//!
//! # Tests that need an external server
//!
//! [`require_external`] reads a server's URL from an environment variable and makes a missing
//! server visible instead of a silent pass: see its docs.

mod error;
mod external;
mod fake_llm;
mod generated;
pub mod matrix;
mod tap;
mod wait;

pub use error::TestkitError;
pub use external::require_external;
pub use fake_llm::{
    FakeLlm, FakeLlmOptions, KeyedReply, RecordedRequest, Reply, Script, ScriptedToolCall, Usage,
    When, WhenEmpty, validate_chat_request,
};
pub use generated::assert_generated_file_is_current;
pub use tap::{HttpTap, TappedRequest};
pub use wait::{HANG_GUARD, eventually};
