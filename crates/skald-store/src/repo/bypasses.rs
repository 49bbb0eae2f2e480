//! `approval_bypasses`: what a human allowed without asking, per session, until it expires or is
//! revoked. Every read filters by the store's clock, so an expired row stops counting at once.

use chrono::Duration;
use sqlx::FromRow;

use crate::clock::format_ts;
use crate::error::StoreError;
use crate::pool::Store;

/// A bypass to record. The store stamps `granted_at` and computes `expires_at` from its clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBypass {
    pub session_id: i64,
    /// `all`, `category` or `mcp_server`.
    pub scope_kind: String,
    /// The category or MCP server; `None` exactly for `all`.
    pub scope_value: Option<String>,
    /// `fifteen_minutes`, `one_hour` or `session`.
    pub duration: String,
    pub lifetime: Duration,
    pub granted_by: String,
    /// The call it was approved with, if any.
    pub tool_call_id: Option<i64>,
}

/// A stored bypass with its session's source.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct BypassRow {
    pub id: i64,
    pub session_id: i64,
    pub source: String,
    pub scope_kind: String,
    pub scope_value: Option<String>,
    pub duration: String,
    pub granted_by: String,
    pub granted_at: String,
    pub expires_at: String,
    pub revoked_at: Option<String>,
    pub revoked_by: Option<String>,
    pub tool_call_id: Option<i64>,
}

const SELECT_BYPASS: &str = "SELECT b.id, b.session_id, s.source, b.scope_kind, b.scope_value, \
     b.duration, b.granted_by, b.granted_at, b.expires_at, b.revoked_at, b.revoked_by, \
     b.tool_call_id FROM approval_bypasses b JOIN chat_sessions s ON s.id = b.session_id";

/// Active: not revoked and not yet expired at `?` (now).
const ACTIVE: &str = "b.revoked_at IS NULL AND b.expires_at > ?";

impl Store {
    /// Records a bypass on its own (a decision records its bypass in `decide`).
    pub async fn grant_bypass(&self, b: &NewBypass) -> Result<BypassRow, StoreError> {
        let mut tx = self.begin_write().await?;
        let id = self.insert_bypass(&mut tx, b).await?;
        let row = read_bypass(&mut tx, id).await?;
        self.commit(tx).await?;
        Ok(row)
    }

    /// Inserts a bypass inside the caller's transaction; returns its id.
    pub(crate) async fn insert_bypass(
        &self,
        tx: &mut sqlx::SqliteConnection,
        b: &NewBypass,
    ) -> Result<i64, StoreError> {
        let now = self.clock().now();
        Ok(sqlx::query_scalar(
            "INSERT INTO approval_bypasses (session_id, scope_kind, scope_value, duration, \
             granted_by, granted_at, expires_at, tool_call_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?) \
             RETURNING id",
        )
        .bind(b.session_id)
        .bind(&b.scope_kind)
        .bind(&b.scope_value)
        .bind(&b.duration)
        .bind(&b.granted_by)
        .bind(format_ts(now))
        .bind(format_ts(now + b.lifetime))
        .bind(b.tool_call_id)
        .fetch_one(&mut *tx)
        .await?)
    }

    /// One bypass, active or not.
    pub async fn bypass(&self, id: i64) -> Result<BypassRow, StoreError> {
        read_bypass(&mut *self.read().await?, id).await
    }

    /// The bypass granted with a call's approval, active or not.
    pub async fn call_bypass(&self, tool_call_id: i64) -> Result<Option<BypassRow>, StoreError> {
        let sql = format!("{SELECT_BYPASS} WHERE b.tool_call_id = ? ORDER BY b.id LIMIT 1");
        Ok(sqlx::query_as::<_, BypassRow>(&sql)
            .bind(tool_call_id)
            .fetch_optional(&mut *self.read().await?)
            .await?)
    }

    /// The session's active bypasses, oldest first.
    pub async fn session_bypasses(&self, session_id: i64) -> Result<Vec<BypassRow>, StoreError> {
        let sql = format!("{SELECT_BYPASS} WHERE b.session_id = ? AND {ACTIVE} ORDER BY b.id");
        Ok(sqlx::query_as::<_, BypassRow>(&sql)
            .bind(session_id)
            .bind(self.now())
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    /// Every active bypass across sessions, oldest first.
    pub async fn active_bypasses(&self) -> Result<Vec<BypassRow>, StoreError> {
        let sql = format!("{SELECT_BYPASS} WHERE {ACTIVE} ORDER BY b.id");
        Ok(sqlx::query_as::<_, BypassRow>(&sql)
            .bind(self.now())
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    /// Revokes one bypass, recording who did. Revoking one already revoked or expired changes
    /// nothing; the bool says whether this call revoked it.
    pub async fn revoke_bypass(
        &self,
        id: i64,
        revoked_by: &str,
    ) -> Result<(BypassRow, bool), StoreError> {
        let mut tx = self.begin_write().await?;
        let changed = self.revoke_active(&mut tx, Revoke::One(id), revoked_by).await? > 0;
        let row = read_bypass(&mut tx, id).await?;
        self.commit(tx).await?;
        Ok((row, changed))
    }

    /// Revokes every active bypass of the session (`/new`); returns how many.
    pub async fn revoke_session_bypasses(
        &self,
        session_id: i64,
        revoked_by: &str,
    ) -> Result<u64, StoreError> {
        let mut conn = self.write_conn().await?;
        self.revoke_active(&mut conn, Revoke::Session(session_id), revoked_by).await
    }

    async fn revoke_active(
        &self,
        conn: &mut sqlx::SqliteConnection,
        which: Revoke,
        revoked_by: &str,
    ) -> Result<u64, StoreError> {
        let (column, key) = match which {
            Revoke::One(id) => ("id", id),
            Revoke::Session(id) => ("session_id", id),
        };
        let now = self.now();
        Ok(sqlx::query(&format!(
            "UPDATE approval_bypasses SET revoked_at = ?, revoked_by = ? \
             WHERE {column} = ? AND revoked_at IS NULL AND expires_at > ?"
        ))
        .bind(&now)
        .bind(revoked_by)
        .bind(key)
        .bind(&now)
        .execute(&mut *conn)
        .await?
        .rows_affected())
    }
}

/// Which active bypasses to revoke.
enum Revoke {
    One(i64),
    Session(i64),
}

async fn read_bypass(conn: &mut sqlx::SqliteConnection, id: i64) -> Result<BypassRow, StoreError> {
    sqlx::query_as::<_, BypassRow>(&format!("{SELECT_BYPASS} WHERE b.id = ?"))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(StoreError::NotFound { what: "bypass", id })
}
