//! A session's automatic title: its first prompt, cut to one short line, so sessions can be
//! told apart in every list before anyone names them.

/// Characters a title keeps at most (the session list's column and the sidebar fit it).
const MAX_CHARS: usize = 60;

/// The title a prompt gives its session: the first line with words, whitespace collapsed, cut at
/// a word boundary with `…` when longer than `MAX_CHARS`. `None` for a prompt without words.
pub fn from_prompt(prompt: &str) -> Option<String> {
    let line = prompt.lines().map(str::trim).find(|l| l.chars().any(char::is_alphanumeric))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let whole = words.join(" ");
    if whole.chars().count() <= MAX_CHARS {
        return Some(whole);
    }
    let mut title = String::new();
    for word in &words {
        let next = if title.is_empty() {
            word.chars().count()
        } else {
            title.chars().count() + 1 + word.chars().count()
        };
        if next > MAX_CHARS - 1 {
            break;
        }
        if !title.is_empty() {
            title.push(' ');
        }
        title.push_str(word);
    }
    if title.is_empty() {
        // One word longer than a title: cut it.
        title = whole.chars().take(MAX_CHARS - 1).collect();
    }
    title.push('…');
    Some(title)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_short_prompt_is_its_title() {
        assert_eq!(from_prompt("  fix the   parser\n\nplease").as_deref(), Some("fix the parser"));
    }

    #[test]
    fn the_first_line_with_words_names_it() {
        assert_eq!(
            from_prompt("\n```\n---\nrename foo to bar\n").as_deref(),
            Some("rename foo to bar")
        );
        assert_eq!(from_prompt(" \n\t\n"), None);
    }

    #[test]
    fn a_long_prompt_is_cut_at_a_word_with_an_ellipsis() {
        let prompt =
            "please read every file under crates and tell me which modules import the runner back";
        let title = from_prompt(prompt).unwrap();
        assert!(title.chars().count() <= MAX_CHARS, "{title}");
        assert!(title.ends_with("…"), "{title}");
        assert!(prompt.starts_with(title.trim_end_matches('…')), "{title}");
        let word = "x".repeat(200);
        assert_eq!(from_prompt(&word).unwrap().chars().count(), MAX_CHARS);
        // Multi-byte text is cut on a character, not a byte.
        let wide = "ü".repeat(100);
        assert!(from_prompt(&wide).unwrap().starts_with("üü"));
    }
}
