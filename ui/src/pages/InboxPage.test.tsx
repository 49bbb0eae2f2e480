import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { MockBackend, bypassView, fileDiff, inboxItem, interruptedCall } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";

const ROOT = { stack_id: 1, depth: 0, label: null, parent_tool_call_id: null };

function setup() {
  const backend = new MockBackend();
  // Listed newest first on purpose: the page must sort oldest first.
  backend.inboxItems = [
    inboxItem(3, { created_at: "2026-11-30T10:03:00Z", age_secs: 60, session_id: 12, summary: "run cargo test", tool_name: "execute_cmd", kind: "command", command: "cargo test", workdir: "/repo", diff: null, tool_category: "shell" }),
    inboxItem(2, { created_at: "2026-11-30T10:02:00Z", age_secs: 120, session_id: 11, summary: "write src/main.rs", diff: fileDiff() }),
    inboxItem(1, { created_at: "2026-11-30T10:01:00Z", age_secs: 3700, session_id: 10, summary: "create issue", tool_name: "mcp__gh__create_issue", kind: "tool", tool_category: null, mcp_server: "gh", arguments: { title: "Bug" } }),
  ];
  return backend;
}

function rows() {
  return within(screen.getByRole("list", { name: "Waiting approvals" })).getAllByRole("listitem");
}

function selectedId(): string | undefined {
  return rows().find((r) => r.getAttribute("aria-current") === "true")?.dataset.toolCallId;
}

async function open(backend: MockBackend) {
  const user = userEvent.setup();
  renderApp(backend, "#inbox");
  await screen.findByRole("list", { name: "Waiting approvals" });
  return user;
}

describe("agent inbox", () => {
  it("lists items oldest first with session, source, agent and age", async () => {
    await open(setup());
    expect(rows().map((r) => r.dataset.toolCallId)).toEqual(["1", "2", "3"]);
    expect(rows()[0]?.textContent).toContain("1 h 1 min ago");
    expect(rows()[0]?.textContent).toContain("session #10 · web · main");
    expect(selectedId()).toBe("1");
    expect(screen.getByText("3 waiting, oldest first")).toBeTruthy();
  });

  it("moves with j/k, shows the diff, approves with a and rejects with a note via r", async () => {
    const backend = setup();
    const user = await open(backend);
    await user.keyboard("j");
    expect(selectedId()).toBe("2");
    expect(screen.getByRole("figure", { name: "Changes to src/main.rs" })).toBeTruthy();
    await user.keyboard("jjj");
    expect(selectedId()).toBe("3");
    expect(screen.getByLabelText("Command line").textContent).toContain("cargo test");
    await user.keyboard("k");
    expect(selectedId()).toBe("2");

    await user.keyboard("a");
    await waitFor(() => expect(rows()).toHaveLength(2));
    expect(backend.decisions[0]).toEqual({
      toolCallId: 2,
      input: { approved: true, note: null, bypass: null },
    });
    // The item that took its place is selected.
    expect(selectedId()).toBe("3");

    await user.keyboard("r");
    const note = screen.getByLabelText(/Rejection note/);
    expect(document.activeElement).toBe(note);
    // Typing in the note does not trigger shortcuts (no "a" approvals, no "j" moves).
    await user.keyboard("just ask me");
    expect(backend.decisions).toHaveLength(1);
    expect(selectedId()).toBe("3");
    await user.click(screen.getByRole("button", { name: /Reject/ }));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(backend.decisions[1]).toEqual({
      toolCallId: 3,
      input: { approved: false, note: "just ask me", bypass: null },
    });
  });

  it("shows a newline and a bidi override in a waiting call's summary, path and command as tokens", async () => {
    const backend = new MockBackend();
    const path = "notes.md\n/home/me/.bashrc";
    backend.inboxItems = [
      inboxItem(4, { summary: `write ${path}`, path, arguments: { path } }),
      inboxItem(5, {
        created_at: "2026-11-30T10:05:00Z",
        summary: "run ls \u202Ettx.exe",
        tool_name: "execute_cmd",
        kind: "command",
        command: "ls \u202Ettx.exe\r\x1b[1Acargo test",
        workdir: "/repo",
        tool_category: "shell",
      }),
    ];
    const user = await open(backend);
    // One row per call, its summary on one line: the path does not pass for two paths.
    expect(rows()[0]?.querySelector(".inbox-summary")?.textContent).toBe("write notes.md\\n/home/me/.bashrc");
    expect(within(screen.getByRole("region", { name: /Details of write_file/ })).getByText(/^Writes/).textContent).toContain(
      "notes.md\\n/home/me/.bashrc",
    );
    await user.keyboard("j");
    expect(rows()[1]?.querySelector(".inbox-summary")?.textContent).toBe("run ls ⟨U+202E⟩ttx.exe");
    const line = screen.getByLabelText("Command line");
    expect([...line.querySelectorAll(".hidden-char")].map((m) => m.textContent)).toEqual(["⟨U+202E⟩", "\\r", "\\e"]);
  });

  it("opens the selected item's session with Enter", async () => {
    const user = await open(setup());
    await user.keyboard("j");
    await user.keyboard("{Enter}");
    await waitFor(() => expect(window.location.hash).toBe("#session/11"));
  });

  it("batch approves the items selected with x and checkboxes", async () => {
    const backend = setup();
    const user = await open(backend);
    const batch = screen.getByRole("button", { name: "Approve selected (0)" }) as HTMLButtonElement;
    expect(batch.disabled).toBe(true);
    await user.keyboard("x");
    await user.click(screen.getByRole("checkbox", { name: "Select execute_cmd call #3" }));
    await user.click(screen.getByRole("button", { name: "Approve selected (2)" }));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(backend.decisions.map((d) => [d.toolCallId, d.input.approved])).toEqual([
      [1, true],
      [3, true],
    ]);
    expect(rows()[0]?.dataset.toolCallId).toBe("2");
    expect(screen.getByText("Approved 2 calls")).toBeTruthy();
  });

  it("offers only the bypass scopes that fit the call, and the three durations", async () => {
    const backend = setup();
    const user = await open(backend);
    const options = (label: string) =>
      within(screen.getByLabelText(label)).getAllByRole("option").map((o) => o.textContent);
    // An MCP tool: its server or everything; it has no category.
    expect(options("Covers")).toEqual(["MCP server gh", "All tools"]);
    expect(options("For")).toEqual(["15 minutes", "1 hour", "This session (until /new, at most 24 h)"]);
    await user.keyboard("jj");
    // A shell command: its category or everything; it is no MCP tool.
    expect(options("Covers")).toEqual(["shell tools", "All tools"]);
  });

  it("approves with a bypass for the session, then lists it and revokes it", async () => {
    const backend = setup();
    const user = await open(backend);
    const list = screen.getByRole("region", { name: "Active bypasses" });
    expect(within(list).getByText("None: every call that needs approval asks.")).toBeTruthy();
    await user.selectOptions(screen.getByLabelText("For"), "This session (until /new, at most 24 h)");
    await user.click(screen.getByRole("button", { name: "Approve + bypass" }));
    await waitFor(() => expect(backend.decisions).toHaveLength(1));
    expect(backend.decisions[0]?.input).toEqual({
      approved: true,
      note: null,
     
      bypass: { duration: "session", scope: "mcp_server" },
    });
    expect(screen.getByText(/similar calls run without asking for this session/)).toBeTruthy();
    const row = await within(list).findByRole("listitem");
    expect(row.textContent).toContain("gh tools in session #10 (web)");
    expect(row.textContent).toContain("granted by web");
    await user.click(within(row).getByRole("button", { name: "Revoke the bypass of gh tools in session 10" }));
    await waitFor(() => expect(within(list).queryByRole("listitem")).toBeNull());
    expect(backend.revokeCalls).toEqual([900]);
  });

  it("lists every session's active bypasses with their time left", async () => {
    const backend = setup();
    backend.bypasses = [
      bypassView(1, { session_id: 4, source: "cli", label: "all tools", scope: "all", scope_value: null, granted_by: "cli", remaining_secs: 840 }),
      bypassView(2, { session_id: 5, label: "shell tools", duration: "session", remaining_secs: 86_000 }),
    ];
    await open(backend);
    const list = screen.getByRole("region", { name: "Active bypasses" });
    const rows = await within(list).findAllByRole("listitem");
    expect(rows.map((r) => r.textContent)).toEqual([
      "all tools in session #4 (cli)granted by cli · 14 min leftRevoke",
      "shell tools in session #5 (web)granted by web · this session, 23 h 53 min left at mostRevoke",
    ]);
  });

  it("shows why a revoke failed and keeps the bypass listed", async () => {
    const backend = setup();
    backend.bypasses = [bypassView(3)];
    backend.revokeError = { code: "storage", message: "database is locked" };
    const user = await open(backend);
    const list = screen.getByRole("region", { name: "Active bypasses" });
    await user.click(await within(list).findByRole("button", { name: /Revoke the bypass/ }));
    expect((await within(list).findByRole("alert")).textContent).toContain("database is locked");
    expect(within(list).getAllByRole("listitem")).toHaveLength(1);
  });

  it("shows the engine's refusal of a bypass scope and keeps the item", async () => {
    const backend = setup();
    backend.decideError = {
      code: "invalid_input",
      message: "`mcp_server` bypass does not fit `execute_cmd`: it is not an MCP tool; choose `category` (shell) or `all`",
    };
    const user = await open(backend);
    await user.click(screen.getByRole("button", { name: "Approve + bypass" }));
    expect((await screen.findByRole("alert")).textContent).toContain("does not fit `execute_cmd`");
    expect(rows()).toHaveLength(3);
  });

  it("shows a decision error instead of dropping the item", async () => {
    const backend = setup();
    backend.decideError = { code: "conflict", message: "already decided elsewhere" };
    const user = await open(backend);
    await user.keyboard("a");
    expect((await screen.findByRole("alert")).textContent).toContain("already decided elsewhere");
    expect(rows()).toHaveLength(3);
  });

  it("says nothing is waiting when empty, and shows errors with retry", async () => {
    const backend = new MockBackend();
    backend.inboxError = { code: "storage", message: "db locked" };
    const user = userEvent.setup();
    renderApp(backend, "#inbox");
    expect((await screen.findByRole("alert")).textContent).toContain("db locked");
    backend.inboxError = null;
    await user.click(screen.getByRole("button", { name: "Retry" }));
    expect(await screen.findByText("Nothing is waiting for you")).toBeTruthy();
  });

  it("keeps the sidebar badge in step with approval events", async () => {
    const backend = new MockBackend();
    renderApp(backend, "#sessions");
    const nav = within(screen.getByRole("navigation", { name: "Main" }));
    await waitFor(() => expect(backend.inboxCalls).toBeGreaterThan(0));
    expect(nav.getByRole("link", { name: "Inbox" })).toBeTruthy();
    backend.inboxItems = [inboxItem(1), inboxItem(2), inboxItem(3)];
    act(() =>
      backend.emit({ seq: null, session_id: 7, source: "web", frame: ROOT, event: { type: "approval_requested", request_id: 3, tool_call_id: 3, tool_name: "x", arguments: {}, request: { kind: "other", path: null } } }),
    );
    expect(await nav.findByRole("link", { name: "Inbox 3 waiting" })).toBeTruthy();
    backend.inboxItems = [inboxItem(1)];
    act(() =>
      backend.emit({ seq: null, session_id: 7, source: "web", frame: ROOT, event: { type: "approval_resolved", request_id: 3, tool_call_id: 3, approved: true } }),
    );
    expect(await nav.findByRole("link", { name: "Inbox 1 waiting" })).toBeTruthy();
  });

  it("lists calls a restart cut off in any session until the user says what happened", async () => {
    const backend = new MockBackend();
    backend.interrupted.set(7, [interruptedCall(21, { session_id: 7, label: "execute_cmd make deploy" })]);
    backend.interrupted.set(4, [
      interruptedCall(9, { session_id: 4, label: "execute_cmd make install" }),
      interruptedCall(5, { session_id: 4, choice: "ran", decided_by: "cli", decided_at: "2026-11-30T10:05:00Z" }),
    ]);
    const user = userEvent.setup();
    renderApp(backend, "#inbox");
    const list = await screen.findByRole("list", { name: "Interrupted calls" });
    expect(screen.queryByText("Nothing is waiting for you")).toBeNull();
    expect(screen.getByText("2 interrupted calls to check")).toBeTruthy();
    const nav = within(screen.getByRole("navigation", { name: "Main" }));
    expect(await nav.findByRole("link", { name: "Inbox 2 waiting" })).toBeTruthy();
    const items = within(list).getAllByRole("listitem");
    // Oldest first, across sessions; a call the user already settled is not listed.
    expect(items.map((li) => li.dataset.toolCallId)).toEqual(["9", "21"]);
    expect(within(items[0] as HTMLElement).getByRole("link", { name: "session #4 · call #9" }).getAttribute("href")).toBe("#session/4");
    expect(items[1]?.textContent).toContain("execute_cmd make deploy");

    const first = within(screen.getByRole("group", { name: "Interrupted call execute_cmd make install" }));
    await user.click(first.getByRole("button", { name: "It did not run" }));
    expect(backend.reconcileCalls).toEqual([{ tool_call_id: 9, choice: "did_not_run" }]);
    // The refetch after the word (the interrupted_call event) drops it from the list.
    await waitFor(() => expect(within(screen.getByRole("list", { name: "Interrupted calls" })).getAllByRole("listitem")).toHaveLength(1));
    expect(await nav.findByRole("link", { name: "Inbox 1 waiting" })).toBeTruthy();
  });
});
