import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { McpServerInfo } from "../backend";
import { MockBackend } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";

const notStarted: McpServerInfo = {
  name: "everything",
  description: "the reference server",
  endpoint: "stdio: mcp-server-everything",
  state: "not_started",
  error: null,
  tools: [],
  log_path: "/data/logs/mcp/everything.log",
  log_lines: [],
  keep_connected: false,
};

const broken: McpServerInfo = {
  name: "broken",
  description: null,
  endpoint: "stdio: /nope",
  state: "failed",
  error: "cannot run `/nope`: No such file or directory (os error 2)",
  tools: [],
  log_path: "/data/logs/mcp/broken.log",
  log_lines: ["2026-12-05T07:40:14.123Z [stderr]    node: bad option: --nope"],
  keep_connected: false,
};

function serverItem(name: string): HTMLElement {
  const item = document.querySelector<HTMLElement>(`[data-mcp-server="${name}"]`);
  if (!item) throw new Error(`no server ${name}`);
  return item;
}

const remote: McpServerInfo = {
  name: "tracker",
  description: null,
  endpoint: "http: https://mcp.tracker.example/mcp",
  state: "needs_authorization",
  error: "the server requires authorization: authorize Skald (`skald mcp login tracker`, or Authorize in Settings → MCP)",
  tools: [],
  log_path: null,
  log_lines: [],
  keep_connected: false,
};

describe("Settings: MCP servers", () => {
  it("a server that needs authorization gets an Authorize button that opens its page in the browser", async () => {
    const backend = new MockBackend();
    backend.mcpServers = [notStarted, remote];
    const opened: string[] = [];
    const open = window.open;
    window.open = ((url?: string | URL) => {
      opened.push(String(url));
      return null;
    }) as typeof window.open;
    try {
      renderApp(backend, "#settings");
      const item = await waitFor(() => serverItem("tracker"));
      expect(within(item).getByText("Needs authorization")).toBeTruthy();
      expect(within(item).getByRole("alert").textContent).toContain("skald mcp login tracker");
      // A local server has nothing to authorize.
      expect(within(serverItem("everything")).queryByRole("button", { name: /Authorize/ })).toBeNull();
      await userEvent.click(within(item).getByRole("button", { name: "Authorize MCP server tracker" }));
      await waitFor(() => expect(opened).toEqual(["https://auth.example/authorize?client_id=skald&state=s-tracker"]));
      expect(backend.mcpAuthorized).toEqual(["tracker"]);
      // The list is read again: the server waits for the browser, and the page stays reachable.
      await waitFor(() => expect(within(serverItem("tracker")).getByText("Waiting for the browser…")).toBeTruthy());
      const link = within(serverItem("tracker")).getByRole("link", { name: "the authorization page" });
      expect(link.getAttribute("href")).toBe(opened[0]);
      expect(within(serverItem("tracker")).getByRole("button", { name: "Authorize MCP server tracker" }).textContent).toBe("Authorize again");
    } finally {
      window.open = open;
    }
  });


  it("shows how to declare servers when there are none", async () => {
    renderApp(new MockBackend(), "#settings");
    expect(await screen.findByText(/No MCP servers yet/)).toBeTruthy();
    expect(screen.getByText(/mcp:\s+servers:/)).toBeTruthy();
  });

  it("lists each server's state and error, and starting them lists their tools and approvals", async () => {
    const backend = new MockBackend();
    backend.mcpServers = [broken, notStarted];
    backend.mcpStarted = [
      broken,
      {
        ...notStarted,
        state: "ready",
        tools: [
          { name: "mcp__everything__echo", description: "Echoes back the input string", read_only: true },
          { name: "mcp__everything__toggle-simulated-logging", description: "Toggles logging\nmore", read_only: false },
        ],
      },
    ];
    renderApp(backend, "#settings");
    await screen.findByRole("heading", { name: "MCP servers" });
    await waitFor(() => serverItem("everything"));
    expect(within(serverItem("everything")).getByText("Starts when an agent activates it")).toBeTruthy();
    expect(within(serverItem("broken")).getByRole("alert").textContent).toContain("cannot run `/nope`");
    expect(within(serverItem("broken")).getByText("/data/logs/mcp/broken.log")).toBeTruthy();
    expect(within(serverItem("broken")).getByLabelText("Last log lines of broken").textContent).toContain("bad option");
    expect(within(serverItem("everything")).queryByText("Last log lines")).toBeNull();
    expect(backend.mcpListCalls.every((c) => !c.start)).toBe(true);

    await userEvent.click(screen.getByRole("button", { name: "Start servers and list their tools" }));
    const tools = await screen.findByRole("table", { name: "Tools of everything" });
    expect(backend.mcpListCalls.some((c) => c.start)).toBe(true);
    const rows = within(tools).getAllByRole("row");
    expect(rows[1]?.textContent).toContain("mcp__everything__echo");
    expect(rows[1]?.textContent).toContain("Read-only, runs freely");
    expect(rows[2]?.textContent).toContain("Asks first");
    expect(rows[2]?.textContent).not.toContain("more");
    expect(within(serverItem("everything")).getByText("Running")).toBeTruthy();
  });

  it("adds a local and a remote server from the form, and disables, enables and removes one", async () => {
    const backend = new MockBackend();
    renderApp(backend, "#settings");
    await userEvent.click(await screen.findByRole("button", { name: "Add a server" }));
    const form = screen.getByRole("form", { name: "Add an MCP server" });
    await userEvent.type(within(form).getByLabelText("Name"), "notes");
    await userEvent.type(within(form).getByLabelText(/What it is for/), "my notes");
    await userEvent.type(within(form).getByLabelText("Command"), 'npx -y server-fs "/home/me/my notes"');
    await userEvent.type(within(form).getByLabelText(/Environment/), "TOKEN=abc");
    await userEvent.click(within(form).getByRole("button", { name: "Add server" }));
    await waitFor(() => serverItem("notes"));
    expect(backend.addedMcpServers[0]).toEqual({
      name: "notes",
      description: "my notes",
      command: "npx",
      args: ["-y", "server-fs", "/home/me/my notes"],
      env: { TOKEN: "abc" },
      cwd: null,
      url: null,
      api_key_env: null,
      trusted: false,
      keep_connected: false,
    });

    await userEvent.click(screen.getByRole("button", { name: "Add a server" }));
    const remote = screen.getByRole("form", { name: "Add an MCP server" });
    await userEvent.type(within(remote).getByLabelText("Name"), "tracker");
    await userEvent.selectOptions(within(remote).getByLabelText("Runs"), "remote");
    await userEvent.type(within(remote).getByLabelText("URL"), "ftp://nope");
    await userEvent.click(within(remote).getByRole("button", { name: "Add server" }));
    expect(within(remote).getByRole("alert").textContent).toContain("http:// or https://");
    await userEvent.clear(within(remote).getByLabelText("URL"));
    await userEvent.type(within(remote).getByLabelText("URL"), "https://mcp.example.com/mcp");
    await userEvent.type(within(remote).getByLabelText(/Key variable/), "TK");
    await userEvent.click(within(remote).getByLabelText(/Trust its read-only hints/));
    await userEvent.click(within(remote).getByLabelText(/Keep it connected/));
    await userEvent.click(within(remote).getByRole("button", { name: "Add server" }));
    await waitFor(() => serverItem("tracker"));
    expect(within(serverItem("tracker")).getByText("kept connected")).toBeTruthy();
    expect(within(serverItem("notes")).queryByText("kept connected")).toBeNull();
    expect(backend.addedMcpServers[1]).toMatchObject({
      url: "https://mcp.example.com/mcp",
      api_key_env: "TK",
      command: null,
      trusted: true,
      keep_connected: true,
    });

    await userEvent.click(screen.getByRole("button", { name: "Disable MCP server tracker" }));
    await waitFor(() => expect(within(serverItem("tracker")).getByText("Disabled")).toBeTruthy());
    await userEvent.click(screen.getByRole("button", { name: "Enable MCP server tracker" }));
    await waitFor(() => expect(within(serverItem("tracker")).getByText("Starts when an agent activates it")).toBeTruthy());
    await userEvent.click(screen.getByRole("button", { name: "Remove MCP server notes" }));
    await userEvent.click(within(serverItem("notes")).getByRole("button", { name: "Confirm remove" }));
    await waitFor(() => expect(document.querySelector('[data-mcp-server="notes"]')).toBeNull());
  });

  it("says why a server could not be added and keeps the form", async () => {
    const backend = new MockBackend();
    backend.mcpServers = [notStarted];
    renderApp(backend, "#settings");
    await userEvent.click(await screen.findByRole("button", { name: "Add a server" }));
    const form = screen.getByRole("form", { name: "Add an MCP server" });
    await userEvent.type(within(form).getByLabelText("Name"), "two words");
    await userEvent.click(within(form).getByRole("button", { name: "Add server" }));
    expect(within(form).getByRole("alert").textContent).toContain("letters, digits");
    await userEvent.clear(within(form).getByLabelText("Name"));
    await userEvent.type(within(form).getByLabelText("Name"), "everything");
    await userEvent.type(within(form).getByLabelText("Command"), "x");
    await userEvent.click(within(form).getByRole("button", { name: "Add server" }));
    await waitFor(() => expect(within(form).getByRole("alert").textContent).toContain("exists already"));
    expect(backend.addedMcpServers).toEqual([]);
  });
});
