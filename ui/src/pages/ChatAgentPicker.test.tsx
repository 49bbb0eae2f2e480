import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { agentEntry, emptyDetail, MockBackend } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";

const SID = 5;

function setup(agentId = "main") {
  const detail = emptyDetail(SID);
  const backend = new MockBackend({ details: [{ ...detail, session: { ...detail.session, agent_id: agentId } }] });
  backend.activeSessions.set("web", SID);
  backend.agents.set("tic", agentEntry("tic", { type: "system" }));
  backend.agents.set("broken", agentEntry("broken", { type: "chat", error: "agent `broken`: AGENT.md: missing" }));
  backend.agents.set("buddy", agentEntry("buddy", { name: "Buddy", type: "chat" }));
  return backend;
}

function picker(): HTMLSelectElement {
  return screen.getByRole("combobox", { name: "Agent" }) as HTMLSelectElement;
}

describe("Chat: agent picker", () => {
  it("shows the session's agent and offers only chat and task agents that load", async () => {
    renderApp(setup("buddy"), "#chat/web");
    await screen.findByRole("link", { name: `session #${SID}` });
    await waitFor(() => expect(picker().value).toBe("buddy"));
    const options = within(picker()).getAllByRole("option").map((o) => (o as HTMLOptionElement).value);
    expect(options).toEqual(["buddy", "generalist", "main"]);
    expect(screen.getByText("Choosing another agent starts a new session with it.")).toBeTruthy();
  });

  it("choosing another agent starts a new session running it", async () => {
    const user = userEvent.setup();
    const backend = setup();
    renderApp(backend, "#chat/web");
    await screen.findByRole("link", { name: `session #${SID}` });
    await waitFor(() => expect(picker().value).toBe("main"));
    await user.selectOptions(picker(), "generalist");
    await waitFor(() => expect(backend.newSessionAgents).toEqual(["generalist"]));
    const newId = backend.activeSessions.get("web") as number;
    expect(newId).not.toBe(SID);
    await screen.findByRole("link", { name: `session #${newId}` });
    await waitFor(() => expect(picker().value).toBe("generalist"));
  });

  it("keeps showing a session's agent that can no longer be chosen", async () => {
    renderApp(setup("broken"), "#chat/web");
    await screen.findByRole("link", { name: `session #${SID}` });
    await waitFor(() => expect(picker().value).toBe("broken"));
  });

  it("follows a session another client started and shows its agent", async () => {
    const backend = setup();
    renderApp(backend, "#chat/web");
    await screen.findByRole("link", { name: `session #${SID}` });
    await waitFor(() => expect(picker().value).toBe("main"));
    const { session_id: other } = await backend.new_session({ source: "web", agent_id: "buddy" });
    await act(async () => {
      backend.emit({ seq: null, session_id: other, source: "web", frame: null, event: { type: "new_session", session_id: other } });
    });
    await screen.findByRole("link", { name: `session #${other}` });
    await waitFor(() => expect(picker().value).toBe("buddy"));
  });

  it("offers an agent added by hand once the engine says the agents changed", async () => {
    const backend = setup();
    renderApp(backend, "#chat/web");
    await screen.findByRole("link", { name: `session #${SID}` });
    await waitFor(() => expect(picker().value).toBe("main"));
    backend.agents.set("scribe", agentEntry("scribe", { name: "Scribe", type: "task" }));
    act(() => backend.emit({ seq: null, session_id: null, source: null, frame: null, event: { type: "agents_changed" } }));
    await waitFor(() => {
      const options = within(picker()).getAllByRole("option").map((o) => (o as HTMLOptionElement).value);
      expect(options).toContain("scribe");
    });
  });
});
