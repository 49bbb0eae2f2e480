//! `learned_context_windows`: a model's context window as its server revealed it by refusing a
//! request too large for it, per client alias and model id.

use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;

/// One learned window.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct LearnedWindow {
    pub client: String,
    pub model: String,
    pub window_tokens: i64,
    /// Whether the server named it (otherwise it was guessed from the refused request's size).
    pub exact: bool,
    pub learned_at: String,
}

impl Store {
    /// Records what an overflow taught about `client`'s `model`: a window the server named
    /// (`exact`) replaces the stored one; a guess only lowers it. Returns the window now stored.
    pub async fn learn_context_window(
        &self,
        client: &str,
        model: &str,
        window_tokens: i64,
        exact: bool,
    ) -> Result<i64, StoreError> {
        let stored: i64 = sqlx::query_scalar(
            "INSERT INTO learned_context_windows (client, model, window_tokens, exact, learned_at) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(client, model) DO UPDATE SET \
             window_tokens = CASE WHEN ?4 THEN ?3 ELSE MIN(window_tokens, ?3) END, \
             exact = CASE WHEN ?4 OR ?3 < window_tokens THEN ?4 ELSE exact END, \
             learned_at = ?5 RETURNING window_tokens",
        )
        .bind(client)
        .bind(model)
        .bind(window_tokens.max(1))
        .bind(exact)
        .bind(self.now())
        .fetch_one(&mut *self.read().await?)
        .await?;
        Ok(stored)
    }

    /// Every learned window.
    pub async fn learned_context_windows(&self) -> Result<Vec<LearnedWindow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT client, model, window_tokens, exact, learned_at FROM learned_context_windows \
             ORDER BY client, model",
        )
        .fetch_all(&mut *self.read().await?)
        .await?)
    }
}
