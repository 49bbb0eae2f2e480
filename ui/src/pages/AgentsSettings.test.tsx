import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { agentEntry, MockBackend } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";

function agentRow(id: string): HTMLElement {
  const row = screen.getByRole("table", { name: "Agents" }).querySelector<HTMLElement>(`[data-agent-id="${id}"]`);
  if (!row) throw new Error(`no agent row ${id}`);
  return row;
}

function backendWithAgents() {
  const backend = new MockBackend();
  backend.agents.set("reviewer", agentEntry("reviewer", { name: "Reviewer", description: "Reviews a diff", client: "gpt" }, "Review."));
  backend.agents.set(
    "scout",
    agentEntry("scout", { strength: "very_high", warnings: ["<!-- TEAM --> has no value, so it is left empty"] }, "Look."),
  );
  backend.agents.set(
    "broken",
    agentEntry("broken", { error: "agent `broken`: /data/agents/broken/meta.json: unknown variant `helper`" }),
  );
  return backend;
}

describe("Settings: agents", () => {
  it("lists every agent with its type, model and description, and a broken one with its error", async () => {
    renderApp(backendWithAgents(), "#settings");
    await screen.findByRole("table", { name: "Agents" });
    const reviewer = agentRow("reviewer");
    expect(within(reviewer).getByText("task")).toBeTruthy();
    expect(within(reviewer).getByText("gpt")).toBeTruthy();
    expect(within(reviewer).getByText("Reviews a diff")).toBeTruthy();
    expect(within(agentRow("scout")).getByText("auto, at least very high")).toBeTruthy();
    // A placeholder nothing fills: the agent works, with a warning (not a broken row).
    expect(within(agentRow("scout")).getByText("Warning: <!-- TEAM --> has no value, so it is left empty")).toBeTruthy();
    expect(agentRow("scout").className).not.toContain("is-broken");
    const main = agentRow("main");
    expect(within(main).getByText("built-in")).toBeTruthy();
    expect(within(main).getByText("chat")).toBeTruthy();
    // A built-in can be edited (into an override) but not deleted.
    expect(within(main).queryByRole("button", { name: /Delete/ })).toBeNull();
    expect(within(agentRow("broken")).getByText(/Broken: agent `broken`: \/data\/agents\/broken\/meta.json: unknown variant/)).toBeTruthy();
    expect(agentRow("broken").className).toContain("is-broken");
  });

  it("creates an agent from the form, refusing an id the engine would refuse", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend();
    renderApp(backend, "#settings");
    await user.click(await screen.findByRole("button", { name: "Add agent" }));
    const form = screen.getByRole("form", { name: "Add an agent" });
    await user.type(within(form).getByLabelText("Id"), "Code Reviewer");
    await user.type(within(form).getByLabelText("Name"), "Code reviewer");
    await user.type(within(form).getByLabelText("Description"), "Reviews a change and lists problems");
    await user.selectOptions(within(form).getByLabelText("Minimum strength"), "high");
    await user.type(within(form).getByLabelText("Prompt (AGENT.md)"), "Review carefully.");
    await user.click(within(form).getByRole("button", { name: "Add agent" }));
    expect(within(form).getByRole("alert").textContent).toContain("lowercase letters, digits and '-'");
    expect(backend.savedAgents).toEqual([]);

    await user.clear(within(form).getByLabelText("Id"));
    await user.type(within(form).getByLabelText("Id"), "code-reviewer");
    await user.click(within(form).getByRole("button", { name: "Add agent" }));
    await waitFor(() => expect(backend.savedAgents).toHaveLength(1));
    expect(backend.savedAgents[0]).toEqual({
      id: "code-reviewer",
      meta: {
        name: "Code reviewer",
        description: "Reviews a change and lists problems",
        friendly_description: null,
        instructions: null,
        type: "task",
        inject_memory: [],
        client: null,
        scope: null,
        strength: "high",
      },
      prompt: "Review carefully.",
    });
    await waitFor(() => expect(within(agentRow("code-reviewer")).getByText("Reviews a change and lists problems")).toBeTruthy());
    expect(screen.queryByRole("form", { name: "Add an agent" })).toBeNull();
  });

  it("edits a built-in into an override, shows the engine's refusal, and restores the built-in after confirmation", async () => {
    const user = userEvent.setup();
    const backend = new MockBackend();
    renderApp(backend, "#settings");
    await screen.findByRole("table", { name: "Agents" });
    await user.click(within(agentRow("main")).getByRole("button", { name: "Edit agent main" }));
    const form = await screen.findByRole("form", { name: "Edit agent main" });
    expect(within(form).getByText(/Saving writes your own copy/)).toBeTruthy();
    const prompt = within(form).getByLabelText("Prompt (AGENT.md)") as HTMLTextAreaElement;
    expect(prompt.value).toBe("You are Skald.");
    await user.type(prompt, " Be terse. <!-- INCLUDE: gone.md -->");

    backend.agentError = { code: "config", message: "agent `main`: /d/agents/main/AGENT.md: INCLUDE `gone.md`: missing" };
    await user.click(within(form).getByRole("button", { name: "Save agent" }));
    expect((await within(form).findByRole("alert")).textContent).toContain("INCLUDE `gone.md`");

    await user.click(within(form).getByRole("button", { name: "Save agent" }));
    await waitFor(() => expect(screen.queryByRole("form", { name: "Edit agent main" })).toBeNull());
    expect(backend.savedAgents.at(-1)?.prompt).toBe("You are Skald. Be terse. <!-- INCLUDE: gone.md -->");
    await waitFor(() => expect(within(agentRow("main")).getByText("replaces built-in")).toBeTruthy());

    await user.click(within(agentRow("main")).getByRole("button", { name: "Restore built-in agent main" }));
    expect(backend.deletedAgents).toEqual([]);
    await user.click(within(agentRow("main")).getByRole("button", { name: "Confirm restore built-in" }));
    expect(backend.deletedAgents).toEqual(["main"]);
  });
});
