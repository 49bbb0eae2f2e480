//! One measured row: what the test observed, whether the row holds, and where it is written.

use std::io::Write as _;

use serde::{Deserialize, Serialize};

use super::catalog::{self, RowSpec};

/// Set to a file path, every finished row appends its observation there as one JSON line.
pub const OUT_ENV: &str = "SKALD_MATRIX_OUT";

/// How a row ended, as the test measured it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "kind", content = "why", rename_all = "snake_case")]
pub enum Ending {
    /// The work went on: a retry, a fallback, or the model corrected itself.
    Recovery,
    /// It stopped with a message that names what went wrong.
    ClearError,
    /// Neither: the reason says what was missing.
    Unclear(String),
}

/// What one row test observed. Written by the test from real events, requests and rows; never
/// by hand.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    pub row: String,
    pub user_sees: String,
    pub model_sees: String,
    pub stored: String,
    /// What was lost (empty: nothing).
    pub lost: Vec<String>,
    /// What ran without the human's approval (empty: nothing).
    pub unapproved: Vec<String>,
    pub ending: Ending,
}

impl Observation {
    /// A clear error or a recovery, nothing lost, nothing run without approval.
    pub fn holds(&self) -> bool {
        !matches!(self.ending, Ending::Unclear(_))
            && self.lost.is_empty()
            && self.unapproved.is_empty()
    }
}

/// Builds a row's observation as the test goes, then [`Row::finish`] records and asserts it.
#[must_use = "a row is only recorded and checked by `finish`"]
#[derive(Debug)]
pub struct Row {
    spec: &'static RowSpec,
    user_sees: Vec<String>,
    model_sees: Vec<String>,
    stored: Vec<String>,
    lost: Vec<String>,
    unapproved: Vec<String>,
    ending: Option<Ending>,
    redactions: Vec<(String, String)>,
}

impl Row {
    /// A row of the catalog; an unknown id panics, so a typo cannot add an unlisted row.
    pub fn new(id: &str) -> Row {
        let Some(spec) = catalog::spec(id) else {
            panic!("row `{id}` is not in skald_testkit::matrix::ROWS");
        };
        Row {
            spec,
            user_sees: Vec::new(),
            model_sees: Vec::new(),
            stored: Vec::new(),
            lost: Vec::new(),
            unapproved: Vec::new(),
            ending: None,
            redactions: Vec::new(),
        }
    }

    /// Replaces `volatile` (a temp path, a port) with `stable` in every column, so the table
    /// does not change from run to run.
    pub fn redact(&mut self, volatile: impl Into<String>, stable: &str) -> &mut Row {
        let volatile = volatile.into();
        if !volatile.is_empty() {
            self.redactions.push((volatile, stable.to_owned()));
        }
        self
    }

    /// Adds a sentence to "what the user sees" (events, CLI output, HTTP answers).
    pub fn user_sees(&mut self, text: impl Into<String>) -> &mut Row {
        self.user_sees.push(text.into());
        self
    }

    /// Adds a sentence to "what the model sees" (the next request's relevant message).
    pub fn model_sees(&mut self, text: impl Into<String>) -> &mut Row {
        self.model_sees.push(text.into());
        self
    }

    /// Adds a sentence to "what is stored" (rows, statuses, files on disk).
    pub fn stored(&mut self, text: impl Into<String>) -> &mut Row {
        self.stored.push(text.into());
        self
    }

    /// Records `what` as lost when `lost` is true.
    pub fn lost_if(&mut self, lost: bool, what: &str) -> &mut Row {
        if lost {
            self.lost.push(what.to_owned());
        }
        self
    }

    /// Records `what` as run without approval when `ran` is true.
    pub fn unapproved_if(&mut self, ran: bool, what: &str) -> &mut Row {
        if ran {
            self.unapproved.push(what.to_owned());
        }
        self
    }

    /// The row recovered when `recovered` holds; otherwise it ended unclearly, for `why`.
    pub fn recovered_if(&mut self, recovered: bool, why_not: &str) -> &mut Row {
        self.end(if recovered { Ending::Recovery } else { Ending::Unclear(why_not.to_owned()) })
    }

    /// The row ended in an error shown to the user: clear when `message` names every one of
    /// `must_name` (case-insensitive), unclear otherwise.
    pub fn clear_error(&mut self, message: &str, must_name: &[&str]) -> &mut Row {
        let lower = message.to_lowercase();
        let missing: Vec<&str> =
            must_name.iter().copied().filter(|n| !lower.contains(&n.to_lowercase())).collect();
        self.end(match (message.trim().is_empty(), missing.is_empty()) {
            (true, _) => Ending::Unclear("no error message".to_owned()),
            (false, true) => Ending::ClearError,
            (false, false) => {
                Ending::Unclear(format!("the message does not name {}", missing.join(", ")))
            }
        })
    }

    fn end(&mut self, ending: Ending) -> &mut Row {
        assert!(self.ending.is_none(), "row `{}` ended twice", self.spec.id);
        self.ending = Some(ending);
        self
    }

    /// The observation as it will be recorded (redacted).
    pub fn observation(&self) -> Observation {
        let mut redactions = self.redactions.clone();
        // Longest first, so a path is replaced before a prefix of it.
        redactions.sort_by_key(|r| std::cmp::Reverse(r.0.len()));
        let clean = |s: &str| {
            let mut s = s.to_owned();
            for (from, to) in &redactions {
                s = s.replace(from.as_str(), to);
            }
            s
        };
        let join = |parts: &[String]| clean(&parts.join(" "));
        Observation {
            row: self.spec.id.to_owned(),
            user_sees: join(&self.user_sees),
            model_sees: join(&self.model_sees),
            stored: join(&self.stored),
            lost: self.lost.iter().map(|s| clean(s)).collect(),
            unapproved: self.unapproved.iter().map(|s| clean(s)).collect(),
            ending: match &self.ending {
                Some(Ending::Unclear(why)) => Ending::Unclear(clean(why)),
                Some(other) => other.clone(),
                None => Ending::Unclear("the test recorded no ending".to_owned()),
            },
        }
    }

    /// Appends the observation to `$SKALD_MATRIX_OUT` (when set), then fails the test unless
    /// the row holds. Every column must have been filled.
    pub fn finish(&self) {
        let obs = self.observation();
        for (column, text) in [
            ("user sees", &obs.user_sees),
            ("model sees", &obs.model_sees),
            ("stored", &obs.stored),
        ] {
            assert!(!text.trim().is_empty(), "row `{}`: no \"{column}\" recorded", obs.row);
        }
        if let Some(path) = std::env::var_os(OUT_ENV)
            && let Err(e) = append(std::path::Path::new(&path), &obs)
        {
            panic!("cannot append row `{}` to {}: {e}", obs.row, path.to_string_lossy());
        }
        assert!(obs.holds(), "row `{}` does not hold:\n{obs:#?}", obs.row);
    }
}

/// One line, one `write` call on an `O_APPEND` file: rows finishing at once in parallel test
/// processes do not interleave.
fn append(path: &std::path::Path, obs: &Observation) -> std::io::Result<()> {
    let mut line = serde_json::to_string(obs).map_err(std::io::Error::other)?;
    line.push('\n');
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(line.as_bytes())
}

/// `text` in double quotes, cut to `max` characters with an ellipsis, on one line: for quoting
/// messages, results and output in a table cell.
pub fn excerpt(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut cut: String = one_line.chars().take(max).collect();
    if cut.len() < one_line.len() {
        cut.push('…');
    }
    format!("\"{cut}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(id: &str) -> Row {
        let mut row = Row::new(id);
        row.user_sees("a").model_sees("b").stored("c");
        row
    }

    #[test]
    fn a_row_holds_only_with_a_clear_ending_and_nothing_lost_or_unapproved() {
        let mut ok = filled("provider.500");
        ok.recovered_if(true, "");
        assert!(ok.observation().holds());

        let mut lost = filled("provider.500");
        lost.recovered_if(true, "").lost_if(true, "the prompt");
        assert!(!lost.observation().holds());

        let mut ran = filled("provider.500");
        ran.clear_error("denied", &[]).unapproved_if(true, "a write");
        assert!(!ran.observation().holds());

        let mut vague = filled("provider.500");
        vague.clear_error("something went wrong", &["500"]);
        assert_eq!(
            vague.observation().ending,
            Ending::Unclear("the message does not name 500".into())
        );
        assert!(!vague.observation().holds());

        let unfinished = filled("provider.500");
        assert!(!unfinished.observation().holds());
    }

    #[test]
    fn redactions_apply_longest_first_to_every_column() {
        let mut row = Row::new("files.traversal");
        row.redact("/tmp/x", "<tmp>")
            .redact("/tmp/x/work", "<workdir>")
            .user_sees("wrote /tmp/x/work/a and /tmp/x/b")
            .model_sees("m")
            .stored("s")
            .lost_if(true, "/tmp/x/work/a");
        let obs = row.observation();
        assert_eq!(obs.user_sees, "wrote <workdir>/a and <tmp>/b");
        assert_eq!(obs.lost, ["<workdir>/a"]);
    }

    #[test]
    #[should_panic(expected = "not in skald_testkit::matrix::ROWS")]
    fn an_unknown_row_id_is_refused() {
        let _ = Row::new("provider.no-such-row");
    }

    #[test]
    fn excerpts_are_one_line_and_cut() {
        assert_eq!(excerpt("a\n  b", 10), "\"a b\"");
        assert_eq!(excerpt("abcdef", 3), "\"abc…\"");
    }
}
