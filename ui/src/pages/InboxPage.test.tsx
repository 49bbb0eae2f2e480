import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { MockBackend, fileDiff, inboxItem } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";

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
      input: { approved: true, note: null, bypass_secs: null, bypass_scope: null },
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
      input: { approved: false, note: "just ask me", bypass_secs: null, bypass_scope: null },
    });
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

  it("approves with a bypass scoped to the MCP server for a session", async () => {
    const backend = setup();
    const user = await open(backend);
    const scope = screen.getByLabelText("Scope") as HTMLSelectElement;
    expect(scope.value).toBe("mcp_server");
    expect((within(scope).getByRole("option", { name: /Category/ }) as HTMLOptionElement).disabled).toBe(true);
    await user.selectOptions(screen.getByLabelText("For"), "Rest of the session");
    await user.click(screen.getByRole("button", { name: "Approve + bypass" }));
    await waitFor(() => expect(backend.decisions).toHaveLength(1));
    expect(backend.decisions[0]?.input).toEqual({
      approved: true,
      note: null,
     
      bypass_secs: 0,
      bypass_scope: "mcp_server",
    });
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
      backend.emit({ session_id: 7, source: "web", event: { type: "approval_required", request_id: 3, tool_call_id: 3, tool_name: "x", arguments: {} } }),
    );
    expect(await nav.findByRole("link", { name: "Inbox, 3 waiting" })).toBeTruthy();
    backend.inboxItems = [inboxItem(1)];
    act(() =>
      backend.emit({ session_id: 7, source: "web", event: { type: "approval_resolved", request_id: 3, tool_call_id: 3, approved: true } }),
    );
    expect(await nav.findByRole("link", { name: "Inbox, 1 waiting" })).toBeTruthy();
  });
});
