import { act, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { FrameOrigin } from "../backend";
import { MockBackend, inboxItem, questionItem } from "../test/mockBackend";
import { renderApp } from "../test/renderApp";

const RESEARCHER: FrameOrigin = { stack_id: 42, depth: 1, label: "researcher#42", parent_tool_call_id: 10 };

describe("questions and sub-agents in the inbox", () => {
  it("lists the questions waiting for an answer and answers one", async () => {
    const backend = new MockBackend();
    backend.inboxQuestions = [questionItem(25, { session_id: 12, agent_id: "researcher" })];
    const user = userEvent.setup();
    renderApp(backend, "#inbox");
    const list = await screen.findByRole("list", { name: "Waiting questions" });
    const card = within(list).getByRole("region", { name: "Question: Which branch?" });
    expect(within(list).getByText(/session #12 · web · researcher/)).toBeTruthy();
    await user.click(within(card).getByRole("button", { name: "main" }));
    await user.click(within(card).getByRole("button", { name: "Send answer" }));
    expect(backend.answers).toEqual([{ tool_call_id: 25, answer: "main" }]);
    expect(screen.queryByText("Nothing is waiting for you")).toBeNull();
  });

  it("says which sub-agent asks, for the approvals and questions the app saw it ask", async () => {
    const backend = new MockBackend();
    renderApp(backend, "#inbox");
    await screen.findByText("Nothing is waiting for you");
    backend.inboxItems = [inboxItem(3, { agent_id: "researcher", tool_name: "execute_cmd", kind: "command", command: "make", summary: "run make" })];
    backend.inboxQuestions = [questionItem(25, { agent_id: "researcher" })];
    await act(async () => {
      backend.emit({
        seq: null,
        session_id: 7,
        source: "web",
        frame: RESEARCHER,
        event: { type: "approval_requested", request_id: 3, tool_call_id: 3, tool_name: "execute_cmd", arguments: { command: "make" }, request: { kind: "command", command: "make", workdir: "/w" } },
      });
      backend.emit({
        seq: null,
        session_id: 7,
        source: "web",
        frame: RESEARCHER,
        event: { type: "agent_question", request_id: 25, tool_call_id: 25, title: "Which branch?", question: "Main?", suggested_answers: [] },
      });
    });
    const approvals = await screen.findByRole("list", { name: "Waiting approvals" });
    expect(within(approvals).getByText(/asked by researcher#42/)).toBeTruthy();
    const detail = screen.getByRole("region", { name: "Details of execute_cmd call #3" });
    expect(within(detail).getByText("researcher#42")).toBeTruthy();
    const questions = await screen.findByRole("list", { name: "Waiting questions" });
    expect(within(questions).getByRole("region", { name: "Question from researcher#42: Which branch?" })).toBeTruthy();
  });

  it("names the asking sub-agent from the engine after a restart, with no live events seen", async () => {
    const backend = new MockBackend();
    backend.inboxItems = [
      inboxItem(3, { tool_name: "execute_cmd", kind: "command", command: "make", summary: "run make", frame_label: "scout#42>coder#47" }),
    ];
    backend.inboxQuestions = [questionItem(25, { frame_label: "scout#42" })];
    renderApp(backend, "#inbox");
    const approvals = await screen.findByRole("list", { name: "Waiting approvals" });
    // The asker has a line of its own in the row: the cut-to-fit origin line never hides it.
    const asker = within(approvals).getByText("asked by scout#42>coder#47");
    expect(asker.classList.contains("inbox-asker")).toBe(true);
    expect(within(approvals).getByText(/session #\d+ · web · main$/)).toBeTruthy();
    const questions = await screen.findByRole("list", { name: "Waiting questions" });
    expect(within(questions).getByRole("region", { name: "Question from scout#42: Which branch?" })).toBeTruthy();
  });
});

describe("MCP servers' questions in the inbox", () => {
  it("appear when a server asks, as a form answered here, and leave once answered", async () => {
    const backend = new MockBackend();
    const user = userEvent.setup();
    renderApp(backend, "#inbox");
    await screen.findByText("Nothing is waiting for you");
    backend.inboxElicitations = [
      {
        elicitation_id: 9,
        tool_call_id: 31,
        session_id: 12,
        source: "web",
        server: "github",
        created_at: "2026-12-05T12:00:00Z",
        age_secs: 2,
        form: {
          message: "Which repository?",
          fields: [
            { name: "repo", title: "Repository", description: null, kind: "text", format: null, min_length: null, max_length: null, required: true, sensitive: false, default: null },
            { name: "token", title: "Token", description: null, kind: "text", format: null, min_length: null, max_length: null, required: true, sensitive: true, default: null },
          ],
        },
      },
    ];
    await act(async () => {
      backend.emit({
        seq: null,
        session_id: 12,
        source: "web",
        frame: null,
        event: { type: "elicitation_requested", elicitation_id: 9, tool_call_id: 31, server: "github", message: "Which repository?" },
      });
    });
    const list = await screen.findByRole("list", { name: "Questions from MCP servers" });
    const card = within(list).getByRole("region", { name: "Question from the MCP server github" });
    expect(within(list).getByText(/session 12 · web/)).toBeTruthy();
    expect((within(card).getByLabelText("Token (required)") as HTMLInputElement).type).toBe("password");
    await user.type(within(card).getByLabelText("Repository (required)"), "skald");
    await user.type(within(card).getByLabelText("Token (required)"), "ghp_x");
    await user.click(within(card).getByRole("button", { name: "Submit" }));
    expect(backend.elicitationAnswers).toEqual([{ elicitation_id: 9, action: "accept", content: { repo: "skald", token: "ghp_x" } }]);
    await screen.findByText("Nothing is waiting for you");
  });
});
