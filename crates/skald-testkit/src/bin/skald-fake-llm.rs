//! `skald-fake-llm`: the strict fake OpenAI-compatible provider as a standalone process.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, ValueEnum};
use skald_testkit::{FakeLlm, FakeLlmOptions, Script, WhenEmpty};

#[derive(Parser, Debug)]
#[command(about = "Strict fake OpenAI-compatible provider on 127.0.0.1 for tests")]
struct Args {
    /// Port on 127.0.0.1 (0 picks a free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// JSON file: an array of replies, or {"replies": [...], "by_model": {"model": [...]},
    /// "keyed": [{"when": {"tool_result_of": "call_1"}, "reply": {...}}]}.
    #[arg(long)]
    script: Option<PathBuf>,
    /// Model ids listed by /v1/models, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "fake-model,fake-model-2")]
    models: Vec<String>,
    /// What to answer when no scripted reply is queued (echo only for trying a UI by hand).
    #[arg(long, value_enum, default_value_t = EmptyMode::Error)]
    when_empty: EmptyMode,
    /// Pause between streamed SSE events, in milliseconds.
    #[arg(long, default_value_t = 0)]
    chunk_delay_ms: u64,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum EmptyMode {
    Echo,
    Error,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let script = match &args.script {
        Some(path) => Some(Script::from_file(path)?),
        None => None,
    };
    let opts = FakeLlmOptions {
        models: args.models.into_iter().filter(|m| !m.is_empty()).collect(),
        when_empty: match args.when_empty {
            EmptyMode::Echo => WhenEmpty::Echo,
            EmptyMode::Error => WhenEmpty::Error,
        },
        port: args.port,
        chunk_delay_ms: args.chunk_delay_ms,
        // A process cannot fail a test by panicking; it reports on stderr when it stops, and
        // harnesses read `unscripted` in /__fake/requests.
        check_on_drop: false,
    };
    let fake = FakeLlm::start_with(opts).await.context("cannot bind the fake provider")?;
    if let Some(script) = script {
        fake.push_script(script);
    }
    // Listen for the stop signal before announcing the address: a harness may stop us right
    // after its first request, and a signal that arrives unhandled would kill us without a report.
    let stop = stop_signal()?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on {}", fake.base_url())?;
    stdout.flush()?;
    drop(stdout);
    stop.await;
    if let Some(report) = fake.script_report() {
        eprintln!("{report}");
    }
    Ok(())
}

/// Resolves on Ctrl-C/SIGINT or SIGTERM; the handlers are installed when this returns.
#[cfg(unix)]
fn stop_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot listen for SIGINT")?;
    let mut terminate = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

/// Resolves on Ctrl-C.
#[cfg(not(unix))]
fn stop_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
