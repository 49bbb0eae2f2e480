//! Manual compaction (`/compact [focus]`), under the same lease as a turn.

use super::Engine;
use crate::context::CompactionReport;
use crate::error::EngineError;
use crate::turn::{self, ParkMode};

impl Engine {
    /// Summarises the session's history now (`focus` steers the summary). `None` when there is
    /// nothing useful to summarise. It holds the session like a turn: refused (`SessionBusy`)
    /// while a turn or a compaction runs it in any process, and a turn asked for meanwhile waits
    /// as a steer that runs once it is done; a `stop` from any process cancels it.
    pub async fn compact(
        &self,
        session_id: i64,
        focus: Option<String>,
    ) -> Result<Option<CompactionReport>, EngineError> {
        let session = self.store().session(session_id).await?;
        let lease = self.acquire(session_id).await?;
        let cancel = lease.cancel_token();
        let prepared = async {
            let chain = self.model_chain()?;
            let emitter = self.root_emitter(session_id, &session.source).await?;
            self.turn_ctx(session_id, &session.source, chain, &emitter).await
        };
        let result = match prepared.await {
            Ok(ctx) => {
                let focus = focus.as_deref().filter(|f| !f.trim().is_empty());
                turn::compact_now(&ctx, focus, &cancel).await
            }
            Err(e) => Err(e),
        };
        lease.release().await;
        // Messages sent while it ran were stored as steers: they start their turn now.
        if let Some((lease, chain, step)) = self.claim_late_steers(session_id).await {
            let mode =
                if self.inner.lifecycle.background() { ParkMode::Wait } else { ParkMode::Exit };
            self.spawn_run(lease, chain, &session.source, step, mode);
        }
        result
    }
}
