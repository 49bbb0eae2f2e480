import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { SearchHit } from "../backend";
import { MockBackend, summary } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";

function rows() {
  const list = screen.getByTestId("session-list");
  return within(list).getAllByRole("row").slice(1); // drop the header row
}

describe("Sessions page", () => {
  it("lists sessions with id, title/source, agent, messages and last activity", async () => {
    const backend = new MockBackend({
      sessions: [
        summary(7, { title: "Refactor the parser", source: "web", agent_id: "coder", message_count: 12 }),
        summary(3, { title: null, source: "cron", agent_id: "janitor", message_count: 4, is_ephemeral: true }),
      ],
    });
    renderApp(backend, "#sessions");
    await screen.findByText("Refactor the parser");

    const headers = within(screen.getByTestId("session-list"))
      .getAllByRole("columnheader")
      .map((h) => h.textContent);
    expect(headers).toEqual(["ID", "Title / source", "Agent", "Messages", "Last activity"]);

    const [first, second] = rows();
    expect(within(first!).getByRole("link", { name: "Open session 7" }).getAttribute("href")).toBe("#session/7");
    expect(first!.textContent).toContain("coder");
    expect(first!.textContent).toContain("12");
    expect(second!.textContent).toContain("Untitled session");
    expect(second!.textContent).toContain("cron");
    expect(second!.textContent).toContain("ephemeral");
    expect(backend.listCalls[0]).toEqual({ source: null, search: null, page: 1, per_page: 25 });
  });

  it("shows a loading state until the backend answers", async () => {
    const backend = new MockBackend({ sessions: [summary(1)] });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const real = backend.list_sessions.bind(backend);
    backend.list_sessions = async (params) => {
      await gate;
      return real(params);
    };
    renderApp(backend, "#sessions");
    expect(screen.getByRole("status").textContent).toContain("Loading sessions");
    release();
    await screen.findByText("Session 1");
    expect(screen.queryByRole("status")).toBeNull();
  });

  it("says No sessions yet when there are none", async () => {
    renderApp(new MockBackend(), "#sessions");
    expect(await screen.findByText("No sessions yet")).toBeTruthy();
    expect(screen.queryByRole("table")).toBeNull();
  });

  it("shows the error and recovers on Retry", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend({ sessions: [summary(1)] });
    backend.listError = { code: "storage", message: "database is locked" };
    renderApp(backend, "#sessions");

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Could not load sessions");
    expect(alert.textContent).toContain("database is locked");

    backend.listError = null;
    await user.click(within(alert).getByRole("button", { name: "Retry" }));
    expect(await screen.findByText("Session 1")).toBeTruthy();
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("opens the session detail when a row is clicked", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend({
      sessions: [summary(5, { title: "Click me" })],
      details: [
        {
          session: { id: 5, title: "Click me", source: "web", agent_id: "main", is_interactive: true, is_ephemeral: false, created_at: "2026-11-30T10:00:00Z" },
          messages: [],
          pending_inputs: [],
          turn_ends: [],
          tasks: [],
        },
      ],
    });
    renderApp(backend, "#sessions");
    await user.click(await screen.findByText("main"));
    await waitFor(() => expect(window.location.hash).toBe("#session/5"));
    expect(await screen.findByRole("heading", { level: 1, name: /Click me/ })).toBeTruthy();
    expect(backend.windowCalls.map((c) => c.sessionId)).toContain(5);
  });

  it("filters by source and keeps the filter in the URL", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend({
      sessions: [summary(1, { source: "web", title: "From web" }), summary(2, { source: "tic", title: "From tic" })],
    });
    renderApp(backend, "#sessions");
    await screen.findByText("From tic");

    await user.selectOptions(screen.getByLabelText("Source"), "tic");
    await waitFor(() => expect(screen.queryByText("From web")).toBeNull());
    expect(screen.getByText("From tic")).toBeTruthy();
    expect(window.location.hash).toBe("#sessions?source=tic");
    expect(backend.listCalls.at(-1)).toMatchObject({ source: "tic", page: 1 });
  });

  it("searches by text after typing stops, and says when nothing matches", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend({
      sessions: [summary(1, { title: "Fix login bug" }), summary(2, { title: "Write docs" })],
    });
    renderApp(backend, "#sessions");
    await screen.findByText("Write docs");

    await user.type(screen.getByLabelText("Search"), "login");
    await waitFor(() => expect(screen.queryByText("Write docs")).toBeNull());
    expect(screen.getByText("Fix login bug")).toBeTruthy();
    expect(backend.listCalls.at(-1)).toMatchObject({ search: "login", page: 1 });
    // One debounced request for the whole word, not one per keystroke.
    expect(backend.listCalls.filter((q) => q.search !== null).length).toBe(1);

    await user.clear(screen.getByLabelText("Search"));
    await user.type(screen.getByLabelText("Search"), "zzz");
    expect(await screen.findByText("No sessions match")).toBeTruthy();
  });

  it("shows each match's snippet marked and opens the session at the matching message or call", async () => {
    const user = userEvent.setup();
    const hit = (sessionId: number, over: Partial<SearchHit>): SearchHit => ({
      session_id: sessionId,
      session_title: null,
      session_source: "web",
      at: { message_id: 40, tool_call_id: null, kind: "assistant" },
      tool_name: null,
      snippet: [],
      rank: -1,
      created_at: "2026-11-30T10:05:00Z",
      ...over,
    });
    const backend = new MockBackend({
      sessions: [
        summary(7, {
          title: "Storage work",
          hit_count: 3,
          best_hit: hit(7, {
            at: { message_id: 41, tool_call_id: 410, kind: "tool" },
            tool_name: "read_file",
            snippet: [
              { text: "crates/skald-store/src/repo/", hit: false },
              { text: "sessions", hit: true },
              { text: ".rs", hit: false },
            ],
          }),
        }),
        summary(3, {
          title: "Planning",
          hit_count: 1,
          best_hit: hit(3, {
            snippet: [
              { text: "we keep the <b>", hit: false },
              { text: "sessions", hit: true },
              { text: "</b> list short", hit: false },
            ],
          }),
        }),
        summary(2, { title: "Unrelated" }),
      ],
      details: [
        {
          session: { id: 3, title: "Planning", source: "web", agent_id: "main", is_interactive: true, is_ephemeral: false, created_at: "2026-11-30T10:00:00Z" },
          // The hit's message exists: the session page opens at it.
          messages: [
            { kind: "assistant", message_id: 40, content: "we keep the <b>sessions</b> list short", reasoning: null, is_synthetic: false, input_tokens: 1, output_tokens: 1, cost_usd: null, stack_id: 1, depth: 0, created_at: "2026-11-30T10:05:00Z", content_chars: 38, truncated: false },
          ],
          pending_inputs: [],
          turn_ends: [],
          tasks: [],
        },
      ],
    });
    renderApp(backend, "#sessions");
    await screen.findByText("Unrelated");
    // Without a search no row shows a hit.
    expect(document.querySelectorAll(".search-hit")).toHaveLength(0);

    await user.type(screen.getByLabelText("Search"), "sessions");
    await waitFor(() => expect(screen.queryByText("Unrelated")).toBeNull());
    const [tool, message] = rows();
    const toolLink = within(tool!).getByRole("link", { name: "read_file call" });
    expect(toolLink.getAttribute("href")).toBe("#session/7?call=410");
    expect(tool!.textContent).toContain("3 matches");
    expect([...tool!.querySelectorAll("mark")].map((m) => m.textContent)).toEqual(["sessions"]);
    expect(within(message!).getByRole("link", { name: "Assistant" }).getAttribute("href")).toBe("#session/3?message=40");
    // Text from the stored message stays text: no element is made from it.
    expect(message!.querySelector("b")).toBeNull();
    expect(message!.textContent).toContain("we keep the <b>sessions</b> list short");
    expect(message!.textContent).not.toContain("matches");

    // Clicking the row opens the session at the hit, not at its top.
    await user.click(within(message!).getByText("main"));
    await waitFor(() => expect(window.location.hash).toBe("#session/3?message=40"));
    expect(await screen.findByRole("heading", { level: 1, name: /Planning/ })).toBeTruthy();
  });

  it("restores filters from a deep link", async () => {
    const backend = new MockBackend({ sessions: [summary(1, { source: "cron", title: "Nightly" })] });
    renderApp(backend, "#sessions?source=cron&search=Night");
    await screen.findByText("Nightly");
    expect((screen.getByLabelText("Search") as HTMLInputElement).value).toBe("Night");
    expect((screen.getByLabelText("Source") as HTMLSelectElement).value).toBe("cron");
    expect(backend.listCalls[0]).toMatchObject({ source: "cron", search: "Night" });
  });
});
