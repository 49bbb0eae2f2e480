//! Printing results and errors as text or as JSON lines.

use std::io::Write;

use serde::Serialize;
use skald_protocol::ApiError;

pub struct Output {
    json: bool,
    sink: Sink,
}

/// Where stdout's text goes: the process's stdout, or memory for unit tests.
enum Sink {
    Stdout,
    #[cfg(test)]
    Memory(std::sync::Arc<std::sync::Mutex<String>>),
}

impl Output {
    pub fn new(json: bool) -> Self {
        Self { json, sink: Sink::Stdout }
    }

    /// An output whose stdout text is collected in the returned buffer.
    #[cfg(test)]
    pub fn in_memory(json: bool) -> (Self, std::sync::Arc<std::sync::Mutex<String>>) {
        let buffer = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        (Self { json, sink: Sink::Memory(buffer.clone()) }, buffer)
    }

    /// Text without a line end, shown at once (a streamed answer's pieces).
    pub fn raw(&self, text: &str) {
        match &self.sink {
            Sink::Stdout => {
                let mut stdout = std::io::stdout().lock();
                let _ = write!(stdout, "{text}");
                let _ = stdout.flush();
            }
            #[cfg(test)]
            Sink::Memory(buffer) => buffer.lock().unwrap_or_else(|p| p.into_inner()).push_str(text),
        }
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
        match &self.sink {
            Sink::Stdout => {
                let mut stdout = std::io::stdout().lock();
                // A closed pipe (`skald ... | head`) is not an error worth a panic.
                let _ = writeln!(stdout, "{text}");
            }
            #[cfg(test)]
            Sink::Memory(buffer) => {
                let mut buffer = buffer.lock().unwrap_or_else(|p| p.into_inner());
                buffer.push_str(text);
                buffer.push('\n');
            }
        }
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
