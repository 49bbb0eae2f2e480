//! `skald`: the headless command line over the same `Engine` the desktop app uses.

mod cli;
mod commands;
mod notes;
mod output;
mod serve;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use crate::cli::Cli;
use crate::output::Output;

/// Exit codes of the stable CLI contract.
pub mod exit {
    pub const OK: u8 = 0;
    /// An error, or a turn that hit the round limit.
    pub const ERROR: u8 = 1;
    /// Bad usage (clap's own code).
    pub const USAGE: u8 = 2;
    /// A turn parked waiting for a human decision.
    pub const PARKED: u8 = 3;
}

/// How long blocking tasks still running when a command has finished get to end.
const BLOCKING_TASKS_GRACE: Duration = Duration::from_secs(2);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let out = Output::new(cli.json);
    // With --json, stderr carries one JSON error at most: a script reads it.
    if !cli.json {
        notes::print_on_stderr();
    }
    let runtime = match skald_core::async_runtime::build() {
        Ok(rt) => rt,
        Err(e) => {
            out.error(&skald_protocol::ApiError::new(
                skald_protocol::ErrorCode::Internal,
                format!("cannot start the async runtime: {e}"),
            ));
            return ExitCode::from(exit::ERROR);
        }
    };
    let result = runtime.block_on(commands::run(cli.command, cli.data_dir, &out));
    // Dropping the runtime would wait for every blocking task, and one stuck in a read (a hung
    // network file system) never ends: the command has finished, so wait briefly, then leave
    // such a task behind as a kill would. Ctrl-C, `skald stop` and SIGTERM thus always end us.
    runtime.shutdown_timeout(BLOCKING_TASKS_GRACE);
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            out.error(&e);
            ExitCode::from(exit::ERROR)
        }
    }
}
