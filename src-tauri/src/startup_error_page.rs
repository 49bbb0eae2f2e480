//! The page the main window shows when the engine cannot open, instead of a blank or crashed app.

use std::fmt::Write as _;

use tauri::Url;

/// What went wrong at startup, in the words the user needs to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartupFailure {
    /// The engine's error message.
    pub message: String,
    /// The data folder the engine tried to open (`None` when none could be determined).
    pub data_dir: Option<String>,
}

/// The page as a self-contained `data:` URL: it needs no asset from the UI build and no IPC.
pub fn data_url(failure: &StartupFailure) -> Result<Url, url::ParseError> {
    Url::parse(&format!("data:text/html;charset=utf-8,{}", percent_encode(&html(failure))))
}

/// The page's HTML; every piece of the failure is escaped.
///
/// Tauri rewrites a `data:` page before loading it (it injects the CSP and re-encodes the URL)
/// and in doing so drops line breaks and leaves `#` and `%` raw, which would cut the page at the
/// first `#`. So the page has no `#`, `%` or meaningful line break anywhere: colours are `rgb()`
/// and the user's text goes through [`escape`].
pub fn html(failure: &StartupFailure) -> String {
    let data_dir = match &failure.data_dir {
        Some(dir) => format!("its data folder <code>{}</code>", escape(dir)),
        None => "a data folder: none could be determined".to_owned(),
    };
    let style = concat!(
        "body{margin:0;min-height:100vh;display:grid;place-items:center;",
        "background:rgb(17,24,39);color:rgb(229,231,235);font:15px/1.5 system-ui,sans-serif}",
        "main{max-width:640px;padding:32px;border:1px solid rgb(55,65,81);border-radius:12px;",
        "background:rgb(31,41,55)}",
        "h1{margin-top:0;font-size:22px;color:rgb(252,165,165)}",
        "pre{white-space:pre-wrap;word-break:break-word;padding:12px;border-radius:8px;",
        "background:rgb(11,18,32);color:rgb(253,230,138)}",
        "code{color:rgb(147,197,253)}",
    );
    format!(
        concat!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
            "<title>Skald could not start</title><style>{style}</style></head>",
            "<body><main data-testid=\"startup-error\"><h1>Skald could not start</h1>",
            "<p>The engine could not open {data_dir}:</p>",
            "<pre data-testid=\"startup-error-message\">{message}</pre>",
            "<p>Fix the problem above and start Skald again, or set <code>SKALD_DATA_DIR</code> ",
            "to use another folder. Starting <code>skald-desktop</code> from a terminal shows ",
            "the full log.</p></main></body></html>",
        ),
        style = style,
        data_dir = data_dir,
        message = escape(&failure.message),
    )
}

/// HTML-escapes `text`; `#`, `%` and line breaks become entities or tags (see [`html`]).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '#' => out.push_str("&num;"),
            '%' => out.push_str("&percnt;"),
            '\n' => out.push_str("<br>"),
            '\r' => {}
            _ => out.push(c),
        }
    }
    out
}

/// Percent-encodes everything but unreserved characters, so the HTML survives inside a URL.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            // Writing to a String cannot fail.
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn failure(message: &str, dir: Option<&str>) -> StartupFailure {
        StartupFailure { message: message.into(), data_dir: dir.map(Into::into) }
    }

    fn percent_decode(text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).unwrap());
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_page_names_the_error_and_the_folder_the_user_chose() {
        let page = html(&failure("permission denied (os error 13)", Some("/srv/skald")));
        assert!(page.contains("<h1>Skald could not start</h1>"));
        assert!(page.contains("permission denied (os error 13)"));
        assert!(page.contains("open its data folder <code>/srv/skald</code>:"));
    }

    #[test]
    fn markup_in_the_error_is_shown_as_text_not_run() {
        let page = html(&failure("<script>alert('x')</script> & more", Some("\"/tmp/<x>\"")));
        assert!(!page.contains("<script>"));
        assert!(page.contains("&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt; &amp; more"));
        assert!(page.contains("&quot;/tmp/&lt;x&gt;&quot;"));
    }

    #[test]
    fn nothing_in_the_page_can_cut_the_url_tauri_rewrites() {
        let page = html(&failure("disk 100% full\nsee issue #12", Some("/data/#1")));
        assert!(!page.contains('#') && !page.contains('%') && !page.contains('\n'), "{page}");
        assert!(page.contains("disk 100&percnt; full<br>see issue &num;12"));
        assert!(page.contains("<code>/data/&num;1</code>"));
    }

    #[test]
    fn the_data_url_carries_the_whole_page_including_non_ascii_text() {
        let failure = failure("database is locked — try again # 100% ?", None);
        let url = data_url(&failure).unwrap();
        assert_eq!(url.scheme(), "data");
        let (header, body) = url.as_str().split_once(',').unwrap();
        assert_eq!(header, "data:text/html;charset=utf-8");
        assert_eq!(percent_decode(body), html(&failure));
        assert!(html(&failure).contains("none could be determined"));
    }
}
