//! Bypasses a human granted: validated against the call before anything is recorded, stored as
//! rows every process reads, listed for the inbox and the chat, revoked by a person or by `/new`.

use chrono::DateTime;
use skald_protocol::{BypassDuration, BypassRequest, BypassView, Event, EventEnvelope};
use skald_store::StoreError;
use skald_store::repo::approvals::ApprovalRequestRow;
use skald_store::repo::bypasses::{BypassRow, NewBypass};

use super::Engine;
use crate::approval::BypassScope;
use crate::approval::bypass::{duration_from_name, duration_name, lifetime, scope_kind_from_name};
use crate::error::EngineError;

/// Who revokes a session's bypasses when `/new` starts the next one.
const NEW_SESSION_REVOKER: &str = "/new";

impl Engine {
    /// The session's active bypasses, oldest first.
    pub async fn session_bypasses(&self, session_id: i64) -> Result<Vec<BypassView>, EngineError> {
        let rows = self.store().session_bypasses(session_id).await?;
        self.views(rows)
    }

    /// Every active bypass across sessions, oldest first (the inbox lists them).
    pub async fn active_bypasses(&self) -> Result<Vec<BypassView>, EngineError> {
        let rows = self.store().active_bypasses().await?;
        self.views(rows)
    }

    /// The bypass granted with a call's approval.
    pub(super) async fn call_bypass(
        &self,
        tool_call_id: i64,
    ) -> Result<Option<BypassView>, EngineError> {
        let row = self.store().call_bypass(tool_call_id).await?;
        row.map(|r| self.view(r)).transpose()
    }

    /// Ends a bypass now, recording who did. Revoking one that already ended is a no-op.
    pub async fn revoke_bypass(
        &self,
        id: i64,
        revoked_by: &str,
    ) -> Result<BypassView, EngineError> {
        let revoked_by = if revoked_by.trim().is_empty() { "unknown" } else { revoked_by.trim() };
        let (row, changed) = self.store().revoke_bypass(id, revoked_by).await?;
        if changed {
            self.emit_bypasses_changed(row.session_id, &row.source);
        }
        self.view(row)
    }

    /// The row a decision's bypass request becomes, or why it cannot be granted. Checked before
    /// anything is recorded, so a refused scope leaves the call waiting for another try.
    pub(super) fn bypass_for_decision(
        &self,
        request: &ApprovalRequestRow,
        approved: bool,
        asked: Option<BypassRequest>,
        granted_by: &str,
    ) -> Result<Option<NewBypass>, EngineError> {
        let Some(asked) = asked else { return Ok(None) };
        if !approved {
            return Err(EngineError::InvalidInput(
                "a bypass is granted with an approval, not with a rejection".into(),
            ));
        }
        let category = self.inner.tools.category_of(&request.tool_name);
        let scope = BypassScope::for_call(asked.scope, &request.tool_name, category)
            .map_err(|e| EngineError::InvalidInput(e.to_string()))?;
        Ok(Some(new_bypass(
            request.session_id,
            &scope,
            asked.duration,
            granted_by,
            Some(request.tool_call_id),
        )))
    }

    /// `skald chat --approve-all`: a stored "this session" bypass of every tool, unless one is
    /// already active.
    pub(super) async fn approve_all(
        &self,
        session_id: i64,
        granted_by: &str,
    ) -> Result<(), EngineError> {
        let store = self.store();
        let active = store.session_bypasses(session_id).await?;
        let covered = active.iter().any(|r| {
            r.scope_kind == BypassScope::All.kind_name()
                && r.duration == duration_name(BypassDuration::Session)
        });
        if covered {
            return Ok(());
        }
        let b =
            new_bypass(session_id, &BypassScope::All, BypassDuration::Session, granted_by, None);
        let row = store.grant_bypass(&b).await?;
        self.emit_bypasses_changed(session_id, &row.source);
        Ok(())
    }

    /// `/new`: the old session's bypasses end with it.
    pub(super) async fn revoke_for_new_session(
        &self,
        session_id: i64,
        source: &str,
    ) -> Result<(), EngineError> {
        let n = self.store().revoke_session_bypasses(session_id, NEW_SESSION_REVOKER).await?;
        if n > 0 {
            self.emit_bypasses_changed(session_id, source);
        }
        Ok(())
    }

    pub(super) fn emit_bypasses_changed(&self, session_id: i64, source: &str) {
        self.emit(EventEnvelope::session(session_id, source, Event::BypassesChanged {}));
    }

    fn views(&self, rows: Vec<BypassRow>) -> Result<Vec<BypassView>, EngineError> {
        rows.into_iter().map(|r| self.view(r)).collect()
    }

    fn view(&self, r: BypassRow) -> Result<BypassView, EngineError> {
        let corrupt = |column, value: &str| {
            EngineError::Store(StoreError::Corrupt { column, value: value.to_string() })
        };
        let scope = scope_kind_from_name(&r.scope_kind)
            .ok_or_else(|| corrupt("approval_bypasses.scope_kind", &r.scope_kind))?;
        let duration = duration_from_name(&r.duration)
            .ok_or_else(|| corrupt("approval_bypasses.duration", &r.duration))?;
        let expires = DateTime::parse_from_rfc3339(&r.expires_at)
            .map_err(|_| corrupt("approval_bypasses.expires_at", &r.expires_at))?;
        let remaining = (expires.to_utc() - self.store().clock().now()).num_seconds().max(0);
        // A category a newer build stored covers nothing here; it is shown as written.
        let label = BypassScope::from_stored(&r.scope_kind, r.scope_value.as_deref()).map_or_else(
            || format!("{} {}", r.scope_kind, r.scope_value.as_deref().unwrap_or_default()),
            |s| s.label(),
        );
        Ok(BypassView {
            id: r.id,
            session_id: r.session_id,
            source: r.source,
            scope,
            scope_value: r.scope_value,
            label,
            duration,
            granted_by: r.granted_by,
            granted_at: r.granted_at,
            expires_at: r.expires_at,
            remaining_secs: if r.revoked_at.is_some() { 0 } else { remaining },
            tool_call_id: r.tool_call_id,
            revoked_at: r.revoked_at,
            revoked_by: r.revoked_by,
        })
    }
}

fn new_bypass(
    session_id: i64,
    scope: &BypassScope,
    duration: BypassDuration,
    granted_by: &str,
    tool_call_id: Option<i64>,
) -> NewBypass {
    NewBypass {
        session_id,
        scope_kind: scope.kind_name().to_string(),
        scope_value: scope.value(),
        duration: duration_name(duration).to_string(),
        lifetime: lifetime(duration),
        granted_by: granted_by.to_string(),
        tool_call_id,
    }
}
