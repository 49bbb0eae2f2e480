//! What a user typed, turned into FTS5 queries that always parse.
//!
//! User text is never FTS syntax: every term is written as a quoted FTS5 string, so operators
//! (`AND`, `NEAR`), column filters (`col:`), `*`, `^`, `-` and `"` are plain characters. Double
//! quotes in the text group a phrase (`"exact words"`); an unclosed one runs to the end. The
//! last term, while it is still being typed (no space or closing quote after it), matches as a
//! prefix.

/// Terms beyond this many are ignored, and a term is cut at `MAX_TERM_CHARS`: a query stays
/// small however long the pasted text.
const MAX_TERMS: usize = 16;
const MAX_TERM_CHARS: usize = 256;

/// Shortest term the trigram index can match; shorter ones are checked with LIKE.
const TRIGRAM: usize = 3;

/// The queries for both indexes; `None` where the text has nothing that index can match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchText {
    /// For `message_fts` (unicode61 words).
    pub words: Option<String>,
    /// For `tool_fts` (trigram substrings).
    pub substrings: Option<SubstringQuery>,
}

/// A trigram MATCH plus LIKE patterns for the terms too short for trigrams, so that every term
/// the user typed narrows the result, as it does for words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubstringQuery {
    pub fts: String,
    /// `%term%` patterns, `\` escaping `%`, `_` and `\`.
    pub likes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Term {
    text: String,
    /// Still being typed: matched as a prefix by the word index.
    open: bool,
}

impl SearchText {
    pub fn parse(text: &str) -> Self {
        let terms = terms(text);
        Self { words: words(&terms), substrings: substrings(&terms) }
    }

    /// Nothing in the text can match anything.
    pub fn is_empty(&self) -> bool {
        self.words.is_none() && self.substrings.is_none()
    }
}

fn terms(text: &str) -> Vec<Term> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    // Control characters (NUL included) separate terms like spaces: they are never meant.
    let is_space = |c: char| c.is_whitespace() || c.is_control();
    let mut push = |current: &mut String, open: bool| {
        let text: String = current.trim_end().chars().take(MAX_TERM_CHARS).collect();
        if !text.is_empty() {
            out.push(Term { text, open });
        }
        current.clear();
    };
    for c in text.chars() {
        match c {
            '"' => {
                push(&mut current, false);
                quoted = !quoted;
            }
            c if is_space(c) && !quoted => push(&mut current, false),
            // Inside a phrase any run of spaces is one separator.
            c if is_space(c) => {
                if !current.is_empty() && !current.ends_with(' ') {
                    current.push(' ');
                }
            }
            c => current.push(c),
        }
    }
    // Whatever is left was not ended by a space or a closing quote: it is still being typed.
    push(&mut current, true);
    if out.len() > MAX_TERMS {
        out.truncate(MAX_TERMS);
        if let Some(last) = out.last_mut() {
            last.open = false;
        }
    }
    out
}

/// A quoted FTS5 string: `"` doubled inside, nothing else special.
fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

fn words(terms: &[Term]) -> Option<String> {
    let parts: Vec<String> = terms
        .iter()
        // A term with no letter or digit has no unicode61 token: an empty phrase.
        .filter(|t| t.text.chars().any(char::is_alphanumeric))
        .map(|t| if t.open { format!("{}*", quote(&t.text)) } else { quote(&t.text) })
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

fn substrings(terms: &[Term]) -> Option<SubstringQuery> {
    let (long, short): (Vec<&Term>, Vec<&Term>) =
        terms.iter().partition(|t| t.text.chars().count() >= TRIGRAM);
    // With no term of trigram length the index cannot narrow anything; a scan of every call
    // for one or two characters would be slow and useless.
    if long.is_empty() {
        return None;
    }
    let fts = long.iter().map(|t| quote(&t.text)).collect::<Vec<_>>().join(" ");
    let likes = short.iter().map(|t| format!("%{}%", escape_like(&t.text))).collect();
    Some(SubstringQuery { fts, likes })
}

/// Escapes LIKE wildcards with `\` (used with `ESCAPE '\'`).
pub fn escape_like(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn words_of(text: &str) -> Option<String> {
        SearchText::parse(text).words
    }

    #[test]
    fn every_term_is_quoted_and_the_last_one_typed_is_a_prefix() {
        assert_eq!(words_of("fix parser").as_deref(), Some(r#""fix" "parser"*"#));
        assert_eq!(words_of("fix parser ").as_deref(), Some(r#""fix" "parser""#));
        assert_eq!(words_of("  ").as_deref(), None);
    }

    #[test]
    fn fts_syntax_is_plain_text() {
        assert_eq!(
            words_of(r#"NEAR(a b) col:x foo-bar ^start a*"#).as_deref(),
            Some(r#""NEAR(a" "b)" "col:x" "foo-bar" "^start" "a*"*"#)
        );
        // Punctuation-only terms would be empty phrases: they are left out of the word query.
        assert_eq!(words_of("- * : foo").as_deref(), Some(r#""foo"*"#));
    }

    #[test]
    fn double_quotes_group_a_phrase() {
        assert_eq!(words_of(r#""exact words" more"#).as_deref(), Some(r#""exact words" "more"*"#));
        assert_eq!(words_of(r#"a "closed phrase""#).as_deref(), Some(r#""a" "closed phrase""#));
        // Unclosed: the user is still typing the phrase.
        assert_eq!(words_of(r#"a "still typ"#).as_deref(), Some(r#""a" "still typ"*"#));
    }

    #[test]
    fn short_terms_narrow_tool_matches_with_like() {
        let q = SearchText::parse("cd src_dir 5%").substrings.unwrap();
        assert_eq!(q.fts, r#""src_dir""#);
        assert_eq!(q.likes, vec!["%cd%".to_string(), r"%5\%%".to_string()]);
        assert_eq!(SearchText::parse("cd ls").substrings, None);
    }

    #[test]
    fn long_input_is_bounded() {
        let text = "word ".repeat(100);
        let words = words_of(&text).unwrap();
        assert_eq!(words.matches("\"word\"").count(), MAX_TERMS);
        let long = "x".repeat(10_000);
        assert_eq!(words_of(&long).unwrap().len(), MAX_TERM_CHARS + 3);
    }
}
