//! The engine's notes about the data dir (a folder or database made private, a database opened
//! only to read) as `skald: note: …` lines on stderr; every other log line stays silent.

use std::fmt;

use tracing::{Event, Subscriber};
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Installs the stderr printer for the data dir's notes.
pub fn print_on_stderr() {
    let only_notes =
        Targets::new().with_target(skald_core::data_dir::LOG_TARGET, LevelFilter::INFO);
    let printer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .event_format(Note)
        .with_filter(only_notes);
    // Already installed (never, in the binary) is fine: the notes are a courtesy.
    let _ = tracing_subscriber::registry().with(printer).try_init();
}

/// `skald: note: <message>`, like the CLI's own notes.
struct Note;

impl<S, N> FormatEvent<S, N> for Note
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        write!(writer, "skald: note: ")?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}
