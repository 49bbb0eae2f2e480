//! `skald chat "/new"`: the session commands the app's composer has, run by the CLI through the
//! same operations, instead of being sent to the model as text.
//!
//! A message that starts with `/` and a word of letters is a command: a known one runs, an
//! unknown one is an error that lists them (a typo such as `/nwe` must not reach the model as a
//! message while the person believes the session was reset). Anything else is a message: a
//! path such as `/usr/bin/env is missing` is sent as written, and `//word` sends `/word`.

use skald_protocol::{ApiError, ErrorCode};

/// The commands, as `/name [args]`, with what each does.
pub const COMMANDS: [(Slash, &str, &str); 6] = [
    (Slash::New, "new", "start a new session for the source (its bypasses end)"),
    (Slash::Stop, "stop", "stop the running turn and drop the queued messages"),
    (Slash::Compact, "compact [focus]", "summarise older messages to free context"),
    (Slash::ResetTools, "resettools", "revoke the tool groups activated in this session"),
    (Slash::Context, "context", "the context the next request carries against the window"),
    (Slash::Cost, "cost", "what this session has cost"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slash {
    New,
    Stop,
    Compact,
    ResetTools,
    Context,
    Cost,
}

/// What `skald chat MESSAGE` was given.
#[derive(Debug, PartialEq, Eq)]
pub enum Input<'a> {
    Message(&'a str),
    Command(Slash, &'a str),
}

/// Reads `text` as a command or a message.
pub fn parse(text: &str) -> Result<Input<'_>, ApiError> {
    if text.starts_with("//") {
        // `//x` sends `/x`: the escape for a message that must start with a slash.
        return Ok(Input::Message(&text[1..]));
    }
    let Some(rest) = text.strip_prefix('/') else { return Ok(Input::Message(text)) };
    let (word, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphabetic()) {
        return Ok(Input::Message(text));
    }
    let word = word.to_ascii_lowercase();
    let Some((slash, usage, _)) =
        COMMANDS.iter().find(|(_, usage, _)| usage.split(' ').next() == Some(word.as_str()))
    else {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            format!(
                "/{word} is not a command; the commands are {}. To send a message that starts \
                 with `/`, write `//{word}`",
                names()
            ),
        ));
    };
    let args = args.trim();
    if !args.is_empty() && !usage.contains(' ') {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            format!("/{word} takes no argument (got `{args}`); send the message on its own"),
        ));
    }
    Ok(Input::Command(*slash, args))
}

/// `/new, /stop, /compact [focus], …`
fn names() -> String {
    let names: Vec<String> = COMMANDS.iter().map(|(_, usage, _)| format!("/{usage}")).collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_apps_commands_are_commands() {
        assert_eq!(parse("/new").unwrap(), Input::Command(Slash::New, ""));
        assert_eq!(parse("/NEW").unwrap(), Input::Command(Slash::New, ""));
        assert_eq!(parse("/stop").unwrap(), Input::Command(Slash::Stop, ""));
        assert_eq!(
            parse("/compact  the parser ").unwrap(),
            Input::Command(Slash::Compact, "the parser")
        );
        assert_eq!(parse("/resettools").unwrap(), Input::Command(Slash::ResetTools, ""));
        assert_eq!(parse("/context").unwrap(), Input::Command(Slash::Context, ""));
        assert_eq!(parse("/cost\n").unwrap(), Input::Command(Slash::Cost, ""));
    }

    #[test]
    fn an_unknown_command_is_an_error_naming_the_known_ones() {
        let e = parse("/nwe").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(e.message.contains("/nwe is not a command"), "{}", e.message);
        for name in
            ["/new", "/stop", "/compact [focus]", "/resettools", "/context", "/cost", "//nwe"]
        {
            assert!(e.message.contains(name), "{name}: {}", e.message);
        }
        assert!(parse("/new session please").unwrap_err().message.contains("takes no argument"));
    }

    #[test]
    fn anything_else_is_a_message_and_a_double_slash_sends_one_slash() {
        for text in ["hello", "/usr/bin/env is missing", "/", "/ new", " /new", "/x1 y", "a /new"] {
            assert_eq!(parse(text).unwrap(), Input::Message(text), "{text}");
        }
        assert_eq!(parse("//new is a command").unwrap(), Input::Message("/new is a command"));
        assert_eq!(parse("//").unwrap(), Input::Message("/"));
    }
}
