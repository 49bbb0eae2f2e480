//! A `tools/call` result as the text the model reads, from its wire form: structured content as
//! compact JSON, else the text blocks joined; media is described, never inlined.

use serde_json::Value;

/// What a call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutput {
    pub text: String,
    /// `text` is JSON (the tool's `structuredContent`).
    pub json: bool,
    /// The tool reported a failure (`isError`): the model reads it as an error result.
    pub is_error: bool,
}

impl CallOutput {
    /// Reads a `CallToolResult` in its wire shape (camelCase keys).
    pub fn from_wire(result: &Value) -> Self {
        let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
        if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null())
            && !is_error
        {
            return Self { text: structured.to_string(), json: true, is_error };
        }
        let blocks = result.get("content").and_then(Value::as_array);
        let parts: Vec<String> = blocks.into_iter().flatten().filter_map(describe_block).collect();
        let text = if parts.is_empty() {
            "(the tool returned no content)".into()
        } else {
            parts.join("\n")
        };
        Self { text, json: false, is_error }
    }
}

fn describe_block(block: &Value) -> Option<String> {
    let s = |k: &str| block.get(k).and_then(Value::as_str);
    match s("type")? {
        "text" => s("text").map(str::to_string),
        kind @ ("image" | "audio") => {
            let mime = s("mimeType").unwrap_or("unknown type");
            let bytes = s("data").map_or(0, |d| d.len() * 3 / 4);
            Some(format!("[{kind}: {mime}, about {bytes} bytes, not shown to the model]"))
        }
        "resource" => {
            let r = block.get("resource")?;
            let rs = |k: &str| r.get(k).and_then(Value::as_str);
            let uri = rs("uri").unwrap_or("?");
            match rs("text") {
                Some(text) => Some(format!("[resource {uri}]\n{text}")),
                None => {
                    let mime = rs("mimeType").unwrap_or("unknown type");
                    Some(format!("[resource {uri}: {mime} binary, not shown to the model]"))
                }
            }
        }
        "resource_link" => {
            let uri = s("uri").unwrap_or("?");
            Some(format!("[{}]({uri})", s("name").unwrap_or(uri)))
        }
        other => Some(format!("[{other} content, not shown to the model]")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::CallOutput;

    #[test]
    fn structured_content_wins_over_text() {
        let out = CallOutput::from_wire(&json!({
            "content": [{ "type": "text", "text": "{\"t\": 1}" }],
            "structuredContent": { "t": 1 }
        }));
        assert_eq!(out, CallOutput { text: r#"{"t":1}"#.into(), json: true, is_error: false });
    }

    #[test]
    fn text_blocks_are_joined_and_media_described() {
        let out = CallOutput::from_wire(&json!({ "content": [
            { "type": "text", "text": "one" },
            { "type": "image", "mimeType": "image/png", "data": "AAAA" },
            { "type": "resource", "resource": { "uri": "file:///a.txt", "text": "body" } },
            { "type": "resource_link", "uri": "test://r/1", "name": "Resource 1" }
        ]}));
        assert_eq!(
            out.text,
            "one\n[image: image/png, about 3 bytes, not shown to the model]\n\
             [resource file:///a.txt]\nbody\n[Resource 1](test://r/1)"
        );
        assert!(!out.json);
    }

    #[test]
    fn an_error_result_keeps_its_text_and_says_so() {
        let out = CallOutput::from_wire(&json!({
            "content": [{ "type": "text", "text": "no such city" }],
            "isError": true
        }));
        assert!(out.is_error);
        assert_eq!(out.text, "no such city");
        assert_eq!(CallOutput::from_wire(&json!({})).text, "(the tool returned no content)");
    }
}
