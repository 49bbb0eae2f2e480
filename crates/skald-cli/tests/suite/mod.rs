mod agents;
mod approvals;
mod attacker;
mod chat;
mod compact;
mod help;
mod jobs;
mod kill_harness;
mod kill_harness_jobs;
mod matrix;
mod mcp;
mod memory;
mod one_runtime;
mod processes;
mod prompts;
mod search;
mod serve;
mod serve_chat;
mod serve_installed;
mod serve_live;
mod sessions;
mod tasks;
mod tic;

use std::process::{Command, Output};

/// Runs `skald` with a clean environment so the user's own data dir is never touched.
pub fn skald(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skald"))
        .args(args)
        .env_remove("SKALD_DATA_DIR")
        .env_remove("SKALD_LLM_BASE_URL")
        .env_remove("SKALD_LLM_MODEL")
        .env_remove("SKALD_LLM_API_KEY")
        .output()
        .unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
