//! The origin of a stored frame (id, depth, nested `agent#N` label), for events the engine
//! sends outside a running turn (decisions, answers, steers).

use skald_protocol::FrameOrigin;
use skald_store::{Store, StoreError};

/// The origin of frame `stack_id`, built along its lineage so a sub-agent's label nests every
/// agent above it.
pub async fn of_frame(store: &Store, stack_id: i64) -> Result<FrameOrigin, StoreError> {
    let lineage = store.frame_lineage(stack_id).await?;
    let mut frames = lineage.iter();
    let root = frames.next().map_or(stack_id, |f| f.id);
    Ok(frames.fold(FrameOrigin::root(root), |parent, f| {
        // Every frame below the root was opened by a call; 0 would only show a broken row.
        parent.child(f.id, &f.agent_id, f.parent_tool_call_id.unwrap_or(0))
    }))
}

/// The origin of the session's root frame (where steers are folded).
pub async fn of_root(store: &Store, session_id: i64) -> Result<FrameOrigin, StoreError> {
    Ok(FrameOrigin::root(store.root_frame(session_id).await?.id))
}
