import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { TicTickInfo } from "../backend";
import { MockBackend } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";

function tick(id: number, over: Partial<TicTickInfo> = {}): TicTickInfo {
  return {
    id,
    slot: "2026-05-04T10:00:00.000Z",
    manual: false,
    state: "done",
    events: 2,
    servers: ["inbox"],
    session_id: 40 + id,
    started_at: "2026-05-04T10:00:00.000Z",
    ended_at: "2026-05-04T10:00:05.000Z",
    reason: null,
    ...over,
  };
}

function backendWithTicks(): MockBackend {
  const backend = new MockBackend();
  backend.tic = {
    interval_secs: 900,
    batch_size: 50,
    active_hours: "08:00-20:00",
    pending_events: 3,
    kept_connected: ["inbox"],
    ticks: [tick(2, { state: "failed", reason: "the model could not be reached", events: 1 }), tick(1)],
  };
  backend.ticEvents[1] = [
    {
      id: 7,
      server: "inbox",
      method: "event/new_email",
      params: JSON.stringify({ subject: "<img src=x onerror=alert(1)> Quarterly report" }),
      received_at: "2026-05-04T09:59:00.000Z",
    },
    { id: 8, server: "inbox", method: "notifications/resources/updated", params: null, received_at: "2026-05-04T09:59:30.000Z" },
  ];
  return backend;
}

function rows(): HTMLElement[] {
  return within(screen.getByRole("table", { name: "TIC ticks" })).getAllByRole("row").slice(1);
}

describe("TIC page", () => {
  it("lists the ticks with their events, servers, end and session", async () => {
    renderApp(backendWithTicks(), "#tic");
    await screen.findByRole("table", { name: "TIC ticks" });
    const summary = screen.getByTestId("tic-summary").textContent ?? "";
    expect(summary).toContain("every 15 minutes, between 08:00 and 20:00");
    expect(summary).toContain("3 event(s) waiting");
    expect(summary).toContain("Servers kept connected: inbox.");
    const [failed, done] = rows();
    expect(within(failed!).getByText("failed")).toBeTruthy();
    expect(within(failed!).getByText("the model could not be reached")).toBeTruthy();
    expect(within(done!).getByText("done")).toBeTruthy();
    expect(within(done!).getByText("inbox")).toBeTruthy();
    const link = within(done!).getByRole("link", { name: "Session #41" });
    expect(link.getAttribute("href")).toBe("#session/41");
  });

  it("shows a tick's events as text, never as markup", async () => {
    const user = userEvent.setup();
    renderApp(backendWithTicks(), "#tic");
    await screen.findByRole("table", { name: "TIC ticks" });
    await user.click(screen.getByRole("button", { name: "Events of tick 1" }));
    const list = await screen.findByRole("list", { name: "Events of tick 1" });
    const items = within(list).getAllByRole("listitem");
    expect(items).toHaveLength(2);
    expect(within(items[0]!).getByText("event/new_email")).toBeTruthy();
    expect(items[0]!.textContent).toContain("<img src=x onerror=alert(1)> Quarterly report");
    expect(list.querySelector("img")).toBeNull();
    await user.click(screen.getByRole("button", { name: "Hide events of tick 1" }));
    await waitFor(() => expect(screen.queryByRole("list", { name: "Events of tick 1" })).toBeNull());
  });

  it("runs a tick now, and says when there was nothing new", async () => {
    const user = userEvent.setup();
    const backend = backendWithTicks();
    renderApp(backend, "#tic");
    await screen.findByRole("table", { name: "TIC ticks" });
    await user.click(screen.getByRole("button", { name: "Run a tick now" }));
    expect(await screen.findByText("Tick 3 started on 3 event(s).")).toBeTruthy();
    await waitFor(() => expect(rows()).toHaveLength(3));
    expect(rows()[0]!.getAttribute("data-state")).toBe("running");
    // A tick is running: another is refused, and the page says why.
    await user.click(screen.getByRole("button", { name: "Run a tick now" }));
    expect((await screen.findByRole("alert")).textContent).toContain("a tick is running");
    backend.tic.ticks[0]!.state = "done";
    await user.click(screen.getByRole("button", { name: "Run a tick now" }));
    expect(await screen.findByText("Nothing new: no tick was needed and no model was asked.")).toBeTruthy();
    expect(backend.ticRuns).toBe(3);
  });

  it("says what to do without ticks or servers kept connected", async () => {
    renderApp(new MockBackend(), "#tic");
    expect(await screen.findByText("No ticks yet")).toBeTruthy();
    expect(screen.getByTestId("tic-summary").textContent).toContain("No MCP server is kept connected yet");
  });
});
