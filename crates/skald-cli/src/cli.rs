//! The argument grammar. Only commands that exist are declared, so `--help` never lists a promise.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "skald",
    version,
    about = "Skald: a durable LLM agent engine — headless commands",
    after_help = "Exit codes: 0 success · 1 error · 2 bad usage · 3 waiting for a human decision"
)]
pub struct Cli {
    /// Data directory (config.yml, skald.db). Default: $SKALD_DATA_DIR, else the OS data dir.
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one user turn in the source's active session (a message sent while a turn runs is
    /// folded into it; one sent while a call waits for a decision is queued behind it).
    /// A MESSAGE of /new, /stop, /compact [focus], /resettools, /context or /cost runs that
    /// command instead (`//text` sends `/text`). Exit 0 final answer · 1 error or round limit ·
    /// 3 waiting for a human.
    Chat {
        /// Source (conversation channel) whose active session gets the message.
        #[arg(long, default_value = "cli")]
        source: String,
        /// Agent of a session created by this message (`skald agents list`; a chat or task
        /// agent). An active session keeps its agent: naming another one is an error (start one
        /// with `--new` or `skald new --agent ID`).
        #[arg(long, value_name = "ID")]
        agent: Option<String>,
        /// Working directory of a session created by this message (default: the current dir).
        /// An active session keeps its directory: naming another one is an error (start one
        /// with `--new` or `skald new --workdir DIR`).
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
        /// Start a new session for the source first (as /new: the old session's bypasses end).
        #[arg(long)]
        new: bool,
        /// Approve every call that would need approval in this session: a stored bypass of all
        /// tools until /new, at most 24 h (deny rules still apply; `skald bypass revoke` ends it).
        #[arg(long)]
        approve_all: bool,
        /// Exit when the turn ends instead of waiting for the background tasks it started
        /// (`execute_task` mode async) and the answer to their reports: they continue the next
        /// time the app or `skald serve` runs (`skald tasks list` shows them).
        #[arg(long)]
        no_wait: bool,
        /// The message; `-` reads it from stdin (for a prompt longer than the argument limit:
        /// `skald chat - < prompt.md`). Text read from stdin or a file is sent as written (no
        /// / command), without its trailing line ends.
        #[arg(required_unless_present = "file")]
        message: Option<String>,
        /// Read the message from PATH (a regular UTF-8 file; a FIFO, a device or a directory is
        /// refused) instead of the MESSAGE argument.
        #[arg(long, value_name = "PATH", conflicts_with = "message")]
        file: Option<PathBuf>,
    },
    /// Start a new session for the source and print its id; the old session's bypasses end
    /// (the app's /new).
    New {
        /// Source (conversation channel) whose active session it becomes.
        #[arg(long, default_value = "cli")]
        source: String,
        /// Its agent (`skald agents list`; default `main`).
        #[arg(long, value_name = "ID")]
        agent: Option<String>,
        /// Where its tools work (default: the current dir).
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
    },
    /// Settle recorded decisions and continue the session's turn. Exit 0 final answer · 1 error
    /// or round limit · 3 waiting for a human (as `chat`).
    Resume {
        #[command(flatten)]
        session: SessionId,
        /// When the turn needs a decision again, wait for it (made from another terminal, the
        /// app or `serve`) instead of exiting 3.
        #[arg(long)]
        wait: bool,
    },
    /// Open approvals and questions across all sessions, oldest first, and the calls a restart
    /// cut off that wait for your word.
    Inbox,
    /// Approve a call waiting in the inbox.
    Approve {
        /// The tool call id (shown by `skald inbox`).
        #[arg(value_parser = parse_id, allow_hyphen_values = true)]
        call_id: i64,
        /// Optional note recorded with the decision.
        #[arg(long)]
        note: Option<String>,
        /// Also allow similar calls of this session without asking, for 15m, 1h or the session
        /// (until /new, at most 24 h). Deny rules still apply; `skald bypass revoke` ends it.
        #[arg(long, value_name = "DURATION", value_parser = ["15m", "1h", "session"])]
        bypass: Option<String>,
        /// What the bypass covers: all, category (the call's) or mcp_server (the call's server).
        /// Default: the call's MCP server, else its category. A scope that does not fit the
        /// call is refused.
        #[arg(long, value_parser = ["all", "category", "mcp_server"], requires = "bypass")]
        bypass_scope: Option<String>,
    },
    /// Bypasses in force (granted with an approval or `chat --approve-all`), and revoking them.
    #[command(subcommand)]
    Bypass(BypassCommand),
    /// Reject a call waiting in the inbox; the note reaches the model as the reason.
    Deny {
        /// The tool call id (shown by `skald inbox`).
        #[arg(value_parser = parse_id, allow_hyphen_values = true)]
        call_id: i64,
        /// Why: the model reads it and can take another route.
        #[arg(long)]
        note: Option<String>,
    },
    /// Answer a question an agent asked (shown by `skald inbox`).
    Answer {
        /// The question id (the tool call id).
        #[arg(value_parser = parse_id, allow_hyphen_values = true)]
        question_id: i64,
        /// Your answer; the agent reads it as the result of its question.
        text: String,
    },
    /// Cancel a running turn (also one running in another process).
    Stop {
        #[command(flatten)]
        session: SessionId,
    },
    /// List and inspect sessions.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Async tasks a session started (`execute_task` mode async): list them, continue a failed
    /// or cancelled one.
    #[command(subcommand)]
    Tasks(TasksCommand),
    /// Scheduled jobs: a task agent runs a prompt on a schedule (seven-field cron with seconds,
    /// a one-shot time or an interval), each run a session of source `cron`.
    #[command(subcommand)]
    Jobs(JobsCommand),
    /// Agent memory: the Markdown files of the data dir's `memory/` and what was written to
    /// them (each agent write recorded with its diff, which can be undone).
    #[command(subcommand)]
    Memory(MemoryCommand),
    /// TIC ticks: every `tic.interval_secs` the hidden `tic` agent reads what MCP servers kept
    /// connected pushed (only when something did).
    #[command(subcommand)]
    Tic(TicCommand),
    /// Agents (`agents/<id>/` in the data dir over the built-ins); `chat --agent ID` picks one
    /// for a new session.
    #[command(subcommand)]
    Agents(AgentsCommand),
    /// MCP servers (`mcp.servers` in config.yml): where each stands, and a server's tools.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Run any operation of the API by name with its params as JSON, and print its result as
    /// JSON (the same operations the app and `skald serve` answer). Without OP, list them.
    Api {
        /// Operation name (e.g. `session_usage`).
        op: Option<String>,
        /// Its params as a JSON object, e.g. '{"session_id": 3}' (default `{}`).
        params: Option<String>,
    },
    /// HTTP + WebSocket API and the built UI on 127.0.0.1; bearer token in DIR/serve.token (0600).
    Serve {
        /// Port to listen on; 0 picks a free one (the printed URL names it).
        #[arg(long, default_value_t = 7777)]
        port: u16,
    },
}

#[derive(Debug, Subcommand)]
pub enum TasksCommand {
    /// The session's async tasks: label, child session, state, whether the report reached it.
    List {
        /// The parent session.
        #[command(flatten)]
        session: SessionId,
    },
    /// Continue a failed or cancelled task from its last step, named by its child session id;
    /// waits for its report and the parent's answer to it.
    Continue {
        /// The task's child session id (`skald tasks list` shows it).
        #[arg(value_parser = parse_id, allow_hyphen_values = true)]
        id: i64,
    },
}

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Every memory file: size and path.
    List,
    /// A memory file's content (PATH relative to `memory/`, e.g. notes.md).
    Show { path: String },
    /// The recorded writes, newest first, each with its author and diff (of PATH when given).
    History {
        path: Option<String>,
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
    /// Undo recorded write ID: the file gets its content from before it back (refused when the
    /// file changed since).
    Undo { id: i64 },
}

#[derive(Debug, Subcommand)]
pub enum TicCommand {
    /// Run one tick now. With events waiting and without the app or `skald serve` running, it
    /// runs in this process, which waits for its end; with none, nothing is asked of a model.
    Run {
        /// Start it and return: the app or `skald serve` runs it.
        #[arg(long)]
        no_wait: bool,
    },
    /// The settings in force, the events waiting and the ticks, newest first.
    List {
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
}

#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// Every job: id, enabled, next run (UTC), last run's state, title and schedule in words.
    List,
    /// Add a job; prints it. Its runs work in --workdir (default: this directory).
    Add {
        #[arg(long)]
        title: String,
        #[command(flatten)]
        schedule: ScheduleArgs,
        /// The task agent that runs it.
        #[arg(long)]
        agent: String,
        /// Each run's first message.
        #[arg(long)]
        prompt: String,
        #[command(flatten)]
        options: JobOptions,
    },
    /// Change a job: only what is given changes; prints it.
    Edit {
        id: i64,
        #[arg(long)]
        title: Option<String>,
        #[command(flatten)]
        schedule: ScheduleArgs,
        #[arg(long)]
        agent: Option<String>,
        #[arg(long)]
        prompt: Option<String>,
        #[command(flatten)]
        options: JobOptions,
    },
    /// Delete a job. Its run history is kept unless --remove-history.
    Rm {
        id: i64,
        #[arg(long)]
        remove_history: bool,
    },
    /// Enable a job (its next run counted from now).
    Enable { id: i64 },
    /// Disable a job (a run going on is not stopped: `skald jobs kill` does that).
    Disable { id: i64 },
    /// Run a job now. Without the app or `skald serve` running, the run happens in this
    /// process, which waits for its end (a person's decision included).
    Run {
        id: i64,
        /// Start it and return: the app or `skald serve` runs it.
        #[arg(long)]
        no_wait: bool,
    },
    /// A job's runs, newest first: id, state, when it was due, session, tokens, reason (also
    /// of a job deleted with its history kept).
    Runs {
        id: i64,
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
    /// Kill a run (by run id) here or in another process: it ends `killed`, its waiting
    /// approvals and questions are cleared, its commands killed.
    Kill { run: i64 },
    /// Check a schedule: in words, with its next five fire times.
    Preview {
        #[command(flatten)]
        schedule: ScheduleArgs,
    },
}

/// When a job fires (one of them; the zone applies to each).
#[derive(Debug, clap::Args)]
pub struct ScheduleArgs {
    /// Seven fields `sec min hour day-of-month month day-of-week year`, e.g. '0 0 9 * * 1-5 *'.
    #[arg(long, conflicts_with_all = ["at", "every"])]
    pub cron: Option<String>,
    /// Once, at a local time (`2026-12-24T09:00`) or an RFC 3339 instant.
    #[arg(long, conflicts_with = "every")]
    pub at: Option<String>,
    /// Every N seconds (at least 60).
    #[arg(long)]
    pub every: Option<u64>,
    /// IANA time zone (default: the machine's).
    #[arg(long)]
    pub tz: Option<String>,
}

/// A job's other settings.
#[derive(Debug, clap::Args)]
pub struct JobOptions {
    /// Where its runs work.
    #[arg(long)]
    pub workdir: Option<PathBuf>,
    /// The LLM client its runs use (default: the agent's).
    #[arg(long)]
    pub client: Option<String>,
    /// When a call needs a person: wait in the Inbox (default) or deny at once.
    #[arg(long, value_parser = ["wait", "deny"])]
    pub on_approval: Option<String>,
    /// With wait: end a run still waiting after this many seconds (`expired`).
    #[arg(long)]
    pub approval_timeout: Option<u64>,
    /// When a run is due while the previous one has not ended: skip (default) or queue-one.
    #[arg(long, value_parser = ["skip", "queue-one"])]
    pub on_overlap: Option<String>,
    /// After downtime: catch-up-once (default) or skip.
    #[arg(long, value_parser = ["catch-up-once", "skip"])]
    pub on_downtime: Option<String>,
    /// Added disabled.
    #[arg(long)]
    pub disabled: bool,
}

#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// List every agent with its type, origin (built-in, user, override), model and description;
    /// a broken one shows its error naming the file.
    List,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Every configured server: state, tool count, how it is reached, and why it failed.
    /// Servers start when an agent activates them; --start starts the enabled ones now.
    List {
        #[arg(long)]
        start: bool,
    },
    /// Start SERVER (if it is not running) and list its tools as agents call them, with
    /// whether each needs approval (tools the server does not call read-only do).
    Tools {
        /// The server's name in mcp.servers.
        server: String,
    },
    /// Add a server to mcp.servers in config.yml (comments and other settings stay):
    /// `skald mcp add notes -- npx -y @modelcontextprotocol/server-filesystem ~/notes`, or
    /// `skald mcp add tracker --url https://host/mcp --api-key-env TRACKER_KEY`.
    Add {
        /// Its name: letters, digits, `_` and `-` (its tools become mcp__NAME__<tool>).
        name: String,
        /// What it is for: agents read it to decide when to activate it.
        #[arg(long)]
        description: Option<String>,
        /// A remote server's streamable HTTP endpoint (instead of a command).
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// The environment variable holding a remote server's bearer key.
        #[arg(long, requires = "url")]
        api_key_env: Option<String>,
        /// An environment variable for a local server, KEY=VALUE (repeatable; ${VAR} is read
        /// from Skald's environment when the server starts).
        #[arg(long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// The local server's working directory.
        #[arg(long)]
        cwd: Option<String>,
        /// Trust the server's annotations: its tools it marks read-only (`readOnlyHint`, and not
        /// `openWorldHint`) run without asking. Without it every tool of the server asks.
        #[arg(long)]
        trusted: bool,
        /// Keep it connected: started with the app or `skald serve` and started again when it
        /// exits, so what it pushes is stored for TIC ticks.
        #[arg(long)]
        keep_connected: bool,
        /// The local server's command and its arguments, after `--`.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Authorize Skald with an HTTP server that asks for OAuth: prints the page to open in a
    /// browser, waits (up to five minutes) for the browser to come back to Skald on 127.0.0.1,
    /// then starts the server. The tokens go to the OS keychain.
    Login {
        /// The server's name in mcp.servers.
        server: String,
    },
    /// Forget a server's OAuth tokens (removed from the keychain).
    Logout {
        /// The server's name in mcp.servers.
        server: String,
    },
    /// Remove a server from mcp.servers.
    Remove { name: String },
    /// Let agents use a disabled server again.
    Enable { name: String },
    /// Keep a server listed but never start it nor offer it to agents.
    Disable { name: String },
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List sessions, newest first (with --search, the matching ones).
    List {
        /// Only sessions of this source (web, tic, cron, ...).
        #[arg(long)]
        source: Option<String>,
        /// Only sessions whose title contains TEXT or whose messages (words; the last one may be
        /// the start of a word), tool names, paths or command lines (substrings) match it. Each
        /// is shown with its best match, matched text «marked».
        #[arg(long, value_name = "TEXT")]
        search: Option<String>,
        /// Page number, from 1.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        page: u32,
        /// Sessions per page (1-200).
        #[arg(long, default_value_t = skald_protocol::DEFAULT_PER_PAGE,
              value_parser = clap::value_parser!(u32).range(1..=i64::from(skald_protocol::MAX_PER_PAGE)))]
        per_page: u32,
    },
    /// Show a session's debug tree (the same shape as the app's session view). A long tool
    /// result shows its first lines and says how much more there is.
    Show {
        /// Session id (`skald sessions list` shows them).
        #[arg(value_parser = parse_id, allow_hyphen_values = true)]
        id: i64,
        /// Every tool result whole.
        #[arg(long)]
        full: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum BypassCommand {
    /// Active bypasses, oldest first: id, session, scope, who granted it, time left.
    List {
        /// Only this session's.
        #[arg(long, value_parser = parse_id, allow_hyphen_values = true)]
        session: Option<i64>,
    },
    /// End a bypass now (its id is shown by `skald bypass list`).
    Revoke {
        /// The bypass id.
        #[arg(value_parser = parse_id, allow_hyphen_values = true)]
        id: i64,
    },
}

/// A session named by its id: positional, as every id is (`skald resume 42`); `--session 42` is
/// still accepted for scripts written before ids were positional everywhere.
#[derive(Debug, Clone, Args)]
pub struct SessionId {
    /// Session id (`skald sessions list` shows them).
    #[arg(value_name = "SESSION", value_parser = parse_id, allow_hyphen_values = true,
          required_unless_present = "session_flag")]
    positional: Option<i64>,
    #[arg(long = "session", id = "session_flag", value_name = "SESSION", value_parser = parse_id,
          allow_hyphen_values = true, conflicts_with = "positional", hide = true)]
    flag: Option<i64>,
}

impl SessionId {
    pub fn id(&self) -> i64 {
        // clap requires one of the two.
        self.positional.or(self.flag).unwrap_or_default()
    }
}

/// Every id a command takes: a whole number from 1, said plainly when it is not one.
pub fn parse_id(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let hint = "ids are whole numbers from 1, as `skald sessions list` and `skald inbox` show them";
    if text.starts_with('-') {
        return Err(format!("`{text}` is not an id: {hint}"));
    }
    if text.is_empty() || !text.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("`{text}` is not an id: {hint}"));
    }
    match text.parse::<i64>() {
        Ok(0) => Err(format!("0 is not an id: {hint}")),
        Ok(id) => Ok(id),
        Err(_) => Err(format!("{text} is larger than any id: {hint}")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, String> {
        Cli::try_parse_from(std::iter::once("skald").chain(args.iter().copied()))
            .map_err(|e| e.to_string())
    }

    /// The id a parsed command names, whichever command it is.
    fn id_of(cli: &Cli) -> i64 {
        match &cli.command {
            Command::Resume { session, .. } | Command::Stop { session } => session.id(),
            Command::Tasks(TasksCommand::List { session }) => session.id(),
            Command::Tasks(TasksCommand::Continue { id }) => *id,
            Command::Sessions(SessionsCommand::Show { id, .. }) => *id,
            Command::Approve { call_id, .. } | Command::Deny { call_id, .. } => *call_id,
            Command::Answer { question_id, .. } => *question_id,
            Command::Bypass(BypassCommand::Revoke { id }) => *id,
            other => panic!("not a command with an id: {other:?}"),
        }
    }

    const WITH_IDS: [&[&str]; 9] = [
        &["resume"],
        &["stop"],
        &["tasks", "list"],
        &["tasks", "continue"],
        &["sessions", "show"],
        &["approve"],
        &["deny"],
        &["answer"],
        &["bypass", "revoke"],
    ];

    fn with(command: &[&str], id: &str) -> Vec<String> {
        let mut args: Vec<String> = command.iter().map(|s| s.to_string()).collect();
        args.push(id.to_string());
        if command == ["answer"] {
            args.push("yes".into());
        }
        args
    }

    #[test]
    fn every_command_takes_its_id_the_same_way() {
        for command in WITH_IDS {
            let args = with(command, "42");
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let cli = parse(&refs).unwrap_or_else(|e| panic!("{command:?}: {e}"));
            assert_eq!(id_of(&cli), 42, "{command:?}");
        }
        // The flag older scripts use still works where it was the only way.
        for command in [&["resume"][..], &["stop"], &["tasks", "list"]] {
            let mut args = command.to_vec();
            args.extend(["--session", "7"]);
            assert_eq!(id_of(&parse(&args).unwrap()), 7, "{command:?}");
            args.push("8");
            assert!(parse(&args).is_err(), "{command:?}: both a flag and a positional id");
        }
    }

    #[test]
    fn an_id_that_is_not_one_is_said_plainly() {
        for (id, says) in [
            ("-5", "`-5` is not an id"),
            ("abc", "`abc` is not an id"),
            ("0", "0 is not an id"),
            ("99999999999999999999", "99999999999999999999 is larger than any id"),
        ] {
            for command in WITH_IDS {
                let args = with(command, id);
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                let error = parse(&refs).err().unwrap_or_else(|| panic!("{command:?} took {id}"));
                assert!(error.contains(says), "{command:?} {id}: {error}");
                assert!(error.contains("skald sessions list"), "{command:?} {id}: {error}");
            }
        }
        let error = parse(&["resume", "--session", "-5"]).err().unwrap();
        assert!(error.contains("`-5` is not an id"), "{error}");
    }
}
