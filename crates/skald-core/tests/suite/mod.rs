mod agent_jobs;
mod agents;
mod approval;
mod approval_paths;
mod approved_writes;
mod args_schema;
mod async_tasks;
mod auto_resume;
mod briefings;
mod bypasses;
mod compaction;
mod config;
mod context;
mod context_cache;
mod engine;
mod hub;
mod independent_llm;
mod interrupted;
mod jobs;
mod jobs_home;
mod lifecycle;
mod local_llm;
mod matrix;
mod mcp;
mod mcp_media;
mod memory;
mod model_powers;
mod outbox;
mod parked_input;
mod processes;
mod search;
mod search_tools;
mod settings;
mod small_window;
mod streaming;
mod subagents;
mod surfaces;
mod tic;
mod tools;
mod turn;
mod turn_ends;
mod window;
mod work_queue;

/// Runs `sql` on the data dir's database past the column CHECKs, as a hand edit or a damaged file
/// would.
pub async fn write_unchecked(data_dir: &std::path::Path, sql: &str) {
    let store = skald_store::Store::open_in_dir(data_dir).await.unwrap();
    let mut conn = store.pool().acquire().await.unwrap();
    sqlx::query("PRAGMA ignore_check_constraints = ON").execute(&mut *conn).await.unwrap();
    sqlx::query(sql).execute(&mut *conn).await.unwrap();
}

/// A `default` rule for `execute_cmd` whose stored action this build does not know.
pub const UNKNOWN_ACTION_RULE: &str = "INSERT INTO approval_rules (group_id, tool_pattern, action, \
     priority, created_at) VALUES ('default', 'execute_cmd', 'ask_twice', 1, '2026-01-01T00:00:00Z')";
