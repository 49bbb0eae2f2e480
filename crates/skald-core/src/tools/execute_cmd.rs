//! `execute_cmd`: run a shell command with a timeout and an output cap; the whole process tree
//! dies on timeout, on cancel, when the future is dropped, and when the command finishes
//! (background jobs it left are stopped, so no tool call leaves work running). The shell dies
//! with the engine's process (`spawner`), and its group is recorded while it runs so the next
//! engine kills what a crashed one left behind (`process_registry`). On Unix the command starts
//! only once its group is recorded (`START_GATE`): an engine killed in between leaves nothing
//! running that the next engine would not know of.

use std::path::{Path, PathBuf};
use std::pin::pin;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::json;
use tokio::process::{Child, Command};

use super::args::Args;
use super::capture::{self, Capture};
use super::process_group::ProcessGroup;
use super::process_registry::ProcessRegistry;
use super::spawner::Spawner;
use super::{Tool, ToolCategory, ToolContext, ToolDef, ToolError, ToolOutput, label, names, paths};

/// After the shell exits, how long a background process may keep the pipes open before the
/// output is taken as complete.
const DRAIN_GRACE: Duration = Duration::from_millis(300);

/// Put before the command on Unix: the shell waits for one line on its stdin, which the engine
/// writes once the group is recorded, then gives the command no stdin (as the tool promises).
/// An engine that dies first closes the pipe: `read` fails and the shell exits 125 before the
/// command can do anything. On the command's own line, so its line numbers stay as written.
#[cfg(unix)]
const START_GATE: &str = "read -r _ || exit 125; exec </dev/null; ";

pub(crate) struct ExecuteCmd {
    def: ToolDef,
    spawner: Spawner,
    /// Where running commands' process groups are recorded (`None`: not recorded).
    processes: Option<ProcessRegistry>,
}

impl ExecuteCmd {
    pub(crate) fn new(processes: Option<ProcessRegistry>) -> Self {
        Self {
            def: ToolDef {
                name: names::EXECUTE_CMD,
                description: "Run a shell command (`sh -c`; `cmd /C` on Windows) with no stdin and \
                    return its exit code, stdout and stderr (long output keeps its start and end). \
                    Runs in the working directory unless `workdir` is given. The command and its \
                    child processes are killed at the timeout (default 120 s, max 600 s); \
                    background processes are stopped when the command finishes.",
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "command": {"type": "string", "description": "The shell command line"},
                        "workdir": {"type": "string", "description": "Directory to run in (default: the working directory)"},
                        "timeout": {"type": "integer", "minimum": 1, "maximum": 600, "description": "Seconds before the command is killed (default 120)"}
                    },
                    "required": ["command"],
                    "additionalProperties": false
                }),
                category: ToolCategory::Shell,
                read_only: false,
            },
            spawner: Spawner::default(),
            processes,
        }
    }
}

struct Request {
    command: String,
    workdir: PathBuf,
    timeout_secs: u64,
}

fn parse(args: &serde_json::Value, ctx: &ToolContext) -> Result<Request, ToolError> {
    let a = Args::new(args)?;
    let command = a.string("command")?;
    if command.trim().is_empty() {
        return Err(ToolError::InvalidArguments("`command` must not be empty".into()));
    }
    let max = ctx.limits.max_cmd_timeout_secs;
    let timeout_secs = a
        .opt_positive("timeout")
        .map_err(|_| timeout_range(max))?
        .unwrap_or(ctx.limits.default_cmd_timeout_secs);
    if timeout_secs > max {
        return Err(timeout_range(max));
    }
    let workdir = match a.opt_string("workdir")?.filter(|w| !w.is_empty()) {
        Some(raw) => paths::resolve_path(&ctx.workdir, raw)?,
        None => paths::resolve_path(&ctx.workdir, ".")?,
    };
    if !workdir.is_dir() {
        return Err(ToolError::Failed(format!(
            "the working directory {} does not exist or is not a directory",
            workdir.display()
        )));
    }
    Ok(Request { command: command.to_string(), workdir, timeout_secs })
}

fn timeout_range(max: u64) -> ToolError {
    ToolError::InvalidArguments(format!("`timeout` must be between 1 and {max} seconds"))
}

fn shell(command: &str, workdir: &Path) -> Command {
    #[cfg(windows)]
    let mut cmd = {
        let mut c = Command::new("cmd");
        c.arg("/C").arg(command);
        c
    };
    #[cfg(not(windows))]
    let mut cmd = {
        let mut c = Command::new("sh");
        c.arg("-c").arg(format!("{START_GATE}{command}"));
        c
    };
    // Inside the AppImage, the command gets the user's environment, not the bundle's.
    crate::launch_env::restore_host_env(&mut cmd);
    // Unix: the start gate's line comes on stdin (`open_gate`).
    #[cfg(unix)]
    cmd.stdin(Stdio::piped());
    #[cfg(not(unix))]
    cmd.stdin(Stdio::null());
    cmd.current_dir(workdir).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    // Its own group, so one signal reaches every process the command starts.
    #[cfg(unix)]
    cmd.process_group(0);
    cmd
}

/// Lets a command through its start gate (Unix): one line, then EOF.
async fn open_gate(child: &mut Child) {
    use tokio::io::AsyncWriteExt;
    if let Some(mut stdin) = child.stdin.take() {
        // A shell that died already cannot read it: its exit status tells.
        let _ = stdin.write_all(b"\n").await;
    }
}

enum Outcome {
    Exited(std::io::Result<ExitStatus>),
    TimedOut,
    Cancelled,
}

/// Waits for the shell while collecting output. Once it exits, the pipes get a short grace to
/// drain: a background job holding them open must not stall the call until the timeout.
async fn wait_collecting(
    child: &mut Child,
    out: &mut Capture,
    err: &mut Capture,
) -> std::io::Result<ExitStatus> {
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let mut pumps =
        pin!(async { tokio::join!(capture::pump(stdout, out), capture::pump(stderr, err)) });
    let mut wait = pin!(child.wait());
    tokio::select! {
        status = &mut wait => {
            let _ = tokio::time::timeout(DRAIN_GRACE, &mut pumps).await;
            status
        }
        _ = &mut pumps => wait.await,
    }
}

fn exit_line(status: &ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    "exit status unknown".into()
}

/// `stdout` and `stderr` labelled, sharing one output budget.
fn render_output(out: &Capture, err: &Capture, budget: usize) -> String {
    let (out_budget, err_budget) = capture::split_budget(out.total(), err.total(), budget);
    let mut text = String::new();
    if out.total() > 0 {
        text.push_str("--- stdout ---\n");
        text.push_str(&out.render(out_budget));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    if err.total() > 0 {
        text.push_str("--- stderr ---\n");
        text.push_str(&err.render(err_budget));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    if text.is_empty() {
        text.push_str("(no output)\n");
    }
    text
}

async fn execute(
    tool: &ExecuteCmd,
    req: Request,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    tracing::info!(
        command = %req.command,
        workdir = %req.workdir.display(),
        timeout_secs = req.timeout_secs,
        "execute_cmd"
    );
    let (mut child, _lease) = tool
        .spawner
        .spawn(shell(&req.command, &req.workdir))
        .await
        .map_err(|e| ToolError::Failed(format!("cannot start the shell: {e}")))?;
    let recorded = match (&tool.processes, child.id()) {
        (Some(processes), Some(pid)) => Some(processes.record(ctx.tool_call_id, pid).await),
        _ => None,
    };
    // Recorded: the command may start.
    open_gate(&mut child).await;
    // Declared after `child`, so on drop it is dropped first: the group dies, then tokio's
    // kill_on_drop reaps the leader (and `recorded` removes the group's row).
    let group = ProcessGroup::new(child.id());
    let budget = ctx.limits.max_output_bytes;
    let mut out = Capture::new(budget);
    let mut err = Capture::new(budget);
    let limit = Duration::from_secs(req.timeout_secs);
    let outcome = {
        let run = wait_collecting(&mut child, &mut out, &mut err);
        tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => Outcome::Cancelled,
            done = tokio::time::timeout(limit, run) => match done {
                Ok(status) => Outcome::Exited(status),
                Err(_) => Outcome::TimedOut,
            },
        }
    };
    group.kill();
    if let Some(recorded) = recorded {
        recorded.finish().await;
    }
    match outcome {
        Outcome::Exited(status) => {
            let status = status
                .map_err(|e| ToolError::Failed(format!("waiting for the command failed: {e}")))?;
            let text = format!("{}\n{}", exit_line(&status), render_output(&out, &err, budget));
            Ok(ToolOutput::text(text))
        }
        Outcome::Cancelled => {
            // Reap the leader so nothing of the call outlives the return.
            let _ = child.kill().await;
            Err(ToolError::Cancelled)
        }
        Outcome::TimedOut => {
            let _ = child.kill().await;
            Err(ToolError::Failed(format!(
                "command timed out after {}s (it and its child processes were killed); output so far:\n{}",
                req.timeout_secs,
                render_output(&out, &err, budget)
            )))
        }
    }
}

impl Tool for ExecuteCmd {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move { execute(self, parse(args, ctx)?, ctx).await })
    }

    fn describe(&self, args: &serde_json::Value, full: bool) -> String {
        let command = args.get("command").and_then(|v| v.as_str()).unwrap_or("");
        label::label(self.def.name, command, full)
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use super::{open_gate, shell};

    /// The command does nothing until the gate opens; a gate closed without its line (the engine
    /// died) ends the shell with 125 and the command never runs.
    #[tokio::test]
    async fn a_command_starts_only_when_its_gate_opens() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = shell("echo ran > marker", dir.path()).spawn().unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!dir.path().join("marker").exists(), "ran before the gate opened");
        open_gate(&mut child).await;
        assert_eq!(child.wait().await.unwrap().code(), Some(0));
        assert_eq!(std::fs::read_to_string(dir.path().join("marker")).unwrap(), "ran\n");

        let mut child = shell("echo ran > never", dir.path()).spawn().unwrap();
        drop(child.stdin.take());
        assert_eq!(child.wait().await.unwrap().code(), Some(125));
        assert!(!dir.path().join("never").exists());
    }

    /// Behind the gate the command still has no stdin and its errors name its own line numbers.
    #[tokio::test]
    async fn behind_the_gate_the_command_reads_nothing_and_its_errors_name_its_own_line() {
        use tokio::io::AsyncReadExt;
        let dir = tempfile::tempdir().unwrap();
        let mut child = shell("cat; echo after\nif then", dir.path()).spawn().unwrap();
        let (mut stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        open_gate(&mut child).await;
        let (mut out, mut err) = (String::new(), String::new());
        stdout.read_to_string(&mut out).await.unwrap();
        stderr.read_to_string(&mut err).await.unwrap();
        assert_eq!(child.wait().await.unwrap().code(), Some(2));
        assert_eq!(out, "after\n", "cat read nothing");
        assert!(err.contains("2:"), "the error names line 2: {err}");
    }
}
