//! Reply scripts loaded from JSON (the binary's `--script` and the control endpoint).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::keyed::KeyedReply;
use super::reply::Reply;
use crate::TestkitError;

/// Replies to queue: a global FIFO plus per-model FIFOs, and keyed replies that answer every
/// request they match.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Script {
    pub replies: Vec<Reply>,
    pub by_model: BTreeMap<String, Vec<Reply>>,
    pub keyed: Vec<KeyedReply>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ScriptFile {
    List(Vec<Reply>),
    Full {
        #[serde(default)]
        replies: Vec<Reply>,
        #[serde(default)]
        by_model: BTreeMap<String, Vec<Reply>>,
        #[serde(default)]
        keyed: Vec<KeyedReply>,
    },
}

impl Script {
    /// Parses either a JSON array of replies or `{"replies": [...], "by_model": {"m": [...]},
    /// "keyed": [{"when": {...}, "reply": {...}}]}`.
    pub fn from_json(text: &str) -> Result<Script, TestkitError> {
        // Parse the array form first on its own so its errors name the bad reply precisely
        // (an untagged enum only says "did not match any variant").
        let trimmed = text.trim_start();
        if trimmed.starts_with('[') {
            let replies: Vec<Reply> = serde_json::from_str(text)?;
            return Ok(Script { replies, ..Script::default() });
        }
        match serde_json::from_str::<ScriptFile>(text)? {
            ScriptFile::List(replies) => Ok(Script { replies, ..Script::default() }),
            ScriptFile::Full { replies, by_model, keyed } => {
                Ok(Script { replies, by_model, keyed })
            }
        }
    }

    pub fn from_file(path: &std::path::Path) -> Result<Script, TestkitError> {
        let text = std::fs::read_to_string(path).map_err(|source| TestkitError::ReadScript {
            path: path.display().to_string(),
            source,
        })?;
        Script::from_json(&text)
    }
}
