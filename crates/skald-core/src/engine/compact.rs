//! Manual compaction (`/compact [focus]`).

use skald_protocol::{ApiError, ErrorCode};

use super::Engine;
use crate::context::CompactionReport;
use crate::turn::{self, ParkMode, TurnEmitter};

impl Engine {
    /// Summarises the session's history now (`focus` steers the summary). `None` when there is
    /// nothing useful to summarise. Refused while a turn runs.
    pub async fn compact(
        &self,
        session_id: i64,
        focus: Option<String>,
    ) -> Result<Option<CompactionReport>, ApiError> {
        let session = self.store().session(session_id).await.map_err(crate::EngineError::from)?;
        let handle = self.inner.sessions.handle(session_id);
        let busy = ApiError::new(
            ErrorCode::Conflict,
            format!("session {session_id} is running a turn; compact after it ends"),
        );
        let Ok(_guard) = handle.processing.clone().try_lock_owned() else { return Err(busy) };
        if self.runner_elsewhere(session_id).await.map_err(crate::EngineError::from)? {
            return Err(busy);
        }
        let chain = self.model_chain()?;
        let emitter =
            TurnEmitter::new(self.inner.events.clone(), session_id, session.source.clone());
        let ctx =
            self.turn_ctx(session_id, &session.source, chain, &emitter, ParkMode::Exit).await?;
        let cancel = handle.begin();
        let result =
            turn::compact_now(&ctx, focus.as_deref().filter(|f| !f.trim().is_empty()), &cancel)
                .await;
        handle.end();
        Ok(result?)
    }
}
