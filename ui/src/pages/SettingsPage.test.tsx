import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { ApprovalRuleView } from "../backend";
import { llmClient, MockBackend, rule } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";

function clientList() {
  return screen.getByRole("list", { name: "LLM clients in fallback order" });
}

function clientNames(): string[] {
  return [...clientList().querySelectorAll("li.client-row")].map((li) => li.getAttribute("data-client") ?? "");
}

function clientRow(name: string): HTMLElement {
  const row = clientList().querySelector<HTMLElement>(`[data-client="${name}"]`);
  if (!row) throw new Error(`no client row ${name}`);
  return row;
}

function ruleRow(id: number): HTMLElement {
  const row = screen.getByRole("table", { name: "Approval rules" }).querySelector<HTMLElement>(`[data-rule-id="${id}"]`);
  if (!row) throw new Error(`no rule row ${id}`);
  return row;
}

describe("Settings page: first run", () => {
  it("redirects the first chat visit to #settings with the guide when no client exists", async () => {
    const backend = new MockBackend();
    backend.clients = [];
    renderApp(backend, "#chat/web");
    await screen.findByRole("heading", { level: 2, name: "Connect a language model to get started" });
    expect(window.location.hash).toBe("#settings");
    expect(screen.getByText("OpenAI-compatible endpoint")).toBeTruthy();
    expect(screen.getByText("http://localhost:11434/v1")).toBeTruthy();
    expect(screen.getByText("https://openrouter.ai/api/v1")).toBeTruthy();
    expect(screen.getByText(/SKALD_LLM_BASE_URL=/)).toBeTruthy();
  });

  it("stays on the chat when a client is configured", async () => {
    renderApp(new MockBackend(), "#chat/web");
    await screen.findByRole("combobox", { name: "Message" });
    expect(window.location.hash).toBe("#chat/web");
    expect(screen.queryByText("Connect a language model to get started")).toBeNull();
  });

  it("a preset fills the add form, and saving stores the client and the key", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend();
    backend.clients = [];
    renderApp(backend, "#settings");
    await user.click(await screen.findByRole("button", { name: "Fill in OpenRouter" }));
    const form = screen.getByRole("form", { name: "Add an LLM client" });
    expect((within(form).getByLabelText("Base URL") as HTMLInputElement).value).toBe("https://openrouter.ai/api/v1");
    await user.type(within(form).getByLabelText("API key"), "sk-or-secret");
    await user.click(within(form).getByRole("button", { name: "Add client" }));

    await waitFor(() => expect(clientNames()).toEqual(["openrouter"]));
    expect(backend.saveClientsCalls.at(-1)).toEqual({
      clients: [
        {
          previous_name: null,
          name: "openrouter",
          base_url: "https://openrouter.ai/api/v1",
          model: "openai/gpt-4o-mini",
          provider: "openrouter",
          api_key_env: null,
          context_window: null,
          stream: true,
        },
      ],
      fallback: ["openrouter"],
    });
    expect(backend.keyCalls).toEqual([{ client: "openrouter", key: "sk-or-secret" }]);
    // The key is never shown back, only that one is stored.
    await waitFor(() => expect(within(clientRow("openrouter")).getByText("key stored")).toBeTruthy());
    expect(document.body.textContent).not.toContain("sk-or-secret");
    expect(screen.queryByRole("form", { name: "Add an LLM client" })).toBeNull();
    // With a client in place, the guide is gone.
    expect(screen.queryByText("Connect a language model to get started")).toBeNull();
  });
});

describe("Settings page: clients", () => {
  it("shows the env client read-only with a note, and the files section", async () => {
    const backend = new MockBackend();
    backend.clients = [
      llmClient("env", { from_env: true, has_api_key: true, base_url: "http://127.0.0.1:9999/v1", model: "fake-model" }),
      llmClient("local"),
    ];
    renderApp(backend, "#settings");
    await screen.findByRole("list", { name: "LLM clients in fallback order" });
    const env = clientRow("env");
    expect(within(env).getByText("from environment")).toBeTruthy();
    expect(within(env).getByText(/read-only here/)).toBeTruthy();
    expect(within(env).queryByRole("button", { name: /Edit/ })).toBeNull();
    expect(within(env).queryByRole("button", { name: /Move/ })).toBeNull();
    expect(within(clientRow("local")).getByRole("button", { name: "Edit local" })).toBeTruthy();
    expect(within(clientRow("local")).getByText("no key")).toBeTruthy();
    expect(screen.getByText("/home/me/.local/share/skald/config.yml")).toBeTruthy();
    expect(screen.getByText("/home/me/.local/share/skald")).toBeTruthy();
  });

  it("moves a client in the fallback order and saves the new order", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend();
    backend.clients = [llmClient("a"), llmClient("b"), llmClient("c")];
    renderApp(backend, "#settings");
    await screen.findByRole("list", { name: "LLM clients in fallback order" });
    expect((screen.getByRole("button", { name: "Move a up" }) as HTMLButtonElement).disabled).toBe(true);
    await user.click(screen.getByRole("button", { name: "Move c up" }));
    await waitFor(() => expect(clientNames()).toEqual(["a", "c", "b"]));
    expect(backend.saveClientsCalls.at(-1)?.fallback).toEqual(["a", "c", "b"]);
    await user.click(screen.getByRole("button", { name: "Move a down" }));
    await waitFor(() => expect(clientNames()).toEqual(["c", "a", "b"]));
  });

  it("refuses to save over a config.yml changed since the page loaded, then shows the file as it is", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend();
    backend.clients = [llmClient("a"), llmClient("b")];
    renderApp(backend, "#settings");
    await screen.findByRole("list", { name: "LLM clients in fallback order" });
    // A client is added to config.yml by hand while the page is open.
    backend.clients = [...backend.clients, llmClient("by-hand")];
    backend.configRevision += 1;
    await user.click(screen.getByRole("button", { name: "Move b up" }));
    expect(await screen.findByText(/changed since these settings were loaded/)).toBeTruthy();
    expect(backend.saveClientsRevisions).toEqual(["r1"]);
    // Nothing was written over it, and the page now lists the hand-added client.
    await waitFor(() => expect(clientNames()).toEqual(["a", "b", "by-hand"]));
    await user.click(screen.getByRole("button", { name: "Move b up" }));
    await waitFor(() => expect(clientNames()).toEqual(["b", "a", "by-hand"]));
    expect(backend.saveClientsRevisions).toEqual(["r1", "r2"]);
  });

  it("edits a client in place and rejects an invalid base URL before saving", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend();
    renderApp(backend, "#settings");
    await user.click(await screen.findByRole("button", { name: "Edit local" }));
    const form = screen.getByRole("form", { name: "Edit client “local”" });
    const url = within(form).getByLabelText("Base URL");
    await user.clear(url);
    await user.type(url, "localhost:1234");
    await user.click(within(form).getByRole("button", { name: "Save client" }));
    expect(within(form).getByRole("alert").textContent).toMatch(/must start with http/);
    expect(backend.saveClientsCalls).toHaveLength(0);

    await user.clear(url);
    await user.type(url, "http://localhost:1234/v1");
    await user.clear(within(form).getByLabelText("Model"));
    await user.type(within(form).getByLabelText("Model"), "qwen");
    await user.click(within(form).getByRole("button", { name: "Save client" }));
    await waitFor(() => expect(within(clientRow("local")).getByText("qwen")).toBeTruthy());
    expect(backend.saveClientsCalls[0]?.clients[0]).toMatchObject({ name: "local", base_url: "http://localhost:1234/v1", model: "qwen" });
    // No key typed: the keychain is left alone.
    expect(backend.keyCalls).toEqual([]);
  });

  it("an edit carries the client's name for a rename and can turn streaming off", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend();
    backend.clients = [llmClient("local"), llmClient("hosted", { stream: false })];
    renderApp(backend, "#settings");
    await screen.findByRole("list", { name: "LLM clients in fallback order" });
    expect(within(clientRow("hosted")).getByText(/replies not streamed/)).toBeTruthy();
    expect(within(clientRow("local")).queryByText(/replies not streamed/)).toBeNull();

    await user.click(screen.getByRole("button", { name: "Edit local" }));
    const form = screen.getByRole("form", { name: "Edit client “local”" });
    const stream = within(form).getByLabelText("Stream replies") as HTMLInputElement;
    expect(stream.checked).toBe(true);
    await user.click(stream);
    await user.clear(within(form).getByLabelText("Name"));
    await user.type(within(form).getByLabelText("Name"), "desk");
    await user.click(within(form).getByRole("button", { name: "Save client" }));

    await waitFor(() => expect(clientNames()).toEqual(["desk", "hosted"]));
    expect(backend.saveClientsCalls.at(-1)?.clients).toEqual([
      expect.objectContaining({ previous_name: "local", name: "desk", stream: false }),
      expect.objectContaining({ previous_name: "hosted", name: "hosted", stream: false }),
    ]);
    expect(within(clientRow("desk")).getByText(/replies not streamed/)).toBeTruthy();
  });

  it("shows the engine's validation error inside the form", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend();
    backend.saveClientsError = { code: "invalid_input", message: "config.yml: llm.clients[1].model is empty" };
    renderApp(backend, "#settings");
    await user.click(await screen.findByRole("button", { name: "Add client" }));
    const form = screen.getByRole("form", { name: "Add an LLM client" });
    await user.type(within(form).getByLabelText("Name"), "local");
    await user.type(within(form).getByLabelText("Base URL"), "http://x/v1");
    await user.type(within(form).getByLabelText("Model"), "m");
    await user.click(within(form).getByRole("button", { name: "Add client" }));
    // A duplicate name is caught before anything is sent.
    expect(within(form).getByRole("alert").textContent).toContain("already exists");
    await user.clear(within(form).getByLabelText("Name"));
    await user.type(within(form).getByLabelText("Name"), "second");
    await user.click(within(form).getByRole("button", { name: "Add client" }));
    await waitFor(() => expect(within(form).getByRole("alert").textContent).toContain("llm.clients[1].model is empty"));
  });

  it("tests a connection and shows models and latency, or the error", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend();
    backend.clients = [llmClient("local", { model: "llama3.2" }), llmClient("cloud", { model: "gpt-x" })];
    backend.connectionTests.set("local", { ok: true, models: ["llama3.2", "qwen2.5"], model_listed: true, error: null, latency_ms: 42 });
    backend.connectionTests.set("cloud", { ok: false, models: [], model_listed: false, error: "connection refused", latency_ms: 3 });
    renderApp(backend, "#settings");
    await screen.findByRole("list", { name: "LLM clients in fallback order" });
    await user.click(within(clientRow("local")).getByRole("button", { name: "Test connection" }));
    await waitFor(() => expect(within(clientRow("local")).getByText(/Connected in 42 ms · 2 models/)).toBeTruthy());
    expect(within(within(clientRow("local")).getByRole("list", { name: "Models" })).getByText("qwen2.5")).toBeTruthy();
    await user.click(within(clientRow("cloud")).getByRole("button", { name: "Test connection" }));
    await waitFor(() => expect(within(clientRow("cloud")).getByRole("alert").textContent).toContain("connection refused"));
    expect(backend.testCalls).toEqual(["local", "cloud"]);
  });

  it("removes a stored key without ever showing it", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend();
    backend.keys.set("local", "sk-hidden");
    renderApp(backend, "#settings");
    await waitFor(() => expect(within(clientRow("local")).getByText("key stored")).toBeTruthy());
    await user.click(screen.getByRole("button", { name: "Edit local" }));
    const form = screen.getByRole("form", { name: "Edit client “local”" });
    expect((within(form).getByLabelText("API key") as HTMLInputElement).value).toBe("");
    await user.click(within(form).getByRole("button", { name: "Remove stored key" }));
    await waitFor(() => expect(within(clientRow("local")).getByText("no key")).toBeTruthy());
    expect(backend.keyCalls).toEqual([{ client: "local", key: null }]);
    expect(document.body.textContent).not.toContain("sk-hidden");
  });
});

/** The settings page on `rules`, with the "Add a rule" form open. */
async function openNewRuleForm(rules: ApprovalRuleView[]) {
  const user = userEvent.setup();
  const backend = new MockBackend();
  backend.rules = [...rules];
  renderApp(backend, "#settings");
  await screen.findByRole("table", { name: "Approval rules" });
  await user.click(screen.getByRole("button", { name: "Add rule" }));
  return { user, backend, form: screen.getByRole("form", { name: "Add a rule" }) };
}

describe("Settings page: approval rules", () => {
  const seeded = [
    rule(1, { tool_pattern: "execute_cmd", priority: 10, seed_key: "require_execute_cmd" }),
    rule(2, { tool_pattern: "write_file", priority: 20, seed_key: "require_write_file" }),
    rule(3, { tool_pattern: "read_file", path_pattern: "secrets/*", action: "deny", priority: 30, note: "keep out" }),
  ];

  it("lists rules in priority order with the seeded defaults marked", async () => {
    const backend = new MockBackend();
    backend.rules = [...seeded];
    renderApp(backend, "#settings");
    const table = await screen.findByRole("table", { name: "Approval rules" });
    const tools = [...table.querySelectorAll("tbody tr")].map((tr) => tr.querySelector("td:nth-child(2) code")?.textContent);
    expect(tools).toEqual(["execute_cmd", "write_file", "read_file"]);
    expect(within(ruleRow(1)).getByText("default")).toBeTruthy();
    expect(within(ruleRow(3)).queryByText("default")).toBeNull();
    expect(within(ruleRow(3)).getByText("deny")).toBeTruthy();
    expect(within(ruleRow(3)).getByText("secrets/*")).toBeTruthy();
  });

  it("adds a rule with the chosen action; it lands in priority order", async () => {
    const { user, backend, form } = await openNewRuleForm(seeded);
    await user.type(within(form).getByLabelText("Tool pattern"), "mcp__github__*");
    await user.selectOptions(within(form).getByLabelText("Action"), "allow");
    await user.clear(within(form).getByLabelText("Priority (lower wins)"));
    await user.type(within(form).getByLabelText("Priority (lower wins)"), "15");
    await user.click(within(form).getByRole("button", { name: "Add rule" }));
    await waitFor(() => expect(screen.queryByRole("form", { name: "Add a rule" })).toBeNull());
    expect(backend.ruleCalls[0]).toEqual({
      id: null,
      input: { group_id: "default", tool_pattern: "mcp__github__*", path_pattern: null, agent_id: null, source: null, action: "allow", priority: 15, note: null },
    });
    const table = screen.getByRole("table", { name: "Approval rules" });
    await waitFor(() => {
      const tools = [...table.querySelectorAll("tbody tr")].map((tr) => tr.querySelector("td:nth-child(2) code")?.textContent);
      expect(tools).toEqual(["execute_cmd", "mcp__github__*", "write_file", "read_file"]);
    });
  });

  it("says where a relative path pattern applies: allow rules only in the data dir", async () => {
    const { user, form } = await openNewRuleForm(seeded);
    const path = within(form).getByLabelText("Path pattern (optional)");
    const hint = () => document.getElementById(path.getAttribute("aria-describedby") ?? "")?.textContent ?? "";
    expect(hint()).toContain("matches in Skald's data dir and in the session's working directory");
    await user.selectOptions(within(form).getByLabelText("Action"), "allow");
    expect(hint()).toContain("means a place in Skald's data dir only");
    expect(hint()).toContain("write an absolute path to allow a place in a project");
  });

  it("shows a conflict from the engine in the form and keeps the input", async () => {
    const { user, backend, form } = await openNewRuleForm([...seeded, rule(4, { tool_pattern: "*", priority: 999999 })]);
    backend.ruleError = { code: "conflict", message: "group default already has a different `*` catch-all rule" };
    await user.type(within(form).getByLabelText("Tool pattern"), "*");
    await user.selectOptions(within(form).getByLabelText("Action"), "deny");
    await user.click(within(form).getByRole("button", { name: "Add rule" }));
    await waitFor(() => expect(within(form).getByRole("alert").textContent).toContain("Conflict: group default already has"));
    expect((within(form).getByLabelText("Tool pattern") as HTMLInputElement).value).toBe("*");
    expect(screen.getByRole("form", { name: "Add a rule" })).toBeTruthy();
  });

  it("edits a seeded rule's action and deletes a rule after confirming", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend();
    backend.rules = [...seeded];
    renderApp(backend, "#settings");
    await screen.findByRole("table", { name: "Approval rules" });
    await user.click(screen.getByRole("button", { name: "Edit rule 2" }));
    const form = screen.getByRole("form", { name: "Edit rule #2" });
    expect((within(form).getByLabelText("Tool pattern") as HTMLInputElement).value).toBe("write_file");
    await user.selectOptions(within(form).getByLabelText("Action"), "allow");
    await user.click(within(form).getByRole("button", { name: "Save rule" }));
    await waitFor(() => expect(within(ruleRow(2)).getByText("allow")).toBeTruthy());
    expect(backend.ruleCalls[0]).toMatchObject({ id: 2, input: { action: "allow", tool_pattern: "write_file", priority: 20 } });
    expect(within(ruleRow(2)).getByText("default")).toBeTruthy();

    await user.click(screen.getByRole("button", { name: "Delete rule 3" }));
    expect(backend.deletedRules).toEqual([]);
    await user.click(within(ruleRow(3)).getByRole("button", { name: "Confirm delete" }));
    await waitFor(() => expect(screen.getByRole("table", { name: "Approval rules" }).querySelector('[data-rule-id="3"]')).toBeNull());
    expect(backend.deletedRules).toEqual([3]);
  });
});
