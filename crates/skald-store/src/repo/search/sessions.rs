//! The session list with a search: sessions whose title contains the text or whose messages
//! and calls match it, newest first like the plain list, each with its hit count and best hit.

use std::collections::HashMap;

use skald_protocol::{Page, SearchHit, SessionListQuery, SessionSummary};
use sqlx::{FromRow, QueryBuilder, Sqlite};

use super::{HitRow, Index, Ranked, SearchText, by_rank, escape_like};
use crate::error::StoreError;
use crate::pool::Store;
use crate::repo::sessions::SummaryRow;

/// A shown session's best hit is chosen among the hits in its newest this many messages (their
/// text and their calls) and its newest hit of each index. Scoring every hit of the page's
/// sessions (thousands for a common word, each costlier for a word being typed) made the list
/// slow; the cross-session search bounds its scoring the same way.
const BEST_HIT_MESSAGES: i64 = 40;

#[derive(FromRow)]
struct Row {
    #[sqlx(flatten)]
    summary: SummaryRow,
    hit_count: i64,
    total: i64,
    /// The session's newest hit in each index (message id, tool call id).
    newest_message_hit: Option<i64>,
    newest_call_hit: Option<i64>,
}

impl Store {
    /// `list_sessions` with a search text (trimmed, not empty).
    ///
    /// Which sessions match, and how often, is exact: every hit is mapped to its frame without
    /// scoring (which is what makes a word in most messages affordable), frames to sessions
    /// after counting. Only the page's sessions score hits for their best one, among their
    /// newest messages' hits and their newest hit (`BEST_HIT_MESSAGES`).
    pub(crate) async fn list_sessions_matching(
        &self,
        query: &SessionListQuery,
        search: &str,
        per_page: u32,
        page: u32,
    ) -> Result<Page<SessionSummary>, StoreError> {
        let text = SearchText::parse(search);
        if !text.is_empty() {
            self.catch_up_search().await?;
        }
        let offset = i64::from(page - 1) * i64::from(per_page);
        let rows = self.matching_page(query, search, &text, i64::from(per_page), offset).await?;
        let total = match rows.first() {
            Some(r) => r.total,
            // Past the end the window count comes with no row: ask for the first row's.
            None if offset > 0 => {
                self.matching_page(query, search, &text, 1, 0).await?.first().map_or(0, |r| r.total)
            }
            None => 0,
        };
        let mut best = self.best_hits(&text, &rows).await?;
        let items = rows
            .into_iter()
            .map(|r| {
                let best_hit = best.remove(&r.summary.id);
                r.summary.into_summary(r.hit_count, best_hit)
            })
            .collect();
        Ok(Page { items, total: u64::try_from(total).unwrap_or(0), page, per_page })
    }

    async fn matching_page(
        &self,
        query: &SessionListQuery,
        search: &str,
        text: &SearchText,
        limit: i64,
        offset: i64,
    ) -> Result<Vec<Row>, StoreError> {
        let mut b = QueryBuilder::<Sqlite>::new("WITH hits AS (");
        let indexes = text.indexes();
        if indexes.is_empty() {
            b.push("SELECT NULL AS stack, NULL AS mid, NULL AS cid WHERE 0");
        }
        for (i, index) in indexes.into_iter().enumerate() {
            if i > 0 {
                b.push(" UNION ALL ");
            }
            // The frame is on the hit's message row; its session is looked up once per frame
            // below rather than once per hit.
            b.push(match index {
                Index::Messages(_) => {
                    "SELECT h.session_stack_id AS stack, f.rowid AS mid, NULL AS cid"
                }
                Index::Calls(_) => {
                    "SELECT h.session_stack_id AS stack, NULL AS mid, f.rowid AS cid"
                }
            });
            b.push(index.from());
            index.push_filter(&mut b, None);
        }
        b.push(
            "), per_frame AS (SELECT stack, COUNT(*) AS n, MAX(mid) AS mid, MAX(cid) AS cid \
               FROM hits GROUP BY stack), \
             per AS (SELECT st.session_id AS sid, SUM(per_frame.n) AS n, MAX(per_frame.mid) AS mid, \
               MAX(per_frame.cid) AS cid FROM per_frame \
               JOIN chat_sessions_stack st ON st.id = per_frame.stack GROUP BY st.session_id), \
             cand AS (SELECT s.id, s.title, s.source, s.agent_id, s.is_ephemeral, \
               s.is_interactive, s.created_at, per.n, per.mid, per.cid, \
               COALESCE(s.title LIKE ",
        )
        .push_bind(format!("%{}%", escape_like(search)))
        .push(" ESCAPE '\\', 0) AS title_hit FROM chat_sessions s LEFT JOIN per ON per.sid = s.id WHERE (")
        .push_bind(query.source.clone())
        .push(" IS NULL OR s.source = ")
        .push_bind(query.source.clone())
        // The window count is taken before LIMIT: the total comes with the page.
        .push(
            ")), p AS (SELECT *, COUNT(*) OVER () AS total FROM cand \
               WHERE n IS NOT NULL OR title_hit ORDER BY id DESC LIMIT ",
        )
        .push_bind(limit)
        .push(" OFFSET ")
        .push_bind(offset)
        // Message counts for the page's rows only.
        .push(
            ") SELECT p.id, p.title, p.source, p.agent_id, p.is_ephemeral, p.is_interactive, \
               p.created_at, COALESCE(p.n, 0) AS hit_count, p.total, \
               p.mid AS newest_message_hit, p.cid AS newest_call_hit, \
               (SELECT COUNT(*) FROM chat_sessions_stack st JOIN chat_history h \
                  ON h.session_stack_id = st.id WHERE st.session_id = p.id) AS message_count, \
               (SELECT MAX(h.created_at) FROM chat_sessions_stack st JOIN chat_history h \
                  ON h.session_stack_id = st.id WHERE st.session_id = p.id) AS last_message_at \
             FROM p ORDER BY p.id DESC",
        );
        Ok(b.build_query_as::<Row>().fetch_all(&mut *self.read().await?).await?)
    }

    /// Each listed session's best-ranked hit over both indexes, among the hits in its newest
    /// `BEST_HIT_MESSAGES` messages and its newest hit of each index.
    async fn best_hits(
        &self,
        text: &SearchText,
        rows: &[Row],
    ) -> Result<HashMap<i64, SearchHit>, StoreError> {
        let sessions: Vec<i64> =
            rows.iter().filter(|r| r.hit_count > 0).map(|r| r.summary.id).collect();
        if sessions.is_empty() {
            return Ok(HashMap::new());
        }
        let recent = self.recent_messages(&sessions).await?;
        let mut best: HashMap<i64, HitRow> = HashMap::new();
        for index in text.indexes() {
            let newest = rows.iter().filter(|r| r.hit_count > 0).filter_map(|r| match index {
                Index::Messages(_) => r.newest_message_hit,
                Index::Calls(_) => r.newest_call_hit,
            });
            let ranked = self.best_of(index, &recent, newest.collect()).await?;
            for row in self.hit_rows(index, &ranked).await? {
                let better = best.get(&row.session_id).is_none_or(|b| by_rank(&row, b).is_lt());
                if better {
                    best.insert(row.session_id, row);
                }
            }
        }
        best.into_iter().map(|(sid, row)| Ok((sid, row.into_hit()?))).collect()
    }

    /// (session, message id) of the sessions' newest `BEST_HIT_MESSAGES` messages of each
    /// frame, read off the frame index.
    async fn recent_messages(&self, sessions: &[i64]) -> Result<Vec<(i64, i64)>, StoreError> {
        let mut b = QueryBuilder::<Sqlite>::new(
            "SELECT st.session_id, h.id FROM chat_sessions_stack st JOIN chat_history h \
             ON h.id IN (SELECT id FROM chat_history WHERE session_stack_id = st.id \
               ORDER BY id DESC LIMIT ",
        );
        b.push_bind(BEST_HIT_MESSAGES).push(") WHERE st.session_id IN (");
        let mut ids = b.separated(", ");
        for id in sessions {
            ids.push_bind(*id);
        }
        b.push(")");
        Ok(b.build_query_as().fetch_all(&mut *self.read().await?).await?)
    }

    /// Each session's best-ranked hit of `index` among the hits in `recent` (session, message
    /// id) and the rows `newest`. Only those are scored: one MATCH over their rowid range, the
    /// others filtered out before `rank` is read (`+rowid` keeps SQLite from turning the list
    /// into one MATCH per row).
    async fn best_of(
        &self,
        index: Index<'_>,
        recent: &[(i64, i64)],
        newest: Vec<i64>,
    ) -> Result<Vec<Ranked>, StoreError> {
        let table = index.table();
        // The candidates' rows with their session: messages are their own rows; a call is
        // found through its message.
        let mut b = QueryBuilder::<Sqlite>::new("WITH recent(sid, mid) AS (VALUES ");
        for (i, (sid, mid)) in recent.iter().enumerate() {
            b.push(if i == 0 { "(" } else { ", (" });
            b.push_bind(*sid).push(", ").push_bind(*mid).push(")");
        }
        b.push("), newest(id) AS (VALUES ");
        for (i, id) in newest.iter().enumerate() {
            b.push(if i == 0 { "(" } else { ", (" }).push_bind(*id).push(")");
        }
        if newest.is_empty() {
            b.push("(NULL)");
        }
        b.push(match index {
            Index::Messages(_) => {
                "), cand(id) AS (SELECT mid FROM recent UNION SELECT id FROM newest \
                   WHERE id IS NOT NULL)"
            }
            Index::Calls(_) => {
                "), cand(id) AS (SELECT t.id FROM recent JOIN chat_llm_tools t \
                   ON t.message_id = recent.mid UNION SELECT id FROM newest WHERE id IS NOT NULL)"
            }
        });
        b.push(format_args!(
            ", span AS (SELECT MIN(id) AS lo, MAX(id) AS hi FROM cand), \
             scored AS MATERIALIZED (SELECT f.rowid AS id, f.rank AS rank FROM {table} f \
               WHERE {table} MATCH "
        ))
        .push_bind(index.query())
        .push(
            " AND f.rowid BETWEEN (SELECT lo FROM span) AND (SELECT hi FROM span) \
               AND +f.rowid IN (SELECT id FROM cand)) \
             SELECT st.session_id, scored.id, scored.rank FROM scored",
        );
        b.push(index.joins("scored.id"));
        b.push(" JOIN chat_sessions_stack st ON st.id = h.session_stack_id");
        let scored: Vec<(i64, i64, f64)> =
            b.build_query_as().fetch_all(&mut *self.read().await?).await?;
        let mut best: HashMap<i64, Ranked> = HashMap::new();
        for (sid, id, rank) in scored {
            // Lower ranks first; equal ranks: the newer hit.
            let better =
                best.get(&sid).is_none_or(|b| rank.total_cmp(&b.rank).then(b.id.cmp(&id)).is_lt());
            if better {
                best.insert(sid, Ranked { id, rank });
            }
        }
        Ok(best.into_values().collect())
    }
}
