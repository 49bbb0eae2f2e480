//! Dispatch of parsed commands to the engine.

mod sessions;

use std::path::PathBuf;

use skald_core::{Engine, EngineOptions};
use skald_protocol::ApiError;

use crate::cli::Command;
use crate::output::Output;

pub async fn run(
    command: Command,
    data_dir: Option<PathBuf>,
    out: &Output,
) -> Result<u8, ApiError> {
    let engine = Engine::open(EngineOptions { data_dir, ..Default::default() }).await?;
    match command {
        Command::Sessions(cmd) => sessions::run(&engine, cmd, out).await,
    }
}
