//! A request larger than the model's context window, as OpenAI-compatible servers say it: OpenAI
//! and LiteLLM answer HTTP 400 with `context_length_exceeded` ("This model's maximum context
//! length is 4096 tokens. However, you requested 5000 tokens …"), llama-cpp-python with
//! "Requested tokens (5000) exceed context window of 4096", llama.cpp's server with
//! `exceed_context_size_error` and `n_ctx`. The numbers are read when the message gives them.

/// What an overflow answer says about the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow {
    /// The model's window in tokens, when the message names it (and it is a plausible one).
    pub window: Option<u64>,
    /// The tokens the request needed, when the message names them.
    pub requested: Option<u64>,
}

/// Phrases that mark a window overflow (the body lowercased).
const MARKERS: &[&str] = &[
    "context_length_exceeded",
    "maximum context length",
    "exceed context window",
    "exceeds context window",
    "exceed_context_size",
    "exceeds the available context size",
    "context window of",
    "prompt is too long",
];

/// Where a message names the window, the number following.
const WINDOW_AT: &[&str] =
    &["maximum context length is", "context window of", "\"n_ctx\":", "context length of"];

/// Where a message names what the request needed, the number following.
const REQUESTED_AT: &[&str] =
    &["you requested", "requested tokens (", "resulted in", "\"n_prompt_tokens\":", "requested"];

/// No model has a window outside this: a number beyond it is no window (a hostile or garbled
/// message must not teach one).
const PLAUSIBLE_WINDOW: std::ops::RangeInclusive<u64> = 256..=100_000_000;

/// Reads an error answer: `Some` when it says the request did not fit the window.
pub fn overflow_of(status: u16, body: &str) -> Option<Overflow> {
    if !matches!(status, 400 | 413 | 422) {
        return None;
    }
    let text = body.to_ascii_lowercase();
    if !MARKERS.iter().any(|m| text.contains(m)) {
        return None;
    }
    let window = WINDOW_AT
        .iter()
        .find_map(|m| number_after(&text, m))
        .filter(|w| PLAUSIBLE_WINDOW.contains(w));
    let requested = REQUESTED_AT.iter().find_map(|m| number_after(&text, m));
    Some(Overflow { window, requested })
}

/// The number right after `marker` (spaces, `(`, `:` or `"` may come between; `4,096` reads as
/// 4096); `None` when there is none or it does not fit a `u64`.
fn number_after(text: &str, marker: &str) -> Option<u64> {
    let at = text.find(marker)? + marker.len();
    let rest = text[at..].trim_start_matches([' ', '(', ':', '"']);
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .take(21)
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(body: &str) -> Option<(Option<u64>, Option<u64>)> {
        overflow_of(400, body).map(|o| (o.window, o.requested))
    }

    #[test]
    fn the_openai_litellm_and_llama_cpp_shapes_are_read_with_their_numbers() {
        let openai = r#"{"error":{"message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert_eq!(read(openai), Some((Some(4096), Some(5000))));
        let litellm = "litellm.ContextWindowExceededError: This model's maximum context length \
                       is 8,192 tokens. However, your messages resulted in 9,001 tokens.";
        assert_eq!(read(litellm), Some((Some(8192), Some(9001))));
        let llama_py = r#"{"error":{"message":"Requested tokens (5000) exceed context window of 4096","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
        assert_eq!(read(llama_py), Some((Some(4096), Some(5000))));
        let llama_cpp = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#;
        assert_eq!(read(llama_cpp), Some((Some(4096), Some(5000))));
        // The code alone: an overflow without numbers.
        assert_eq!(read(r#"{"error":{"code":"context_length_exceeded"}}"#), Some((None, None)));
    }

    #[test]
    fn other_errors_and_hostile_numbers_teach_nothing() {
        assert_eq!(read(r#"{"error":{"message":"invalid tool name"}}"#), None);
        assert_eq!(overflow_of(500, "maximum context length is 4096 tokens"), None);
        assert_eq!(overflow_of(401, "context_length_exceeded"), None);
        // Too large for a u64, absurdly large, absurdly small: no window.
        let huge = "maximum context length is 99999999999999999999999999999 tokens";
        assert_eq!(read(huge), Some((None, None)));
        let absurd = "maximum context length is 18446744073709551615 tokens";
        assert_eq!(read(absurd), Some((None, None)));
        assert_eq!(read("maximum context length is 3 tokens"), Some((None, None)));
        assert_eq!(read("maximum context length is tokens"), Some((None, None)));
    }
}
