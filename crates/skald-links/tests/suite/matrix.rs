//! The reliability matrix's link rows (`docs/reliability.md`): forged `skald://` links for every
//! route, as the desktop receives them from the OS. A link may only pick a page to show; the
//! test checks that every link, however forged, becomes one of the view routes or the in-app
//! "this link goes nowhere" page with a reason.

use skald_links::{LinkTarget, parse};
use skald_testkit::matrix::Row;

/// The routes a link may open, and nothing else: a session, the inbox, one inbox item, a chat,
/// or the not-found page. None of them decides or runs anything.
fn is_view_route(hash: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if hash == "#inbox" {
        return true;
    }
    if let Some(id) = hash.strip_prefix("#session/") {
        return digits(id);
    }
    if let Some(id) = hash.strip_prefix("#inbox?item=") {
        return digits(id);
    }
    if let Some(source) = hash.strip_prefix("#chat/") {
        return !source.is_empty()
            && source.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    }
    if let Some(reason) = hash.strip_prefix("#notfound?reason=") {
        return !reason.is_empty() && reason.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
    }
    false
}

/// Feeds each link to the parser (`waiting`: whether the inbox holds approval links' calls)
/// and records where each one lands. Links in `refused` must land on the not-found page.
fn forged(id: &str, links: &[&str], waiting: bool, refused: &[&str]) {
    let landed: Vec<(String, String)> = links
        .iter()
        .map(|l| {
            let shown = if l.len() > 60 {
                format!("{}… ({} bytes)", &l[..40], l.len())
            } else {
                (*l).to_owned()
            };
            (shown, parse(l).hash(waiting))
        })
        .collect();
    let not_views: Vec<&(String, String)> =
        landed.iter().filter(|(_, h)| !is_view_route(h)).collect();
    let wrongly_opened: Vec<&str> = refused
        .iter()
        .copied()
        .filter(|l| !parse(l).hash(waiting).starts_with("#notfound?reason="))
        .collect();
    let reasons: Vec<&str> =
        landed.iter().filter_map(|(_, h)| h.strip_prefix("#notfound?reason=")).collect();
    let mut row = Row::new(id);
    let pairs: Vec<String> = landed.iter().map(|(l, h)| format!("`{l}` → `{h}`")).collect();
    row.user_sees(pairs.join(", "))
        .model_sees("nothing: a link only picks the page the window shows")
        .stored("nothing: parsing and routing a link write no row and no file")
        .unapproved_if(!not_views.is_empty(), "a link that became something other than a page")
        .unapproved_if(!wrongly_opened.is_empty(), "a forged link that opened a page");
    if reasons.is_empty() {
        row.recovered_if(false, "no forged link was refused");
    } else {
        // Every refusal names its reason; the page shows it.
        row.clear_error(&reasons.join(" "), &[]);
    }
    row.finish();
}

#[test]
fn forged_session_links() {
    let refused = [
        "skald://session/-1",
        "skald://session/0",
        "skald://session/99999999999999999999",
        "skald://session/abc",
        "skald://session/1e3",
        "skald://session/..%2F..%2Fetc%2Fpasswd",
        "skald://session/1/../../inbox",
        "skald://session/%00",
        "skald://session/",
    ];
    let mut links = vec!["skald://session/42"];
    links.extend(refused);
    forged("links.session", &links, false, &refused);
}

#[test]
fn forged_approval_links() {
    // A real id that is not waiting shows "not waiting"; one that is waiting is only shown.
    let refused = [
        "skald://approval/7?approve=1",
        "skald://approval/7/approve",
        "skald://approval/-7",
        "skald://approval/7#approve",
    ];
    let mut links = vec!["skald://approval/7"];
    links.extend(refused);
    forged("links.approval", &links, false, &refused);
    assert_eq!(parse("skald://approval/7").hash(true), "#inbox?item=7", "a waiting call is shown");
    assert!(matches!(parse("skald://approval/7"), LinkTarget::Approval(7)));
}

#[test]
fn forged_chat_links() {
    let refused = [
        "skald://chat/a%22b",
        "skald://chat/..%2F..%2Fsecrets",
        "skald://chat/%3Cscript%3E",
        "skald://chat/web/send?text=rm",
        "skald://chat/",
    ];
    let long_source = format!("skald://chat/{}", "a".repeat(65));
    let mut links = vec!["skald://chat/web"];
    links.extend(refused);
    links.push(&long_source);
    let mut all_refused = refused.to_vec();
    all_refused.push(&long_source);
    forged("links.chat", &links, false, &all_refused);
}

#[test]
fn forged_inbox_links() {
    let refused = ["skald://inbox?approve=all", "skald://inbox/approve", "skald://inbox#item=1"];
    let mut links = vec!["skald://inbox"];
    links.extend(refused);
    forged("links.inbox", &links, false, &refused);
}

#[test]
fn unknown_routes_and_schemes() {
    let refused = [
        "skald://settings",
        "skald://approve/1",
        "skald://../../etc/passwd",
        "skald:inbox",
        "skald://me:pw@session/1",
        "https://evil.example/session/1",
        "javascript:alert(1)",
        "not a link",
    ];
    forged("links.unknown-route", &refused, false, &refused);
}

#[test]
fn huge_links() {
    let just_over = format!("skald://chat/{}", "a".repeat(skald_links::MAX_LINK_BYTES));
    let megabyte = format!("skald://session/{}", "9".repeat(1024 * 1024));
    forged("links.huge", &[&just_over, &megabyte], false, &[&just_over, &megabyte]);
}
