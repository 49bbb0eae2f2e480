//! The end-of-test check: every request answered by a scripted reply, no reply left over.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use super::keyed::KeyedReplies;
use super::queue::ReplyQueue;
use super::record::RecordedRequest;

/// Request bodies are cut to their last this many chars in the report (the newest messages
/// say what the engine was doing).
const BODY_CHARS: usize = 3_000;

/// The problems a test has opted out of on purpose.
#[derive(Default)]
pub(super) struct Allowed {
    pub(super) leftover: AtomicBool,
    pub(super) unscripted: AtomicBool,
    pub(super) rejected: AtomicBool,
}

/// A report of every way the script was not followed, or `None` when it was.
pub(super) fn script_problems(
    requests: &[RecordedRequest],
    queue: &ReplyQueue,
    keyed: &KeyedReplies,
    allowed: &Allowed,
) -> Option<String> {
    let mut out = String::new();
    if !allowed.unscripted.load(Ordering::SeqCst) {
        let unscripted: Vec<&RecordedRequest> = requests.iter().filter(|r| r.unscripted).collect();
        section(&mut out, &unscripted, "with no scripted reply queued");
    }
    if !allowed.rejected.load(Ordering::SeqCst) {
        let rejected: Vec<&RecordedRequest> =
            requests.iter().filter(|r| r.validation_error.is_some()).collect();
        section(&mut out, &rejected, "rejected as invalid");
    }
    let leftover = queue.remaining();
    if !allowed.leftover.load(Ordering::SeqCst) && !leftover.is_empty() {
        let _ = writeln!(out, "{} never requested:", count(leftover.len(), "scripted reply"));
        for (model, reply) in leftover {
            let _ = writeln!(out, "  [for {}] {reply:?}", model.unwrap_or("any model"));
        }
    }
    let unserved = keyed.unserved();
    if !allowed.leftover.load(Ordering::SeqCst) && !unserved.is_empty() {
        let _ = writeln!(out, "{} never matched:", count(unserved.len(), "keyed reply"));
        for k in unserved {
            let _ = writeln!(out, "  when {:?}: {:?}", k.when, k.reply);
        }
    }
    if out.is_empty() {
        return None;
    }
    Some(format!(
        "the fake LLM's script was not followed:\n{out}Script a reply for every request the test \
         causes and wait for the work that consumes it; a test that leaves replies or sends \
         unscripted requests on purpose says so (FakeLlm::allow_leftover_replies, \
         allow_unscripted_requests, allow_rejected_requests)."
    ))
}

fn section(out: &mut String, requests: &[&RecordedRequest], what: &str) {
    if requests.is_empty() {
        return;
    }
    let _ = writeln!(out, "{} {what}:", count(requests.len(), "request"));
    for r in requests {
        let model = r.model.as_deref().unwrap_or("no model");
        let _ =
            writeln!(out, "  #{} to {model} (HTTP {}): {}", r.seq, r.status, body_tail(&r.body));
        if let Some(why) = &r.validation_error {
            let _ = writeln!(out, "    rejected because: {why}");
        }
    }
}

/// "1 request", "2 requests".
fn count(n: usize, noun: &str) -> String {
    let ending = match (n, noun.ends_with('y')) {
        (1, _) => noun.to_owned(),
        (_, true) => format!("{}ies", &noun[..noun.len() - 1]),
        _ => format!("{noun}s"),
    };
    format!("{n} {ending}")
}

/// The body without its tool schemas (long and never the point), cut to its last chars.
fn body_tail(body: &Value) -> String {
    let mut body = body.clone();
    if let Some(map) = body.as_object_mut() {
        map.remove("tools");
    }
    let text = body.to_string();
    let chars = text.chars().count();
    if chars <= BODY_CHARS {
        return text;
    }
    let tail: String = text.chars().skip(chars - BODY_CHARS).collect();
    format!("…{tail}")
}
