//! The argument grammar. Only commands that exist are declared, so `--help` never lists a promise.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

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
        /// Session id.
        #[arg(long)]
        session: i64,
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
        call_id: i64,
        /// Why: the model reads it and can take another route.
        #[arg(long)]
        note: Option<String>,
    },
    /// Answer a question an agent asked (shown by `skald inbox`).
    Answer {
        /// The question id (the tool call id).
        question_id: i64,
        /// Your answer; the agent reads it as the result of its question.
        text: String,
    },
    /// Cancel a running turn (also one running in another process).
    Stop {
        /// Session id.
        #[arg(long)]
        session: i64,
    },
    /// List and inspect sessions.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Async tasks a session started (`execute_task` mode async): list them, continue a failed
    /// or cancelled one.
    #[command(subcommand)]
    Tasks(TasksCommand),
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
        /// The parent session's id.
        #[arg(long)]
        session: i64,
    },
    /// Continue a failed or cancelled task from its last step, named by its child session id;
    /// waits for its report and the parent's answer to it.
    Continue {
        /// The task's child session id (`skald tasks list` shows it).
        id: i64,
    },
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
        /// The local server's command and its arguments, after `--`.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
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
    /// Show a session's debug tree (the same shape as the app's session view).
    Show {
        /// Session id.
        id: i64,
    },
}

#[derive(Debug, Subcommand)]
pub enum BypassCommand {
    /// Active bypasses, oldest first: id, session, scope, who granted it, time left.
    List {
        /// Only this session's.
        #[arg(long)]
        session: Option<i64>,
    },
    /// End a bypass now (its id is shown by `skald bypass list`).
    Revoke {
        /// The bypass id.
        id: i64,
    },
}
