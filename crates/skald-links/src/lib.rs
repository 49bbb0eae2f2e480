//! `skald://` links: parsing untrusted URLs into UI routes. A link only ever navigates.

use url::Url;

/// Longer links are refused before parsing (no real Skald link comes near this).
pub const MAX_LINK_BYTES: usize = 2048;
/// The URL scheme registered with the OS (`plugins.deep-link.desktop.schemes`).
pub const SCHEME: &str = "skald";

/// What a link asks for, once it passed every check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkTarget {
    Session(i64),
    Inbox,
    /// Shows a waiting approval; never decides it.
    Approval(i64),
    Chat(String),
    /// The link is not one we understand; the slug says why, for the in-app message.
    Invalid(&'static str),
}

impl LinkTarget {
    /// The UI hash route for this target. An approval that is not waiting (a stale or forged
    /// link) is shown as such rather than as an empty inbox.
    pub fn hash(&self, approval_is_waiting: bool) -> String {
        match self {
            Self::Session(id) => format!("#session/{id}"),
            Self::Inbox => "#inbox".to_owned(),
            Self::Approval(id) if approval_is_waiting => format!("#inbox?item={id}"),
            Self::Approval(_) => not_found("approval-not-waiting"),
            Self::Chat(source) => format!("#chat/{source}"),
            Self::Invalid(reason) => not_found(reason),
        }
    }
}

/// The in-app "this link goes nowhere" page, with a reason made only of `[a-z-]`.
pub fn not_found(reason: &str) -> String {
    format!("#notfound?reason={reason}")
}

/// Parses a link from the OS (argv of a second launch, or the URL the app was started with).
pub fn parse(link: &str) -> LinkTarget {
    if link.len() > MAX_LINK_BYTES {
        return LinkTarget::Invalid("link-too-long");
    }
    let Ok(url) = Url::parse(link) else { return LinkTarget::Invalid("not-a-valid-link") };
    if url.scheme() != SCHEME {
        return LinkTarget::Invalid("not-a-skald-link");
    }
    // `skald:inbox`, user names, ports, queries and fragments are never produced by Skald.
    if url.cannot_be_a_base()
        || !url.username().is_empty()
        || url.password().is_some()
        || url.port().is_some()
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return LinkTarget::Invalid("unexpected-link-format");
    }
    let route = url.host_str().unwrap_or_default();
    let path = url.path().strip_prefix('/').unwrap_or(url.path());
    let path = path.strip_suffix('/').unwrap_or(path);
    let one_segment = (!path.is_empty() && !path.contains('/')).then_some(path);
    match (route, one_segment) {
        ("inbox", None) if path.is_empty() => LinkTarget::Inbox,
        ("session", Some(id)) => {
            id_of(id).map_or(LinkTarget::Invalid("bad-session-id"), LinkTarget::Session)
        }
        ("approval", Some(id)) => {
            id_of(id).map_or(LinkTarget::Invalid("bad-approval-id"), LinkTarget::Approval)
        }
        ("chat", Some(source)) if valid_source(source) => LinkTarget::Chat(source.to_owned()),
        ("chat", _) => LinkTarget::Invalid("bad-chat-source"),
        ("session" | "approval", _) => LinkTarget::Invalid("missing-id"),
        _ => LinkTarget::Invalid("unknown-link"),
    }
}

/// A positive id in plain decimal digits (no sign, no leading zero tricks beyond the value).
fn id_of(text: &str) -> Option<i64> {
    if text.is_empty() || text.len() > 18 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i64>().ok().filter(|id| *id > 0)
}

/// The engine's source names: letters, digits and `-`, short enough for a label.
fn valid_source(source: &str) -> bool {
    (1..=64).contains(&source.len())
        && source.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// The `skald://` links among a launch's arguments (the first one is the program).
pub fn links_in_args<'a>(args: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    args.into_iter()
        .skip(1)
        .filter(|arg| arg.get(..SCHEME.len() + 1).is_some_and(|p| p.eq_ignore_ascii_case("skald:")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_documented_link_opens_its_page() {
        assert_eq!(parse("skald://session/42").hash(false), "#session/42");
        assert_eq!(parse("skald://inbox").hash(false), "#inbox");
        assert_eq!(parse("skald://inbox/").hash(false), "#inbox");
        assert_eq!(parse("skald://approval/7").hash(true), "#inbox?item=7");
        assert_eq!(parse("skald://chat/web").hash(false), "#chat/web");
        assert_eq!(parse("skald://chat/my-bot2").hash(false), "#chat/my-bot2");
    }

    #[test]
    fn an_approval_link_for_a_call_that_is_not_waiting_says_so() {
        assert_eq!(parse("skald://approval/999999"), LinkTarget::Approval(999_999));
        assert_eq!(
            parse("skald://approval/999999").hash(false),
            "#notfound?reason=approval-not-waiting"
        );
    }

    #[test]
    fn bad_ids_and_sources_show_a_reason_instead_of_a_page() {
        let reason = |link: &str| parse(link).hash(false);
        assert_eq!(reason("skald://session/abc"), "#notfound?reason=bad-session-id");
        assert_eq!(reason("skald://session/-1"), "#notfound?reason=bad-session-id");
        assert_eq!(reason("skald://session/0"), "#notfound?reason=bad-session-id");
        assert_eq!(
            reason("skald://session/99999999999999999999"),
            "#notfound?reason=bad-session-id"
        );
        assert_eq!(reason("skald://session/"), "#notfound?reason=missing-id");
        assert_eq!(reason("skald://session/1/2"), "#notfound?reason=missing-id");
        assert_eq!(reason("skald://approval/1e3"), "#notfound?reason=bad-approval-id");
        assert_eq!(reason("skald://chat/a%22b"), "#notfound?reason=bad-chat-source");
        assert_eq!(reason("skald://chat/"), "#notfound?reason=bad-chat-source");
    }

    #[test]
    fn odd_or_foreign_links_are_refused() {
        let invalid = |link: &str| match parse(link) {
            LinkTarget::Invalid(reason) => reason,
            other => panic!("{link} was accepted as {other:?}"),
        };
        assert_eq!(invalid("skald://settings"), "unknown-link");
        assert_eq!(invalid("https://example.com/session/1"), "not-a-skald-link");
        assert_eq!(invalid("skald:inbox"), "unexpected-link-format");
        assert_eq!(invalid("skald://inbox?approve=1"), "unexpected-link-format");
        assert_eq!(invalid("skald://session/1#x"), "unexpected-link-format");
        assert_eq!(invalid("skald://me:pw@session/1"), "unexpected-link-format");
        assert_eq!(invalid("skald://session:80/1"), "unexpected-link-format");
        assert_eq!(invalid("not a url"), "not-a-valid-link");
        let long = format!("skald://chat/{}", "a".repeat(MAX_LINK_BYTES));
        assert_eq!(invalid(&long), "link-too-long");
    }

    #[test]
    fn every_hash_is_made_of_safe_characters_only() {
        for link in ["skald://chat/x'y", "skald://session/<script>", "skald://%E2%80%A8/1"] {
            let hash = parse(link).hash(false);
            assert!(
                hash.bytes().all(|b| b.is_ascii_alphanumeric() || b"#/?=-".contains(&b)),
                "{link} -> {hash}"
            );
        }
    }

    #[test]
    fn only_skald_links_are_taken_from_a_launch() {
        let args = ["/usr/bin/skald-desktop", "--flag", "SKALD://inbox", "skald://session/3"];
        assert_eq!(links_in_args(args), vec!["SKALD://inbox", "skald://session/3"]);
        assert!(links_in_args(["/usr/bin/skald-desktop"]).is_empty());
    }
}
