//! What a session has used (`/context`, `/cost`, the context meter), and `/compact` and
//! `/resettools` for the shells.

use skald_protocol::{CompactResult, SessionUsage};

use super::Engine;
use crate::EngineError;

impl Engine {
    /// The last request's size, the model's window when known, and the session's spend.
    pub async fn session_usage(&self, session_id: i64) -> Result<SessionUsage, EngineError> {
        let store = self.store();
        let root = store.root_frame(session_id).await?;
        // Usage reported before the latest compaction describes a request that no longer exists.
        let boundary =
            store.latest_summary(root.id).await?.map_or(0, |s| s.covers_up_to_message_id);
        let last = store.last_reported_usage(root.id, boundary).await?;
        let totals = store.usage_totals(session_id).await?;
        // From the configuration alone: resolving the chain would read every API key from the
        // keychain, and the chat asks for this after each answer.
        let context_window =
            self.config().ordered_clients().first().and_then(|c| c.effective_context_window());
        Ok(SessionUsage {
            session_id,
            last_input_tokens: last.as_ref().and_then(|r| r.input_tokens),
            last_output_tokens: last.as_ref().and_then(|r| r.output_tokens),
            model: last.and_then(|r| r.model),
            context_window,
            input_tokens_total: totals.input_tokens,
            output_tokens_total: totals.output_tokens,
            cost_usd: totals.cost,
            priced_replies: totals.priced,
            replies: totals.replies,
        })
    }

    /// `/compact [focus]` as the shells call it.
    pub async fn compact_session(
        &self,
        session_id: i64,
        focus: Option<String>,
    ) -> Result<CompactResult, EngineError> {
        Ok(match self.compact(session_id, focus).await? {
            Some(r) => CompactResult {
                compacted: true,
                tokens_before: Some(r.tokens_before),
                tokens_after: Some(r.tokens_after),
                summarised_messages: r.summarised_messages as u64,
            },
            None => CompactResult {
                compacted: false,
                tokens_before: None,
                tokens_after: None,
                summarised_messages: 0,
            },
        })
    }

    /// `/resettools`: revokes the tool groups the session's agents activated; they are offered
    /// again only after an agent activates them anew. Returns how many were revoked.
    pub async fn reset_tool_groups(&self, session_id: i64) -> Result<u64, EngineError> {
        self.store().session(session_id).await?;
        Ok(self.store().revoke_tool_groups(session_id).await?)
    }
}
