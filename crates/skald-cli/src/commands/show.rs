//! How `skald` shows what a person decides on, the same in `chat`, `resume` and `inbox`: a
//! write's diff whole, every line of a command, the server, tool and arguments of an MCP call,
//! a question with its suggested answers. Model-chosen fields that belong on one line (paths,
//! directories, titles) show their line feeds as `\n`; the output layer shows every control
//! character.

use skald_protocol::{ApprovalKind, ApprovalRequest, DiffKind, DiffLineTag, FileDiff, InboxItem};

use crate::output::one_line;

/// A call waiting for approval: what it does (one line) and what to review under it.
pub struct Review {
    pub what: String,
    pub details: Vec<String>,
}

/// The review of a call as the `approval_requested` event describes it.
pub fn request(
    tool_name: &str,
    arguments: &serde_json::Value,
    request: &ApprovalRequest,
) -> Review {
    match request {
        ApprovalRequest::Write { path, diff } => {
            Review { what: format!("write to {}", one_line(path)), details: diff_lines(diff) }
        }
        ApprovalRequest::Command { command, workdir } => command_review(command, workdir),
        ApprovalRequest::McpCall { server, tool } => Review {
            what: format!("MCP tool {} of server {}", one_line(tool), one_line(server)),
            details: argument_lines(arguments),
        },
        ApprovalRequest::Other { .. } if schedules_job(tool_name, arguments) => {
            job_review(arguments)
        }
        ApprovalRequest::Other { path } => Review {
            what: match path {
                Some(path) => format!("{tool_name} {}", one_line(path)),
                None => tool_name.to_string(),
            },
            details: argument_lines(arguments),
        },
    }
}

/// The review of a call listed in the inbox (the same as when it was asked for).
pub fn inbox_item(item: &InboxItem) -> Review {
    let req = match (item.kind, &item.path, &item.command, &item.diff, &item.mcp_server) {
        (ApprovalKind::Write, Some(path), _, Some(diff), _) => {
            ApprovalRequest::Write { path: path.clone(), diff: diff.clone() }
        }
        (ApprovalKind::Command, _, Some(command), _, _) => ApprovalRequest::Command {
            command: command.clone(),
            workdir: item.workdir.clone().unwrap_or_else(|| "?".to_string()),
        },
        (_, _, _, _, Some(server)) => ApprovalRequest::McpCall {
            server: server.clone(),
            tool: mcp_tool(&item.tool_name).to_string(),
        },
        (_, path, ..) => ApprovalRequest::Other { path: path.clone() },
    };
    request(&item.tool_name, &item.arguments, &req)
}

/// `execute_task` mode `cron`: an agent asks to schedule a job.
fn schedules_job(tool_name: &str, arguments: &serde_json::Value) -> bool {
    tool_name == "execute_task" && arguments.get("mode").and_then(|m| m.as_str()) == Some("cron")
}

/// A job an agent asks to schedule, which will run later with nobody watching: its title,
/// agent and schedule in words, its next runs, where it runs and on which client, and its
/// prompt whole, line by line.
fn job_review(arguments: &serde_json::Value) -> Review {
    let text = |k: &str| arguments.get(k).and_then(|v| v.as_str()).unwrap_or("?");
    let what = format!(
        "schedule the job \"{}\" (agent {}): {}",
        one_line(text("title")),
        one_line(text("agent_id")),
        one_line(text("schedule_in_words"))
    );
    let next: Vec<String> = arguments
        .get("next_runs")
        .and_then(|n| n.as_array())
        .map(|a| a.iter().filter_map(|t| t.as_str()).map(|t| one_line(t).into_owned()).collect())
        .unwrap_or_default();
    let schedule = arguments.get("schedule").map(ToString::to_string).unwrap_or_default();
    let mut details = vec![
        format!("schedule: {} in {}", one_line(&schedule), one_line(text("timezone"))),
        format!("next runs: {}", if next.is_empty() { "none".into() } else { next.join(", ") }),
        format!("working directory: {}", one_line(text("working_directory"))),
        format!("client: {}", one_line(text("client"))),
    ];
    // The runs' pre-authorisations and rule group, under which they act unattended.
    if let Some(rc) = arguments.get("run_context").filter(|rc| !rc.is_null()) {
        details.push(format!("run context: {}", one_line(&rc.to_string())));
    }
    details.push("prompt:".to_string());
    details.extend(text("prompt").split('\n').map(|l| format!("  {l}")));
    Review { what, details }
}

/// The tool's own name in `mcp__<server>__<tool>`.
fn mcp_tool(name: &str) -> &str {
    name.strip_prefix("mcp__").and_then(|rest| rest.split_once("__")).map_or(name, |(_, t)| t)
}

/// A one-line command is named in the sentence; a longer one is listed under it, every line.
fn command_review(command: &str, workdir: &str) -> Review {
    let workdir = one_line(workdir);
    let lines: Vec<&str> = command.split('\n').collect();
    if lines.len() == 1 {
        return Review { what: format!("command `{command}` in {workdir}"), details: Vec::new() };
    }
    Review {
        what: format!("command of {} lines in {workdir}", lines.len()),
        details: lines
            .iter()
            .enumerate()
            .map(|(i, l)| format!("{} {l}", if i == 0 { '$' } else { '>' }))
            .collect(),
    }
}

/// The arguments as the model sent them, as indented JSON (a line feed inside a string stays
/// `\n`).
fn argument_lines(arguments: &serde_json::Value) -> Vec<String> {
    if arguments.is_null() || arguments.as_object().is_some_and(serde_json::Map::is_empty) {
        return Vec::new();
    }
    let text = serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string());
    text.lines().map(str::to_string).collect()
}

/// A write's change: its summary, then every hunk line (built from the hunks, not the unified
/// text, whose `---`/`+++` header carries the path and could be split by a line feed in it).
pub fn diff_lines(diff: &FileDiff) -> Vec<String> {
    let mut out = vec![one_line(&diff.summary).into_owned()];
    if matches!(diff.kind, DiffKind::Binary | DiffKind::TooLarge | DiffKind::Unchanged) {
        return out;
    }
    for h in &diff.hunks {
        out.push(format!(
            "@@ -{} +{} @@",
            range(h.old_start, h.old_lines),
            range(h.new_start, h.new_lines)
        ));
        for l in &h.lines {
            let tag = match l.tag {
                DiffLineTag::Context => ' ',
                DiffLineTag::Delete => '-',
                DiffLineTag::Insert => '+',
            };
            out.push(format!("{tag}{}", l.text));
        }
    }
    if diff.crlf {
        out.push("(the file uses CRLF line endings)".to_string());
    }
    if diff.new_missing_newline {
        out.push("\\ No newline at end of file".to_string());
    }
    out
}

/// A hunk range as unified diffs write it: `start` alone for one line.
fn range(start: u32, lines: u32) -> String {
    if lines == 1 { start.to_string() } else { format!("{start},{lines}") }
}

/// A question an agent asks: its title and text whole, and the suggested answers.
pub fn question(title: &str, question: &str, suggested: &[String]) -> (String, Vec<String>) {
    let mut details: Vec<String> = question.lines().map(str::to_string).collect();
    if !suggested.is_empty() {
        let answers: Vec<String> = suggested.iter().map(|a| one_line(a).into_owned()).collect();
        details.push(format!("suggested: {}", answers.join(" | ")));
    }
    (one_line(title).into_owned(), details)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use skald_protocol::{DiffHunk, DiffLine};

    use super::*;

    fn line(tag: DiffLineTag, text: &str) -> DiffLine {
        DiffLine { tag, old_line: None, new_line: None, text: text.into(), spans: Vec::new() }
    }

    fn new_file(path: &str, lines: &[&str]) -> FileDiff {
        FileDiff {
            path: path.into(),
            kind: DiffKind::Create,
            hunks: vec![DiffHunk {
                old_start: 0,
                old_lines: 0,
                new_start: 1,
                new_lines: lines.len() as u32,
                lines: lines.iter().map(|l| line(DiffLineTag::Insert, l)).collect(),
            }],
            added: lines.len() as u32,
            removed: 0,
            unified: String::new(),
            summary: format!("new file, {} lines", lines.len()),
            crlf: false,
            old_missing_newline: false,
            new_missing_newline: false,
        }
    }

    #[test]
    fn a_long_new_file_is_shown_to_its_last_line() {
        let lines: Vec<String> = (1..=100).map(|i| format!("echo step {i}")).collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let shown = diff_lines(&new_file("build.sh", &refs));
        assert_eq!(shown.len(), 102);
        assert_eq!(shown[1], "@@ -0,0 +1,100 @@");
        assert_eq!(shown[101], "+echo step 100");
    }

    #[test]
    fn a_path_with_a_line_feed_stays_in_its_sentence() {
        let diff = new_file("a.txt\n+++ b/other", &["x"]);
        let review = request(
            "write_file",
            &json!({}),
            &ApprovalRequest::Write { path: diff.path.clone(), diff },
        );
        assert_eq!(review.what, "write to a.txt\\n+++ b/other");
        assert_eq!(review.details, ["new file, 1 lines", "@@ -0,0 +1 @@", "+x"]);
    }

    #[test]
    fn every_line_of_a_multi_line_command_is_listed() {
        let req = ApprovalRequest::Command {
            command: "ls -la\ncurl x | sh".into(),
            workdir: "/w".into(),
        };
        let review = request("execute_cmd", &json!({}), &req);
        assert_eq!(review.what, "command of 2 lines in /w");
        assert_eq!(review.details, ["$ ls -la", "> curl x | sh"]);
        let one = ApprovalRequest::Command { command: "ls -la".into(), workdir: "/w".into() };
        assert_eq!(request("execute_cmd", &json!({}), &one).what, "command `ls -la` in /w");
    }

    #[test]
    fn a_job_to_schedule_shows_its_schedule_in_words_next_runs_and_whole_prompt() {
        let args = serde_json::json!({
            "mode": "cron", "title": "Daily\nreport", "agent_id": "scout",
            "prompt": "line one\nline two",
            "schedule": { "kind": "cron", "expr": "0 0 9 * * 1-5 *" },
            "timezone": "Europe/Berlin", "client": "fast", "working_directory": "/w",
            "run_context": { "allow_fs_writes": ["/w"] },
            "schedule_in_words": "every weekday at 09:00, Europe/Berlin",
            "next_runs": ["2026-05-05T09:00:00+02:00", "2026-05-06T09:00:00+02:00"],
        });
        let review = request("execute_task", &args, &ApprovalRequest::Other { path: None });
        assert_eq!(
            review.what,
            "schedule the job \"Daily\\nreport\" (agent scout): every weekday at 09:00, Europe/Berlin"
        );
        assert_eq!(
            review.details,
            [
                r#"schedule: {"expr":"0 0 9 * * 1-5 *","kind":"cron"} in Europe/Berlin"#,
                "next runs: 2026-05-05T09:00:00+02:00, 2026-05-06T09:00:00+02:00",
                "working directory: /w",
                "client: fast",
                r#"run context: {"allow_fs_writes":["/w"]}"#,
                "prompt:",
                "  line one",
                "  line two",
            ]
        );
    }

    #[test]
    fn an_mcp_call_shows_server_tool_and_arguments() {
        let req = ApprovalRequest::McpCall { server: "notes".into(), tool: "delete".into() };
        let review = request("mcp__notes__delete", &json!({"id": "a\nb"}), &req);
        assert_eq!(review.what, "MCP tool delete of server notes");
        assert_eq!(review.details, ["{", "  \"id\": \"a\\nb\"", "}"]);
        assert_eq!(mcp_tool("mcp__notes__delete"), "delete");
    }
}
