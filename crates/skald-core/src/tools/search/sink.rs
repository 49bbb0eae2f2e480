//! Collects `search_files` results grouped by file, `path:line:text` for a match and
//! `path-line-text` for context (ripgrep's shape), under caps on matches and bytes.

use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};

/// A minified file's line must not fill the output by itself.
const MAX_LINE_CHARS: usize = 300;

/// Everything found so far, and whether a cap stopped the search.
pub(super) struct Hits {
    text: String,
    matches: usize,
    files: usize,
    max_matches: usize,
    max_bytes: usize,
    stop: Option<Stop>,
}

/// Why the search stopped early: either way, more results exist than are shown.
#[derive(Clone, Copy)]
enum Stop {
    Matches,
    Bytes,
}

impl Hits {
    pub fn new(max_matches: usize, max_bytes: usize) -> Self {
        Self { text: String::new(), matches: 0, files: 0, max_matches, max_bytes, stop: None }
    }

    /// The sink for one file's results.
    pub fn file<'a>(&'a mut self, shown: &'a str) -> FileSink<'a> {
        FileSink { hits: self, path: shown, started: false }
    }

    /// A cap was reached: search no further.
    pub fn stopped(&self) -> bool {
        self.stop.is_some()
    }

    /// The matches and a last line saying how many, or that more exist and how to narrow.
    pub fn finish(self, none_found: impl FnOnce() -> String) -> String {
        if self.matches == 0 {
            return none_found();
        }
        let (n, files) = (self.matches, self.files);
        let files = if files == 1 { "1 file".to_string() } else { format!("{files} files") };
        let footer = match self.stop {
            None => format!("[{n} matches in {files}]"),
            Some(Stop::Matches) => format!(
                "[… more results: showing the first {n} matches in {files}; narrow the search \
                 with `path` or `glob`, or raise `max_matches`]"
            ),
            Some(Stop::Bytes) => format!(
                "[… more results: output cut at {} bytes after {n} matches in {files}; narrow \
                 the search with `path` or `glob`]",
                self.max_bytes
            ),
        };
        format!("{}\n{footer}\n", self.text)
    }
}

/// One file's lines into `Hits`.
pub(super) struct FileSink<'a> {
    hits: &'a mut Hits,
    path: &'a str,
    started: bool,
}

impl FileSink<'_> {
    /// Appends one line; false when the byte cap refuses it.
    fn push(&mut self, sep: char, number: Option<u64>, bytes: &[u8]) -> bool {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        let text = if text.chars().count() > MAX_LINE_CHARS {
            format!("{}… [line cut]", text.chars().take(MAX_LINE_CHARS).collect::<String>())
        } else {
            text.to_string()
        };
        let n = number.map(|n| n.to_string()).unwrap_or_default();
        // A blank line between files keeps each file's results together for the reader.
        let gap = if !self.started && !self.hits.text.is_empty() { "\n" } else { "" };
        let line = format!("{gap}{}{sep}{n}{sep}{text}\n", self.path);
        if self.hits.text.len() + line.len() > self.hits.max_bytes {
            self.hits.stop = Some(Stop::Bytes);
            return false;
        }
        if !self.started {
            self.started = true;
            self.hits.files += 1;
        }
        self.hits.text.push_str(&line);
        true
    }
}

impl Sink for FileSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        // One match past the cap proves more exist; it is not shown.
        if self.hits.matches >= self.hits.max_matches {
            self.hits.stop = Some(Stop::Matches);
            return Ok(false);
        }
        self.hits.matches += 1;
        let first = mat.line_number();
        for (i, line) in mat.lines().enumerate() {
            if !self.push(':', first.map(|n| n + i as u64), line) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        // Past the cap, only the last shown match's trailing lines are wanted.
        if self.hits.matches >= self.hits.max_matches && *ctx.kind() != SinkContextKind::After {
            return Ok(true);
        }
        Ok(self.push('-', ctx.line_number(), ctx.bytes()))
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        if self.started {
            self.hits.text.push_str("--\n");
        }
        Ok(true)
    }
}
