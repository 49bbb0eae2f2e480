//! Writing and removing a user agent's folder (the Settings page and the API).

use std::path::Path;

use super::registry::{COMMON_DIR, META_FILE, PROMPT_FILE};
use super::{AgentError, AgentMeta, builtin, resolve_directives, validate_meta};

/// Creates or replaces user agent `id`. Everything is checked before anything is written (the
/// id, the meta, each `INCLUDE`); each file is then replaced atomically, so a reader sees the
/// old or the new file, never half of one.
pub fn save(data_dir: &Path, id: &str, meta: &AgentMeta, prompt: &str) -> Result<(), AgentError> {
    check_id(id)?;
    let agents_dir = data_dir.join("agents");
    let dir = agents_dir.join(id);
    let invalid = |file: &str, message: String| AgentError::Invalid {
        id: id.to_string(),
        path: dir.join(file),
        message,
    };
    validate_meta(meta).map_err(|m| invalid(META_FILE, m))?;
    resolve_directives(prompt, &agents_dir, "").map_err(|e| invalid(PROMPT_FILE, e.to_string()))?;
    let mut json =
        serde_json::to_string_pretty(meta).map_err(|e| invalid(META_FILE, e.to_string()))?;
    json.push('\n');
    let write = |file: &str, text: &str| {
        let path = dir.join(file);
        crate::tools::write_atomic(&path, text.as_bytes())
            .map(|_| ())
            .map_err(|e| AgentError::Write { path, message: e.to_string() })
    };
    write(PROMPT_FILE, prompt)?;
    write(META_FILE, &json)
}

/// Removes user agent `id`'s folder. A built-in without a user folder cannot be deleted; one
/// with a folder comes back as shipped.
pub fn delete(data_dir: &Path, id: &str) -> Result<(), AgentError> {
    check_id(id)?;
    let dir = data_dir.join("agents").join(id);
    if !dir.is_dir() {
        return Err(if builtin::find(id).is_some() {
            AgentError::BuiltIn(id.to_string())
        } else {
            AgentError::NotFound(id.to_string())
        });
    }
    std::fs::remove_dir_all(&dir)
        .map_err(|e| AgentError::Write { path: dir, message: e.to_string() })
}

/// Ids the user can create: `[a-z0-9-]+`, not the shared-fragments folder.
fn check_id(id: &str) -> Result<(), AgentError> {
    let ok = !id.is_empty()
        && id != COMMON_DIR
        && id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok { Ok(()) } else { Err(AgentError::InvalidId(id.to_string())) }
}
