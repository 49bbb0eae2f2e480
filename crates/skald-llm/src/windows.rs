//! Context windows of well-known hosted model families, for models whose client sets none.
//!
//! Compaction is on by default only where the window is known (a wrong guess would either waste
//! context or overflow it), so this table lists only families whose window is fixed by their
//! vendor. Local runtimes (Ollama, llama.cpp, LM Studio) choose the window at load time, so their
//! models stay unknown until the user sets `context_window` on the client.

/// `(id prefix after any "vendor/" part, window in tokens)`; the longest matching prefix wins.
const KNOWN: &[(&str, u64)] = &[
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude-3", 200_000),
    ("claude-opus-4", 200_000),
    ("claude-sonnet-4", 200_000),
    ("claude-haiku-4", 200_000),
    ("gemini-1.5", 1_048_576),
    ("gemini-2", 1_048_576),
];

/// The window of `model` when its family is known: `anthropic/claude-sonnet-4` and
/// `claude-sonnet-4-20250514` both give 200,000.
pub fn known_context_window(model: &str) -> Option<u64> {
    let id = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    KNOWN
        .iter()
        .filter(|(prefix, _)| id.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, window)| *window)
}

#[cfg(test)]
mod tests {
    use super::known_context_window;

    #[test]
    fn hosted_families_are_known_with_or_without_a_vendor_prefix() {
        assert_eq!(known_context_window("anthropic/claude-sonnet-4"), Some(200_000));
        assert_eq!(known_context_window("claude-3-5-sonnet-20241022"), Some(200_000));
        assert_eq!(known_context_window("openai/gpt-4o-mini"), Some(128_000));
        assert_eq!(known_context_window("gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(known_context_window("google/gemini-2.5-pro"), Some(1_048_576));
    }

    #[test]
    fn local_and_unknown_models_stay_unknown() {
        for model in ["qwen2.5-coder:14b", "llama3.1:8b", "fake-model", "scripted-model", ""] {
            assert_eq!(known_context_window(model), None, "{model}");
        }
    }
}
