//! YAML text for what an edit writes: one-line values, whole list items and the fallback list,
//! quoted by the YAML emitter so a value can never turn into other YAML.

use serde::Serialize;
use yaml_serde::Value;

use super::EditError;

/// A scalar on one line (`None` for a mapping or sequence, which cannot be written inline).
pub(super) fn inline_scalar(value: &Value) -> Result<Option<String>, EditError> {
    match value {
        Value::Mapping(_) | Value::Sequence(_) | Value::Tagged(_) => Ok(None),
        Value::String(s) => Ok(Some(string(s, false)?)),
        other => Ok(Some(emit(other)?.trim_end().to_owned())),
    }
}

/// A string as one line of YAML; inside a flow list, characters that end a flow item are quoted.
fn string(s: &str, in_flow: bool) -> Result<String, EditError> {
    let emitted = emit(&s)?;
    let one_line = emitted.trim_end_matches('\n');
    let ends_flow_item = in_flow && one_line.contains([',', '[', ']', '{', '}']);
    if one_line.contains('\n') || ends_flow_item {
        // A JSON string is a valid double-quoted YAML scalar, and always one line.
        return serde_json::to_string(s).map_err(|e| EditError::Render(e.to_string()));
    }
    Ok(one_line.to_owned())
}

/// `[a, b]`: a flow list of names.
pub(super) fn flow_list(names: &[String]) -> Result<String, EditError> {
    let items = names.iter().map(|n| string(n, true)).collect::<Result<Vec<_>, _>>()?;
    Ok(format!("[{}]", items.join(", ")))
}

/// A value (a client of `llm.clients`, a server of `mcp.servers`) as a block item of a list, each
/// line indented by `indent` and ended by `eol`.
pub(super) fn block_item<T: Serialize>(
    item: &T,
    indent: usize,
    eol: &str,
) -> Result<String, EditError> {
    let text = emit(&[item])?;
    let pad = " ".repeat(indent);
    Ok(text.lines().map(|l| format!("{pad}{l}{eol}")).collect())
}

fn emit<T: Serialize + ?Sized>(value: &T) -> Result<String, EditError> {
    yaml_serde::to_string(value).map_err(|e| EditError::Render(e.to_string()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn strings_that_would_read_as_other_yaml_are_quoted() {
        let s = |t: &str| inline_scalar(&Value::String(t.into())).unwrap().unwrap();
        assert_eq!(s("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080/v1");
        assert_eq!(s("qwen2.5-coder:14b"), "qwen2.5-coder:14b");
        for tricky in ["true", "123", "a # b", "- x", "{a}", "", "line\nbreak", "null", "'q'"] {
            let rendered = s(tricky);
            let back: String = yaml_serde::from_str(&format!("k: {rendered}\n"))
                .map(|m: std::collections::BTreeMap<String, String>| m["k"].clone())
                .unwrap();
            assert_eq!(back, tricky, "{rendered}");
            assert!(!rendered.contains('\n'), "{rendered}");
        }
    }

    #[test]
    fn flow_lists_quote_names_with_flow_characters() {
        let names = vec!["a".to_owned(), "b,c".to_owned(), "my box".to_owned()];
        let list = flow_list(&names).unwrap();
        let back: Vec<String> = yaml_serde::from_str(&list).unwrap();
        assert_eq!(back, names, "{list}");
    }
}
