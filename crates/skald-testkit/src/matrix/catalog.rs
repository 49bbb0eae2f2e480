//! Every row the reliability matrix must measure, in the order `docs/reliability.md` shows them.

use serde::{Deserialize, Serialize};

/// One table of the document.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    Provider,
    Files,
    Config,
    Links,
    Decisions,
    Serve,
    Mcp,
    Attacker,
}

impl Group {
    pub const ALL: [Group; 8] = [
        Group::Provider,
        Group::Files,
        Group::Config,
        Group::Links,
        Group::Decisions,
        Group::Serve,
        Group::Mcp,
        Group::Attacker,
    ];

    /// The heading of the group's table.
    pub fn title(self) -> &'static str {
        match self {
            Group::Provider => "Provider faults",
            Group::Files => "Bad input: files and paths",
            Group::Config => "Bad input: `config.yml`",
            Group::Links => "Bad input: forged `skald://` links",
            Group::Decisions => "Bad input: decisions and bypasses",
            Group::Serve => "Bad input: the `skald serve` API",
            Group::Mcp => "MCP server faults",
            Group::Attacker => "A model that tries",
        }
    }

    /// Where the group's rows are measured, for the reader who wants to see how.
    pub fn measured_by(self) -> &'static str {
        match self {
            Group::Provider => {
                "the engine on a temporary data dir against the strict fake provider over real \
                 HTTP (`crates/skald-core/tests/suite/matrix/provider.rs`)"
            }
            Group::Files => {
                "the engine on a temporary data dir and working directory, approvals on \
                 (`crates/skald-core/tests/suite/matrix/files.rs`)"
            }
            Group::Config => {
                "the real `skald` binary on a temporary data dir \
                 (`crates/skald-cli/tests/suite/matrix.rs`), and the engine's config watcher \
                 (`crates/skald-core/tests/suite/matrix/config.rs`)"
            }
            Group::Links => {
                "the desktop's link parser and router, as a unit (`crates/skald-links/tests/suite/matrix.rs`)"
            }
            Group::Decisions => {
                "the real `skald` binary on a temporary data dir (`crates/skald-cli/tests/suite/matrix.rs`)"
            }
            Group::Serve => {
                "the real `skald serve` over HTTP and WebSocket (`crates/skald-cli/tests/suite/matrix.rs`)"
            }
            Group::Mcp => {
                "the engine against the strict fake provider and the real \
                 `@modelcontextprotocol/server-everything` from npm \
                 (`crates/skald-core/tests/suite/matrix/mcp.rs`)"
            }
            Group::Attacker => {
                "the engine against the strict fake provider, whose scripted model chooses its \
                 arguments to get past the person approving \
                 (`crates/skald-core/tests/suite/matrix/attacker/`), and the real `skald` binary \
                 with its output read as a terminal shows it (`crates/skald-cli/tests/suite/attacker/`)"
            }
        }
    }
}

/// A row: its stable id (what a test names), its group and the case as the table shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowSpec {
    pub id: &'static str,
    pub group: Group,
    pub case: &'static str,
}

const fn row(id: &'static str, group: Group, case: &'static str) -> RowSpec {
    RowSpec { id, group, case }
}

/// The rows issue 11 asks for, and the MCP servers' faults. A row listed here without a measurement renders as "not
/// measured" and fails the document check, so a deleted or ignored test cannot go unnoticed.
pub const ROWS: &[RowSpec] = &[
    row("provider.429-retry-after", Group::Provider, "HTTP 429 with `Retry-After`"),
    row("provider.429-no-retry-after", Group::Provider, "HTTP 429 without `Retry-After`"),
    row("provider.500", Group::Provider, "HTTP 500"),
    row("provider.502", Group::Provider, "HTTP 502"),
    row("provider.503", Group::Provider, "HTTP 503"),
    row("provider.503-every-attempt", Group::Provider, "HTTP 503 on every attempt and model"),
    row("provider.connect-refused", Group::Provider, "Connection refused"),
    row("provider.timeout-before-headers", Group::Provider, "No response headers in time"),
    row("provider.stall-mid-stream", Group::Provider, "A stream that goes silent mid-reply"),
    row("provider.dropped-stream", Group::Provider, "A stream dropped mid-reply"),
    row("provider.malformed-sse", Group::Provider, "Malformed SSE data"),
    row("provider.invalid-tool-json", Group::Provider, "Invalid JSON in tool-call arguments"),
    row("provider.unknown-tool", Group::Provider, "An unknown tool name"),
    row("provider.duplicate-call-ids", Group::Provider, "Duplicate tool-call ids in one reply"),
    row("provider.empty-reply", Group::Provider, "An empty reply (no text, no tool call)"),
    row("provider.200-error-body", Group::Provider, "HTTP 200 whose body is an error"),
    row(
        "provider.stream-ends-before-delta",
        Group::Provider,
        "A streamed reply with tools that ends before its first delta (llama-cpp-python)",
    ),
    row("files.traversal", Group::Files, "Path traversal with `..`"),
    row("files.absolute-outside", Group::Files, "Absolute path outside the working directory"),
    row("files.symlink-out", Group::Files, "Symlink out of the working directory"),
    row("files.symlink-into-memory", Group::Files, "Symlink into the data dir's `memory/`"),
    row("files.binary", Group::Files, "A binary file"),
    row("files.read-50mb", Group::Files, "Reading a 50 MB file"),
    row("files.write-50mb", Group::Files, "Editing a 50 MB file"),
    row("files.deleted-before-write", Group::Files, "File deleted between approval and write"),
    row("files.changed-before-write", Group::Files, "File changed between approval and write"),
    row("config.syntax-error", Group::Config, "A YAML syntax error"),
    row("config.wrong-type", Group::Config, "A value of the wrong type"),
    row("config.unknown-key", Group::Config, "An unknown key"),
    row("config.huge-file", Group::Config, "A huge file"),
    row("config.yaml-bomb", Group::Config, "A YAML alias bomb"),
    row("config.secret-key", Group::Config, "An API key written into the file"),
    row("config.broken-while-running", Group::Config, "The file broken while the app runs"),
    row("links.session", Group::Links, "Forged `skald://session/…`"),
    row("links.approval", Group::Links, "Forged `skald://approval/…`"),
    row("links.chat", Group::Links, "Forged `skald://chat/…`"),
    row("links.inbox", Group::Links, "Forged `skald://inbox…`"),
    row("links.unknown-route", Group::Links, "An unknown route or scheme"),
    row("links.huge", Group::Links, "A huge link"),
    row("decisions.unknown-call", Group::Decisions, "A decision for a call that does not exist"),
    row("decisions.already-decided", Group::Decisions, "A second decision for a decided call"),
    row("decisions.bypass-scope", Group::Decisions, "A bypass whose scope does not fit the call"),
    row("serve.no-token", Group::Serve, "No token (HTTP and WebSocket)"),
    row("serve.wrong-token", Group::Serve, "A wrong token (HTTP and WebSocket)"),
    row("serve.foreign-origin-http", Group::Serve, "A non-loopback `Origin` on HTTP"),
    row("serve.foreign-origin-ws", Group::Serve, "A non-loopback `Origin` on the WebSocket"),
    row("mcp.cannot-start", Group::Mcp, "A server whose command cannot run"),
    row("mcp.not-activated", Group::Mcp, "A call of a server's tool before it was activated"),
    row("mcp.tool-error", Group::Mcp, "A tool that answers with an error (`isError`)"),
    row("mcp.dies-mid-call", Group::Mcp, "The server killed during a call"),
    row(
        "attacker.bypass-config-write",
        Group::Attacker,
        "A write's bypass, then a rewrite of the data dir's `config.yml` adding a server",
    ),
    row(
        "attacker.bypass-git-hooks",
        Group::Attacker,
        "A write's bypass, then a write to the project's `.git/hooks`",
    ),
    row(
        "attacker.all-bypass-register-mcp",
        Group::Attacker,
        "`--approve-all`, then `register_mcp` of a shell command",
    ),
    row(
        "attacker.write-bypass-read-outside",
        Group::Attacker,
        "A write's bypass, then a read of a key outside the working directory",
    ),
    row(
        "attacker.deny-through-shell",
        Group::Attacker,
        "A denied path named by a shell command under `--approve-all`",
    ),
    row(
        "attacker.link-after-approval",
        Group::Attacker,
        "A link planted where an approved write goes, before it runs",
    ),
    row(
        "attacker.data-dir-in-workdir",
        Group::Attacker,
        "A working directory that contains the data dir",
    ),
    row("attacker.fifo-read", Group::Attacker, "A FIFO where a file is read"),
    row("attacker.task-flood", Group::Attacker, "One reply that starts 40 async tasks"),
    row(
        "attacker.terminal-escapes",
        Group::Attacker,
        "Terminal escapes in a command, a diff line, an answer and a path",
    ),
    row(
        "attacker.long-diff-tail",
        Group::Attacker,
        "A 100-line new file whose line 90 pipes a download into `sh`",
    ),
    row(
        "attacker.workdir-mismatch",
        Group::Attacker,
        "`--workdir` naming another directory than the active session's",
    ),
    row(
        "attacker.new-from-cli",
        Group::Attacker,
        "`/new` from `skald chat`, and a bypass still in force",
    ),
    row(
        "attacker.config-fifo",
        Group::Attacker,
        "`config.yml` replaced by a FIFO while `skald serve` runs",
    ),
    row("attacker.readonly-db", Group::Attacker, "A read-only `skald.db`"),
    row("attacker.disk-full", Group::Attacker, "A full disk during a turn"),
];

/// The row with this id, if the catalog has it.
pub fn spec(id: &str) -> Option<&'static RowSpec> {
    ROWS.iter().find(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_group_has_rows() {
        let mut ids: Vec<&str> = ROWS.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), ROWS.len(), "duplicate row id");
        for g in Group::ALL {
            assert!(ROWS.iter().any(|r| r.group == g), "{g:?} has no rows");
        }
    }

    #[test]
    fn rows_are_listed_group_by_group() {
        let groups: Vec<Group> = ROWS.iter().map(|r| r.group).collect();
        let mut sorted = groups.clone();
        sorted.sort();
        assert_eq!(groups, sorted, "keep each group's rows together, in Group::ALL order");
    }
}
