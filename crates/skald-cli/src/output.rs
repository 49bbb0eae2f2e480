//! Printing results and errors as text or as JSON lines.

use std::io::Write;

use serde::Serialize;
use skald_protocol::ApiError;

pub struct Output {
    json: bool,
}

impl Output {
    pub fn new(json: bool) -> Self {
        Self { json }
    }

    pub fn is_json(&self) -> bool {
        self.json
    }

    /// One compact JSON document on stdout.
    pub fn json<T: Serialize>(&self, value: &T) -> Result<(), ApiError> {
        let text = serde_json::to_string(value).map_err(|e| {
            ApiError::new(skald_protocol::ErrorCode::Internal, format!("cannot encode output: {e}"))
        })?;
        self.line(&text);
        Ok(())
    }

    pub fn line(&self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        // A closed pipe (`skald ... | head`) is not an error worth a panic.
        let _ = writeln!(stdout, "{text}");
    }

    /// Errors go to stderr on one line: JSON `{code, message}` with `--json`, text otherwise.
    pub fn error(&self, e: &ApiError) {
        let mut stderr = std::io::stderr().lock();
        let line = if self.json {
            serde_json::to_string(e).unwrap_or_else(|_| e.message.clone())
        } else {
            format!("skald: error: {}", e.message.replace('\n', " "))
        };
        let _ = writeln!(stderr, "{line}");
    }
}
