import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { DebugMessage, SessionDetail } from "../backend";
import { setViewportHeight } from "../test/viewport";
import { MockBackend, fileDiff, interruptedCall } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";

const T = "2026-11-30T10:00:00Z";
// Whole rows: what a window holds of short texts (spread, so each variant takes its own fields).
const whole = { content_chars: 0, result_chars: 0, truncated: false };

const messages: DebugMessage[] = [
  { kind: "user", message_id: 1, content: "It is 10:00, check the inbox folder", is_synthetic: true, failed: false, stack_id: 1, depth: 0, created_at: T, ...whole },
  { kind: "thinking", message_id: 2, content: "Looking at the folder first.", reasoning: "The user wants a summary; list files.", is_synthetic: false, input_tokens: 1200, output_tokens: 340, cost_usd: null, stack_id: 1, depth: 0, created_at: T, ...whole },
  { kind: "tool", tool_call_id: 10, message_id: 2, name: "list_dir", label: "list_dir inbox/", arguments: { path: "inbox/" }, status: "done", result: "a.txt\nb.txt", diff: null, media: { media: [], links: [] }, stack_id: 1, depth: 0, created_at: T, ...whole },
  { kind: "tool", tool_call_id: 11, message_id: 2, name: "execute_cmd", label: "execute_cmd rm -rf /", arguments: { cmd: "rm -rf /" }, status: "rejected", result: null, diff: null, media: { media: [], links: [] }, stack_id: 1, depth: 0, created_at: T, ...whole },
  { kind: "agent", stack_id: 2, agent_id: "researcher", depth: 1, prompt: "Summarise a.txt", parent_tool_call_id: 12 },
  { kind: "assistant", message_id: 3, content: "a.txt is a shopping list.", reasoning: null, is_synthetic: false, input_tokens: null, output_tokens: 15, cost_usd: null, stack_id: 2, depth: 1, created_at: T, ...whole },
  { kind: "agent_end", stack_id: 2, agent_id: "researcher", depth: 1 },
  { kind: "user", message_id: 4, content: "Thanks", is_synthetic: false, failed: true, stack_id: 1, depth: 0, created_at: T, ...whole },
];

const detail: SessionDetail = {
  session: { id: 42, title: null, source: "tic", agent_id: "main", is_interactive: false, is_ephemeral: true, created_at: T },
  messages,
  pending_inputs: [],
  turn_ends: [],
  tasks: [],
};

function row(kind: string, index = 0): HTMLElement {
  // The row's own box (the list item is the virtual list's slot for it).
  const found = screen
    .getByRole("list", { name: "Session messages" })
    .querySelectorAll<HTMLElement>(`[data-kind="${kind}"] > .tree-row`);
  const el = found[index];
  if (!el) throw new Error(`no ${kind} row #${index}`);
  return el;
}

describe("Session detail page", () => {
  it("renders every kind of debug row in order", async () => {
    renderApp(new MockBackend({ details: [detail] }), "#session/42");
    await screen.findByRole("list", { name: "Session messages" });
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("Session #42");

    const kinds = [...screen.getByRole("list", { name: "Session messages" }).children].map((li) =>
      li.getAttribute("data-kind"),
    );
    expect(kinds).toEqual(["user", "thinking", "tool", "tool", "agent", "assistant", "agent_end", "user"]);

    expect(row("user").textContent).toContain("check the inbox folder");
    expect(row("thinking").textContent).toContain("Looking at the folder first.");
    expect(row("tool").textContent).toContain("list_dir inbox/");
    // Calls that changed no file show no diff.
    expect(within(row("tool")).queryByRole("figure")).toBeNull();
    expect(row("agent").textContent).toContain("researcher");
    expect(row("agent").textContent).toContain("by call #12");
    expect(row("assistant").textContent).toContain("a.txt is a shopping list.");
    expect(row("agent_end").textContent).toMatch(/researcher.*finished/);
  });

  it("finds in the session and steps through the matches, moving the address to each", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend({ details: [detail] });
    renderApp(backend, "#session/42");
    await screen.findByRole("list", { name: "Session messages" });
    const find = screen.getByRole("search", { name: "Find in this session" });
    const next = within(find).getByRole("button", { name: "Next" });
    const previous = within(find).getByRole("button", { name: "Previous" });
    expect((next as HTMLButtonElement).disabled).toBe(true);

    await user.type(within(find).getByLabelText("Find in session"), "inbox");
    await waitFor(() => expect(within(find).getByRole("status").textContent).toBe("2 matches"));
    expect(backend.findCalls).toEqual([{ session_id: 42, text: "inbox" }]);

    await user.click(next);
    expect(window.location.hash).toBe("#session/42?message=1");
    expect(within(find).getByRole("status").textContent).toBe("1 of 2");
    await user.click(next);
    expect(window.location.hash).toBe("#session/42?call=10");
    expect(within(find).getByRole("status").textContent).toBe("2 of 2");
    // Past the last match comes the first again, and back from it the last.
    await user.click(next);
    expect(window.location.hash).toBe("#session/42?message=1");
    await user.click(previous);
    expect(window.location.hash).toBe("#session/42?call=10");
    // Enter steps forward too.
    await user.type(within(find).getByLabelText("Find in session"), "{Enter}");
    expect(window.location.hash).toBe("#session/42?message=1");

    await user.clear(within(find).getByLabelText("Find in session"));
    await user.type(within(find).getByLabelText("Find in session"), "nowhere");
    await waitFor(() => expect(within(find).getByRole("status").textContent).toBe("No matches"));
    expect((next as HTMLButtonElement).disabled).toBe(true);
  });

  it("shows session metadata", async () => {
    renderApp(new MockBackend({ details: [detail] }), "#session/42");
    await screen.findByRole("list", { name: "Session messages" });
    const meta = screen.getByText("Source").closest("dl")!;
    expect(meta.textContent).toContain("tic");
    expect(meta.textContent).toContain("background, ephemeral");
  });

  it("marks synthetic and failed user turns", async () => {
    renderApp(new MockBackend({ details: [detail] }), "#session/42");
    await screen.findByRole("list", { name: "Session messages" });
    expect(within(row("user", 0)).queryByText("synthetic")).toBeTruthy();
    expect(within(row("user", 1)).queryByText("synthetic")).toBeNull();
    expect(within(row("user", 1)).queryByText("failed")).toBeTruthy();
  });

  it("keeps reasoning collapsed until asked and shows token counts", async () => {
    const user = userEvent.setup();
    renderApp(new MockBackend({ details: [detail] }), "#session/42");
    await screen.findByRole("list", { name: "Session messages" });
    const thinking = row("thinking");
    const details = thinking.querySelector("details.reasoning") as HTMLDetailsElement;
    expect(details.open).toBe(false);
    await user.click(within(thinking).getByText("Reasoning"));
    expect(details.open).toBe(true);
    expect(details.textContent).toContain("list files");
    expect(thinking.textContent).toMatch(/1,?200 in · 340 out/);
    expect(row("assistant").textContent).toContain("15 out");
    expect(row("assistant").querySelector("details.reasoning")).toBeNull();
  });

  it("shows the change a write call made", async () => {
    const write: DebugMessage = {
      kind: "tool", tool_call_id: 12, message_id: 2, name: "edit_file", label: "edit_file src/main.rs",
      arguments: { path: "src/main.rs" }, status: "done", result: "Edited", diff: fileDiff(), media: { media: [], links: [] }, stack_id: 1, depth: 0, created_at: T, ...whole,
    };
    renderApp(new MockBackend({ details: [{ ...detail, messages: [write] }] }), "#session/42");
    await screen.findByRole("list", { name: "Session messages" });
    const change = within(row("tool")).getByRole("figure", { name: "Changes to src/main.rs" });
    expect(change.textContent).toContain('println!("goodbye");');
  });

  it("shows each tool call's status, arguments and result", async () => {
    renderApp(new MockBackend({ details: [detail] }), "#session/42");
    await screen.findByRole("list", { name: "Session messages" });
    const done = row("tool", 0);
    const rejected = row("tool", 1);
    expect(done.querySelector(".status")!.textContent).toBe("done");
    expect(done.querySelector(".status")!.className).toContain("status-done");
    expect(rejected.querySelector(".status")!.className).toContain("status-rejected");
    expect(done.textContent).toContain('"path": "inbox/"');
    expect(done.textContent).toContain("a.txt\nb.txt");
    expect(rejected.textContent).toContain('"cmd": "rm -rf /"');
    expect(rejected.textContent).toContain("No result yet");
  });

  it("shows the raw request of a round on demand, collapsed by default", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend({ details: [detail] });
    backend.requests.set(2, { model: "fake-model", messages: [{ role: "user", content: "check the inbox folder" }] });
    renderApp(backend, "#session/42");
    await screen.findByRole("list", { name: "Session messages" });
    const thinking = row("thinking");
    const toggle = within(thinking).getByRole("button", { name: "Show request" });
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    expect(backend.requestCalls).toEqual([]);
    await user.click(toggle);
    const pre = await waitFor(() => {
      const el = thinking.querySelector("pre.raw-request");
      if (!el) throw new Error("no request shown yet");
      return el;
    });
    expect(pre.textContent).toContain('"model": "fake-model"');
    expect(pre.textContent).toContain('"content": "check the inbox folder"');
    expect(backend.requestCalls).toEqual([2]);
    await user.click(within(thinking).getByRole("button", { name: "Hide request" }));
    expect(thinking.querySelector("pre.raw-request")).toBeNull();
  });

  it("explains how to enable the request log when none was kept", async () => {
    const user = userEvent.setup();
    renderApp(new MockBackend({ details: [detail] }), "#session/42");
    await screen.findByRole("list", { name: "Session messages" });
    const assistant = row("assistant");
    await user.click(within(assistant).getByRole("button", { name: "Show request" }));
    await waitFor(() => expect(assistant.textContent).toContain("set llm.request_log.enabled: true in config.yml"));
  });

  it("indents sub-agent rows by depth", async () => {
    renderApp(new MockBackend({ details: [detail] }), "#session/42");
    await screen.findByRole("list", { name: "Session messages" });
    expect(row("user").style.getPropertyValue("--depth")).toBe("0");
    expect(row("agent").style.getPropertyValue("--depth")).toBe("1");
    expect(row("assistant").style.getPropertyValue("--depth")).toBe("1");
  });

  it("lists how each turn ended", async () => {
    const ended = { stack_id: 1, after_message_id: 4, ended_at: T };
    const turn_ends: SessionDetail["turn_ends"] = [
      { id: 1, outcome: { kind: "parked", tool_call_ids: [12] }, ...ended },
      { id: 2, outcome: { kind: "failed", reason: "every model failed" }, ...ended },
    ];
    renderApp(new MockBackend({ details: [{ ...detail, turn_ends }] }), "#session/42");
    const list = await screen.findByRole("list", { name: "Turn ends" });
    const items = within(list).getAllByRole("listitem").map((li) => li.textContent ?? "");
    expect(items).toHaveLength(2);
    expect(items[0]).toContain("Waiting for a decision on call 12.");
    expect(items[1]).toContain("The turn failed: every model failed");
  });

  it("says so when the session does not exist", async () => {
    renderApp(new MockBackend(), "#session/99");
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Session 99 does not exist");
    expect(within(alert).queryByRole("button", { name: "Retry" })).toBeNull();
  });

  it("renames the session, and an empty name removes it", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend({ details: [detail] });
    renderApp(backend, "#session/42");
    await user.click(await screen.findByRole("button", { name: "Rename" }));
    const heading = screen.getByRole("heading", { level: 1, name: "Session #42" });
    await user.type(screen.getByLabelText("Session name"), "  Inbox triage ");
    await user.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(heading.textContent).toBe("Inbox triage #42"));
    expect(backend.renameCalls).toEqual([{ session_id: 42, title: "Inbox triage" }]);

    await user.click(screen.getByRole("button", { name: "Rename" }));
    await user.clear(screen.getByLabelText("Session name"));
    await user.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(heading.textContent).toBe("Session #42"));
    expect(backend.renameCalls[1]).toEqual({ session_id: 42, title: null });
  });

  it("keeps the form open with the engine's reason when a rename is refused", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend({ details: [detail] });
    backend.rename_session = () =>
      Promise.reject({ code: "invalid_input", message: "a session title has at most 200 characters" });
    renderApp(backend, "#session/42");
    await user.click(await screen.findByRole("button", { name: "Rename" }));
    await user.type(screen.getByLabelText("Session name"), "x");
    await user.click(screen.getByRole("button", { name: "Save" }));
    expect((await screen.findByRole("alert")).textContent).toContain("at most 200 characters");
    expect(screen.getByLabelText("Session name")).toBeTruthy();
  });

  it("goes back in history with the Back button", async () => {
    const user = userEvent.setup();
    const back = vi.spyOn(window.history, "back").mockImplementation(() => {});
    renderApp(new MockBackend({ details: [detail] }), "#session/42");
    await user.click(screen.getByRole("button", { name: /Back/ }));
    expect(back).toHaveBeenCalledTimes(1);
  });

  it("appends the rows a running turn adds while it shows the newest ones, and updates a call that finished", async () => {
    const backend = new MockBackend({ details: [{ ...detail, messages: messages.slice(0, 3) }] });
    renderApp(backend, "#session/42");
    await screen.findByRole("list", { name: "Session messages" });
    const call = messages[2] as Extract<DebugMessage, { kind: "tool" }>;
    backend.details.set(42, {
      ...detail,
      messages: [
        ...messages.slice(0, 2),
        { ...call, result: "a.txt\nb.txt\nc.txt", result_chars: 17 },
        { kind: "assistant", message_id: 9, content: "Three files.", reasoning: null, is_synthetic: false, input_tokens: 1, output_tokens: 1, cost_usd: null, stack_id: 1, depth: 0, created_at: T, ...whole },
      ],
    });
    backend.emit({ seq: null, session_id: 42, source: "tic", frame: null, event: { type: "tool_done", tool_call_id: call.tool_call_id, result: "a.txt\nb.txt\nc.txt", result_type: "string", media: { media: [], links: [] } } });
    backend.emit({ seq: null, session_id: 42, source: "tic", frame: null, event: { type: "done", message_id: 9, stack_id: 1, content: "Three files.", input_tokens: 1, output_tokens: 1 , cost_usd: null} });
    expect(await screen.findByText("Three files.")).toBeTruthy();
    await waitFor(() => expect(row("tool").textContent).toContain("Result (17 chars)"));
    // One read of what is new after the last row, one of the call that changed.
    const reads = backend.windowCalls.slice(1).map((c) => c.query.anchor);
    expect(reads).toContainEqual({ type: "after", item: { type: "tool", id: call.tool_call_id } });
    expect(reads).toContainEqual({ type: "around", item: { type: "tool", id: call.tool_call_id } });
  });

  it("jumps to the pending approval and opens at a linked row, highlighted", async () => {
    const pending: DebugMessage = { ...(messages[3] as Extract<DebugMessage, { kind: "tool" }>), status: "pending" };
    const backend = new MockBackend({ details: [{ ...detail, messages: [...messages.slice(0, 3), pending, ...messages.slice(4)] }] });
    // One row fits: the linked row shows, the pending call does not.
    setViewportHeight(40, 40);
    renderApp(backend, "#session/42?message=4");
    await waitFor(() => expect(document.querySelector("li.is-focus")?.getAttribute("data-kind")).toBe("user"));
    expect(backend.windowCalls[0]?.query.anchor).toEqual({ type: "around", item: { type: "message", id: 4 } });
    const user = userEvent.setup();
    await user.click(screen.getByRole("button", { name: "Jump to the pending approval" }));
    await waitFor(() => expect(document.querySelector("li.is-focus")?.textContent).toContain("call #11"));
    await waitFor(() => expect(screen.queryByRole("button", { name: "Jump to the pending approval" })).toBeNull());
  });
});

describe("Session detail page: interrupted calls", () => {
  it("shows a flagged call's choices in the tree and records the user's word", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend({ details: [detail] });
    backend.interrupted.set(42, [interruptedCall(11, { session_id: 42, label: "execute_cmd rm -rf /" })]);
    renderApp(backend, "#session/42");
    const bar = await screen.findByRole("group", { name: "Interrupted call execute_cmd rm -rf /" });
    expect(row("tool", 1).contains(bar)).toBe(true);
    expect(within(row("tool", 0)).queryByRole("group", { name: /Interrupted call/ })).toBeNull();
    await user.click(within(bar).getByRole("button", { name: "It did not run" }));
    expect(backend.reconcileCalls).toEqual([{ tool_call_id: 11, choice: "did_not_run" }]);
    await waitFor(() => expect(row("tool", 1).textContent).toContain("You said it did not run"));
    expect(within(row("tool", 1)).queryByRole("button", { name: "It ran" })).toBeNull();
  });
});

describe("background tasks", () => {
  it("lists the session's tasks with links to their sessions and continues a failed one", async () => {
    const backend = new MockBackend({ details: [detail] });
    backend.tasks = [
      { task_id: 1, parent_session_id: 42, child_session_id: 50, tool_call_id: 11, label: "scout#50", agent_id: "scout", state: "done", report: "42 files", delivered: true },
      { task_id: 2, parent_session_id: 42, child_session_id: 51, tool_call_id: 12, label: "scout#51", agent_id: "scout", state: "failed", report: "model unreachable", delivered: true },
    ];
    renderApp(backend, "#session/42");
    const section = await screen.findByRole("region", { name: "Background tasks" });
    expect(within(section).getByRole("link", { name: "task scout#50" }).getAttribute("href")).toBe("#session/50");
    expect(within(section).getByText(/42 files/)).toBeTruthy();
    // Only the failed task offers Continue.
    const buttons = within(section).getAllByRole("button", { name: "Continue" });
    expect(buttons).toHaveLength(1);
    await userEvent.click(buttons[0] as HTMLElement);
    await waitFor(() => expect(backend.continued).toEqual([51]));
  });
});
