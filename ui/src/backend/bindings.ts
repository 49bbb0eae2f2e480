// Generated from the Rust types in crates/skald-protocol. Do not edit by hand:
// run `UPDATE_BINDINGS=1 cargo test -p skald-protocol --test bindings` instead.

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]?: JsonValue } | null;

export type ErrorCode = "not_found" | "invalid_input" | "conflict" | "config" | "storage" | "llm" | "cancelled" | "unauthorized" | "internal";

export type ApiError = { code: ErrorCode, message: string, };

export type Page<T> = { items: Array<T>, total: number, page: number, per_page: number, };

export type SnippetPart = { text: string, hit: boolean, };

export type HitKind = "user" | "assistant" | "agent" | "tool";

export type MatchRef = { message_id: number, 
/**
 * Set when the match is a tool call (`kind: tool`).
 */
tool_call_id: number | null, kind: HitKind, };

export type SearchQuery = { text: string, 
/**
 * Most hits to return (1-200); ask again with a larger limit for more.
 */
limit: number, };

export type SearchHit = { session_id: number, session_title: string | null, session_source: string, at: MatchRef, 
/**
 * The called tool, for a tool hit.
 */
tool_name: string | null, snippet: Array<SnippetPart>, 
/**
 * FTS5 bm25 rank: lower is better. Comparable within one answer only.
 */
rank: number, 
/**
 * When the message or call was stored.
 */
created_at: string, };

export type SearchResults = { hits: Array<SearchHit>, more: boolean, };

export type SessionMatches = { session_id: number, matches: Array<MatchRef>, };

export type SessionListQuery = { 
/**
 * Only sessions of this source (`web`, `tic`, `cron`, ...); `None` = all.
 */
source: string | null, 
/**
 * Text search: sessions whose title contains the text, or whose messages, tool names,
 * paths or command lines match it (as in `SearchQuery`), newest first like the plain
 * list, each with its hit count and best hit.
 */
search: string | null, 
/**
 * 1-based page number.
 */
page: number, per_page: number, };

export type SessionSummary = { id: number, title: string | null, source: string, agent_id: string, is_ephemeral: boolean, is_interactive: boolean, created_at: string, message_count: number, last_message_at: string | null, 
/**
 * With a search: how many messages and calls of the session match (0 for a title-only
 * match, and without a search).
 */
hit_count: number, 
/**
 * With a search: the session's best hit, to show and open.
 */
best_hit: SearchHit | null, };

export type SessionMeta = { id: number, title: string | null, source: string, agent_id: string, is_interactive: boolean, is_ephemeral: boolean, created_at: string, };

export type ToolStatus = "pending" | "running" | "done" | "failed" | "rejected" | "cancelled";

export type ReconcileChoice = "ran" | "did_not_run" | "run_again";

export type InterruptedCall = { tool_call_id: number, session_id: number, tool_name: string, 
/**
 * What the call does, as labelled live (`execute_cmd make install`).
 */
label: string, flagged_at: string, 
/**
 * `None` until the user says; then set once.
 */
choice: ReconcileChoice | null, decided_by: string | null, decided_at: string | null, 
/**
 * `run_again`: how the re-run ended (`None` while it runs) and its result text.
 */
rerun_status: ToolStatus | null, rerun_result: string | null, };

export type MediaKind = "image" | "audio" | "data";

export type ToolMedia = { kind: MediaKind, 
/**
 * As the server declared it; `null` when it gave none. Not checked against the bytes.
 */
mime: string | null, 
/**
 * The name the engine gave the file inside `mcp-results/` of the data dir; `null` when it
 * could not be saved.
 */
file_name: string | null, 
/**
 * Where it was saved, for people to open (the data dir's path at the time).
 */
saved_path: string | null, 
/**
 * Decoded size in bytes.
 */
byte_size: number, };

export type ResourceLink = { name: string, uri: string, mime: string | null, description: string | null, };

export type ToolResultMedia = { media: Array<ToolMedia>, links: Array<ResourceLink>, };

export type MediaFile = { kind: MediaKind, 
/**
 * The type the server declared, or `application/octet-stream`.
 */
mime: string, byte_size: number, 
/**
 * Standard base64 of the whole file.
 */
base64: string, };

export type DebugMessage = { "kind": "user", message_id: number, content: string, is_synthetic: boolean, failed: boolean, stack_id: number, depth: number, created_at: string, 
/**
 * Characters of the whole text; more than `content` holds when the row was cut to a
 * preview (`truncated`).
 */
content_chars: number, 
/**
 * The text or the reasoning was cut to a preview: `session_item` has the whole row.
 */
truncated: boolean, } | { "kind": "thinking", message_id: number, content: string, reasoning: string | null, is_synthetic: boolean, input_tokens: number | null, output_tokens: number | null, 
/**
 * What the provider charged for this reply, in USD, when it says.
 */
cost_usd: number | null, stack_id: number, depth: number, created_at: string, 
/**
 * Characters of the whole text; more than `content` holds when the row was cut to a
 * preview (`truncated`).
 */
content_chars: number, 
/**
 * The text or the reasoning was cut to a preview: `session_item` has the whole row.
 */
truncated: boolean, } | { "kind": "assistant", message_id: number, content: string, reasoning: string | null, is_synthetic: boolean, input_tokens: number | null, output_tokens: number | null, 
/**
 * What the provider charged for this reply, in USD, when it says.
 */
cost_usd: number | null, stack_id: number, depth: number, created_at: string, 
/**
 * Characters of the whole text; more than `content` holds when the row was cut to a
 * preview (`truncated`).
 */
content_chars: number, 
/**
 * The text or the reasoning was cut to a preview: `session_item` has the whole row.
 */
truncated: boolean, } | { "kind": "tool", tool_call_id: number, message_id: number, name: string, 
/**
 * What the call does, e.g. `write_file src/main.rs` (the live `ToolStart`'s
 * `label_full`); the bare name when the tool is unknown or its arguments do not parse.
 */
label: string, arguments: unknown, status: ToolStatus, result: string | null, 
/**
 * The change a write call made, recorded when it finished.
 */
diff: FileDiff | null, 
/**
 * The media files and resource links an MCP call returned (empty for other calls).
 */
media: ToolResultMedia, stack_id: number, depth: number, created_at: string, 
/**
 * Characters of the whole result (0 without one).
 */
result_chars: number, 
/**
 * The result, a long argument string or a large diff was cut from this preview:
 * `session_item` has the whole call.
 */
truncated: boolean, } | { "kind": "agent", stack_id: number, agent_id: string, depth: number, prompt: string | null, parent_tool_call_id: number | null, } | { "kind": "agent_end", stack_id: number, agent_id: string, depth: number, };

export type PendingInput = { 
/**
 * Pending-input id (its own id space, not a message id).
 */
id: number, content: string, created_at: string, };

export type TurnEnd = { "kind": "final", message_id: number, } | { "kind": "cancelled", } | { "kind": "exhausted", rounds: number, } | { "kind": "parked", tool_call_ids: number[], } | { "kind": "failed", reason: string, };

export type EndedTurn = { id: number, 
/**
 * The frame whose turn ended (the root frame until sub-agents run turns of their own).
 */
stack_id: number, outcome: TurnEnd, 
/**
 * The newest history row of the session when the turn ended (where the end goes in the
 * transcript); `null` when the session had none.
 */
after_message_id: number | null, ended_at: string, };

export type SessionDetail = { session: SessionMeta, messages: Array<DebugMessage>, 
/**
 * Messages stored but not folded into the history yet (steers waiting for a round boundary
 * or for a decision), oldest first. Each becomes a `user` message when folded.
 */
pending_inputs: Array<PendingInput>, 
/**
 * How each turn of the session ended, oldest first (a turn that parked and was continued
 * has one entry per run).
 */
turn_ends: Array<EndedTurn>, 
/**
 * The async tasks the session started, oldest first: each runs in its own child session.
 */
tasks: Array<TaskInfo>, };

export type ItemRef = { "type": "message", id: number, } | { "type": "tool", id: number, } | { "type": "agent", stack_id: number, } | { "type": "agent_end", stack_id: number, };

export type WindowAnchor = { "type": "latest" } | { "type": "before", item: ItemRef, } | { "type": "after", item: ItemRef, } | { "type": "around", item: ItemRef, };

export type WindowQuery = { anchor: WindowAnchor, 
/**
 * Rows wanted (1..=500; larger asks are cut to 500).
 */
limit: number, };

export type SessionWindow = { session: SessionMeta, items: Array<DebugMessage>, 
/**
 * Rows exist before the first one (ask with `before` the first row).
 */
has_more_before: boolean, 
/**
 * Rows exist after the last one; false means the window reaches the newest row.
 */
has_more_after: boolean, 
/**
 * Position in `items` of the anchor of an `around` window.
 */
anchor_index: number | null, 
/**
 * As in `SessionDetail`: messages waiting to be folded in, oldest first.
 */
pending_inputs: Array<PendingInput>, 
/**
 * Calls of the session waiting for a human decision or answer, oldest first, loaded or not
 * (what "jump to the pending approval" goes to).
 */
awaiting_human: number[], 
/**
 * How the turns that ended within this window's rows ended, oldest first (each goes after
 * the row `after_message_id` names); a window reaching the newest row has every later end.
 */
turn_ends: Array<EndedTurn>, 
/**
 * The async tasks the session started, oldest first, loaded or not (a reloaded chat puts
 * each task's card after its call when that call is in the window).
 */
tasks: Array<TaskInfo>, };

export type SendResult = { session_id: number, 
/**
 * The message was stored as a steer, to be folded into a running turn at its next round
 * boundary — or, with `waiting_for`, into the turn that continues after the decision.
 */
steered: boolean, 
/**
 * Calls waiting for a human decision or answer that the message is queued behind.
 */
waiting_for: number[], };

export type SessionUsage = { session_id: number, 
/**
 * Input tokens the provider reported for the latest request; `None` until a reply made
 * after the latest compaction reports usage (older numbers describe the larger context).
 */
last_input_tokens: number | null, last_output_tokens: number | null, 
/**
 * The model that answered last.
 */
model: string | null, 
/**
 * Window of the session's first model when known (configured or a well-known family).
 */
context_window: number | null, 
/**
 * The context the next request carries, as compaction counts it: the latest reported usage
 * plus an estimate of what followed; right after a compaction, the estimate of the compacted
 * request. `None` before the session's first model reply.
 */
context_tokens: number | null, 
/**
 * `context_tokens` is all estimate: no reply since the latest compaction reported usage.
 */
context_estimated: boolean, input_tokens_total: number, output_tokens_total: number, 
/**
 * Spend in USD as the provider reported it; `None` when no reply carried a cost.
 */
cost_usd: number | null, 
/**
 * Model replies that carried a cost, of all model replies.
 */
priced_replies: number, replies: number, };

export type CompactResult = { 
/**
 * False when there was nothing useful to summarise.
 */
compacted: boolean, tokens_before: number | null, tokens_after: number | null, summarised_messages: number, 
/**
 * The summary row, and its text: all the model keeps of the older history.
 */
summary_id: number | null, summary: string | null, };

export type SessionRef = { session_id: number, };

export type StopResult = { 
/**
 * False when no turn was running (here or in another process).
 */
stopped: boolean, };

export type TaskState = "queued" | "running" | "done" | "failed" | "cancelled" | "delivered" | "delivery_dropped";

export type TaskInfo = { task_id: number, 
/**
 * The session that started it; its report goes there.
 */
parent_session_id: number, child_session_id: number, 
/**
 * The `execute_task` call that started it (its card goes after that call in the chat).
 */
tool_call_id: number, 
/**
 * `agent#child_session_id`, as the report block names it.
 */
label: string, agent_id: string, state: TaskState, 
/**
 * The final answer or the failure, once it ended.
 */
report: string | null, 
/**
 * Whether the report reached the parent's history.
 */
delivered: boolean, };

export type TurnStatus = { running: boolean, };

export type ToolGroupsReset = { 
/**
 * How many activated tool groups were revoked.
 */
revoked: number, };

export type RunContext = { 
/**
 * Effective cwd of the tools; `None` = the process cwd.
 */
working_directory: string | null, 
/**
 * Fragments joined into the dynamic tail of every request.
 */
system_prompt: Array<string>, 
/**
 * Extra read-only roots (plain paths, prefix match on canonical paths).
 */
allow_fs_reads: Array<string>, 
/**
 * Write pre-authorisation (implies read).
 */
allow_fs_writes: Array<string>, 
/**
 * Permission group evaluated before `default`.
 */
security_group: string | null, };

export type JobSchedule = { "kind": "cron", expr: string, } | { "kind": "once", at: string, } | { "kind": "every", seconds: number, };

export type OnApproval = "wait" | "deny";

export type OnOverlap = "skip" | "queue_one";

export type OnDowntime = "catch_up_once" | "skip";

export type JobPolicies = { on_approval: OnApproval, 
/**
 * With `wait`: a run still waiting for a person this many seconds after it parked ends
 * `expired` and its pending approvals and questions are cleared. `None`: it waits.
 */
approval_timeout_secs: number | null, on_overlap: OnOverlap, on_downtime: OnDowntime, };

export type JobInput = { title: string, schedule: JobSchedule, 
/**
 * IANA zone (`Europe/Berlin`); left out: the machine's.
 */
timezone?: string, 
/**
 * A task agent.
 */
agent_id: string, 
/**
 * Each run's first message.
 */
prompt: string, 
/**
 * The runs' working directory and the rest, as for a session.
 */
run_context?: RunContext, 
/**
 * The LLM client the runs use; left out: the agent's.
 */
client?: string, policies?: JobPolicies, 
/**
 * Left out: enabled.
 */
enabled?: boolean, };

export type JobRunState = "queued" | "running" | "waiting" | "done" | "failed" | "killed" | "expired" | "skipped" | "missed";

export type JobRunInfo = { id: number, job_id: number, 
/**
 * The occurrence it stands for (RFC 3339 UTC); a catch-up run's is when it was started.
 */
scheduled_for: string, state: JobRunState, 
/**
 * Started after downtime, for the occurrences recorded `missed`.
 */
catch_up: boolean, 
/**
 * Started by `run now`, not by the schedule.
 */
manual: boolean, session_id: number | null, started_at: string | null, ended_at: string | null, input_tokens: number, output_tokens: number, cost_usd: number | null, 
/**
 * Why it did not finish (or was not run).
 */
reason: string | null, };

export type TickState = "running" | "done" | "failed" | "cancelled" | "empty";

export type TicEventInfo = { id: number, server: string, method: string, 
/**
 * The params as JSON text (a JSON string when they were cut).
 */
params: string | null, received_at: string, };

export type TicTickInfo = { id: number, 
/**
 * The interval it belongs to (RFC 3339 UTC), or when a manual run was asked for.
 */
slot: string, 
/**
 * Started by `skald tic run` / the page, not by the interval.
 */
manual: boolean, state: TickState, 
/**
 * How many events it read.
 */
events: number, 
/**
 * The servers those events came from.
 */
servers: Array<string>, session_id: number | null, started_at: string, ended_at: string | null, reason: string | null, };

export type TicTickDetail = { tick: TicTickInfo, events: Array<TicEventInfo>, };

export type TicStatus = { 
/**
 * Seconds between ticks (`tic.interval_secs`).
 */
interval_secs: number, batch_size: number, active_hours: string | null, 
/**
 * Events stored and not read by a tick yet.
 */
pending_events: number, 
/**
 * Servers marked `keep_connected` (only their events are stored).
 */
kept_connected: Array<string>, 
/**
 * Newest first (empty ticks left out).
 */
ticks: Array<TicTickInfo>, };

export type JobInfo = { id: number, title: string, schedule: JobSchedule, timezone: string, agent_id: string, prompt: string, run_context: RunContext | null, client: string | null, policies: JobPolicies, enabled: boolean, 
/**
 * The schedule in words, with the zone.
 */
description: string, 
/**
 * The next occurrence (RFC 3339 UTC); `None` when disabled or nothing is left.
 */
next_run_at: string | null, last_run: JobRunInfo | null, created_at: string, };

export type SchedulePreview = { 
/**
 * In words, with the zone: "every weekday at 09:00, Europe/Berlin".
 */
description: string, timezone: string, 
/**
 * The next fire times (up to five), RFC 3339 with the zone's offset.
 */
next: Array<string>, };

export type JobDeleted = { 
/**
 * Runs removed with it (0 when its history was kept).
 */
runs_removed: number, };

export type HomeNotice = { id: number, job_id: number, job_run_id: number, 
/**
 * The job's title when the run ended.
 */
job_title: string, 
/**
 * How the run ended.
 */
state: JobRunState, 
/**
 * The first lines of the run's answer, or why it did not finish.
 */
summary: string, session_id: number | null, created_at: string, };

export type NotificationInfo = { id: number, 
/**
 * Who reported it: `job`, `tic`, `task`.
 */
origin: string, 
/**
 * What happened: `job_run_failed`, `notify`, …
 */
event_type: string, 
/**
 * The fact, in neutral words (the home agent writes the briefing).
 */
summary: string, 
/**
 * The session it is about (the run's, the tick's).
 */
session_id: number | null, created_at: string, 
/**
 * The home session it was delivered to, once delivered.
 */
delivered_session_id: number | null, delivered_at: string | null, };

export type HomeSource = { source: string, chosen: boolean, };

export type MemoryFileInfo = { 
/**
 * Relative to `memory/`, with `/` separators (what `memory_write` takes).
 */
path: string, size: number, 
/**
 * Last modification, RFC 3339 UTC (`None` when the file system does not say).
 */
modified_at: string | null, };

export type MemoryFileContent = { path: string, content: string, 
/**
 * The size limit a write must stay within (`memory.max_file_bytes`).
 */
max_bytes: number, };

export type MemoryAuthor = "agent" | "user";

export type MemoryEdit = { id: number, path: string, author: MemoryAuthor, 
/**
 * The agent's session and call (agent edits).
 */
session_id: number | null, tool_call_id: number | null, agent_id: string | null, 
/**
 * The file did not exist before this write.
 */
created_file: boolean, diff: FileDiff, created_at: string, 
/**
 * When it was undone, if it was.
 */
undone_at: string | null, };

export type ApprovalKind = "write" | "command" | "tool";

export type ApprovalRequest = { "kind": "write", path: string, diff: FileDiff, } | { "kind": "command", command: string, workdir: string, } | { "kind": "mcp_call", server: string, tool: string, } | { "kind": "other", path: string | null, };

export type DiffKind = "modify" | "create" | "delete" | "binary" | "too_large" | "unchanged";

export type DiffSpan = { text: string, changed: boolean, };

export type DiffLineTag = "context" | "delete" | "insert";

export type DiffLine = { tag: DiffLineTag, old_line: number | null, new_line: number | null, 
/**
 * The line without its line ending.
 */
text: string, 
/**
 * For a changed line paired with its counterpart: which words changed. Empty otherwise.
 */
spans: Array<DiffSpan>, };

export type DiffHunk = { old_start: number, old_lines: number, new_start: number, new_lines: number, lines: Array<DiffLine>, };

export type FileDiff = { path: string, kind: DiffKind, hunks: Array<DiffHunk>, added: number, removed: number, 
/**
 * The unified diff text (`---`/`+++`/`@@`), for copying and terminals.
 */
unified: string, 
/**
 * One-line human summary ("new file, 12 lines", "binary file, 3 KB → 4 KB", ...).
 */
summary: string, 
/**
 * Whether the old side used CRLF line endings (shown as a badge).
 */
crlf: boolean, 
/**
 * Whether the old / new side lacked a final newline.
 */
old_missing_newline: boolean, new_missing_newline: boolean, };

export type InboxItem = { 
/**
 * The tool call id; also the approval id.
 */
tool_call_id: number, session_id: number, source: string, agent_id: string, context_label: string | null, 
/**
 * The sub-agent that asks (`scout#42`, nested with `>`); `null` for the root agent.
 */
frame_label: string | null, tool_name: string, 
/**
 * `filesystem`, `shell`, `session`; `null` for MCP or unknown tools.
 */
tool_category: string | null, 
/**
 * Parsed from `mcp__<server>__<tool>`.
 */
mcp_server: string | null, kind: ApprovalKind, arguments: unknown, 
/**
 * One-line description of what will happen.
 */
summary: string, path: string | null, command: string | null, workdir: string | null, diff: FileDiff | null, created_at: string, 
/**
 * Seconds since the call started waiting (at the time of the read).
 */
age_secs: number, };

export type QuestionItem = { 
/**
 * The tool call id of the `ask_user_clarification` call; also the question id.
 */
tool_call_id: number, session_id: number, source: string, agent_id: string, context_label: string | null, 
/**
 * The sub-agent that asks (`scout#42`, nested with `>`); `null` for the root agent.
 */
frame_label: string | null, title: string, 
/**
 * Markdown.
 */
question: string, suggested_answers: Array<string>, created_at: string, age_secs: number, };

export type ElicitationForm = { 
/**
 * The server's words (plain text).
 */
message: string, 
/**
 * None: a yes/no confirmation.
 */
fields: Array<ElicitationField>, };

export type ElicitationField = { 
/**
 * The name the server reads the value under.
 */
name: string, title: string | null, description: string | null, required: boolean, 
/**
 * A secret: typed masked, handed to the server from memory, never stored.
 */
sensitive: boolean, 
/**
 * Pre-filled (never for a secret).
 */
default: unknown, } & ({ "kind": "text", format: string | null, min_length: number | null, max_length: number | null, } | { "kind": "number", integer: boolean, minimum: number | null, maximum: number | null, } | { "kind": "boolean" } | { "kind": "choice", options: Array<string>, labels: Array<string>, } | { "kind": "multi_choice", options: Array<string>, labels: Array<string>, min_items: number | null, max_items: number | null, });

export type ElicitationFieldKind = { "kind": "text", format: string | null, min_length: number | null, max_length: number | null, } | { "kind": "number", integer: boolean, minimum: number | null, maximum: number | null, } | { "kind": "boolean" } | { "kind": "choice", options: Array<string>, labels: Array<string>, } | { "kind": "multi_choice", options: Array<string>, labels: Array<string>, min_items: number | null, max_items: number | null, };

export type ElicitationItem = { elicitation_id: number, 
/**
 * The MCP call it was asked during.
 */
tool_call_id: number, session_id: number, source: string, 
/**
 * The server that asks.
 */
server: string, form: ElicitationForm, created_at: string, age_secs: number, };

export type ElicitationAction = "accept" | "decline" | "cancel";

export type ElicitationAnswered = { 
/**
 * The waiting call got the answer now (false: the same answer was recorded before).
 */
delivered: boolean, };

export type Answer = { tool_call_id: number, session_id: number, answer: string, 
/**
 * Whether a turn picked the answer up right away (false: the next resume settles it).
 */
resumed: boolean, };

export type Inbox = { items: Array<InboxItem>, questions: Array<QuestionItem>, 
/**
 * Questions MCP servers ask during calls.
 */
elicitations: Array<ElicitationItem>, total: number, };

export type BypassScopeKind = "all" | "category" | "mcp_server";

export type BypassDuration = "fifteen_minutes" | "one_hour" | "session";

export type BypassRequest = { duration: BypassDuration, 
/**
 * `null`: the narrowest scope that fits the call (its MCP server, else its category).
 */
scope: BypassScopeKind | null, };

export type DecisionInput = { approved: boolean, 
/**
 * Reason for a rejection; reaches the model verbatim.
 */
note: string | null, 
/**
 * With an approval only: also allow similar calls of the session without asking. A scope
 * that does not fit the call is refused (`invalid_input`) and nothing is recorded.
 */
bypass: BypassRequest | null, };

export type Decision = { tool_call_id: number, session_id: number, approved: boolean, note: string | null, 
/**
 * The surface that decided: `app`, `tray`, `notification`, `web` or `cli`.
 */
decided_by: string, decided_at: string, 
/**
 * Whether a turn picked the decision up right away (false: it is settled on the next resume).
 */
resumed: boolean, 
/**
 * The bypass granted with the approval, if one was asked for.
 */
bypass: BypassView | null, };

export type BypassView = { id: number, session_id: number, 
/**
 * The session's source (`web`, `cli`, ...).
 */
source: string, scope: BypassScopeKind, 
/**
 * The category (`filesystem`, `shell`, `session`) or MCP server; `null` for `all`.
 */
scope_value: string | null, 
/**
 * What it covers, for people: "all tools", "shell tools", "MCP server github".
 */
label: string, duration: BypassDuration, 
/**
 * The surface that granted it (`app`, `tray`, `notification`, `web`, `cli`).
 */
granted_by: string, granted_at: string, expires_at: string, 
/**
 * Seconds left at the time of the read.
 */
remaining_secs: number, 
/**
 * The call it was approved with, if any.
 */
tool_call_id: number | null, 
/**
 * When and by whom it was revoked (`null` while active).
 */
revoked_at: string | null, revoked_by: string | null, };

export type LlmClientView = { name: string, base_url: string, model: string, provider: string | null, 
/**
 * Environment variable the key is read from, if any.
 */
api_key_env: string | null, 
/**
 * Whether a key is available (env var set, or an entry in the OS keychain).
 */
has_api_key: boolean, 
/**
 * `env` = defined by SKALD_LLM_* variables (read-only here).
 */
from_env: boolean, context_window: number | null, 
/**
 * False when config.yml says `stream: false` (replies are then never streamed).
 */
stream: boolean, };

export type LlmClientInput = { 
/**
 * The client's name in config.yml before this edit; null for a new client. A different
 * `name` renames the client and keeps its other keys.
 */
previous_name: string | null, name: string, base_url: string, model: string, provider: string | null, api_key_env: string | null, context_window: number | null, 
/**
 * False writes `stream: false`; null keeps what config.yml says.
 */
stream: boolean | null, };

export type SettingsView = { clients: Array<LlmClientView>, 
/**
 * Client names in the order they are tried.
 */
fallback: Array<string>, data_dir: string, config_path: string, 
/**
 * Names the text of config.yml this view was read from. A save that passes it back is
 * refused (`conflict`) if the file changed since, so a client added by hand is not dropped.
 */
revision: string, };

export type ConnectionTest = { ok: boolean, models: Array<string>, 
/**
 * Whether the configured model is among them.
 */
model_listed: boolean, error: string | null, latency_ms: number, };

export type RuleAction = "allow" | "require" | "deny";

export type ApprovalRuleView = { id: number, group_id: string, tool_pattern: string, path_pattern: string | null, agent_id: string | null, source: string | null, action: RuleAction, priority: number, note: string | null, 
/**
 * Set for the seeded defaults.
 */
seed_key: string | null, };

export type ApprovalRuleInput = { group_id: string | null, tool_pattern: string, path_pattern: string | null, agent_id: string | null, source: string | null, action: RuleAction, priority: number, note: string | null, };

export type AgentType = "chat" | "task" | "system";

export type AgentStrength = "very_low" | "low" | "average" | "high" | "very_high";

export type AgentSummary = { id: string, name: string, description: string, 
/**
 * Null when `meta.json` did not parse.
 */
type: AgentType | null, client: string | null, scope: string | null, strength: AgentStrength | null, 
/**
 * Shipped with Skald (no user folder for this id); cannot be deleted.
 */
built_in: boolean, 
/**
 * A user folder replacing a built-in; deleting it restores the built-in.
 */
overrides_built_in: boolean, 
/**
 * Why the agent cannot be used, naming the file; a session using it fails its turn so.
 */
error: string | null, 
/**
 * What works but is likely a mistake: a `<!-- KEY -->` placeholder nothing fills (it is
 * left empty in the requests).
 */
warnings: Array<string>, };

export type McpServerState = "disabled" | "not_started" | "ready" | "failed" | "needs_authorization" | "authorizing";

export type McpToolInfo = { 
/**
 * The name agents call it by: `mcp__<server>__<tool>`.
 */
name: string, description: string, 
/**
 * The server says it changes nothing: no approval by default.
 */
read_only: boolean, };

export type McpServerInfo = { name: string, description: string | null, 
/**
 * `stdio: <command> <args>` or `http: <url>`.
 */
endpoint: string, state: McpServerState, error: string | null, 
/**
 * Empty until the server has started.
 */
tools: Array<McpToolInfo>, 
/**
 * Its log file (stderr, the server's log messages and connection events).
 */
log_path: string | null, 
/**
 * The last lines of that log, oldest first, as the file has them (kept in memory since
 * Skald started; empty before the server's first start).
 */
log_lines: Array<string>, 
/**
 * Marked `keep_connected`: the app and `skald serve` keep it running, and what it pushes
 * is read by TIC ticks.
 */
keep_connected: boolean, };

export type McpServerInput = { name: string, description: string | null, command: string | null, args: Array<string>, 
/**
 * Extra environment; `${VAR}` in a value is read from Skald's environment.
 */
env: { [key in string]?: string }, cwd: string | null, url: string | null, api_key_env: string | null, 
/**
 * Trust the server's annotations: its tools marked read-only run without approval.
 */
trusted: boolean, 
/**
 * Keep it connected (started with Skald, restarted when it exits) so what it pushes is
 * stored for TIC ticks.
 */
keep_connected: boolean, };

export type McpAuthorization = { server: string, 
/**
 * The authorization server's page to open.
 */
url: string, };

export type AgentDefinition = { name: string, 
/**
 * What it is for and what it returns: other agents read it to decide to delegate.
 */
description: string, friendly_description: string | null, instructions: string | null, type: AgentType, inject_memory: Array<string>, 
/**
 * A pinned client (model alias) from config.yml.
 */
client: string | null, scope: string | null, strength: AgentStrength | null, };

export type AgentDetail = { summary: AgentSummary, 
/**
 * Null when `meta.json` did not parse.
 */
meta: AgentDefinition | null, 
/**
 * `AGENT.md` as written (directives unresolved); empty when missing.
 */
prompt: string, };

export type DeltaKind = "content" | "reasoning";

export type ResultType = "string" | "json";

export type Event = { "type": "sessions_changed", } | { "type": "resync", } | { "type": "subscribed", } | { "type": "config_reloaded", ok: boolean, error: string | null, } | { "type": "agents_changed", } | { "type": "new_session", session_id: number, } | { "type": "user_message", message_id: number, content: string, } | { "type": "steer_queued", pending_input_id: number, content: string, 
/**
 * Calls waiting for a human decision or answer that the message is queued behind.
 */
waiting_for: number[], } | { "type": "steer_folded", pending_input_id: number, message_id: number, content: string, } | { "type": "steers_discarded", pending_input_ids: number[], } | { "type": "turn_running", running: boolean, } | { "type": "token_delta", kind: DeltaKind, delta: string, } | { "type": "thinking", message_id: number, content: string, reasoning: string | null, input_tokens: number | null, output_tokens: number | null, 
/**
 * What the provider charged for this reply, in USD, when it says.
 */
cost_usd: number | null, } | { "type": "tool_start", tool_call_id: number, message_id: number, name: string, 
/**
 * As the model sent them (before working-directory injection).
 */
arguments: unknown, label_short: string, label_full: string, path: string | null, } | { "type": "tool_progress", tool_call_id: number, 
/**
 * Done so far, in the server's unit.
 */
progress: number, 
/**
 * Of how much, when the server knows.
 */
total: number | null, message: string | null, } | { "type": "tool_done", tool_call_id: number, result: string, result_type: ResultType, 
/**
 * The media files and resource links an MCP call returned (empty for other calls).
 */
media: ToolResultMedia, } | { "type": "tool_error", tool_call_id: number, error: string, 
/**
 * What a failed MCP call returned besides its text (empty for other calls).
 */
media: ToolResultMedia, } | { "type": "tool_cancelled", tool_call_id: number, } | { "type": "tool_rejected", tool_call_id: number, reason: string, } | { "type": "approval_requested", request_id: number, tool_call_id: number, tool_name: string, 
/**
 * As the model sent them.
 */
arguments: unknown, request: ApprovalRequest, } | { "type": "approval_resolved", request_id: number, tool_call_id: number, approved: boolean, } | { "type": "bypasses_changed", } | { "type": "agent_question", request_id: number, tool_call_id: number, title: string, 
/**
 * Markdown.
 */
question: string, suggested_answers: Array<string>, } | { "type": "clarification_resolved", request_id: number, tool_call_id: number, } | { "type": "elicitation_requested", elicitation_id: number, tool_call_id: number, server: string, message: string, } | { "type": "elicitation_resolved", elicitation_id: number, tool_call_id: number, action: ElicitationAction, } | { "type": "file_changed", path: string, tool_call_id: number, diff: FileDiff, } | { "type": "model_fallback", from: string, to: string, reason: string, } | { "type": "model_retry", model: string, 
/**
 * Which retry this is (1 = the first).
 */
attempt: number, reason: string, } | { "type": "llm_failed", tried: Array<string>, last_error: string, } | { "type": "truncated", output_tokens: number | null, } | { "type": "interim_answer", message_id: number, stack_id: number, content: string, reasoning: string | null, input_tokens: number | null, output_tokens: number | null, 
/**
 * What the provider charged for this reply, in USD, when it says.
 */
cost_usd: number | null, } | { "type": "done", message_id: number, stack_id: number, content: string, input_tokens: number | null, output_tokens: number | null, 
/**
 * What the provider charged for this reply, in USD, when it says.
 */
cost_usd: number | null, } | { "type": "turn_ended", outcome: TurnEnd, } | { "type": "compacting", } | { "type": "interrupted_call", call: InterruptedCall, } | { "type": "task_update", task_id: number, 
/**
 * The child session the task runs in.
 */
child_session_id: number, 
/**
 * `agent#id`, as the report block names it.
 */
label: string, state: TaskState, 
/**
 * The report (final answer or failure) once the task ended.
 */
report: string | null, 
/**
 * The parent's history row the report became (`delivered`).
 */
message_id: number | null, } | { "type": "job_run_update", run: JobRunInfo, } | { "type": "job_changed", job_id: number, deleted: boolean, } | { "type": "home_notice", notice: HomeNotice, } | { "type": "home_notice_dismissed", notice_id: number, } | { "type": "briefing_delivered", notifications: number, } | { "type": "compaction_done", summary_id: number, covers_up_to_message_id: number, tokens_before: number, tokens_after: number, };

export type EventKind = "sessions_changed" | "resync" | "subscribed" | "config_reloaded" | "agents_changed" | "new_session" | "user_message" | "steer_queued" | "steer_folded" | "steers_discarded" | "turn_running" | "token_delta" | "thinking" | "tool_start" | "tool_progress" | "tool_done" | "tool_error" | "tool_cancelled" | "tool_rejected" | "approval_requested" | "approval_resolved" | "bypasses_changed" | "agent_question" | "clarification_resolved" | "elicitation_requested" | "elicitation_resolved" | "file_changed" | "model_fallback" | "model_retry" | "llm_failed" | "truncated" | "interim_answer" | "done" | "turn_ended" | "compacting" | "interrupted_call" | "task_update" | "job_run_update" | "job_changed" | "home_notice" | "home_notice_dismissed" | "briefing_delivered" | "compaction_done";

export type FrameOrigin = { 
/**
 * The frame (`chat_sessions_stack` row).
 */
stack_id: number, 
/**
 * 0 for the session's root frame, one more per sub-agent level.
 */
depth: number, 
/**
 * `null` for the root frame; for a sub-agent its chain of `agent#N` parts (N its frame)
 * below the root, joined by `>`.
 */
label: string | null, 
/**
 * The tool call (in the parent frame) that opened this frame; `null` for the root. Lets a
 * surface draw a sub-agent's lane under the call that spawned it.
 */
parent_tool_call_id: number | null, };

export type EventEnvelope = { 
/**
 * The event's place in the outbox every process shares: a client that reconnects asks for
 * what came after the last one it saw. `null` for events that stay in the process that
 * emitted them (streamed token deltas, notices about the stream, file watches) and on the
 * engine's in-process bus, which delivers before the outbox is written. On a
 * subscription's own `subscribed` and `resync`: the sequence the stream goes on after.
 */
seq: number | null, session_id: number | null, source: string | null, frame: FrameOrigin | null, event: Event, };
