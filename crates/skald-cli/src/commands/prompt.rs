//! Where `skald chat` takes its message: the MESSAGE argument, stdin (`-`) or `--file PATH`.

use std::io::{IsTerminal, Read};
use std::path::Path;

use skald_core::regular_file;
use skald_protocol::{ApiError, ErrorCode};

/// The most a message read from stdin or a file may hold: enough for any prompt, and a file
/// named by mistake (a log, an image) is refused before it is stored and sent to a model.
const MAX_PROMPT_BYTES: u64 = 8 * 1024 * 1024;

/// The message of `skald chat`, and whether it was typed as the argument (only then may it be a
/// `/` command: a prompt read from a file is sent as written, whatever its first line).
#[derive(Debug, PartialEq, Eq)]
pub struct Prompt {
    pub text: String,
    pub typed: bool,
}

/// The message: `--file PATH`, stdin for a MESSAGE of `-`, else MESSAGE itself (clap makes sure
/// exactly one of the two is given).
pub fn read(message: Option<String>, file: Option<&Path>) -> Result<Prompt, ApiError> {
    let text = match (file, message) {
        (Some(path), _) => from_file(path)?,
        (None, Some(m)) if m == "-" => from_stdin()?,
        (None, Some(text)) => return Ok(Prompt { text, typed: true }),
        (None, None) => return Err(invalid("give a MESSAGE, `-` (stdin) or --file PATH")),
    };
    Ok(Prompt { text, typed: false })
}

fn from_file(path: &Path) -> Result<String, ApiError> {
    let text = regular_file::read_to_string(path, Some(MAX_PROMPT_BYTES))
        .map_err(|e| invalid(format!("--file {}: {}", path.display(), e.reason())))?;
    non_empty(text, &format!("--file {}", path.display()))
}

fn from_stdin() -> Result<String, ApiError> {
    let mut stdin = std::io::stdin().lock();
    if stdin.is_terminal() {
        // Otherwise the command looks hung while it waits for the end of the input.
        eprintln!("reading the message from stdin; end it with Ctrl-D");
    }
    let mut bytes = Vec::new();
    stdin
        .by_ref()
        .take(MAX_PROMPT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| invalid(format!("cannot read the message from stdin: {e}")))?;
    if bytes.len() as u64 > MAX_PROMPT_BYTES {
        return Err(invalid(format!(
            "the message on stdin is over {MAX_PROMPT_BYTES} bytes, more than a prompt holds"
        )));
    }
    let text =
        String::from_utf8(bytes).map_err(|_| invalid("the message on stdin is not UTF-8 text"))?;
    non_empty(text, "stdin")
}

/// The text without the line ends that close it (as `$(cat file)` would give it), refused when
/// nothing is left: an empty file or pipe is a mistake, not a message.
fn non_empty(mut text: String, from: &str) -> Result<String, ApiError> {
    let kept = text.trim_end_matches(['\n', '\r']).len();
    text.truncate(kept);
    if text.trim().is_empty() {
        return Err(invalid(format!("the message from {from} is empty")));
    }
    Ok(text)
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidInput, message)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_typed_message_is_kept_whole_and_may_be_a_command() {
        let p = read(Some("/new\n".into()), None).unwrap();
        assert_eq!(p, Prompt { text: "/new\n".into(), typed: true });
    }

    #[test]
    fn closing_line_ends_are_dropped_and_inner_ones_kept() {
        assert_eq!(non_empty("a\r\n\nb\n\r\n".into(), "x").unwrap(), "a\r\n\nb");
        assert!(non_empty("\n \n".into(), "x").unwrap_err().message.contains("from x is empty"));
    }
}
