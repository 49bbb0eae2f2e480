//! A round refused as larger than the model's context window (`context_length_exceeded`): the
//! window is learned (stored per client and model, so later turns compact in time), the person
//! is told, the root frame's history is summarised, and the round is asked once more.

use skald_llm::ModelEndpoint;
use skald_protocol::Event;

use super::TurnCtx;
use super::llm_round::Overflow;
use super::tool_set::ToolSet;
use crate::context::{CompactionError, ContextCompactor};
use crate::error::EngineError;

/// What follows an overflow.
pub(super) enum Recovery {
    /// Compacted, or fewer tools offered on the window learned: ask the model again.
    Retry,
    /// Nothing can make the request smaller: the turn fails with this reason.
    Fail(String),
    Cancelled,
}

/// Learns the window, compacts the root frame and says so; `estimated` is the refused
/// request's estimated size (for a server that named no numbers), `offered` how many tools it
/// carried: on the window learned the frame may be offered fewer (the core tools of a small
/// window), which is a retry of its own where nothing can be summarised.
pub(super) async fn recover(
    ctx: &TurnCtx,
    chain: &[ModelEndpoint],
    overflow: &Overflow,
    estimated: i64,
    offered: usize,
) -> Result<Recovery, EngineError> {
    let at = chain.iter().position(|e| e.name == overflow.model).unwrap_or(0);
    let Some(endpoint) = chain.get(at) else {
        return Ok(Recovery::Fail(overflow.message.clone()));
    };
    let store = &ctx.deps.store;
    let estimated = u64::try_from(estimated).unwrap_or(0);
    let learned = ctx
        .deps
        .windows
        .learn(store, endpoint, overflow.window, overflow.requested, estimated)
        .await;
    let (window, exact) = match learned {
        Ok(learned) => learned,
        Err(e) => {
            tracing::warn!(model = %endpoint.name, "cannot store the learned context window: {e}");
            (overflow.window.unwrap_or(estimated / 4 * 3), overflow.window.is_some())
        }
    };
    let how = if exact { "as the server said" } else { "estimated from the refused request" };
    let now_offered = ToolSet::resolve(ctx).defs().len();
    let fewer_tools = now_offered < offered;
    let core_tools = if fewer_tools {
        format!("offering only the core tools ({now_offered} of {offered})")
    } else {
        String::new()
    };
    let window_line = format!(
        "its context window is {window} tokens {how}, now remembered for {} {}",
        endpoint.name, endpoint.model
    );
    if !ctx.is_root() {
        if fewer_tools {
            tell(ctx, endpoint, format!("{window_line}; {core_tools}"));
            return Ok(Recovery::Retry);
        }
        return Ok(Recovery::Fail(format!(
            "{} (a sub-agent's conversation is not compacted; the window of {window} tokens is \
             remembered for the next turns)",
            overflow.message
        )));
    }
    let configured = ctx.policy.build.compaction;
    if configured.is_some_and(|c| !c.enabled) {
        if fewer_tools {
            tell(ctx, endpoint, format!("{window_line}; {core_tools}"));
            return Ok(Recovery::Retry);
        }
        return Ok(Recovery::Fail(format!(
            "{} (compaction is off: llm.compaction.enabled is false)",
            overflow.message
        )));
    }
    let needs = match overflow.requested {
        Some(r) => format!("the request needs {r} tokens"),
        None => "the request is larger than that".to_string(),
    };
    let also = if fewer_tools { format!(" and {core_tools}") } else { String::new() };
    tell(ctx, endpoint, format!("{window_line}; {needs}: summarising the conversation{also}"));
    // Everything before the current prompt is summarised: a kept tail is "at least" its budget,
    // so any budget could keep the very result that overflowed.
    let mut config = configured.unwrap_or_default();
    config.keep_recent_tokens = 0;
    let mut summariser: Vec<ModelEndpoint> = chain[at..].to_vec();
    if let Some(first) = summariser.first_mut() {
        first.context_window = Some(window);
    }
    let compactor = ContextCompactor::new(store, &ctx.deps.llm, &summariser, config);
    let emitter = ctx.frame.emitter.clone();
    let on_start = move || emitter.emit(Event::Compacting {});
    let cancel = &ctx.frame.cancel;
    let compacted =
        compactor.compact_now(&ctx.builder(), &ctx.context_inputs(), None, cancel, on_start).await;
    match compacted {
        Ok(Some(r)) => {
            ctx.frame.emitter.emit(Event::CompactionDone {
                summary_id: r.summary_id,
                covers_up_to_message_id: r.covers_up_to_message_id,
                tokens_before: r.tokens_before,
                tokens_after: r.tokens_after,
            });
            Ok(Recovery::Retry)
        }
        // The core tools may be all it takes.
        Ok(None) if fewer_tools => Ok(Recovery::Retry),
        Ok(None) => Ok(Recovery::Fail(format!(
            "{} (nothing older in the conversation to summarise: the request itself — system \
             prompt, tools and the last message — does not fit {window} tokens)",
            overflow.message
        ))),
        Err(CompactionError::Store(e)) => Err(e.into()),
        Err(CompactionError::Summariser(skald_llm::LlmError::Cancelled)) => Ok(Recovery::Cancelled),
        Err(e) => Ok(Recovery::Fail(format!(
            "{} (the conversation could not be summarised: {e})",
            overflow.message
        ))),
    }
}

/// Tells the person why the round is asked again: the window learned and what changes.
fn tell(ctx: &TurnCtx, endpoint: &ModelEndpoint, reason: String) {
    ctx.frame.emitter.emit(Event::ModelRetry { model: endpoint.name.clone(), attempt: 1, reason });
}
