//! Full-text search for the shells: ranked hits across sessions and find-in-session.

use skald_protocol::{SearchQuery, SearchResults, SessionMatches};

use super::Engine;
use crate::EngineError;

impl Engine {
    /// The best hits across every session for any text (never FTS syntax): message words, the
    /// last one matched as a prefix, and substrings of tool names, paths and command lines.
    pub async fn search(&self, query: SearchQuery) -> Result<SearchResults, EngineError> {
        Ok(self.store().search(&query).await?)
    }

    /// Every message and tool call of a session that matches `text`, in session order, for
    /// find-in-session's next and previous.
    pub async fn find_in_session(
        &self,
        session_id: i64,
        text: &str,
    ) -> Result<SessionMatches, EngineError> {
        Ok(self.store().find_in_session(session_id, text).await?)
    }
}
