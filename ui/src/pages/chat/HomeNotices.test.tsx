import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { HomeNotice } from "../../backend";
import { MockBackend, emptyDetail } from "../../test/mockBackend";
import { renderApp } from "../../test/renderApp";

function notice(id: number, over: Partial<HomeNotice> = {}): HomeNotice {
  return {
    id,
    job_id: 1,
    job_run_id: 10 + id,
    job_title: "Morning summary",
    state: "done",
    summary: "Three issues are open.\nNone is urgent.",
    session_id: 40 + id,
    created_at: "2026-12-01T08:00:09Z",
    ...over,
  };
}

function setup(notices: HomeNotice[]) {
  const backend = new MockBackend({ details: [emptyDetail(5)] });
  backend.activeSessions.set("web", 5);
  backend.activeSessions.set("cli", 5);
  backend.notices = notices;
  return backend;
}

const region = () => screen.findByRole("region", { name: "Notices from scheduled jobs" });

describe("Home notices", () => {
  it("show each ended run above the home chat, with its answer's first lines and its session", async () => {
    const backend = setup([
      notice(2, { state: "failed", job_title: "Backup check", summary: "every model failed: 401 invalid api key", session_id: 52 }),
      notice(1),
    ]);
    renderApp(backend, "#chat/web");
    const items = within(await region()).getAllByRole("listitem");
    expect(items.map((i) => i.getAttribute("data-state"))).toEqual(["failed", "done"]);
    expect(items[0]!.textContent).toContain("Job: Backup check — failed");
    expect(items[0]!.textContent).toContain("every model failed: 401 invalid api key");
    expect(within(items[0]!).getByRole("link", { name: "Open its session #52" }).getAttribute("href")).toBe("#session/52");
    expect(items[1]!.textContent).toContain("Job: Morning summary — done");
    expect(items[1]!.querySelector(".home-notice-summary")?.textContent).toBe("Three issues are open.\nNone is urgent.");
  });

  it("mark what a hostile title or answer hides instead of passing it on", async () => {
    const backend = setup([notice(1, { job_title: "Re\u202Eport\u001b[2J", summary: "ok\u200Bdone" })]);
    renderApp(backend, "#chat/web");
    const item = within(await region()).getByRole("listitem");
    const marks = [...item.querySelectorAll(".hidden-char")].map((m) => m.getAttribute("title"));
    expect(marks).toHaveLength(3);
    expect(item.textContent).not.toContain("\u202E");
    expect(item.textContent).not.toContain("\u001b");
    expect(item.textContent).not.toContain("\u200B");
  });

  it("follow the engine: a new notice appears, a dismissed one leaves every window", async () => {
    const user = userEvent.setup();
    const backend = setup([notice(1)]);
    renderApp(backend, "#chat/web");
    await region();
    backend.notices = [notice(2, { job_title: "Arrived later", state: "expired", summary: "waited for a person longer than 600 s" }), ...backend.notices];
    act(() => backend.emit({ session_id: null, source: null, frame: null, seq: 1, event: { type: "home_notice", notice: backend.notices[0]! } }));
    await waitFor(async () => expect(within(await region()).getAllByRole("listitem")).toHaveLength(2));
    expect((await region()).textContent).toContain("Job: Arrived later — expired");

    await user.click(screen.getByRole("button", { name: "Dismiss: Job Arrived later expired" }));
    expect(backend.dismissed).toEqual([2]);
    await waitFor(async () => expect(within(await region()).getAllByRole("listitem")).toHaveLength(1));

    // Dismissed in another window: this one drops it when it hears so.
    backend.dismissed.push(1);
    act(() => backend.emit({ session_id: null, source: null, frame: null, seq: 2, event: { type: "home_notice_dismissed", notice_id: 1 } }));
    await waitFor(() => expect(screen.queryByRole("region", { name: "Notices from scheduled jobs" })).toBeNull());
  });

  it("show only in the home chat", async () => {
    renderApp(setup([notice(1)]), "#chat/cli");
    await screen.findByRole("link", { name: "session #5" });
    expect(screen.queryByRole("region", { name: "Notices from scheduled jobs" })).toBeNull();
  });
});
