//! `skald`: the headless command line over the same `Engine` the desktop app uses.

mod cli;
mod commands;
mod output;
mod serve;

use std::process::ExitCode;

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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let out = Output::new(cli.json);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            out.error(&skald_protocol::ApiError::new(
                skald_protocol::ErrorCode::Internal,
                format!("cannot start the async runtime: {e}"),
            ));
            return ExitCode::from(exit::ERROR);
        }
    };
    match runtime.block_on(commands::run(cli.command, cli.data_dir, &out)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            out.error(&e);
            ExitCode::from(exit::ERROR)
        }
    }
}
