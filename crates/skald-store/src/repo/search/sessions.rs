//! The session list with a search: sessions whose title contains the text or whose messages
//! and calls match it, newest first like the plain list, each with its hit count and best hit.

use std::collections::HashMap;

use skald_protocol::{Page, SearchHit, SessionListQuery, SessionSummary};
use sqlx::{FromRow, QueryBuilder, Sqlite};

use super::{HitRow, Ranked, SearchText, by_rank, escape_like};
use crate::error::StoreError;
use crate::pool::Store;
use crate::repo::sessions::SummaryRow;

#[derive(FromRow)]
struct Row {
    #[sqlx(flatten)]
    summary: SummaryRow,
    hit_count: i64,
    total: i64,
}

impl Store {
    /// `list_sessions` with a search text (trimmed, not empty).
    ///
    /// Which sessions match is exact: every hit is mapped to its session without ranking (which
    /// is what makes a word in most messages affordable); then only the page's sessions rank
    /// their own hits for their best one.
    pub(crate) async fn list_sessions_matching(
        &self,
        query: &SessionListQuery,
        search: &str,
        per_page: u32,
        page: u32,
    ) -> Result<Page<SessionSummary>, StoreError> {
        let text = SearchText::parse(search);
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
        let with_hits: Vec<i64> =
            rows.iter().filter(|r| r.hit_count > 0).map(|r| r.summary.id).collect();
        let mut best = self.best_hits(&text, &with_hits).await?;
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
            b.push("SELECT NULL AS sid WHERE 0");
        }
        for (i, index) in indexes.into_iter().enumerate() {
            if i > 0 {
                b.push(" UNION ALL ");
            }
            b.push("SELECT st.session_id AS sid");
            b.push(index.from());
            b.push(" JOIN chat_sessions_stack st ON st.id = h.session_stack_id");
            index.push_filter(&mut b, None);
        }
        b.push(
            "), per AS (SELECT sid, COUNT(*) AS n FROM hits GROUP BY sid), \
             cand AS (SELECT s.id, s.title, s.source, s.agent_id, s.is_ephemeral, \
               s.is_interactive, s.created_at, per.n, \
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
               (SELECT COUNT(*) FROM chat_sessions_stack st JOIN chat_history h \
                  ON h.session_stack_id = st.id WHERE st.session_id = p.id) AS message_count, \
               (SELECT MAX(h.created_at) FROM chat_sessions_stack st JOIN chat_history h \
                  ON h.session_stack_id = st.id WHERE st.session_id = p.id) AS last_message_at \
             FROM p ORDER BY p.id DESC",
        );
        Ok(b.build_query_as::<Row>().fetch_all(self.pool()).await?)
    }

    /// Each session's best-ranked hit over both indexes.
    async fn best_hits(
        &self,
        text: &SearchText,
        sessions: &[i64],
    ) -> Result<HashMap<i64, SearchHit>, StoreError> {
        if sessions.is_empty() {
            return Ok(HashMap::new());
        }
        let scope = self.scope(sessions).await?;
        let mut best: HashMap<i64, HitRow> = HashMap::new();
        for index in text.indexes() {
            let mut b = QueryBuilder::<Sqlite>::new(
                "SELECT id, MIN(rank) AS rank FROM (SELECT st.session_id AS sid, f.rowid AS id, \
                 f.rank AS rank",
            );
            b.push(index.from());
            b.push(" JOIN chat_sessions_stack st ON st.id = h.session_stack_id");
            index.push_filter(&mut b, Some(&scope));
            // With exactly one min(), SQLite takes the bare `id` from the row holding it.
            b.push(") GROUP BY sid");
            let ranked: Vec<(i64, f64)> = b.build_query_as().fetch_all(self.pool()).await?;
            let ranked: Vec<Ranked> =
                ranked.into_iter().map(|(id, rank)| Ranked { id, rank }).collect();
            for row in self.hit_rows(index, &ranked).await? {
                let better = best.get(&row.session_id).is_none_or(|b| by_rank(&row, b).is_lt());
                if better {
                    best.insert(row.session_id, row);
                }
            }
        }
        best.into_iter().map(|(sid, row)| Ok((sid, row.into_hit()?))).collect()
    }
}
