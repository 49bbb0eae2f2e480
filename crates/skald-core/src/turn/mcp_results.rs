//! What the model gets of an MCP result: its media saved under the data dir and named, and text
//! past `execute_cmd`'s cap cut, with the whole result saved and named. What was saved is also
//! returned as data (`ToolResultMedia`), for the engine to record with the call: the result text
//! is the server's and the model's to write, so nothing is ever read back from it.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use skald_mcp::{CallOutput, Link, Media};
use skald_protocol::{MediaKind, ResourceLink, ToolMedia, ToolResultMedia};

use crate::tools::ToolLimits;

/// Where results are kept, under the data dir.
pub const DIR: &str = "mcp-results";

/// The text for the model: the result's text (media already described in it), cut to the cap
/// with the whole of it saved, then one line per media file saved; and the media and links as
/// data. Files are named after the session and call `call_id`, so calls running side by side
/// never share a name.
pub fn for_model(
    out: CallOutput,
    data_dir: &Path,
    session_id: i64,
    call_id: i64,
) -> (String, ToolResultMedia) {
    let dir = data_dir.join(DIR);
    let stem = format!("{session_id}-{call_id}-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S%.3f"));
    let cap = ToolLimits::default().max_output_bytes;
    let mut text = if out.text.len() > cap {
        let ext = if out.json { "json" } else { "txt" };
        let saved = save(&dir, &format!("{stem}.{ext}"), out.text.as_bytes());
        let mut end = cap;
        while !out.text.is_char_boundary(end) {
            end -= 1;
        }
        format!(
            "{}\n[… cut: the result is {} bytes, more than the {cap} the model gets; {}]",
            &out.text[..end],
            out.text.len(),
            saved_as("the whole result", &saved)
        )
    } else {
        out.text
    };
    let mut recorded =
        ToolResultMedia { media: Vec::new(), links: out.links.iter().map(link).collect() };
    for (i, media) in out.media.iter().enumerate() {
        let number = i + 1;
        let (bytes, ext) = decoded(media);
        let file_name = format!("{stem}-{number}.{ext}");
        let saved = save(&dir, &file_name, &bytes);
        text.push_str(&format!("\n[{} {number}: {}]", media.kind, saved_as("saved", &saved)));
        recorded.media.push(ToolMedia {
            kind: kind(media.kind),
            mime: media.mime.clone(),
            saved_path: saved.as_ref().ok().map(|p| p.display().to_string()),
            file_name: saved.is_ok().then_some(file_name),
            byte_size: bytes.len() as u64,
        });
    }
    (text, recorded)
}

fn kind(kind: &str) -> MediaKind {
    match kind {
        "image" => MediaKind::Image,
        "audio" => MediaKind::Audio,
        _ => MediaKind::Data,
    }
}

fn link(l: &Link) -> ResourceLink {
    ResourceLink {
        name: l.name.clone(),
        uri: l.uri.clone(),
        mime: l.mime.clone(),
        description: l.description.clone(),
    }
}

/// The file's bytes and extension: decoded when the base64 is valid, else the text as sent.
fn decoded(media: &Media) -> (Vec<u8>, &'static str) {
    let clean: String = media.base64.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    match base64::engine::general_purpose::STANDARD.decode(clean) {
        Ok(bytes) => (bytes, extension(media.mime.as_deref())),
        Err(_) => (media.base64.clone().into_bytes(), "b64"),
    }
}

fn extension(mime: Option<&str>) -> &'static str {
    match mime.unwrap_or_default() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" => "wav",
        "audio/mpeg" => "mp3",
        "audio/ogg" => "ogg",
        "application/pdf" => "pdf",
        _ => "bin",
    }
}

fn save(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
    let path = dir.join(name);
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&path, bytes))
        .map(|()| path)
        .map_err(|e| e.to_string())
}

fn saved_as(what: &str, saved: &Result<PathBuf, String>) -> String {
    match saved {
        Ok(path) => format!("{what} at {}", path.display()),
        Err(e) => format!("{what} could not be saved ({e})"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use skald_mcp::{CallOutput, Media};

    use super::for_model;

    #[test]
    fn a_long_result_is_cut_at_the_cap_and_saved_whole() {
        let dir = tempfile::tempdir().unwrap();
        let long = "é".repeat(80 * 1024);
        let out = CallOutput {
            text: long.clone(),
            json: false,
            is_error: false,
            media: vec![],
            links: vec![],
        };
        let (text, media) = for_model(out, dir.path(), 7, 3);
        assert!(media.is_empty());
        assert!(text.len() < 101 * 1024, "{}", text.len());
        let note = text.lines().last().unwrap();
        assert!(
            note.starts_with("[… cut: the result is 163840 bytes, more than the 102400"),
            "{note}"
        );
        let path = note.split(" at ").last().unwrap().trim_end_matches(']');
        assert_eq!(std::fs::read_to_string(path).unwrap(), long);
    }

    #[test]
    fn media_is_saved_as_the_file_it_is_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let media =
            Media { kind: "image", mime: Some("image/png".into()), base64: "iVBORw0KGgo=".into() };
        let out = CallOutput {
            text: "[image 1: …]".into(),
            json: false,
            is_error: false,
            media: vec![media],
            links: vec![],
        };
        let (text, recorded) = for_model(out, dir.path(), 7, 3);
        let line = text.lines().last().unwrap();
        assert!(line.starts_with("[image 1: saved at ") && line.ends_with("-1.png]"), "{line}");
        let path = line.trim_start_matches("[image 1: saved at ").trim_end_matches(']');
        assert_eq!(std::fs::read(path).unwrap(), b"\x89PNG\r\n\x1a\n");
        let saved = &recorded.media[0];
        assert_eq!(saved.kind, skald_protocol::MediaKind::Image);
        assert_eq!(saved.byte_size, 8);
        let name = saved.file_name.as_deref().unwrap();
        assert!(name.starts_with("7-3-") && name.ends_with("-1.png"), "{name}");
        assert_eq!(saved.saved_path.as_deref(), Some(path));
    }
}
