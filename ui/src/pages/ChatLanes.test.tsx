import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { DebugMessage, Event, FrameOrigin, SessionDetail } from "../backend";
import { MockBackend, emptyDetail } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";
import { nextFrame } from "../test/viewport";

const SID = 5;
const ROOT: FrameOrigin = { stack_id: 1, depth: 0, label: null, parent_tool_call_id: null };
const RESEARCHER: FrameOrigin = { stack_id: 42, depth: 1, label: "researcher#42", parent_tool_call_id: 10 };
const CODER: FrameOrigin = { stack_id: 43, depth: 1, label: "coder#43", parent_tool_call_id: 11 };

function setup(messages: DebugMessage[] = []) {
  const detail: SessionDetail = { ...emptyDetail(SID), messages };
  const backend = new MockBackend({ details: [detail] });
  backend.activeSessions.set("web", SID);
  backend.running.add(SID);
  return backend;
}

async function open(backend: MockBackend) {
  const user = userEvent.setup();
  renderApp(backend, "#chat/web");
  await screen.findByRole("link", { name: `session #${SID}` });
  return user;
}

async function emit(backend: MockBackend, event: Event, frame: FrameOrigin) {
  await act(async () => {
    backend.emit({ seq: null, session_id: SID, source: "web", frame, event });
    if (event.type === "token_delta") await nextFrame();
  });
}

const log = () => within(screen.getByRole("list", { name: "Conversation" }));

/** The rows of the log as `kind@depth` (`lane:label@depth` for a lane head), top to bottom. */
function rows(): string[] {
  return log()
    .getAllByRole("listitem")
    .map((li) => {
      const depth = li.querySelector<HTMLElement>("[data-lane-depth]")?.dataset.laneDepth ?? "0";
      const head = li.querySelector<HTMLElement>("[data-testid='lane-head']");
      return head ? `lane:${head.dataset.laneLabel}@${depth}` : `${li.dataset.kind}@${depth}`;
    });
}

const spawn = (id: number): Event => ({
  type: "tool_start",
  tool_call_id: id,
  message_id: 2,
  name: "execute_task",
  arguments: { agent: "researcher" },
  label_short: "execute_task",
  label_full: `execute_task #${id}`,
  path: null,
});

describe("sub-agent lanes in the chat page", () => {
  it("shows a child's lane under its spawning call: label, progress, tool calls and tokens", async () => {
    const backend = setup();
    const user = await open(backend);
    await emit(backend, spawn(10), ROOT);
    await emit(backend, { type: "token_delta", kind: "content", delta: "Reading the docs" }, RESEARCHER);
    expect(rows()).toEqual(["tool@0", "lane:researcher#42@1", "assistant@1"]);
    const head = log().getByTestId("lane-head");
    expect(within(head).getByRole("button", { name: "researcher#42" }).getAttribute("aria-expanded")).toBe("true");
    expect(within(head).getByText("writing: Reading the docs")).toBeTruthy();
    expect(within(head).getByText("running")).toBeTruthy();

    await emit(backend, { type: "thinking", message_id: 3, content: "Reading.", reasoning: null, input_tokens: 1200, output_tokens: 40 , cost_usd: null}, RESEARCHER);
    await emit(backend, { type: "tool_start", tool_call_id: 20, message_id: 3, name: "read_file", arguments: { path: "a.md" }, label_short: "read", label_full: "read_file a.md", path: "a.md" }, RESEARCHER);
    expect(log().getByRole("article", { name: "Tool read_file a.md, running" })).toBeTruthy();
    expect(within(head).getByText("read_file a.md (running)")).toBeTruthy();
    expect(within(head).getByText("↑1,200 · ↓40 tok")).toBeTruthy();
    // The spawning call sums what its sub-agent spent.
    const call = log().getByRole("article", { name: "Tool execute_task #10, running" });
    expect(within(call).getByText("Sub-agent tokens: ↑1,200 · ↓40")).toBeTruthy();
    // The child's reply is not the root's context.
    expect(screen.queryByText(/Context 1,200 tok/)).toBeNull();

    // Folded: the head keeps the progress, the lane's rows go.
    await user.click(within(head).getByRole("button", { name: "researcher#42" }));
    expect(rows()).toEqual(["tool@0", "lane:researcher#42@1"]);
    expect(within(log().getByTestId("lane-head")).getByRole("button", { name: "researcher#42" }).getAttribute("aria-expanded")).toBe("false");

    await emit(backend, { type: "done", message_id: 4, stack_id: 42, content: "The docs say yes.", input_tokens: 1300, output_tokens: 12 , cost_usd: null}, RESEARCHER);
    expect(within(log().getByTestId("lane-head")).getByText("done")).toBeTruthy();
    expect(within(log().getByTestId("lane-head")).getByText("↑2,500 · ↓52 tok")).toBeTruthy();
    // The child finishing is not the turn finishing.
    expect(screen.getByRole("button", { name: "Stop" })).toBeTruthy();
  });

  it("runs parallel siblings in lanes of their own, in call order", async () => {
    const backend = setup();
    await open(backend);
    await emit(backend, spawn(10), ROOT);
    await emit(backend, spawn(11), ROOT);
    await emit(backend, { type: "token_delta", kind: "content", delta: "R" }, RESEARCHER);
    await emit(backend, { type: "tool_start", tool_call_id: 21, message_id: 5, name: "list_dir", arguments: {}, label_short: "ls", label_full: "list_dir src", path: null }, CODER);
    await emit(backend, { type: "token_delta", kind: "content", delta: "esearching" }, RESEARCHER);
    expect(rows()).toEqual(["tool@0", "lane:researcher#42@1", "assistant@1", "tool@0", "lane:coder#43@1", "tool@1"]);
    const [researcher, coder] = log().getAllByTestId("lane-head") as [HTMLElement, HTMLElement];
    expect(within(researcher).getByText("writing: Researching")).toBeTruthy();
    expect(within(coder).getByText("list_dir src (running)")).toBeTruthy();
  });

  it("says which child asks for an approval", async () => {
    const backend = setup();
    const user = await open(backend);
    await emit(backend, spawn(10), ROOT);
    await emit(
      backend,
      { type: "approval_requested", request_id: 1, tool_call_id: 22, tool_name: "execute_cmd", arguments: { command: "make" }, request: { kind: "command", command: "make", workdir: "/w" } },
      RESEARCHER,
    );
    const card = log().getByRole("region", { name: "Approval for execute_cmd, asked by researcher#42" });
    expect(within(card).getByText("researcher#42")).toBeTruthy();
    expect(within(log().getByTestId("lane-head")).getByText("waiting for approval: execute_cmd")).toBeTruthy();
    // Folding the lane never hides a decision it waits for.
    await user.click(screen.getByRole("button", { name: "researcher#42" }));
    expect(log().getByRole("region", { name: "Approval for execute_cmd, asked by researcher#42" })).toBeTruthy();
    await user.click(within(card).getByRole("button", { name: "Approve" }));
    expect(backend.decisions.at(-1)).toMatchObject({ toolCallId: 22 });
  });

  it("rebuilds the lanes from history after a reload", async () => {
    const at = { created_at: "2026-12-01T10:00:00Z", content_chars: 0, result_chars: 0, truncated: false };
    const backend = setup([
      { kind: "user", message_id: 1, content: "research", is_synthetic: false, failed: false, stack_id: 1, depth: 0, ...at },
      { kind: "tool", tool_call_id: 10, message_id: 2, name: "execute_task", label: "execute_task researcher", arguments: {}, status: "done", result: "yes", diff: null, media: { media: [], links: [] }, stack_id: 1, depth: 0, ...at },
      { kind: "agent", stack_id: 42, agent_id: "researcher", depth: 1, prompt: "find it", parent_tool_call_id: 10 },
      { kind: "assistant", message_id: 3, content: "Found it.", reasoning: null, is_synthetic: false, input_tokens: 700, output_tokens: 9, cost_usd: null, stack_id: 42, depth: 1, ...at },
      { kind: "agent_end", stack_id: 42, agent_id: "researcher", depth: 1 },
      { kind: "assistant", message_id: 4, content: "Yes.", reasoning: null, is_synthetic: false, input_tokens: 1500, output_tokens: 3, cost_usd: null, stack_id: 1, depth: 0, ...at },
    ]);
    await open(backend);
    await waitFor(() => expect(rows()).toEqual(["user@0", "tool@0", "lane:researcher#42@1", "assistant@1", "assistant@0"]));
    const head = log().getByTestId("lane-head");
    expect(within(head).getByText("done")).toBeTruthy();
    expect(within(head).getByText("↑700 · ↓9 tok")).toBeTruthy();
    expect(screen.getByText(/Context 1,500 tok/)).toBeTruthy();
  });

  it("shows a child's task as given by the calling agent, not as the reader's own message", async () => {
    const at = { created_at: "2026-12-01T10:00:00Z", content_chars: 0, result_chars: 0, truncated: false };
    const backend = setup([
      { kind: "user", message_id: 1, content: "research", is_synthetic: false, failed: false, stack_id: 1, depth: 0, ...at },
      { kind: "tool", tool_call_id: 10, message_id: 2, name: "execute_task", label: "execute_task researcher", arguments: {}, status: "done", result: "Found it.", diff: null, media: { media: [], links: [] }, stack_id: 1, depth: 0, ...at },
      { kind: "agent", stack_id: 42, agent_id: "researcher", depth: 1, prompt: "find the answer", parent_tool_call_id: 10 },
      { kind: "user", message_id: 3, content: "find the answer", is_synthetic: false, failed: false, stack_id: 42, depth: 1, ...at },
      { kind: "agent_end", stack_id: 42, agent_id: "researcher", depth: 1 },
    ]);
    await open(backend);
    await waitFor(() => expect(rows()).toEqual(["user@0", "tool@0", "lane:researcher#42@1", "user@1"]));
    const [own, task] = log().getAllByRole("listitem").filter((li) => li.dataset.kind === "user");
    expect(own?.querySelector(".bubble-user")?.textContent).toBe("research");
    expect(task?.querySelector(".bubble-user")).toBeNull();
    expect(within(task as HTMLElement).getByText("Task from the calling agent")).toBeTruthy();
    expect(within(task as HTMLElement).getByText("find the answer")).toBeTruthy();
  });
});

describe("the session's total", () => {
  it("counts the sub-agents' replies as they report usage", async () => {
    const backend = setup();
    backend.usage.set(SID, { input_tokens_total: 1000, output_tokens_total: 20, replies: 1, priced_replies: 1, cost_usd: 0.01 });
    await open(backend);
    expect(await screen.findByText("Session ↑1,000 · ↓20 tok · $0.0100")).toBeTruthy();
    await emit(backend, spawn(10), ROOT);
    backend.usage.set(SID, { input_tokens_total: 2200, output_tokens_total: 60, replies: 2, priced_replies: 2, cost_usd: 0.02 });
    await emit(backend, { type: "thinking", message_id: 3, content: "Reading.", reasoning: null, input_tokens: 1200, output_tokens: 40 , cost_usd: null}, RESEARCHER);
    expect(await screen.findByText("Session ↑2,200 · ↓60 tok · $0.0200")).toBeTruthy();
  });
});

describe("questions in the chat", () => {
  const ask = (id: number): Event => ({
    type: "tool_start",
    tool_call_id: id,
    message_id: 6,
    name: "ask_user_clarification",
    arguments: { title: "Which branch?" },
    label_short: "ask",
    label_full: "ask_user_clarification",
    path: null,
  });
  const question = (id: number): Event => ({
    type: "agent_question",
    request_id: id,
    tool_call_id: id,
    title: "Which branch?",
    question: "Should I work on **main**?",
    suggested_answers: ["main", "a new branch"],
  });

  it("shows a child's question in its lane, says which child asks, and answers it from the chat", async () => {
    const backend = setup();
    const user = await open(backend);
    await emit(backend, spawn(10), ROOT);
    await emit(backend, ask(25), RESEARCHER);
    await emit(backend, question(25), RESEARCHER);
    const card = log().getByRole("region", { name: "Question from researcher#42: Which branch?" });
    expect(within(card).getByText("researcher#42")).toBeTruthy();
    expect(within(card).getByText("main", { selector: "strong" })).toBeTruthy();
    // Never mistaken for an approval.
    expect(log().queryByRole("region", { name: /^Approval/ })).toBeNull();
    await user.click(within(card).getByRole("button", { name: "a new branch" }));
    expect((within(card).getByRole("textbox", { name: "Your answer" }) as HTMLTextAreaElement).value).toBe("a new branch");
    await user.click(within(card).getByRole("button", { name: "Send answer" }));
    expect(backend.answers).toEqual([{ tool_call_id: 25, answer: "a new branch" }]);
    await emit(backend, { type: "clarification_resolved", request_id: 25, tool_call_id: 25 }, RESEARCHER);
    expect(log().queryByRole("region", { name: /^Question/ })).toBeNull();
  });

  it("rebuilds a waiting question from history as a question, not an approval", async () => {
    const at = { created_at: "2026-12-01T10:00:00Z", content_chars: 0, result_chars: 0, truncated: false };
    const backend = setup([
      { kind: "tool", tool_call_id: 25, message_id: 2, name: "ask_user_clarification", label: "ask_user_clarification", arguments: { title: "Which branch?", question: "Main?", suggested_answers: ["main"] }, status: "pending", result: null, diff: null, media: { media: [], links: [] }, stack_id: 1, depth: 0, ...at },
    ]);
    await open(backend);
    const card = await log().findByRole("region", { name: "Question: Which branch?" });
    expect(within(card).getByText("Main?")).toBeTruthy();
    expect(log().queryByRole("region", { name: /^Approval/ })).toBeNull();
  });
});
