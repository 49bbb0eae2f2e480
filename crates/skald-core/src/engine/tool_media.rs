//! `tool_media`: the bytes of one media file a tool call saved, found by the call and the
//! file's place in its list, never by a path a client names.

use base64::Engine as _;
use skald_protocol::MediaFile;

use super::Engine;
use crate::EngineError;
use crate::regular_file::{self, ReadError};
use crate::session::items::decode_media;
use crate::turn::mcp_results;

/// The most one read returns; a larger file is named instead (base64 in JSON grows it by a third).
pub const MAX_MEDIA_BYTES: u64 = 10 * 1024 * 1024;

impl Engine {
    /// Media file `index` (0-based, the model's "image 1" is 0) of tool call `tool_call_id`:
    /// its kind, declared type and bytes. Only a regular file at the name the engine gave it,
    /// directly inside `mcp-results/`, is read; a link put in its place is refused.
    pub async fn tool_media(
        &self,
        tool_call_id: i64,
        index: u32,
    ) -> Result<MediaFile, EngineError> {
        let recorded = self.store().tool_media(tool_call_id).await?;
        let media = decode_media(tool_call_id, recorded.as_deref()).media;
        let count = media.len();
        let Some(item) = usize::try_from(index).ok().and_then(|i| media.into_iter().nth(i)) else {
            return Err(EngineError::NotFound(format!(
                "tool call {tool_call_id} has no media file {index} (it has {count})"
            )));
        };
        let Some(name) = item.file_name.filter(|n| is_generated_name(n)) else {
            return Err(EngineError::NotFound(format!(
                "media file {index} of tool call {tool_call_id} was not saved"
            )));
        };
        let dir = self.data_dir().join(mcp_results::DIR);
        // The folder itself must be the data dir's own, not a link to elsewhere.
        let dir_is_own = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_dir());
        if !dir_is_own {
            return Err(EngineError::NotFound(format!(
                "{} is not a folder of the data dir",
                dir.display()
            )));
        }
        let path = dir.join(&name);
        let read = tokio::task::spawn_blocking(move || {
            regular_file::read_unlinked(&path, Some(MAX_MEDIA_BYTES))
        })
        .await
        .map_err(|e| EngineError::Internal(format!("the media read stopped: {e}")))?;
        let bytes = read.map_err(|e| match e {
            ReadError::TooLarge { path, len, .. } => EngineError::InvalidInput(format!(
                "media file {index} of tool call {tool_call_id} is {len} bytes, more than the \
                 {MAX_MEDIA_BYTES} shown here; open it at {}",
                path.display()
            )),
            other => EngineError::NotFound(format!(
                "media file {index} of tool call {tool_call_id} cannot be read: {}",
                other.reason()
            )),
        })?;
        Ok(MediaFile {
            kind: item.kind,
            mime: item.mime.unwrap_or_else(|| "application/octet-stream".into()),
            byte_size: bytes.len() as u64,
            base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        })
    }
}

/// A name the engine could have given (`<digits and dashes, T and .>.<ext>`): no separator,
/// no `..`, nothing a changed row could use to reach outside the folder.
fn is_generated_name(name: &str) -> bool {
    let Some((stem, ext)) = name.rsplit_once('.') else { return false };
    !stem.is_empty()
        && stem.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'T' | b'.'))
        && !stem.contains("..")
        && !ext.is_empty()
        && ext.bytes().all(|b| b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::is_generated_name;

    #[test]
    fn only_names_the_engine_gives_pass() {
        assert!(is_generated_name("7-3-20261205T155129.123-1.png"));
        for bad in ["../x.png", "/etc/passwd", "a/b.png", "7-3-..-1.png", "x.png", "7.p/g", "7-1"] {
            assert!(!is_generated_name(bad), "{bad}");
        }
    }
}
