//! Renders the table as `ui/src/backend/api.ts`: params types, the `Operations` map, the `Api`
//! interface with one method per operation, `makeApi(call)`, and the event kinds the engine emits.

use skald_protocol::{ErrorCode, EventKind};

use crate::OPERATIONS;
use crate::spec::OpSpec;

/// The generated file, byte-for-byte; a test fails when the committed copy drifts from it.
pub fn typescript() -> String {
    let body = body();
    // Only code counts: a type named in a comment is no reason to import it.
    let code: String = body
        .lines()
        .filter(|l| !["/**", "*", "//"].iter().any(|c| l.trim_start().starts_with(c)))
        .collect::<Vec<_>>()
        .join("\n");
    let imports: Vec<String> =
        binding_names().into_iter().filter(|name| mentions(&code, name)).collect();
    format!(
        "// Generated from the operation table in crates/skald-api/src/table.rs. Do not edit by hand:\n\
         // run `UPDATE_BINDINGS=1 cargo test -p skald-api --test all typescript` instead.\n\n\
         import type {{ {} }} from \"./bindings\";\n\n{body}",
        imports.join(", ")
    )
}

/// The names `bindings.ts` exports, in its order.
fn binding_names() -> Vec<String> {
    skald_protocol::bindings::typescript()
        .lines()
        .filter_map(|line| line.strip_prefix("export type "))
        .filter_map(|rest| rest.split(|c: char| !c.is_alphanumeric() && c != '_').next())
        .map(str::to_string)
        .collect()
}

/// Whether `text` uses `name` as a whole word (so `Answer` is not found in `AnswerQuestion`).
fn mentions(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// Everything after the imports.
fn body() -> String {
    let mut out = String::new();
    for op in OPERATIONS {
        out.push_str(&format!("export {}\n\n", (op.params_decl)()));
    }
    out.push_str("/** Every operation the engine answers: its params and its result. */\n");
    out.push_str("export type Operations = {\n");
    for op in OPERATIONS {
        out.push_str(&format!(
            "  {}: {{ params: {}; result: {} }};\n",
            op.name,
            op.params,
            (op.result)()
        ));
    }
    out.push_str("};\n\nexport type OpName = keyof Operations;\n\n");
    out.push_str(&const_list(
        "Every operation name, in table order.",
        "OPERATION_NAMES: readonly OpName[]",
        OPERATIONS.iter().map(|op| op.name),
    ));
    out.push('\n');
    out.push_str(
        "/** Sends one operation; resolves with its result or rejects with an `ApiError`. */\n\
         export type Transport = (op: OpName, params: unknown) => Promise<unknown>;\n\n",
    );
    out.push_str(
        "/** One method per operation, the same for every transport. */\nexport interface Api {\n",
    );
    for op in OPERATIONS {
        out.push_str(&jsdoc(op));
        out.push_str(&format!(
            "  {}(params: {}): Promise<{}>;\n",
            op.name,
            op.params,
            (op.result)()
        ));
    }
    out.push_str("}\n\n");
    out.push_str(
        "/** The typed client over a transport. */\nexport function makeApi(call: Transport): Api {\n  return {\n",
    );
    for op in OPERATIONS {
        out.push_str(&format!(
            "    {0}: (params) => call(\"{0}\", params) as Promise<{1}>,\n",
            op.name,
            (op.result)()
        ));
    }
    out.push_str("  };\n}\n\n");
    out.push_str(&const_list(
        "Every error code an operation or a transport can answer.",
        "ERROR_CODES: readonly ErrorCode[]",
        ErrorCode::ALL.iter().map(|c| c.as_str()),
    ));
    out.push('\n');
    out.push_str(&const_list(
        "Every event kind the engine emits (the `type` of an `Event`).",
        "EVENT_KINDS: readonly EventKind[]",
        EventKind::ALL.iter().map(|k| k.as_str()),
    ));
    out
}

/// `export const NAME = [ ...strings ];` with a doc line.
fn const_list<'a>(doc: &str, name: &str, items: impl Iterator<Item = &'a str>) -> String {
    let mut out = format!("/** {doc} */\nexport const {name} = [\n");
    for item in items {
        out.push_str(&format!("  \"{item}\",\n"));
    }
    out.push_str("];\n");
    out
}

/// The declaration's doc comment, plus what it can fail with and what it causes.
fn jsdoc(op: &OpSpec) -> String {
    let mut out = String::from("  /**\n");
    for line in op.doc.lines() {
        let line = line.strip_prefix(' ').unwrap_or(line);
        if line.is_empty() {
            out.push_str("   *\n");
        } else {
            out.push_str(&format!("   * {line}\n"));
        }
    }
    let list =
        |items: Vec<String>| if items.is_empty() { "none".to_string() } else { items.join(", ") };
    let errors = op.errors.iter().map(|c| c.as_str().to_string()).collect();
    let events = op.events.iter().map(|k| k.as_str().to_string()).collect();
    out.push_str(&format!(
        "   *\n   * Errors: {}. Events: {}.\n   */\n",
        list(errors),
        list(events)
    ));
    out
}
