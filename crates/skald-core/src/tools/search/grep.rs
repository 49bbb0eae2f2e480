//! `search_files`' engine: one matcher and one searcher over the shared walk, under the caps.

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use tokio_util::sync::CancellationToken;

use super::sink::Hits;
use super::walk::Scope;
use crate::tools::{ReadFilter, ToolError};

/// How letters compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Case {
    Sensitive,
    Insensitive,
    /// Insensitive unless the pattern has an uppercase letter (ripgrep's `--smart-case`).
    Smart,
}

/// One search, its arguments checked.
#[derive(Debug, Clone)]
pub(super) struct GrepRequest {
    pub pattern: String,
    pub literal: bool,
    pub case: Case,
    /// Only paths matching it (ripgrep's `--glob`: `!` excludes; no `/` matches at any depth).
    pub glob: Option<String>,
    pub before: usize,
    pub after: usize,
    pub max_matches: usize,
    pub max_bytes: usize,
}

/// Searches every file of the walk; a file that cannot be read is skipped like ripgrep does.
pub(super) fn grep(
    scope: &Scope,
    req: &GrepRequest,
    filter: &ReadFilter,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(req.case == Case::Insensitive)
        .case_smart(req.case == Case::Smart)
        .fixed_strings(req.literal)
        // Matches never span lines, which lets the searcher look at whole buffers at a time.
        .line_terminator(Some(b'\n'))
        .build(&req.pattern)
        .map_err(|e| {
            ToolError::InvalidArguments(format!(
                "`pattern` is not a valid regular expression ({e}); set `literal` to search for \
                 the text as it is"
            ))
        })?;
    let overrides = match &req.glob {
        Some(glob) => {
            let bad = |e: ignore::Error| {
                ToolError::InvalidArguments(format!("`glob` is not a valid glob ({e})"))
            };
            let mut builder = OverrideBuilder::new(&scope.root);
            builder.add(glob).map_err(bad)?;
            Some(builder.build().map_err(bad)?)
        }
        None => None,
    };
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .before_context(req.before)
        .after_context(req.after)
        // ripgrep's rule for files it finds by walking: a NUL byte means binary, skip the rest.
        .binary_detection(BinaryDetection::quit(b'\0'))
        .build();
    let mut hits = Hits::new(req.max_matches, req.max_bytes);
    for entry in scope.walker(filter, overrides)? {
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let shown = scope.shown(entry.path());
        // An unreadable file (permissions, vanished) is skipped, not fatal for the search.
        let _ = searcher.search_path(&matcher, entry.path(), hits.file(&shown));
        if hits.stopped() {
            break;
        }
    }
    Ok(hits.finish(|| format!("No matches for `{}` in {}.", req.pattern, scope.shown_root())))
}
