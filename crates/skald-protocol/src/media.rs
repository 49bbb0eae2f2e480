//! What an MCP tool call returned besides text: media files saved under the data dir and
//! resource links, as the engine recorded them (never parsed back from the result text).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What a saved piece of media is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    /// An image content block, or a blob whose type is an image.
    Image,
    /// An audio content block, or a blob whose type is audio.
    Audio,
    /// Any other blob (a base64 string in structured content, an embedded binary resource).
    Data,
}

impl MediaKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Audio => "audio",
            Self::Data => "data",
        }
    }
}

/// One media file a tool call produced, in the order the model's text numbers them (the first
/// is `index` 0, "image 1" to the model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ToolMedia {
    pub kind: MediaKind,
    /// As the server declared it; `null` when it gave none. Not checked against the bytes.
    pub mime: Option<String>,
    /// The name the engine gave the file inside `mcp-results/` of the data dir; `null` when it
    /// could not be saved.
    pub file_name: Option<String>,
    /// Where it was saved, for people to open (the data dir's path at the time).
    pub saved_path: Option<String>,
    /// Decoded size in bytes.
    #[ts(type = "number")]
    pub byte_size: u64,
}

/// A `resource_link` a tool returned: listed, never fetched by the engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ResourceLink {
    pub name: String,
    pub uri: String,
    pub mime: Option<String>,
    pub description: Option<String>,
}

/// Everything besides text one call returned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ToolResultMedia {
    pub media: Vec<ToolMedia>,
    pub links: Vec<ResourceLink>,
}

impl ToolResultMedia {
    pub fn is_empty(&self) -> bool {
        self.media.is_empty() && self.links.is_empty()
    }
}

/// The bytes of one saved media file (`tool_media`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct MediaFile {
    pub kind: MediaKind,
    /// The type the server declared, or `application/octet-stream`.
    pub mime: String,
    #[ts(type = "number")]
    pub byte_size: u64,
    /// Standard base64 of the whole file.
    pub base64: String,
}
