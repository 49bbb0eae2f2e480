//! Reading many rows as one JSON document built inside SQLite.
//!
//! sqlx hands SQLite rows over from its worker thread one at a time, which costs a few
//! microseconds per row: replaying a long frame (10,000 messages) spent most of its time there.
//! `json_group_array` lets SQLite encode the whole result in C and hand over a single value,
//! which serde then decodes in one pass — several times faster than the row-by-row fetch.

use serde::de::DeserializeOwned;
use sqlx::Arguments as _;
use sqlx::sqlite::SqliteArguments;

use crate::error::StoreError;
use crate::pool::Store;

/// `json_object('a', a, 'b', b, ...)` for `columns`; `bools` are stored as 0/1 and come out as
/// JSON booleans.
pub(crate) fn json_object(columns: &str, bools: &[&str]) -> String {
    let pairs: Vec<String> = columns
        .split(',')
        .map(str::trim)
        .map(|c| {
            if bools.contains(&c) {
                format!("'{c}', json(iif({c}, 'true', 'false'))")
            } else {
                format!("'{c}', {c}")
            }
        })
        .collect();
    format!("json_object({})", pairs.join(", "))
}

impl Store {
    /// Runs `inner` (a complete `SELECT ... ORDER BY ...` whose columns `object` names) and decodes
    /// its rows, in order, from one JSON array.
    pub(crate) async fn fetch_json_rows<T: DeserializeOwned>(
        &self,
        object: &str,
        inner: &str,
        binds: &[i64],
    ) -> Result<Vec<T>, StoreError> {
        let sql = format!("SELECT json_group_array({object}) FROM ({inner})");
        let mut args = SqliteArguments::default();
        for b in binds {
            args.add(*b).map_err(sqlx::Error::Encode)?;
        }
        let doc: String =
            sqlx::query_scalar_with(&sql, args).fetch_one(&mut *self.read().await?).await?;
        serde_json::from_str(&doc)
            .map_err(|e| StoreError::Corrupt { column: "bulk read", value: e.to_string() })
    }
}
