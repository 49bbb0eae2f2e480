// A page that throws while rendering: its error shows as text in the page's place, the sidebar
// keeps working, and moving away and back (or "Reload this page") shows the page again.
import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MockBackend } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";
import { errorText } from "./PageBoundary";

const broken = vi.hoisted(() => ({ inbox: false }));

vi.mock("../pages/InboxPage", async (importOriginal) => {
  const real = await importOriginal<typeof import("../pages/InboxPage")>();
  return {
    ...real,
    InboxPage: () => {
      if (broken.inbox) throw new Error('<img src=x onerror="alert(1)"> inbox exploded\u202e');
      return <real.InboxPage />;
    },
  };
});

const nav = () => within(screen.getByRole("navigation", { name: "Main" }));

describe("page error boundary", () => {
  afterEach(() => {
    broken.inbox = false;
  });

  function openBroken() {
    broken.inbox = true;
    // React and the boundary report the error on the console; the test reads the page instead.
    vi.spyOn(console, "error").mockImplementation(() => {});
    renderApp(new MockBackend(), "#inbox");
  }

  it("shows the failed page's error as text, with the sidebar still there", async () => {
    openBroken();
    expect(await screen.findByRole("heading", { level: 1, name: "The inbox could not be shown" })).toBeTruthy();
    const alert = screen.getByRole("alert");
    // The message is text: no element made of it, its hidden characters shown as tokens.
    expect(alert.textContent).toContain('<img src=x onerror="alert(1)"> inbox exploded⟨U+202E⟩');
    expect(alert.querySelector("img")).toBeNull();
    expect(within(alert).getByRole("link", { name: "Go to Chat" }).getAttribute("href")).toBe("#chat/web");
    expect(nav().getByRole("link", { name: "Inbox" }).getAttribute("aria-current")).toBe("page");
  });

  it("lets the user navigate away, and shows the page again when they come back", async () => {
    openBroken();
    const user = userEvent.setup();
    await screen.findByRole("heading", { level: 1, name: "The inbox could not be shown" });
    await user.click(nav().getByRole("link", { name: "Sessions" }));
    expect(await screen.findByRole("heading", { level: 1, name: "Sessions" })).toBeTruthy();
    expect(screen.queryByRole("heading", { name: /could not be shown/ })).toBeNull();

    broken.inbox = false;
    await user.click(nav().getByRole("link", { name: "Inbox" }));
    expect(await screen.findByRole("heading", { level: 1, name: "Agent Inbox" })).toBeTruthy();
  });

  it("shows the page again on Reload this page once the cause is gone, and stays on the error while it is not", async () => {
    openBroken();
    const user = userEvent.setup();
    await screen.findByRole("heading", { level: 1, name: "The inbox could not be shown" });
    await user.click(screen.getByRole("button", { name: "Reload this page" }));
    expect(await screen.findByRole("heading", { level: 1, name: "The inbox could not be shown" })).toBeTruthy();

    broken.inbox = false;
    await user.click(screen.getByRole("button", { name: "Reload this page" }));
    expect(await screen.findByRole("heading", { level: 1, name: "Agent Inbox" })).toBeTruthy();
  });

  it("says what any thrown value is, and cuts a long one", () => {
    expect(errorText(new TypeError("x is undefined"))).toBe("x is undefined");
    expect(errorText("plain")).toBe("plain");
    expect(errorText({ code: "internal" })).toBe('{"code":"internal"}');
    expect(errorText(undefined)).toBe("undefined");
    expect(errorText("a".repeat(5000))).toHaveLength(2001);
  });
});
