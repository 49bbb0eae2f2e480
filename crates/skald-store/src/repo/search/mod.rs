//! Full-text search over messages and tool calls (`message_fts`, `tool_fts`; migration 0008):
//! ranked hits across sessions, every match inside one session, and the session list's search.
//!
//! Two costs shape the SQL. Sorting by rank makes FTS5 score every candidate (~2 µs each: a
//! word in most of 100,000 messages takes 200 ms), so the cross-session search scores only each
//! index's newest `RANK_CANDIDATES` matches, which come straight off the index in rowid order; a
//! query with fewer matches (almost every real one) is ranked over all of them. And every
//! evaluation of a MATCH with a prefix term (the word being typed) merges that prefix's doclists
//! anew, so snippets are made in one scan for all the hits shown, never one MATCH per hit.
//!
//! Rows are indexed after they are written, not in the transaction that writes them (`index`);
//! each search first indexes what is still pending, so it sees every committed row.

mod index;
mod query;
mod sessions;
mod snippet;

pub use index::Indexed;
pub use query::{SearchText, SubstringQuery, escape_like};

use skald_protocol::{HitKind, MatchRef, SearchHit, SearchQuery, SearchResults, SessionMatches};
use sqlx::{FromRow, QueryBuilder, Sqlite};

use crate::error::StoreError;
use crate::pool::Store;

/// Matches of one index that are scored and sorted; older ones are not ranked.
const RANK_CANDIDATES: i64 = 1_000;
/// Words around a message match in a snippet.
const MESSAGE_SNIPPET_TOKENS: u32 = 16;
/// Trigrams (about characters) around a tool match: paths and commands need more context.
const TOOL_SNIPPET_TOKENS: u32 = 64;

/// One of the two indexes with the query written for it.
#[derive(Debug, Clone, Copy)]
enum Index<'a> {
    Messages(&'a str),
    Calls(&'a SubstringQuery),
}

impl Index<'_> {
    fn table(self) -> &'static str {
        match self {
            Self::Messages(_) => "message_fts",
            Self::Calls(_) => "tool_fts",
        }
    }

    /// What the index's MATCH is given.
    fn query(self) -> String {
        match self {
            Self::Messages(words) => words.to_string(),
            Self::Calls(q) => q.fts.clone(),
        }
    }

    /// The FTS table `f` joined to the message row `h` it indexes (the call `t`'s message).
    fn from(self) -> String {
        format!(" FROM {} f{}", self.table(), self.joins("f.rowid"))
    }

    /// Joins the message row `h` (and the call `t`) of the indexed row `rowid`.
    fn joins(self, rowid: &str) -> String {
        match self {
            Self::Messages(_) => format!(" JOIN chat_history h ON h.id = {rowid}"),
            Self::Calls(_) => format!(
                " JOIN chat_llm_tools t ON t.id = {rowid} JOIN chat_history h ON h.id = t.message_id"
            ),
        }
    }

    /// `HitRow`'s columns after the session's, read from `top` and the rows `joins` names.
    fn hit_columns(self) -> &'static str {
        match self {
            Self::Messages(_) => {
                "h.id AS message_id, NULL AS tool_call_id, h.role AS kind, NULL AS tool_name, \
                 top.rank AS rank, h.created_at"
            }
            Self::Calls(_) => {
                "t.message_id, t.id AS tool_call_id, 'tool' AS kind, t.name AS tool_name, \
                 top.rank AS rank, t.created_at"
            }
        }
    }

    fn snippet_sql(self) -> String {
        let tokens = match self {
            Self::Messages(_) => MESSAGE_SNIPPET_TOKENS,
            Self::Calls(_) => TOOL_SNIPPET_TOKENS,
        };
        snippet::snippet_sql(self.table(), tokens)
    }

    /// ` WHERE <index> MATCH ?`, the short terms' LIKEs, and the scope (`f`, `h` as `from`).
    fn push_filter(self, b: &mut QueryBuilder<'_, Sqlite>, scope: Option<&Scope>) {
        b.push(format_args!(" WHERE {} MATCH ", self.table())).push_bind(self.query());
        if let Self::Calls(q) = self {
            for like in &q.likes {
                b.push(
                    " AND (f.name || char(10) || COALESCE(f.path, '') || char(10) || \
                     COALESCE(f.command, '')) LIKE ",
                )
                .push_bind(like.clone())
                .push(" ESCAPE '\\'");
            }
        }
        if let Some(scope) = scope {
            let (lo, hi) = match self {
                Self::Messages(_) => scope.messages,
                Self::Calls(_) => scope.calls,
            };
            b.push(" AND f.rowid BETWEEN ").push_bind(lo).push(" AND ").push_bind(hi);
            b.push(" AND h.session_stack_id IN (SELECT id FROM chat_sessions_stack WHERE session_id IN (");
            let mut ids = b.separated(", ");
            for id in &scope.sessions {
                ids.push_bind(*id);
            }
            b.push("))");
        }
    }
}

impl SearchText {
    fn indexes(&self) -> Vec<Index<'_>> {
        let mut out = Vec::new();
        if let Some(words) = &self.words {
            out.push(Index::Messages(words));
        }
        if let Some(q) = &self.substrings {
            out.push(Index::Calls(q));
        }
        out
    }
}

/// Some sessions' rows: their message ids and call ids lie in these ranges (interleaved with
/// other sessions' rows when they ran at the same time, hence the frame check as well).
/// Bounding an index scan by the range keeps a common word from walking every other session.
#[derive(Debug, Clone)]
struct Scope {
    sessions: Vec<i64>,
    messages: (Option<i64>, Option<i64>),
    calls: (Option<i64>, Option<i64>),
}

/// A hit chosen by rank, before its snippet and details are read.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ranked {
    /// The indexed row: a message id or a tool call id.
    id: i64,
    rank: f64,
}

/// A hit as SQL returns it, before the snippet is split and the kind parsed.
#[derive(FromRow)]
struct HitRow {
    session_id: i64,
    session_title: Option<String>,
    session_source: String,
    message_id: i64,
    tool_call_id: Option<i64>,
    /// The message role, or `tool`.
    kind: String,
    tool_name: Option<String>,
    rank: f64,
    created_at: String,
    snippet: Option<String>,
}

impl HitRow {
    fn into_hit(self) -> Result<SearchHit, StoreError> {
        Ok(SearchHit {
            session_id: self.session_id,
            session_title: self.session_title,
            session_source: self.session_source,
            at: MatchRef {
                message_id: self.message_id,
                tool_call_id: self.tool_call_id,
                kind: hit_kind(&self.kind)?,
            },
            tool_name: self.tool_name,
            snippet: self.snippet.as_deref().map(snippet::parts).unwrap_or_default(),
            rank: self.rank,
            created_at: self.created_at,
        })
    }
}

fn hit_kind(kind: &str) -> Result<HitKind, StoreError> {
    Ok(match kind {
        "user" => HitKind::User,
        "assistant" => HitKind::Assistant,
        "agent" => HitKind::Agent,
        "tool" => HitKind::Tool,
        other => {
            return Err(StoreError::Corrupt { column: "chat_history.role", value: other.into() });
        }
    })
}

/// Best first; equal ranks newest first.
fn by_rank(a: &HitRow, b: &HitRow) -> std::cmp::Ordering {
    a.rank.total_cmp(&b.rank).then(b.message_id.cmp(&a.message_id))
}

impl Store {
    /// The best hits across every session: message words and tool-call substrings, ranked
    /// together by bm25 (lower first).
    pub async fn search(&self, query: &SearchQuery) -> Result<SearchResults, StoreError> {
        let limit = query.limit.clamp(1, skald_protocol::MAX_PER_PAGE) as usize;
        let text = SearchText::parse(&query.text);
        if !text.is_empty() {
            self.catch_up_search().await?;
        }
        let mut rows = Vec::new();
        for index in text.indexes() {
            // One more than asked tells whether there is more.
            let top = self.top_ranked(index, limit + 1).await?;
            rows.extend(self.hit_rows(index, &top).await?);
        }
        rows.sort_by(by_rank);
        let more = rows.len() > limit;
        rows.truncate(limit);
        let hits = rows.into_iter().map(HitRow::into_hit).collect::<Result<_, _>>()?;
        Ok(SearchResults { hits, more })
    }

    /// The index's `limit` best matches among its newest `RANK_CANDIDATES`.
    async fn top_ranked(&self, index: Index<'_>, limit: usize) -> Result<Vec<Ranked>, StoreError> {
        let mut b = QueryBuilder::<Sqlite>::new(
            "SELECT id, rank FROM (SELECT f.rowid AS id, f.rank AS rank",
        );
        b.push(index.from());
        index.push_filter(&mut b, None);
        b.push(" ORDER BY f.rowid DESC LIMIT ").push_bind(RANK_CANDIDATES);
        b.push(") ORDER BY rank LIMIT ").push_bind(i64::try_from(limit).unwrap_or(i64::MAX));
        let rows: Vec<(i64, f64)> = b.build_query_as().fetch_all(&mut *self.read().await?).await?;
        Ok(rows.into_iter().map(|(id, rank)| Ranked { id, rank }).collect())
    }

    /// The chosen hits of one index with their sessions, details and snippets. The snippets
    /// come from one MATCH over the hits' rowid range (`+rowid` keeps SQLite from turning the
    /// IN list into one MATCH per hit).
    async fn hit_rows(&self, index: Index<'_>, hits: &[Ranked]) -> Result<Vec<HitRow>, StoreError> {
        let (Some(lo), Some(hi)) =
            (hits.iter().map(|h| h.id).min(), hits.iter().map(|h| h.id).max())
        else {
            return Ok(Vec::new());
        };
        let mut b = QueryBuilder::<Sqlite>::new("WITH top(id, rank) AS (VALUES ");
        for (i, h) in hits.iter().enumerate() {
            b.push(if i == 0 { "(" } else { ", (" });
            b.push_bind(h.id).push(", ").push_bind(h.rank).push(")");
        }
        let table = index.table();
        b.push(format_args!(
            "), snip AS MATERIALIZED (SELECT f.rowid AS id, {} AS snippet FROM {table} f \
             WHERE {table} MATCH ",
            index.snippet_sql()
        ))
        .push_bind(index.query())
        .push(" AND f.rowid BETWEEN ")
        .push_bind(lo)
        .push(" AND ")
        .push_bind(hi)
        .push(" AND +f.rowid IN (SELECT id FROM top))");
        b.push(format_args!(
            " SELECT st.session_id, s.title AS session_title, s.source AS session_source, {}, \
             snip.snippet FROM top LEFT JOIN snip ON snip.id = top.id{} \
             JOIN chat_sessions_stack st ON st.id = h.session_stack_id \
             JOIN chat_sessions s ON s.id = st.session_id",
            index.hit_columns(),
            index.joins("top.id"),
        ));
        Ok(b.build_query_as::<HitRow>().fetch_all(&mut *self.read().await?).await?)
    }

    /// Every message and call of the session (sub-agents included) that matches, in id order:
    /// what find-in-session steps through.
    pub async fn find_in_session(
        &self,
        session_id: i64,
        text: &str,
    ) -> Result<SessionMatches, StoreError> {
        self.session(session_id).await?;
        let text = SearchText::parse(text);
        if !text.is_empty() {
            self.catch_up_search().await?;
        }
        let scope = self.scope(&[session_id]).await?;
        let mut matches = Vec::new();
        for index in text.indexes() {
            let mut b = QueryBuilder::<Sqlite>::new(match index {
                Index::Messages(_) => "SELECT h.id, NULL, h.role",
                Index::Calls(_) => "SELECT t.message_id, t.id, 'tool'",
            });
            b.push(index.from());
            index.push_filter(&mut b, Some(&scope));
            let rows: Vec<(i64, Option<i64>, String)> =
                b.build_query_as().fetch_all(&mut *self.read().await?).await?;
            for (message_id, tool_call_id, kind) in rows {
                matches.push(MatchRef { message_id, tool_call_id, kind: hit_kind(&kind)? });
            }
        }
        // A call sits right after the text of the message that made it.
        matches.sort_by_key(|m| (m.message_id, m.tool_call_id.unwrap_or(0)));
        Ok(SessionMatches { session_id, matches })
    }

    /// The id ranges of the sessions' messages and calls (empty ranges match nothing).
    async fn scope(&self, sessions: &[i64]) -> Result<Scope, StoreError> {
        let mut b = QueryBuilder::<Sqlite>::new(
            "WITH m AS (SELECT MIN(id) AS lo, MAX(id) AS hi FROM chat_history \
             WHERE session_stack_id IN (SELECT id FROM chat_sessions_stack WHERE session_id IN (",
        );
        let mut ids = b.separated(", ");
        for id in sessions {
            ids.push_bind(*id);
        }
        b.push(
            "))) SELECT m.lo, m.hi, \
               (SELECT MIN(id) FROM chat_llm_tools WHERE message_id BETWEEN m.lo AND m.hi), \
               (SELECT MAX(id) FROM chat_llm_tools WHERE message_id BETWEEN m.lo AND m.hi) FROM m",
        );
        let (lo, hi, call_lo, call_hi) =
            b.build_query_as().fetch_one(&mut *self.read().await?).await?;
        Ok(Scope { sessions: sessions.to_vec(), messages: (lo, hi), calls: (call_lo, call_hi) })
    }
}
