import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { DebugMessage, SessionDetail } from "../backend";
import { MockBackend } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";

const T = "2026-12-01T10:00:00Z";
const at = { created_at: T, content_chars: 0, result_chars: 0, truncated: false };

const spawn: DebugMessage = { kind: "tool", tool_call_id: 10, message_id: 2, name: "execute_task", label: "execute_task researcher", arguments: {}, status: "running", result: null, diff: null, media: { media: [], links: [] }, stack_id: 1, depth: 0, ...at };
const rows: DebugMessage[] = [
  { kind: "user", message_id: 1, content: "research", is_synthetic: false, failed: false, stack_id: 1, depth: 0, ...at },
  spawn,
  { kind: "agent", stack_id: 42, agent_id: "researcher", depth: 1, prompt: "find it", parent_tool_call_id: 10 },
  { kind: "thinking", message_id: 3, content: "Delegating.", reasoning: null, is_synthetic: false, input_tokens: 10, output_tokens: 2, cost_usd: null, stack_id: 42, depth: 1, ...at },
  { kind: "tool", tool_call_id: 30, message_id: 3, name: "execute_subtask", label: "execute_subtask coder", arguments: {}, status: "done", result: "ok", diff: null, media: { media: [], links: [] }, stack_id: 42, depth: 1, ...at },
  { kind: "agent", stack_id: 44, agent_id: "coder", depth: 2, prompt: null, parent_tool_call_id: 30 },
  { kind: "assistant", message_id: 4, content: "Coded.", reasoning: null, is_synthetic: false, input_tokens: 5, output_tokens: 1, cost_usd: null, stack_id: 44, depth: 2, ...at },
  { kind: "agent_end", stack_id: 44, agent_id: "coder", depth: 2 },
  { kind: "agent_end", stack_id: 42, agent_id: "researcher", depth: 1 },
];

function setup(messages: DebugMessage[]) {
  const detail: SessionDetail = {
    session: { id: 7, title: null, source: "web", agent_id: "main", is_interactive: true, is_ephemeral: false, created_at: T },
    messages,
    pending_inputs: [],
    turn_ends: [],
    tasks: [],
  };
  return new MockBackend({ details: [detail] });
}

const list = () => screen.getByRole("list", { name: "Session messages" });
function boxes(kind: string): HTMLElement[] {
  return [...list().querySelectorAll<HTMLElement>(`[data-kind="${kind}"] > .tree-row`)];
}

describe("sub-agents in the debug tree", () => {
  it("names each child by its origin label under its spawning call, with how it stands", async () => {
    renderApp(setup(rows), "#session/7");
    await screen.findByRole("list", { name: "Session messages" });
    const [researcher, coder] = boxes("agent") as [HTMLElement, HTMLElement];
    expect(within(researcher).getByText("researcher#42")).toBeTruthy();
    expect(researcher.textContent).toContain("by call #10");
    // Its spawning call still runs: so does the child.
    expect(within(researcher).getByText("running")).toBeTruthy();
    expect(within(coder).getByText("researcher#42>coder#44")).toBeTruthy();
    expect(within(coder).getByText("done")).toBeTruthy();
    // Every row of a child says whose it is, as the live stream does.
    const [, childCall] = boxes("tool") as [HTMLElement, HTMLElement];
    expect(within(childCall).getByText("researcher#42")).toBeTruthy();
    const [answer] = boxes("assistant") as [HTMLElement];
    expect(within(answer).getByText("researcher#42>coder#44")).toBeTruthy();
    const [root] = boxes("user") as [HTMLElement];
    expect(root.querySelector(".origin")).toBeNull();
  });

  it("shows a running child's new rows inside its frame, not after it", async () => {
    const backend = setup(rows);
    renderApp(backend, "#session/7");
    await screen.findByRole("list", { name: "Session messages" });
    const progress: DebugMessage = { kind: "assistant", message_id: 5, content: "Still reading.", reasoning: null, is_synthetic: false, input_tokens: 1, output_tokens: 1, cost_usd: null, stack_id: 42, depth: 1, ...at };
    const next = [...rows.slice(0, 8), progress, rows[8] as DebugMessage];
    backend.details.set(7, { ...(backend.details.get(7) as SessionDetail), messages: next });
    backend.emit({
      seq: null,
      session_id: 7,
      source: "web",
      frame: { stack_id: 42, depth: 1, label: "researcher#42", parent_tool_call_id: 10 },
      event: { type: "done", message_id: 5, stack_id: 42, content: "Still reading.", input_tokens: 1, output_tokens: 1 , cost_usd: null},
    });
    expect(await screen.findByText("Still reading.")).toBeTruthy();
    const kinds = [...list().children].map((li) => li.getAttribute("data-kind"));
    expect(kinds).toEqual(["user", "tool", "agent", "thinking", "tool", "agent", "assistant", "agent_end", "assistant", "agent_end"]);
  });
});
