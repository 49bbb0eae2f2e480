import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { MockBackend, summary } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";

// 45 TIC sessions (ids 1..45) plus one web session that must never show up here.
function backendWithTicks() {
  const ticks = Array.from({ length: 45 }, (_, i) => summary(i + 1, { source: "tic", agent_id: "ticker" }));
  return new MockBackend({ sessions: [...ticks, summary(999, { source: "web", title: "Not a tick" })] });
}

function ids(): string[] {
  return within(screen.getByTestId("session-list"))
    .getAllByRole("link")
    .map((a) => a.textContent ?? "");
}

describe("TIC page", () => {
  it("pages through TIC sessions with Prev/Next and page N of M", async () => {
    const user = userEvent.setup();
    const backend = backendWithTicks();
    renderApp(backend, "#tic");

    expect(await screen.findByText("page 1 of 3")).toBeTruthy();
    expect(ids()[0]).toBe("#1");
    expect(ids()).toHaveLength(20);
    expect(ids()).not.toContain("#999");
    const prev = screen.getByRole("button", { name: "Prev" }) as HTMLButtonElement;
    const next = screen.getByRole("button", { name: "Next" }) as HTMLButtonElement;
    expect(prev.disabled).toBe(true);

    await user.click(next);
    expect(await screen.findByText("page 2 of 3")).toBeTruthy();
    await waitFor(() => expect(ids()[0]).toBe("#21"));
    expect(window.location.hash).toBe("#tic?page=2");
    expect(prev.disabled).toBe(false);

    await user.click(next);
    await waitFor(() => expect(ids()[0]).toBe("#41"));
    expect(screen.getByText("page 3 of 3")).toBeTruthy();
    expect(ids()).toHaveLength(5);
    expect(next.disabled).toBe(true);

    await user.click(prev);
    await waitFor(() => expect(ids()[0]).toBe("#21"));
    expect(backend.listCalls.every((q) => q.source === "tic" && q.per_page === 20)).toBe(true);
  });

  it("shows TIC columns: id, agent, created, messages, last message", async () => {
    renderApp(backendWithTicks(), "#tic");
    await screen.findByText("page 1 of 3");
    const headers = within(screen.getByTestId("session-list"))
      .getAllByRole("columnheader")
      .map((h) => h.textContent);
    expect(headers).toEqual(["ID", "Agent", "Created", "Messages", "Last message"]);
  });

  it("opens the page named in a deep link", async () => {
    renderApp(backendWithTicks(), "#tic?page=3");
    expect(await screen.findByText("page 3 of 3")).toBeTruthy();
    expect(ids()[0]).toBe("#41");
  });

  it("offers the first page when the requested one is past the end", async () => {
    const user = userEvent.setup();
    renderApp(backendWithTicks(), "#tic?page=9");
    await user.click(await screen.findByRole("button", { name: "Go to the first page" }));
    expect(await screen.findByText("page 1 of 3")).toBeTruthy();
  });

  it("says No sessions yet without TIC sessions", async () => {
    renderApp(new MockBackend({ sessions: [summary(1, { source: "web" })] }), "#tic");
    expect(await screen.findByText("No sessions yet")).toBeTruthy();
  });
});
