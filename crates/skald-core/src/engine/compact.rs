//! Compaction on demand (`/compact [focus]`): a step of the one runner, under the same lease
//! as a turn, in a task the engine tracks (so `wait_turn` follows it and `shutdown` stops it).

use skald_protocol::CompactResult;
use tokio::sync::oneshot;

use super::Engine;
use super::runner::RunMark;
use crate::error::EngineError;
use crate::turn;

impl Engine {
    /// Summarises the session's history now (`focus` steers the summary); `compacted: false`
    /// when there is nothing useful to summarise. It holds the session like a turn: refused
    /// (`SessionBusy`) while a turn or a compaction runs it in any process; a message sent
    /// meanwhile waits as a steer and starts its turn once it is done; a `stop` from any
    /// process cancels it, and so does shutdown.
    pub async fn compact_session(
        &self,
        session_id: i64,
        focus: Option<String>,
    ) -> Result<CompactResult, EngineError> {
        let session = self.store().session(session_id).await?;
        let lease = self.acquire(session_id).await?;
        let mark = RunMark::start(lease.handle());
        let (tx, rx) = oneshot::channel();
        let engine = self.clone();
        self.inner.lifecycle.spawn(async move {
            let cancel = lease.cancel_token();
            let prepared = async {
                let chain = engine.model_chain()?;
                let emitter = engine.root_emitter(session_id, &session.source).await?;
                engine.turn_ctx(session_id, &session.source, chain, &emitter, None).await
            };
            let result = match prepared.await {
                Ok(ctx) => {
                    let focus = focus.as_deref().filter(|f| !f.trim().is_empty());
                    turn::compact_now(&ctx, focus, &cancel).await
                }
                Err(e) => Err(e),
            };
            lease.release().await;
            mark.end_as_it_was();
            let _ = tx.send(result);
            // Messages sent while it ran were stored as steers: they start their turn now.
            if let Some((lease, chain, step)) = engine.claim_late_steers(session_id).await {
                let mode = engine.default_park_mode();
                engine.spawn_run(lease, chain, &session.source, step, mode);
            }
        });
        let report = rx.await.map_err(|_| {
            EngineError::Cancelled("the engine stopped before the summary was written".into())
        })??;
        Ok(match report {
            Some(r) => CompactResult {
                compacted: true,
                tokens_before: Some(r.tokens_before),
                tokens_after: Some(r.tokens_after),
                summarised_messages: r.summarised_messages as u64,
                summary_id: Some(r.summary_id),
                summary: Some(r.summary),
            },
            None => CompactResult {
                compacted: false,
                tokens_before: None,
                tokens_after: None,
                summarised_messages: 0,
                summary_id: None,
                summary: None,
            },
        })
    }
}
