//! What the table says about each operation, and the checks every call goes through.

use serde::de::DeserializeOwned;
use skald_core::EngineError;
use skald_protocol::{ApiError, ErrorCode, EventKind};

/// One operation as declared in the table.
#[derive(Debug, Clone, Copy)]
pub struct OpSpec {
    /// The wire name: the Tauri `api` op, `POST /api/<name>`, the TypeScript method.
    pub name: &'static str,
    /// The declaration's doc comment.
    pub doc: &'static str,
    /// The Rust name of the params struct (also its TypeScript name).
    pub params: &'static str,
    /// The result type's TypeScript name.
    pub result: fn() -> String,
    /// The TypeScript declaration of the params struct.
    pub params_decl: fn() -> String,
    /// The error codes the operation can return (besides a malformed call's `invalid_input`).
    pub errors: &'static [ErrorCode],
    /// The events the operation causes.
    pub events: &'static [EventKind],
}

/// Reads an operation's params; a malformed value is the caller's `invalid_input`, naming the
/// operation and the field. `null` (an empty HTTP body) stands for `{}`.
pub(crate) fn parse<P: DeserializeOwned>(
    op: &str,
    params: serde_json::Value,
) -> Result<P, ApiError> {
    let params = if params.is_null() { serde_json::json!({}) } else { params };
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." { String::new() } else { format!(" at `{path}`") };
        ApiError::new(
            ErrorCode::InvalidInput,
            format!("bad parameters for `{op}`{at}: {}", e.into_inner()),
        )
    })
}

/// Encodes a result for the untyped dispatcher.
pub(crate) fn encode<R: serde::Serialize>(
    op: &str,
    result: R,
) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(result).map_err(|e| {
        ApiError::new(ErrorCode::Internal, format!("cannot encode the result of `{op}`: {e}"))
    })
}

/// Maps an engine error to the wire; in debug builds an error code the declaration does not list
/// fails loudly, so the table stays true.
pub(crate) fn declared(op: &str, errors: &[ErrorCode], e: EngineError) -> ApiError {
    let e = ApiError::from(e);
    debug_assert!(
        errors.contains(&e.code),
        "operation `{op}` returned {:?} ({}), which its declaration does not list: add it to \
         `errors` in crates/skald-api/src/table.rs",
        e.code,
        e.message
    );
    e
}

/// The error of an operation name no table entry has.
pub(crate) fn unknown(op: &str) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("no operation `{op}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declared_error_passes_through_with_its_code_and_message() {
        let e =
            declared("x", &[ErrorCode::NotFound], EngineError::NotFound("no such thing".into()));
        assert_eq!(e, ApiError::new(ErrorCode::NotFound, "no such thing"));
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "operation `x` returned Conflict")]
    fn an_undeclared_error_fails_loudly_in_debug_builds() {
        declared("x", &[ErrorCode::NotFound], EngineError::Conflict("busy".into()));
    }
}
