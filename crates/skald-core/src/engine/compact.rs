//! Manual compaction (`/compact [focus]`).

use super::Engine;
use crate::context::CompactionReport;
use crate::error::EngineError;
use crate::turn::{self, ParkMode};

impl Engine {
    /// Summarises the session's history now (`focus` steers the summary). `None` when there is
    /// nothing useful to summarise. Refused while a turn runs; a `stop` cancels it.
    pub async fn compact(
        &self,
        session_id: i64,
        focus: Option<String>,
    ) -> Result<Option<CompactionReport>, EngineError> {
        let session = self.store().session(session_id).await?;
        let handle = self.inner.sessions.handle(session_id);
        let busy = || {
            EngineError::Conflict(format!(
                "session {session_id} is running a turn; compact after it ends"
            ))
        };
        let Ok(_guard) = handle.processing.clone().try_lock_owned() else { return Err(busy()) };
        if self.runner_elsewhere(session_id).await? {
            return Err(busy());
        }
        let chain = self.model_chain()?;
        let emitter = self.root_emitter(session_id, &session.source).await?;
        let ctx =
            self.turn_ctx(session_id, &session.source, chain, &emitter, ParkMode::Exit).await?;
        let cancel = handle.begin();
        let result =
            turn::compact_now(&ctx, focus.as_deref().filter(|f| !f.trim().is_empty()), &cancel)
                .await;
        handle.end();
        result
    }
}
