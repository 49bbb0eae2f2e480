//! What a session has used (`/context`, `/cost`, the context meter), and `/compact` and
//! `/resettools` for the shells.

use skald_protocol::SessionUsage;

use super::Engine;
use crate::EngineError;
use crate::turn;

impl Engine {
    /// The context the next request carries (reported usage plus estimate, as compaction counts
    /// it), the last reported request, the model's window when known, and the session's spend.
    pub async fn session_usage(&self, session_id: i64) -> Result<SessionUsage, EngineError> {
        let store = self.store();
        let session = store.session(session_id).await?;
        // The turn's own view of the frame (agent prompt, working dir, chain order); no API
        // keys: the chat asks for this after each answer and keys may come from the keychain.
        let emitter = self.root_emitter(session_id, &session.source).await?;
        let models = self.configured_models(false);
        let ctx = self.turn_ctx(session_id, &session.source, models, &emitter, None).await?;
        let size = turn::context_size(&ctx).await?;
        let totals = store.usage_totals(session_id).await?;
        let last = size.reported_by;
        Ok(SessionUsage {
            session_id,
            last_input_tokens: last.as_ref().and_then(|r| r.input_tokens),
            last_output_tokens: last.as_ref().and_then(|r| r.output_tokens),
            context_estimated: last.is_none(),
            model: last.and_then(|r| r.model),
            context_window: ctx.frame.chain.first().and_then(|e| e.context_window),
            context_tokens: (totals.replies > 0).then_some(size.tokens),
            input_tokens_total: totals.input_tokens,
            output_tokens_total: totals.output_tokens,
            cost_usd: totals.cost,
            priced_replies: totals.priced,
            replies: totals.replies,
        })
    }

    /// `/resettools`: revokes the tool groups the session's agents activated; they are offered
    /// again only after an agent activates them anew. Returns how many were revoked.
    pub async fn reset_tool_groups(&self, session_id: i64) -> Result<u64, EngineError> {
        self.store().session(session_id).await?;
        Ok(self.store().revoke_tool_groups(session_id).await?)
    }
}
