import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { MockBackend, summary } from "../test/mockBackend";
import { goTo, renderApp } from "../test/renderApp";

const NAV = ["Chat", "Inbox", "Sessions", "TIC", "Jobs", "Memory", "Settings"];

function nav() {
  return within(screen.getByRole("navigation", { name: "Main" }));
}

function currentLinks(): string[] {
  return nav()
    .getAllByRole("link")
    .filter((a) => a.getAttribute("aria-current") === "page")
    .map((a) => a.textContent ?? "");
}

describe("app frame", () => {
  it("shows every sidebar link by name and marks only the current page", async () => {
    renderApp(new MockBackend(), "#sessions");
    expect(screen.getByTestId("app-frame")).toBeTruthy();
    for (const name of NAV) expect(nav().getByRole("link", { name })).toBeTruthy();
    expect(currentLinks()).toEqual(["Sessions"]);
    expect(await screen.findByRole("heading", { level: 1, name: "Sessions" })).toBeTruthy();
  });

  it("navigates with the sidebar and moves aria-current with the URL", async () => {
    const user = userEvent.setup();
    renderApp(new MockBackend(), "#sessions");

    await user.click(nav().getByRole("link", { name: "Inbox" }));
    await screen.findByRole("heading", { level: 1, name: "Agent Inbox" });
    expect(window.location.hash).toBe("#inbox");
    expect(currentLinks()).toEqual(["Inbox"]);

    await user.click(nav().getByRole("link", { name: "TIC" }));
    await screen.findByRole("heading", { level: 1, name: "TIC" });
    expect(currentLinks()).toEqual(["TIC"]);

    await user.click(nav().getByRole("link", { name: "Chat" }));
    await screen.findByRole("heading", { level: 1, name: "Chat" });
    expect(window.location.hash).toBe("#chat/web");
    expect(currentLinks()).toEqual(["Chat"]);

    await user.click(nav().getByRole("link", { name: "Settings" }));
    await screen.findByRole("heading", { level: 1, name: "Settings" });
    expect(currentLinks()).toEqual(["Settings"]);
  });

  it("follows hash changes made outside the app (typed URL, back/forward)", async () => {
    renderApp(new MockBackend(), "#inbox");
    await act(async () => goTo("#settings"));
    await screen.findByRole("heading", { level: 1, name: "Settings" });
    expect(currentLinks()).toEqual(["Settings"]);
  });

  it("opens Chat for an empty hash and names the source of #chat/{source}", async () => {
    renderApp(new MockBackend(), "");
    // The chat waits for the settings (first-run check) before it mounts.
    expect(await screen.findByRole("heading", { level: 1, name: "Chat" })).toBeTruthy();
    expect(currentLinks()).toEqual(["Chat"]);
    await act(async () => goTo("#chat/telegram"));
    await waitFor(() => expect(screen.getByText(/“telegram” source/)).toBeTruthy());
  });

  it("says page not found for an unknown hash and marks no link current", () => {
    renderApp(new MockBackend(), "#nowhere/at/all");
    expect(screen.getByRole("heading", { level: 1, name: "Page not found" })).toBeTruthy();
    expect(screen.getByText("#nowhere/at/all")).toBeTruthy();
    expect(currentLinks()).toEqual([]);
  });

  it("treats a malformed session id as not found rather than loading it", () => {
    const backend = new MockBackend();
    renderApp(backend, "#session/abc");
    expect(screen.getByRole("heading", { level: 1, name: "Page not found" })).toBeTruthy();
    expect(backend.windowCalls).toEqual([]);
  });

  it.each([
    ["sessions_changed", 2],
    ["resync", null],
  ] as const)("refetches the list on %s", async (type, sessionId) => {
    const backend = new MockBackend({ sessions: [summary(1)] });
    renderApp(backend, "#sessions");
    await screen.findByText("Session 1");
    expect(backend.subscriberCount).toBe(1);

    backend.sessions = [summary(2, { title: "Fresh one" }), summary(1)];
    act(() => backend.emit({ seq: null, session_id: sessionId, source: null, frame: null, event: { type } }));
    expect(await screen.findByText("Fresh one")).toBeTruthy();
  });

  it("ignores events that do not change sessions", async () => {
    const backend = new MockBackend({ sessions: [summary(1)] });
    renderApp(backend, "#sessions");
    await screen.findByText("Session 1");
    const calls = backend.listCalls.length;
    act(() =>
      backend.emit({ seq: null, session_id: null, source: null, frame: null, event: { type: "config_reloaded", ok: true, error: null } }),
    );
    await new Promise((r) => setTimeout(r, 20));
    expect(backend.listCalls.length).toBe(calls);
  });

  it("settings shows which transport the app is connected through", () => {
    renderApp(new MockBackend(), "#settings");
    expect(screen.getByText("Browser, via skald serve")).toBeTruthy();
  });
});
