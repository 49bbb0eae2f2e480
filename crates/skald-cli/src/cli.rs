//! The argument grammar. Only commands that exist are declared, so `--help` never lists a promise.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "skald",
    version,
    about = "Skald: a durable LLM agent engine — headless commands",
    after_help = "Exit codes: 0 success · 1 error · 2 bad usage · 3 waiting for a human decision"
)]
pub struct Cli {
    /// Data directory (config.yml, skald.db). Default: $SKALD_DATA_DIR, else the OS data dir.
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List and inspect sessions.
    #[command(subcommand)]
    Sessions(SessionsCommand),
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List sessions, newest first.
    List {
        /// Only sessions of this source (web, tic, cron, ...).
        #[arg(long)]
        source: Option<String>,
        /// Only sessions whose title or messages contain this text.
        #[arg(long)]
        search: Option<String>,
        /// Page number, from 1.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        page: u32,
        /// Sessions per page (1-200).
        #[arg(long, default_value_t = skald_protocol::DEFAULT_PER_PAGE,
              value_parser = clap::value_parser!(u32).range(1..=i64::from(skald_protocol::MAX_PER_PAGE)))]
        per_page: u32,
    },
    /// Show a session's debug tree (the same shape as the app's session view).
    Show {
        /// Session id.
        id: i64,
    },
}
