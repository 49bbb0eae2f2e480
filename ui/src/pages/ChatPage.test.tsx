import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { DebugMessage, Event, SessionDetail, TaskState } from "../backend";
import { MockBackend, bypassView, emptyDetail, fileDiff, inboxItem, interruptedCall } from "../test/mockBackend";
import { goTo, renderApp } from "../test/renderApp";
import { nextFrame, resizeViewport, setViewportHeight } from "../test/viewport";

const SID = 5;

function setup(messages: DebugMessage[] = [], opts: { running?: boolean } = {}) {
  const detail: SessionDetail = { ...emptyDetail(SID), messages };
  const backend = new MockBackend({ details: [detail] });
  backend.activeSessions.set("web", SID);
  if (opts.running) backend.running.add(SID);
  return backend;
}

async function open(backend: MockBackend) {
  const user = userEvent.setup();
  renderApp(backend, "#chat/web");
  await screen.findByRole("link", { name: `session #${SID}` });
  return user;
}

/** Delivers an event and lets the page show it: rows are measured (and so shown) before the next
 * paint, and token deltas reach the page on the next animation frame. */
async function emit(backend: MockBackend, event: Event, sessionId: number | null = SID) {
  await act(async () => {
    backend.emit({ seq: null, session_id: sessionId, source: "web", frame: { stack_id: 1, depth: 0, label: null, parent_tool_call_id: null }, event });
    if (event.type === "token_delta") await nextFrame();
  });
}

function log() {
  return within(screen.getByRole("list", { name: "Conversation" }));
}

/** Makes window reads wait until the returned function is called. */
function holdSessionLoads(backend: MockBackend): () => void {
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const load = backend.session_window.bind(backend);
  backend.session_window = async (params) => {
    await gate;
    return load(params);
  };
  return () => release();
}

/** The conversation as `kind:text` (tools by kind only), top to bottom. */
function kinds(): string[] {
  return log()
    .getAllByRole("listitem")
    .filter((li) => li.dataset.kind)
    .map((li) => {
      const kind = li.dataset.kind as string;
      if (kind === "tool") return kind;
      const text = (li.querySelector(".bubble-text") ?? li).textContent ?? "";
      return `${kind}:${text.trim()}`;
    });
}

function input() {
  return screen.getByRole("combobox", { name: "Message" }) as HTMLTextAreaElement;
}

// Whole rows, as a window holds short texts (spread, so each variant takes the fields it has).
const base = { stack_id: 1, depth: 0, created_at: "2026-11-30T10:00:00Z", content_chars: 0, result_chars: 0, truncated: false };

describe("chat page", () => {
  it("renders the stored conversation without synthetic rows", async () => {
    const backend = setup([
      { kind: "user", message_id: 1, content: "hello there", is_synthetic: false, failed: false, ...base },
      { kind: "user", message_id: 2, content: "SYSTEM NUDGE", is_synthetic: true, failed: false, ...base },
      { kind: "thinking", message_id: 3, content: "Let me look.", reasoning: null, is_synthetic: false, input_tokens: 1200, output_tokens: 30, cost_usd: null, ...base },
      { kind: "tool", tool_call_id: 4, message_id: 3, name: "read_file", label: "read_file a.txt", arguments: { path: "a.txt" }, status: "done", result: "abc", diff: null, media: { media: [], links: [] }, ...base },
      { kind: "assistant", message_id: 5, content: "It says **abc**.", reasoning: null, is_synthetic: false, input_tokens: 1500, output_tokens: 12, cost_usd: null, ...base },
    ]);
    await open(backend);
    expect(log().getByText("hello there")).toBeTruthy();
    expect(log().queryByText("SYSTEM NUDGE")).toBeNull();
    expect(log().getByText("Let me look.")).toBeTruthy();
    // A reloaded call shows what it did (its label), as it did live.
    expect(log().getByRole("article", { name: "Tool read_file a.txt, done" })).toBeTruthy();
    expect(log().getByText("abc", { selector: "strong" })).toBeTruthy();
    expect(screen.getByText(/Context 1,500 tok/)).toBeTruthy();
    expect(screen.getByRole("button", { name: "Send" })).toBeTruthy();
  });

  it("adds a bubble only when the engine echoes the message", async () => {
    const backend = setup();
    const user = await open(backend);
    await user.type(input(), "what time is it?{Enter}");
    expect(backend.sent).toEqual([{ source: "web", text: "what time is it?" }]);
    expect(input().value).toBe("");
    expect(log().queryByText("what time is it?")).toBeNull();
    await emit(backend, { type: "user_message", message_id: 11, content: "what time is it?" });
    expect(log().getByText("what time is it?")).toBeTruthy();
    // A repeated echo (reconnect replay) does not duplicate it.
    await emit(backend, { type: "user_message", message_id: 11, content: "what time is it?" });
    expect(log().getAllByText("what time is it?")).toHaveLength(1);
    // Events for another session are not this chat's business.
    await emit(backend, { type: "user_message", message_id: 12, content: "elsewhere", }, 99);
    expect(log().queryByText("elsewhere")).toBeNull();
  });

  it("keeps the text when sending fails", async () => {
    const backend = setup();
    backend.sendError = { code: "llm", message: "no model configured" };
    const user = await open(backend);
    await user.type(input(), "hi{Enter}");
    await waitFor(() => expect(input().value).toBe("hi"));
    expect(log().getByRole("alert").textContent).toContain("no model configured");
  });

  it("streams token deltas into a bubble, then shows the final text from done", async () => {
    const backend = setup();
    await open(backend);
    await emit(backend, { type: "user_message", message_id: 1, content: "count" });
    await emit(backend, { type: "token_delta", kind: "content", delta: "One, " });
    await emit(backend, { type: "token_delta", kind: "content", delta: "two" });
    const bubble = log().getByText("One, two").closest(".bubble") as HTMLElement;
    expect(bubble.getAttribute("aria-busy")).toBe("true");
    expect(screen.getByRole("button", { name: "Stop" })).toBeTruthy();
    await emit(backend, { type: "done", message_id: 2, stack_id: 1, content: "One, two, three.", input_tokens: 900, output_tokens: 5 , cost_usd: null});
    expect(log().queryByText("One, two")).toBeNull();
    const final = log().getByText("One, two, three.").closest(".bubble") as HTMLElement;
    expect(final.getAttribute("aria-busy")).toBe("false");
    expect(log().getAllByText(/One, two/)).toHaveLength(1);
    expect(screen.getByRole("button", { name: "Send" })).toBeTruthy();
    expect(screen.getByText(/Context 900 tok/)).toBeTruthy();
  });

  it("drops the text a failed model request streamed when it is retried or another model answers", async () => {
    const backend = setup();
    await open(backend);
    await emit(backend, { type: "user_message", message_id: 1, content: "plan?" });
    await emit(backend, { type: "token_delta", kind: "content", delta: "Here is the pl" });
    await emit(backend, { type: "model_retry", model: "big", attempt: 1, reason: "stream dropped" });
    expect(log().queryByText("Here is the pl")).toBeNull();
    await emit(backend, { type: "token_delta", kind: "content", delta: "Here is the plan" });
    await emit(backend, { type: "model_fallback", from: "big", to: "small", reason: "stalled" });
    expect(log().queryByText("Here is the plan")).toBeNull();
    await emit(backend, { type: "token_delta", kind: "content", delta: "The plan." });
    expect(log().getByText("The plan.").closest(".bubble")?.getAttribute("aria-busy")).toBe("true");
    expect(log().getByText("The model failed (stream dropped); asking it again")).toBeTruthy();
    expect(log().getByText("Switched model from big to small: stalled")).toBeTruthy();
  });

  it("shows tool cards moving through their states", async () => {
    const backend = setup();
    await open(backend);
    await emit(backend, { type: "thinking", message_id: 2, content: "Checking.", reasoning: null, input_tokens: null, output_tokens: null , cost_usd: null});
    await emit(backend, { type: "tool_start", tool_call_id: 7, message_id: 2, name: "list_dir", arguments: { path: "." }, label_short: "ls", label_full: "List .", path: "." });
    expect(log().getByRole("article", { name: "Tool List ., running" })).toBeTruthy();
    const links = [{ name: "Partial listing", uri: "file:///tmp/partial.txt", mime: "text/plain", description: null }];
    await emit(backend, { type: "tool_error", tool_call_id: 7, error: "permission denied", media: { media: [], links } });
    const card = log().getByRole("article", { name: "Tool List ., error" });
    expect(within(card).getByText("permission denied")).toBeTruthy();
    // What the failed call returned besides its error shows at once, without a reload.
    expect(within(card).getByRole("list", { name: "Resource links" }).textContent).toContain("Partial listing");
  });

  it("restores STOP after a reload while a turn runs, and stops it", async () => {
    const backend = setup([], { running: true });
    const user = await open(backend);
    const stop = await screen.findByRole("button", { name: "Stop" });
    expect(screen.queryByRole("button", { name: "Send" })).toBeNull();
    // The composer stays usable: a message now becomes a steer.
    expect(input().disabled).toBe(false);
    await user.click(stop);
    expect(backend.stopCalls).toEqual([SID]);
    await emit(backend, { type: "turn_ended", outcome: { kind: "cancelled" } });
    expect(screen.getByRole("button", { name: "Send" })).toBeTruthy();
    expect(log().getByRole("status").textContent).toBe("Stopped: you ended this turn.");
    expect(log().queryByRole("alert")).toBeNull();
  });

  it("shows a steer as queued, even when its pending-input id equals a history id, then folds it in place", async () => {
    // On a fresh install the first history row and the first pending input are both id 1.
    const backend = setup([
      { kind: "user", message_id: 1, content: "first", is_synthetic: false, failed: false, ...base },
    ], { running: true });
    const user = await open(backend);
    await user.type(input(), "also check tests{Enter}");
    expect(backend.sent.at(-1)?.text).toBe("also check tests");
    await emit(backend, { type: "steer_queued", pending_input_id: 1, content: "also check tests", waiting_for: [] });
    const queued = log().getByText("also check tests").closest(".bubble") as HTMLElement;
    expect(within(queued).getByText("queued for the running turn")).toBeTruthy();
    // A card that starts later still comes before the queued message, which waits at the bottom.
    await emit(backend, { type: "tool_start", tool_call_id: 3, message_id: 2, name: "list_dir", arguments: { path: "." }, label_short: "ls", label_full: "list_dir .", path: "." });
    await emit(backend, { type: "tool_done", tool_call_id: 3, result: "a.txt", result_type: "string", media: { media: [], links: [] } });
    expect(kinds()).toEqual(["user:first", "tool", "user:also check tests"]);
    await emit(backend, { type: "steer_folded", pending_input_id: 1, message_id: 4, content: "also check tests" });
    expect(log().getAllByText("also check tests")).toHaveLength(1);
    expect(log().queryByText("queued for the running turn")).toBeNull();
    await emit(backend, { type: "done", message_id: 5, stack_id: 1, content: "Checked.", input_tokens: null, output_tokens: null , cost_usd: null});
    expect(kinds()).toEqual(["user:first", "tool", "user:also check tests", "assistant:Checked."]);
  });

  it("a reload shows stored pending inputs as queued, and the decision they wait for", async () => {
    const backend = setup([
      { kind: "user", message_id: 1, content: "run it", is_synthetic: false, failed: false, ...base },
      { kind: "tool", tool_call_id: 2, message_id: 2, name: "execute_cmd", label: "execute_cmd make", arguments: { command: "make" }, status: "pending", result: null, diff: null, media: { media: [], links: [] }, ...base },
    ]);
    backend.details.get(SID)!.pending_inputs = [{ id: 1, content: "then run the tests", created_at: base.created_at }];
    backend.waitingFor = [2];
    const user = await open(backend);
    const queued = log().getByText("then run the tests").closest(".bubble") as HTMLElement;
    expect(within(queued).getByText("waiting for your decision on execute_cmd make")).toBeTruthy();
    // A new message queues behind the same decision.
    await user.type(input(), "and lint{Enter}");
    await emit(backend, { type: "steer_queued", pending_input_id: 2, content: "and lint", waiting_for: [2] });
    const second = log().getByText("and lint").closest(".bubble") as HTMLElement;
    expect(within(second).getByText("waiting for your decision on execute_cmd make")).toBeTruthy();
    // Approved, the engine continues the turn and runs the call; folded, they join the conversation.
    await emit(backend, { type: "approval_resolved", request_id: 2, tool_call_id: 2, approved: true });
    await emit(backend, { type: "turn_running", running: true });
    await emit(backend, { type: "tool_done", tool_call_id: 2, result: "built", result_type: "string", media: { media: [], links: [] } });
    expect(within(second).getByText("queued for the running turn")).toBeTruthy();
    await emit(backend, { type: "steer_folded", pending_input_id: 1, message_id: 3, content: "then run the tests" });
    await emit(backend, { type: "steer_folded", pending_input_id: 2, message_id: 4, content: "and lint" });
    expect(kinds()).toEqual(["user:run it", "tool", "user:then run the tests", "user:and lint"]);
    expect(log().queryByText(/queued|waiting for your decision/)).toBeNull();
  });

  it("a stop drops the queued messages and says which", async () => {
    const backend = setup([], { running: true });
    await open(backend);
    await emit(backend, { type: "steer_queued", pending_input_id: 7, content: "never mind", waiting_for: [] });
    await emit(backend, { type: "steers_discarded", pending_input_ids: [7] });
    expect(log().queryByText("never mind")).toBeNull();
    expect(log().getByRole("status").textContent).toContain("Not sent (stopped before it was read): “never mind”");
  });

  it("closes an answer that a steer outlives, then streams the next one into its own bubble", async () => {
    const backend = setup([], { running: true });
    const user = await open(backend);
    await emit(backend, { type: "user_message", message_id: 1, content: "tell me a story" });
    await emit(backend, { type: "token_delta", kind: "content", delta: "Once upon " });
    await user.type(input(), "shorter please{Enter}");
    await emit(backend, { type: "steer_queued", pending_input_id: 1, content: "shorter please", waiting_for: [] });
    await emit(backend, { type: "token_delta", kind: "content", delta: "a time." });
    await emit(backend, { type: "interim_answer", message_id: 2, stack_id: 1, content: "Once upon a time.", reasoning: null, input_tokens: 40, output_tokens: 5 , cost_usd: null});
    const first = log().getByText("Once upon a time.").closest(".bubble") as HTMLElement;
    expect(first.getAttribute("aria-busy")).toBe("false");
    // Still running: the steer is answered next.
    expect(screen.getByRole("button", { name: "Stop" })).toBeTruthy();
    await emit(backend, { type: "steer_folded", pending_input_id: 1, message_id: 3, content: "shorter please" });
    await emit(backend, { type: "token_delta", kind: "content", delta: "The end" });
    await emit(backend, { type: "done", message_id: 4, stack_id: 1, content: "The end.", input_tokens: 60, output_tokens: 3 , cost_usd: null});
    expect(kinds()).toEqual([
      "user:tell me a story",
      "assistant:Once upon a time.",
      "user:shorter please",
      "assistant:The end.",
    ]);
    expect(screen.getByRole("button", { name: "Send" })).toBeTruthy();
  });

  it("answers a resync by reloading the session: a card left running settles without a page reload", async () => {
    const running: DebugMessage[] = [
      { kind: "user", message_id: 1, content: "nap", is_synthetic: false, failed: false, ...base },
      { kind: "tool", tool_call_id: 2, message_id: 2, name: "execute_cmd", label: "execute_cmd sleep 2", arguments: { command: "sleep 2" }, status: "running", result: null, diff: null, media: { media: [], links: [] }, ...base },
    ];
    const backend = setup(running, { running: true });
    await open(backend);
    expect(log().getByRole("article", { name: "Tool execute_cmd sleep 2, running" })).toBeTruthy();
    const loads = backend.windowCalls.length;
    // While the connection was down the tool finished and the model answered.
    backend.details.set(SID, {
      ...emptyDetail(SID),
      messages: [
        running[0]!,
        { ...(running[1] as Extract<DebugMessage, { kind: "tool" }>), status: "done", result: "(no output)" },
        { kind: "assistant", message_id: 3, content: "Rested.", reasoning: null, is_synthetic: false, input_tokens: 10, output_tokens: 2, cost_usd: null, ...base },
      ],
    });
    backend.running.delete(SID);
    await emit(backend, { type: "resync" }, null);
    expect(await log().findByRole("article", { name: "Tool execute_cmd sleep 2, done" })).toBeTruthy();
    expect(log().getByText("Rested.")).toBeTruthy();
    expect(screen.getByRole("button", { name: "Send" })).toBeTruthy();
    expect(backend.windowCalls.length).toBe(loads + 1);
    expect(backend.windowCalls.at(-1)?.query.anchor).toEqual({ type: "latest" });
    // The page itself stayed: no loading state, the composer kept working.
    expect(input().disabled).toBe(false);
  });

  it("keeps events that arrive during a resync and applies them on top of the reloaded session", async () => {
    const backend = setup([
      { kind: "user", message_id: 1, content: "hi", is_synthetic: false, failed: false, ...base },
    ]);
    await open(backend);
    const release = holdSessionLoads(backend);
    await emit(backend, { type: "resync" }, null);
    await emit(backend, { type: "user_message", message_id: 2, content: "after the gap" });
    expect(log().queryByText("after the gap")).toBeNull();
    await act(async () => release());
    expect(await log().findByText("after the gap")).toBeTruthy();
    expect(log().getByText("hi")).toBeTruthy();
  });

  it("shows the change a write made under its card, live and after a reload", async () => {
    const backend = setup([
      { kind: "tool", tool_call_id: 4, message_id: 3, name: "edit_file", label: "edit_file src/main.rs", arguments: { path: "src/main.rs" }, status: "done", result: "Edited src/main.rs", diff: fileDiff(), media: { media: [], links: [] }, ...base },
    ]);
    await open(backend);
    const stored = log().getByRole("article", { name: "Tool edit_file src/main.rs, done" });
    expect(within(stored).getByRole("figure", { name: "Changes to src/main.rs" })).toBeTruthy();

    await emit(backend, { type: "tool_start", tool_call_id: 9, message_id: 6, name: "write_file", arguments: { path: "notes.md" }, label_short: "write", label_full: "write_file notes.md", path: "notes.md" });
    await emit(backend, { type: "tool_done", tool_call_id: 9, result: "Created notes.md", result_type: "string", media: { media: [], links: [] } });
    const live = log().getByRole("article", { name: "Tool write_file notes.md, done" });
    expect(within(live).queryByRole("figure")).toBeNull();
    await emit(backend, { type: "file_changed", path: "notes.md", tool_call_id: 9, diff: { ...fileDiff(), path: "notes.md" } });
    expect(within(live).getByRole("figure", { name: "Changes to notes.md" })).toBeTruthy();
  });

  it("shows an inline approval with the diff, decides, and closes on approval_resolved", async () => {
    const backend = setup();
    const user = await open(backend);
    await emit(backend, { type: "tool_start", tool_call_id: 8, message_id: 2, name: "write_file", arguments: { path: "src/main.rs" }, label_short: "write", label_full: "Write src/main.rs", path: "src/main.rs" });
    await emit(backend, { type: "approval_requested", request_id: 8, tool_call_id: 8, tool_name: "write_file", arguments: { path: "src/main.rs" }, request: { kind: "write", path: "src/main.rs", diff: fileDiff() } });
    const card = log().getByRole("region", { name: "Approval for write_file" });
    expect(within(card).getByRole("figure", { name: "Changes to src/main.rs" })).toBeTruthy();
    await user.type(within(card).getByLabelText(/Note for the agent/), "wrong file");
    await user.click(within(card).getByRole("button", { name: "Reject" }));
    expect(backend.decisions).toEqual([
      { toolCallId: 8, input: { approved: false, note: "wrong file", bypass: null } },
    ]);
    expect(log().getByRole("region", { name: "Approval for write_file" })).toBeTruthy();
    await emit(backend, { type: "approval_resolved", request_id: 8, tool_call_id: 8, approved: false });
    expect(log().queryByRole("region", { name: /Approval for/ })).toBeNull();
    await emit(backend, { type: "tool_rejected", tool_call_id: 8, reason: "wrong file" });
    expect(log().getByRole("article", { name: "Tool Write src/main.rs, rejected" })).toBeTruthy();
  });

  it("shows the command line and the directory the request names for a command approval", async () => {
    const backend = setup();
    await open(backend);
    // The directory comes from the request (resolved by the engine), not from the arguments.
    await emit(backend, { type: "approval_requested", request_id: 3, tool_call_id: 3, tool_name: "execute_cmd", arguments: { command: "rm -rf build" }, request: { kind: "command", command: "rm -rf build", workdir: "/home/me/w" } });
    const card = log().getByRole("region", { name: "Approval for execute_cmd" });
    expect(within(card).getByRole("heading").textContent).toBe("Approve running this command?");
    expect(within(card).getByLabelText("Command line").textContent).toContain("rm -rf build");
    expect(within(card).getByText("/home/me/w")).toBeTruthy();
    expect(screen.getByRole("button", { name: "Stop" })).toBeTruthy();
  });

  it("shows an MCP call by its server and tool, and any other tool by its arguments", async () => {
    const backend = setup();
    await open(backend);
    await emit(backend, { type: "approval_requested", request_id: 4, tool_call_id: 4, tool_name: "mcp__github__create_issue", arguments: { title: "Bug" }, request: { kind: "mcp_call", server: "github", tool: "create_issue" } });
    const mcp = log().getByRole("region", { name: "Approval for mcp__github__create_issue" });
    expect(within(mcp).getByRole("heading").textContent).toBe("Approve create_issue on MCP server github?");
    expect(within(mcp).getByText("Calls", { exact: false }).textContent).toBe("Calls create_issue on MCP server github");
    expect(within(mcp).getByLabelText("Arguments").textContent).toContain('"Bug"');
    await emit(backend, { type: "approval_requested", request_id: 5, tool_call_id: 5, tool_name: "fetch_url", arguments: { url: "https://example.com" }, request: { kind: "other", path: null } });
    const other = log().getByRole("region", { name: "Approval for fetch_url" });
    expect(within(other).getByRole("heading").textContent).toBe("Approve fetch_url?");
    expect(within(other).getByLabelText("Arguments").textContent).toContain("https://example.com");
    expect(within(other).queryByLabelText("Command line")).toBeNull();
  });

  it("shows after a reload why each turn ended, where it ended", async () => {
    const backend = setup([
      { kind: "user", message_id: 1, content: "loop", is_synthetic: false, failed: false, ...base },
      { kind: "thinking", message_id: 2, content: "", reasoning: null, is_synthetic: false, input_tokens: null, output_tokens: null, cost_usd: null, ...base },
      { kind: "tool", tool_call_id: 3, message_id: 2, name: "read_file", label: "read_file a", arguments: { path: "a" }, status: "done", result: "x", diff: null, media: { media: [], links: [] }, ...base },
      { kind: "user", message_id: 4, content: "try again", is_synthetic: false, failed: false, ...base },
      { kind: "user", message_id: 5, content: "and again", is_synthetic: false, failed: false, ...base },
      { kind: "assistant", message_id: 6, content: "Done now.", reasoning: null, is_synthetic: false, input_tokens: null, output_tokens: null, cost_usd: null, ...base },
    ]);
    const ended = { stack_id: 1, ended_at: "2026-11-30T10:00:00Z" };
    const detail = backend.details.get(SID) as SessionDetail;
    detail.turn_ends = [
      { id: 1, outcome: { kind: "exhausted", rounds: 1 }, after_message_id: 2, ...ended },
      { id: 2, outcome: { kind: "failed", reason: "every model failed: 503" }, after_message_id: 4, ...ended },
      { id: 3, outcome: { kind: "cancelled" }, after_message_id: 5, ...ended },
      { id: 4, outcome: { kind: "final", message_id: 6 }, after_message_id: 6, ...ended },
    ];
    await open(backend);
    await waitFor(() => expect(log().getByText("Done now.")).toBeTruthy());
    // Notices are alerts or status lines, not list items to a screen reader: read the rows.
    const rows = [...screen.getByRole("list", { name: "Conversation" }).querySelectorAll<HTMLElement>("li[data-kind]")];
    const shown = rows.map((li) => (li.dataset.kind === "tool" ? "tool" : `${li.dataset.kind}:${li.textContent?.trim()}`));
    expect(shown).toEqual([
      "user:loop",
      "tool",
      "notice:Stopped after 1 tool rounds without a final answer.",
      "user:try again",
      "notice:The turn failed: every model failed: 503",
      "user:and again",
      "notice:Stopped: you ended this turn.",
      "assistant:Done now.",
    ]);
  });

  it("rebuilds a pending card from history with the inbox's diff", async () => {
    const backend = setup([
      { kind: "tool", tool_call_id: 4, message_id: 3, name: "edit_file", label: "edit_file src/main.rs", arguments: { path: "src/main.rs" }, status: "pending", result: null, diff: null, media: { media: [], links: [] }, ...base },
    ]);
    backend.inboxItems = [inboxItem(4, { session_id: SID, tool_name: "edit_file", diff: fileDiff() })];
    const user = await open(backend);
    const card = log().getByRole("region", { name: "Approval for edit_file" });
    expect(await within(card).findByRole("figure", { name: "Changes to src/main.rs" })).toBeTruthy();
    await user.click(within(card).getByRole("button", { name: "Approve" }));
    expect(backend.decisions[0]?.input).toMatchObject({ approved: true });
  });

  it("shows a read's approval by the path the engine resolved, not the model's argument", async () => {
    const backend = setup();
    backend.inboxItems = [
      inboxItem(5, { session_id: SID, tool_name: "read_file", kind: "tool", path: "/home/me/.ssh/id_key", diff: null }),
    ];
    await open(backend);
    await emit(backend, { type: "approval_requested", request_id: 5, tool_call_id: 5, tool_name: "read_file", arguments: { path: "docs/id_key" }, request: { kind: "other", path: "/home/me/.ssh/id_key" } });
    const card = log().getByRole("region", { name: "Approval for read_file" });
    expect(await within(card).findByText("/home/me/.ssh/id_key")).toBeTruthy();
  });

  it("offers the inline card a bypass once the inbox says which scopes fit", async () => {
    const backend = setup([
      { kind: "tool", tool_call_id: 4, message_id: 3, name: "execute_cmd", label: "execute_cmd make", arguments: { command: "make" }, status: "pending", result: null, diff: null, media: { media: [], links: [] }, ...base },
    ]);
    backend.inboxItems = [inboxItem(4, { session_id: SID, tool_name: "execute_cmd", kind: "command", command: "make", tool_category: "shell" })];
    const user = await open(backend);
    const card = log().getByRole("region", { name: "Approval for execute_cmd" });
    const covers = await within(card).findByLabelText("Covers");
    expect(within(covers).getAllByRole("option").map((o) => o.textContent)).toEqual(["shell tools", "All tools"]);
    await user.click(within(card).getByRole("button", { name: "Approve + bypass" }));
    expect(backend.decisions[0]?.input).toEqual({
      approved: true,
      note: null,
      bypass: { duration: "fifteen_minutes", scope: "category" },
    });
    // The session's bypass shows above the composer, with a Revoke button.
    const strip = await screen.findByRole("region", { name: "Bypasses in this session" });
    expect(within(strip).getByRole("listitem").textContent).toContain("shell tools");
    await user.click(within(strip).getByRole("button", { name: "Revoke the bypass of shell tools" }));
    await waitFor(() => expect(screen.queryByRole("region", { name: "Bypasses in this session" })).toBeNull());
    expect(backend.revokeCalls).toEqual([900]);
  });

  it("shows only this session's bypasses and follows bypasses_changed", async () => {
    const backend = setup();
    backend.bypasses = [bypassView(1, { session_id: 99, label: "all tools" })];
    await open(backend);
    expect(screen.queryByRole("region", { name: "Bypasses in this session" })).toBeNull();
    // Granted elsewhere (the CLI, another window): the event brings it in.
    backend.bypasses.push(bypassView(2, { session_id: SID, label: "filesystem tools", granted_by: "cli", remaining_secs: 3599 }));
    await emit(backend, { type: "bypasses_changed" });
    const strip = await screen.findByRole("region", { name: "Bypasses in this session" });
    expect(within(strip).getByRole("listitem").textContent).toBe("filesystem toolsgranted by cli · 59 min leftRevoke");
  });

  it("shows fallback, truncation and model failures in place", async () => {
    const backend = setup();
    await open(backend);
    await emit(backend, { type: "model_fallback", from: "big", to: "small", reason: "timeout" });
    await emit(backend, { type: "truncated", output_tokens: 4096 });
    await emit(backend, { type: "llm_failed", tried: ["big", "small"], last_error: "503" });
    expect(log().getByText("Switched model from big to small: timeout")).toBeTruthy();
    expect(log().getByText(/cut off at the output limit \(4,096 tokens\)/)).toBeTruthy();
    expect(log().getByRole("alert").textContent).toContain("tried big, small");
  });

  it("autocompletes slash commands with arrows, Tab/Enter and Esc", async () => {
    const backend = setup();
    const user = await open(backend);
    await user.type(input(), "/");
    const menu = screen.getByRole("listbox", { name: "Commands" });
    expect(within(menu).getAllByRole("option").map((o) => o.textContent?.split(" ")[0])).toEqual(
      expect.arrayContaining([expect.stringContaining("/new"), expect.stringContaining("/cost")]),
    );
    expect(within(menu).getAllByRole("option")).toHaveLength(7);
    await user.type(input(), "c");
    const options = () => within(screen.getByRole("listbox", { name: "Commands" })).getAllByRole("option");
    expect(options().map((o) => o.querySelector("code")?.textContent)).toEqual(["/compact", "/context", "/cost"]);
    expect(options()[0]?.getAttribute("aria-selected")).toBe("true");
    await user.keyboard("{ArrowDown}");
    expect(options()[1]?.getAttribute("aria-selected")).toBe("true");
    await user.keyboard("{Tab}");
    expect(input().value).toBe("/context ");
    expect(screen.queryByRole("listbox")).toBeNull();
    await user.clear(input());
    await user.type(input(), "/st");
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("listbox")).toBeNull();
    expect(input().value).toBe("/st");
    await user.clear(input());
    await user.type(input(), "/co{Enter}");
    expect(input().value).toBe("/compact ");
    await user.keyboard("{Enter}");
    await waitFor(() => expect(backend.compactCalls).toEqual([{ sessionId: SID, focus: null }]));
    expect(backend.sent).toEqual([]);
  });

  it("/compact [focus] compacts; a short conversation and a busy session are said so", async () => {
    const backend = setup();
    const user = await open(backend);
    await user.type(input(), "/compact the auth refactor{Enter}");
    await waitFor(() =>
      expect(backend.compactCalls).toEqual([{ sessionId: SID, focus: "the auth refactor" }]),
    );
    // The engine announces a compaction that happened with its own event.
    await emit(backend, {
      type: "compaction_done",
      summary_id: 1,
      covers_up_to_message_id: 40,
      tokens_before: 90_000,
      tokens_after: 12_000,
    });
    expect(log().getByText(/90,000 → 12,000 tokens/)).toBeTruthy();
    backend.compactResult = {
      compacted: false,
      tokens_before: null,
      tokens_after: null,
      summarised_messages: 0,
      summary_id: null,
      summary: null,
    };
    await user.type(input(), "/compact{Enter}");
    expect(await log().findByText(/Nothing to compact yet/)).toBeTruthy();
    backend.compactResult = { code: "conflict", message: "session 5 is running a turn; compact after it ends" };
    await user.type(input(), "/compact{Enter}");
    expect(await log().findByText("/compact failed: session 5 is running a turn; compact after it ends")).toBeTruthy();
    expect(backend.sent).toEqual([]);
  });

  it("a briefing shows as a line saying what arrived, live and after a reload, never its raw facts", async () => {
    const facts = '[briefing] Background work (scheduled jobs, TIC ticks) reported 2 things while the user may have been away. [{"fact": "SECRET-ISH RAW FACT"}]';
    const backend = setup([
      { kind: "user", message_id: 1, content: facts, is_synthetic: true, failed: false, ...base },
      { kind: "assistant", message_id: 2, content: "Your backup failed last night.", reasoning: null, is_synthetic: false, input_tokens: null, output_tokens: null, cost_usd: null, ...base },
    ]);
    await open(backend);
    expect(kinds()).toEqual(["notice:Briefing: Background work reported 2 things while you were away.", "assistant:Your backup failed last night."]);
    expect(log().queryByText(/SECRET-ISH RAW FACT/)).toBeNull();
    // Live: the input's fold is the same line (once, whatever repeats), then the agent's answer.
    const one = facts.replace("2 things", "1 thing");
    await emit(backend, { type: "steer_folded", pending_input_id: 7, message_id: 3, content: one });
    await emit(backend, { type: "steer_folded", pending_input_id: 7, message_id: 3, content: one });
    await emit(backend, { type: "briefing_delivered", notifications: 1 });
    expect(log().getAllByText("Briefing: Background work reported 1 thing while you were away.")).toHaveLength(1);
    expect(log().queryByText(/SECRET-ISH RAW FACT/)).toBeNull();
  });

  it("/sethome makes this chat's source the home of briefings", async () => {
    const backend = setup();
    const user = await open(backend);
    await user.type(input(), "/sethome{Enter}");
    expect(await log().findByText("Briefings from jobs and ticks now come to this chat (source “web”).")).toBeTruthy();
    expect(backend.homeSource).toBe("web");
    expect(backend.sent).toEqual([]);
  });

  it("/resettools revokes the session's tool groups and says how many", async () => {
    const backend = setup();
    backend.toolGroups.set(SID, 2);
    const user = await open(backend);
    await user.type(input(), "/resettools{Enter}");
    expect(await log().findByText(/Revoked 2 tool groups/)).toBeTruthy();
    await user.type(input(), "/resettools{Enter}");
    expect(await log().findByText("No tool groups were active in this session.")).toBeTruthy();
    expect(backend.sent).toEqual([]);
  });

  it("/context and /cost report the session's usage; the meter shows the window", async () => {
    const backend = setup([
      { kind: "assistant", message_id: 5, content: "hi", reasoning: null, is_synthetic: false, input_tokens: 50_000, output_tokens: 120, cost_usd: null, ...base },
    ]);
    backend.usage.set(SID, {
      last_input_tokens: 50_000,
      last_output_tokens: 120,
      model: "claude-sonnet-4",
      context_window: 200_000,
      context_tokens: 50_120,
      input_tokens_total: 80_000,
      output_tokens_total: 900,
      cost_usd: 0.2412,
      priced_replies: 3,
      replies: 4,
    });
    const user = await open(backend);
    expect(await screen.findByText(/Context 50,120 \/ 200,000 tok/)).toBeTruthy();
    await user.type(input(), "/context{Enter}");
    expect(
      await log().findByText(
        "Context: 50,120 tok — 25% of the 200,000 tok window. Last request: ↑50,000 tok · ↓120 tok (claude-sonnet-4).",
      ),
    ).toBeTruthy();
    await user.type(input(), "/cost{Enter}");
    expect(
      await log().findByText("This session cost $0.2412 (4 model replies, ↑80,000 tok · ↓900 tok; 1 without a reported price)."),
    ).toBeTruthy();
    backend.usage.set(SID, { replies: 2, input_tokens_total: 300, output_tokens_total: 20 });
    await user.type(input(), "/cost{Enter}");
    expect(
      await log().findByText("No cost recorded: the provider reported no prices (2 model replies, ↑300 tok · ↓20 tok)."),
    ).toBeTruthy();
    expect(backend.sent).toEqual([]);
  });

  it("after a compaction the meter and /context show the compacted conversation, not the old usage", async () => {
    const backend = setup([
      { kind: "assistant", message_id: 5, content: "hi", reasoning: null, is_synthetic: false, input_tokens: 90_000, output_tokens: 120, cost_usd: null, ...base },
    ]);
    const before = { last_input_tokens: 90_000, last_output_tokens: 120, context_window: 200_000, context_tokens: 90_120, replies: 3 };
    backend.usage.set(SID, before);
    const user = await open(backend);
    expect(await screen.findByText(/Context 90,120 \/ 200,000 tok/)).toBeTruthy();
    // The engine ignores usage reported before the summary and estimates the compacted request.
    backend.usage.set(SID, { ...before, last_input_tokens: null, last_output_tokens: null, context_tokens: 12_050, context_estimated: true });
    await emit(backend, { type: "compaction_done", summary_id: 1, covers_up_to_message_id: 4, tokens_before: 90_120, tokens_after: 12_000 });
    expect(await screen.findByText(/Context 12,050 \/ 200,000 tok/)).toBeTruthy();
    expect(screen.queryByText(/Context 90,/)).toBeNull();
    await user.type(input(), "/context{Enter}");
    expect(
      await log().findByText("Context: about 12,050 tok — 6% of the 200,000 tok window (estimated: no model reply since the last compaction)."),
    ).toBeTruthy();
  });

  it("/new starts a new session and clears the view; /stop stops the turn", async () => {
    const backend = setup([
      { kind: "user", message_id: 1, content: "old talk", is_synthetic: false, failed: false, ...base },
    ], { running: true });
    const user = await open(backend);
    await user.type(input(), "/stop{Enter}");
    expect(backend.stopCalls).toEqual([SID]);
    await user.type(input(), "/new{Enter}");
    expect(backend.newSessionCalls).toEqual(["web"]);
    await waitFor(() => expect(screen.queryByText("old talk")).toBeNull());
    const newId = backend.activeSessions.get("web") as number;
    expect(screen.getByRole("link", { name: `session #${newId}` })).toBeTruthy();
    await emit(backend, { type: "user_message", message_id: 30, content: "fresh", }, newId);
    expect(log().getByText("fresh")).toBeTruthy();
    expect(backend.sent).toEqual([]);
  });

  it("follows a new_session event from another client", async () => {
    const backend = setup([
      { kind: "user", message_id: 1, content: "old talk", is_synthetic: false, failed: false, ...base },
    ]);
    await open(backend);
    await emit(backend, { type: "new_session", session_id: 77 }, 77);
    expect(screen.queryByText("old talk")).toBeNull();
    expect(screen.getByRole("link", { name: "session #77" })).toBeTruthy();
  });

  it("says so when the chat cannot be opened", async () => {
    const backend = new MockBackend();
    backend.activeSessions.set("web", 404);
    backend.session_window = () => Promise.reject({ code: "storage", message: "disk gone" });
    renderApp(backend, "#chat/web");
    expect((await screen.findByRole("alert")).textContent).toContain("disk gone");
  });
  it("keeps events that arrive while the history loads and applies them after it", async () => {
    const backend = setup([
      { kind: "user", message_id: 1, content: "first", is_synthetic: false, failed: false, ...base },
    ]);
    const release = holdSessionLoads(backend);
    renderApp(backend, "#chat/web");
    // The page mounts once the first-run settings check is done; its history load is still gated.
    await screen.findByRole("heading", { level: 1, name: "Chat" });
    await waitFor(() => expect(backend.subscriberCount).toBe(1));
    // The echo of "first" is already in the history; "second" is not.
    await emit(backend, { type: "user_message", message_id: 1, content: "first" });
    await emit(backend, { type: "user_message", message_id: 2, content: "second" });
    await emit(backend, { type: "token_delta", kind: "content", delta: "Work" });
    await act(async () => release());
    await screen.findByRole("link", { name: `session #${SID}` });
    expect(log().getAllByText("first")).toHaveLength(1);
    expect(log().getByText("second")).toBeTruthy();
    expect(log().getByText("Work")).toBeTruthy();
    expect(screen.getByRole("button", { name: "Stop" })).toBeTruthy();
  });

  it("streams reasoning separately from the answer", async () => {
    const backend = setup();
    await open(backend);
    await emit(backend, { type: "token_delta", kind: "reasoning", delta: "hmm, " });
    await emit(backend, { type: "token_delta", kind: "reasoning", delta: "think" });
    await emit(backend, { type: "token_delta", kind: "content", delta: "Answer" });
    const bubble = log().getByText("Answer").closest(".bubble") as HTMLElement;
    expect(within(bubble).getByText("hmm, think")).toBeTruthy();
    await emit(backend, { type: "done", message_id: 9, stack_id: 1, content: "Answer.", input_tokens: null, output_tokens: null , cost_usd: null});
    const final = log().getByText("Answer.").closest(".bubble") as HTMLElement;
    expect(within(final).getByText("hmm, think")).toBeTruthy();
  });
});

describe("a long conversation", () => {
  /** `turns` turns of a question, a read and an answer; the last call waits for approval. */
  function longSession(turns: number) {
    const rows: DebugMessage[] = [];
    for (let t = 1; t <= turns; t += 1) {
      const id = t * 10;
      rows.push({ kind: "user", message_id: id, content: `Question ${t}`, is_synthetic: false, failed: false, ...base });
      rows.push({ kind: "thinking", message_id: id + 1, content: "", reasoning: null, is_synthetic: false, input_tokens: null, output_tokens: null, cost_usd: null, ...base });
      rows.push({ kind: "tool", tool_call_id: id + 2, message_id: id + 1, name: "read_file", label: `read_file ${t}.txt`, arguments: { path: `${t}.txt` }, status: "done", result: "ok", diff: null, media: { media: [], links: [] }, ...base });
      rows.push({ kind: "assistant", message_id: id + 3, content: `Answer ${t}`, reasoning: null, is_synthetic: false, input_tokens: 10, output_tokens: 1, cost_usd: null, ...base });
    }
    const pending = (turns + 1) * 10;
    rows.push({ kind: "thinking", message_id: pending, content: "Writing it.", reasoning: null, is_synthetic: false, input_tokens: 5, output_tokens: 1, cost_usd: null, ...base });
    rows.push({ kind: "tool", tool_call_id: pending + 1, message_id: pending, name: "write_file", label: "write_file out.md", arguments: { path: "out.md" }, status: "pending", result: null, diff: null, media: { media: [], links: [] }, ...base });
    const backend = setup(rows);
    backend.inboxItems = [inboxItem(pending + 1, { session_id: SID, tool_name: "write_file", path: "out.md" })];
    return { backend, pendingCall: pending + 1 };
  }
  const rowsInDom = () => document.querySelectorAll("li[data-kind]").length;
  const scroller = () => document.querySelector(".virtual-scroll") as HTMLElement;

  it("reads the newest page only and keeps the DOM to the rows on screen", async () => {
    setViewportHeight(400, 40);
    const { backend } = longSession(300);
    await open(backend);
    expect(await log().findByText("Answer 300")).toBeTruthy();
    expect(backend.windowCalls.map((c) => c.query)).toEqual([{ anchor: { type: "latest" }, limit: 100 }]);
    // 100 rows read, a screen and the buffer in the DOM.
    expect(rowsInDom()).toBeGreaterThan(5);
    expect(rowsInDom()).toBeLessThan(40);
    expect(log().queryByText("Question 1")).toBeNull();
  });

  it("reads the page before the first row when scrolled to the top, and no more once at the start", async () => {
    setViewportHeight(400, 40);
    const { backend } = longSession(60);
    await open(backend);
    await log().findByText("Answer 60");
    const first = backend.windowCalls.length;
    await act(async () => {
      scroller().scrollTop = 0;
      scroller().dispatchEvent(new Event("scroll"));
    });
    await waitFor(() => expect(backend.windowCalls.length).toBe(first + 1));
    const earlier = backend.windowCalls.at(-1)?.query;
    // Before the first tree row read (242 rows, the last 100: turn 36's read call), shown or not.
    expect(earlier).toEqual({ anchor: { type: "before", item: { type: "tool", id: 362 } }, limit: 100 });
    await act(async () => {
      scroller().scrollTop = 0;
      scroller().dispatchEvent(new Event("scroll"));
    });
    await waitFor(() => expect(backend.windowCalls.length).toBe(first + 2));
    await act(async () => {
      scroller().scrollTop = 0;
      scroller().dispatchEvent(new Event("scroll"));
    });
    // All 242 rows are loaded: the top asks for nothing more.
    expect(backend.windowCalls.length).toBe(first + 2);
    expect(log().getByText("Question 1")).toBeTruthy();
  });

  it("opens at a linked message, highlighted, and jumps to the pending approval (then hides the jump) and back to the latest", async () => {
    setViewportHeight(400, 40);
    const { backend, pendingCall } = longSession(300);
    renderApp(backend, "#chat/web?message=100");
    const focused = await waitFor(() => {
      const li = document.querySelector("li.is-focus");
      if (!li) throw new Error("no highlighted row");
      return li as HTMLElement;
    });
    expect(focused.textContent).toBe("Question 10");
    expect(backend.windowCalls[0]?.query.anchor).toEqual({ type: "around", item: { type: "message", id: 100 } });
    expect(log().queryByText("Answer 300")).toBeNull();
    const user = userEvent.setup();
    await user.click(screen.getByRole("button", { name: "Jump to the pending approval" }));
    await waitFor(() => expect(document.querySelector("li.is-focus")?.getAttribute("data-kind")).toBe("tool"));
    expect(backend.windowCalls.at(-1)?.query.anchor).toEqual({ type: "around", item: { type: "tool", id: pendingCall } });
    expect(within(document.querySelector("li.is-focus") as HTMLElement).getByRole("region", { name: /Approval for write_file/ })).toBeTruthy();
    // The approval is on screen now: a button to jump to it would go nowhere.
    await waitFor(() => expect(screen.queryByRole("button", { name: "Jump to the pending approval" })).toBeNull());

    // Another link, then back to the newest rows: they are read again, and the pending call,
    // loaded now, is jumped to without another read.
    await act(async () => goTo("#chat/web?message=2000"));
    await waitFor(() => expect(document.querySelector("li.is-focus")?.textContent).toBe("Question 200"));
    await user.click(screen.getByRole("button", { name: "Jump to latest" }));
    expect(await log().findByText("Answer 300")).toBeTruthy();
    expect(backend.windowCalls.at(-1)?.query.anchor).toEqual({ type: "latest" });
    // The pending call is the newest row, on screen at the latest: no jump is offered.
    await waitFor(() => expect(screen.queryByRole("button", { name: "Jump to the pending approval" })).toBeNull());
  });

  const jumpToPending = () => screen.queryByRole("button", { name: "Jump to the pending approval" });
  /** Lets observers, scroll events and the renders they cause run out (virtua keeps a scroll to
   * a row going for 150 ms while rows are measured). */
  const settle = () => act(async () => new Promise((r) => setTimeout(r, 200)));

  it("takes the jump to the pending approval back when a taller window brings the approval on screen", async () => {
    // Ten rows of 40 px, opened at the first one in a 200 px list: the pending call is below.
    setViewportHeight(200, 40);
    const { backend } = longSession(2);
    renderApp(backend, "#chat/web?message=10");
    await waitFor(() => expect(document.querySelector("li.is-focus")?.textContent).toBe("Question 1"));
    await settle();
    expect(jumpToPending()).toBeTruthy();

    // Nothing scrolls and no row changes: only the viewport grows over the approval.
    await act(async () => resizeViewport(600));
    await settle();
    expect(log().getByRole("region", { name: /Approval for write_file/ })).toBeTruthy();
    expect(jumpToPending()).toBeNull();
  });

  it("offers the jump once the pending approval is scrolled off screen, and takes it back when it returns", async () => {
    setViewportHeight(400, 40);
    const { backend } = longSession(30);
    await open(backend);
    await log().findByRole("region", { name: /Approval for write_file/ });
    await settle();
    expect(jumpToPending()).toBeNull();
    const end = scroller().scrollTop;
    expect(end).toBeGreaterThan(1200);

    await act(async () => {
      scroller().scrollTop = 1200;
      scroller().dispatchEvent(new Event("scroll"));
    });
    await waitFor(() => expect(jumpToPending()).toBeTruthy());

    await act(async () => {
      scroller().scrollTop = end;
      scroller().dispatchEvent(new Event("scroll"));
    });
    await waitFor(() => expect(jumpToPending()).toBeNull());
  });

  it("a link to a message of another conversation shows this one and says so", async () => {
    const { backend } = longSession(3);
    renderApp(backend, "#chat/web?message=999999");
    expect(await screen.findByText("Answer 3")).toBeTruthy();
    expect(log().getByRole("status").textContent).toContain("not part of this conversation");
    expect(backend.windowCalls.map((c) => c.query.anchor.type)).toEqual(["around", "latest"]);
  });

  it("a message written while older rows are shown brings the newest rows back", async () => {
    setViewportHeight(400, 40);
    const { backend } = longSession(300);
    renderApp(backend, "#chat/web?message=100");
    await waitFor(() => expect(document.querySelector("li.is-focus")?.textContent).toBe("Question 10"));
    const user = userEvent.setup();
    const reads = backend.windowCalls.length;
    await user.type(input(), "and now?{Enter}");
    await waitFor(() => expect(backend.windowCalls.at(reads)?.query.anchor).toEqual({ type: "latest" }));
    expect(await log().findByText("Answer 300")).toBeTruthy();
  });
});

describe("chat page: interrupted calls", () => {
  it("shows a call a restart cut off with its three choices under its card, and a re-run's outcome", async () => {
    const backend = setup([
      { kind: "user", message_id: 1, content: "install it", is_synthetic: false, failed: false, ...base },
      { kind: "thinking", message_id: 2, content: "Installing.", reasoning: null, is_synthetic: false, input_tokens: 10, output_tokens: 3, cost_usd: null, ...base },
      { kind: "tool", tool_call_id: 3, message_id: 2, name: "execute_cmd", label: "execute_cmd make install", arguments: { command: "make install" }, status: "failed", result: "the run stopped", diff: null, media: { media: [], links: [] }, ...base },
    ]);
    backend.interrupted.set(SID, [interruptedCall(3, { session_id: SID })]);
    const user = await open(backend);
    const card = log().getByRole("article", { name: /Tool execute_cmd make install/ });
    const bar = await within(card).findByRole("group", { name: "Interrupted call execute_cmd make install" });
    for (const name of ["It ran", "It did not run", "Run it again"]) {
      expect(within(bar).getByRole("button", { name })).toBeTruthy();
    }
    await user.click(within(bar).getByRole("button", { name: "Run it again" }));
    expect(backend.reconcileCalls).toEqual([{ tool_call_id: 3, choice: "run_again" }]);
    await waitFor(() => expect(card.textContent).toContain("You had it run again. It completed"));
    expect(within(card).queryByRole("button", { name: "It ran" })).toBeNull();
  });

  it("lets the user open, stop and continue an async task from its card", async () => {
    const backend = setup();
    const user = await open(backend);
    const update = (state: TaskState, report: string | null = null): Event => ({
      type: "task_update",
      task_id: 3,
      child_session_id: 9,
      label: "scout#9",
      state,
      report,
      message_id: null,
    });
    await emit(backend, update("running"));
    const card = () => within(log().getByText("task scout#9").closest(".task-card") as HTMLElement);
    expect(card().getByRole("link", { name: "task scout#9" }).getAttribute("href")).toBe("#session/9");
    expect(card().queryByRole("button", { name: "Continue task scout#9" })).toBeNull();

    backend.running.add(9);
    await user.click(card().getByRole("button", { name: "Stop task scout#9" }));
    expect(backend.stopCalls).toEqual([9]);

    await emit(backend, update("cancelled", "the task was stopped before it answered"));
    await emit(backend, update("delivered"));
    expect(card().getByText("stopped, reported")).toBeTruthy();
    expect(card().queryByRole("button", { name: "Stop task scout#9" })).toBeNull();
    backend.tasks = [
      { task_id: 3, parent_session_id: SID, child_session_id: 9, tool_call_id: 4, label: "scout#9", agent_id: "scout", state: "cancelled", report: "the task was stopped before it answered", delivered: true },
    ];
    await user.click(card().getByRole("button", { name: "Continue task scout#9" }));
    expect(backend.continued).toEqual([9]);

    // The continued task starts over: its old report goes, and it can be stopped again.
    await emit(backend, update("queued"));
    expect(card().queryByText("the task was stopped before it answered")).toBeNull();
    expect(card().queryByRole("button", { name: "Continue task scout#9" })).toBeNull();
    await emit(backend, update("running"));
    expect(card().getByRole("button", { name: "Stop task scout#9" })).toBeTruthy();
  });

  it("says so when a task could not be stopped", async () => {
    const backend = setup();
    const user = await open(backend);
    await emit(backend, { type: "task_update", task_id: 4, child_session_id: 11, label: "scout#11", state: "running", report: null, message_id: null });
    const card = within(log().getByText("task scout#11").closest(".task-card") as HTMLElement);
    await user.click(card.getByRole("button", { name: "Stop task scout#11" }));
    expect(await card.findByRole("alert")).toHaveProperty("textContent", "The task was not running any more.");
  });
});
