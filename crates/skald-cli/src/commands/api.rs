//! `skald api [OP [PARAMS]]`: any operation of the table by name, so every operation the app and
//! `serve` answer is reachable from a terminal without a subcommand of its own.

use skald_api::{Caller, OPERATIONS};
use skald_core::Engine;
use skald_protocol::{ApiError, ErrorCode};

use crate::exit;
use crate::output::Output;

/// Runs `op` with `params` (a JSON object; none is `{}`) and prints its result as JSON.
pub async fn run(
    engine: &Engine,
    op: &str,
    params: Option<&str>,
    out: &Output,
) -> Result<u8, ApiError> {
    let params = match params {
        Some(text) => serde_json::from_str(text).map_err(|e| {
            ApiError::new(
                ErrorCode::InvalidInput,
                format!("the params of `{op}` are not JSON: {e}"),
            )
        })?,
        None => serde_json::Value::Null,
    };
    let result = skald_api::call(engine, &Caller::Cli, op, params).await?;
    out.json(&result)?;
    Ok(exit::OK)
}

/// Every operation with the first line of its doc (as JSON with `--json`).
pub fn list(out: &Output) -> u8 {
    let first_line = |doc: &'static str| doc.lines().next().unwrap_or_default().trim();
    if out.is_json() {
        let ops: Vec<_> = OPERATIONS
            .iter()
            .map(|op| serde_json::json!({ "name": op.name, "doc": op.doc.trim() }))
            .collect();
        // A list of plain strings always encodes.
        let _ = out.json(&ops);
    } else {
        for op in OPERATIONS {
            out.line(&format!("{:<22} {}", op.name, first_line(op.doc)));
        }
        out.line("skald api OP '{\"param\": ...}' runs one and prints its result as JSON");
    }
    exit::OK
}
