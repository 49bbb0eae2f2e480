//! `skald-matrix`: renders the reliability matrix's recorded rows into `docs/reliability.md`, or
//! checks that the committed file is what the rows say.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use skald_testkit::matrix;

#[derive(Parser, Debug)]
#[command(about = "Render the reliability matrix from the rows its tests recorded")]
struct Args {
    /// The JSON lines the row tests appended (`SKALD_MATRIX_OUT`).
    #[arg(long)]
    input: PathBuf,
    /// Write the document here.
    #[arg(long, conflicts_with = "check", required_unless_present = "check")]
    output: Option<PathBuf>,
    /// Compare with this file instead of writing it; fail when it differs.
    #[arg(long)]
    check: Option<PathBuf>,
}

fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    let text = std::fs::read_to_string(&args.input)
        .with_context(|| format!("cannot read {}", args.input.display()))?;
    let observations = matrix::parse_lines(&text)?;
    let (doc, tally) = matrix::render(&observations)?;
    let summary = format!("{} rows, {} measured, {} hold", tally.rows, tally.measured, tally.hold);
    if let Some(path) = args.check {
        let committed = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if committed != doc {
            eprintln!(
                "{} is out of date ({summary}): run scripts/reliability.sh and commit the result",
                path.display()
            );
            return Ok(ExitCode::FAILURE);
        }
    } else if let Some(path) = args.output {
        std::fs::write(&path, &doc).with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {} ({summary})", path.display());
    }
    if !tally.complete() {
        eprintln!("the matrix is not complete: {summary}");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
