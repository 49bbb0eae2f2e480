import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { fileDiff } from "../test/mockBackend";
import { ApprovalCard, type ApprovalView } from "./ApprovalCard";

function view(over: Partial<ApprovalView> = {}): ApprovalView {
  return {
    toolCallId: 9,
    kind: "write",
    toolName: "write_file",
    arguments: { path: "src/main.rs" },
    path: "src/main.rs",
    diff: fileDiff(),
    command: null,
    workdir: null,
    ...over,
  };
}

describe("approval card", () => {
  it("approves with no note (the shell names the decider)", async () => {
    const user = userEvent.setup();
    const onDecide = vi.fn(async () => ({}));
    render(<ApprovalCard approval={view()} onDecide={onDecide} />);
    expect(screen.getByRole("figure", { name: "Changes to src/main.rs" })).toBeTruthy();
    await user.click(screen.getByRole("button", { name: "Approve" }));
    expect(onDecide).toHaveBeenCalledWith(9, {
      approved: true,
      note: null,
      bypass_secs: null,
      bypass_scope: null,
    });
    expect(await screen.findByText(/Approved, waiting for the agent/)).toBeTruthy();
    expect((screen.getByRole("button", { name: "Reject" }) as HTMLButtonElement).disabled).toBe(true);
  });

  it("rejects with the typed note", async () => {
    const user = userEvent.setup();
    const onDecide = vi.fn(async () => ({}));
    render(<ApprovalCard approval={view()} onDecide={onDecide} />);
    await user.type(screen.getByLabelText(/Note for the agent/), "  use the other file  ");
    await user.click(screen.getByRole("button", { name: "Reject" }));
    expect(onDecide).toHaveBeenCalledWith(9, expect.objectContaining({ approved: false, note: "use the other file" }));
  });

  it("shows the command line and working directory for execute_cmd", () => {
    render(
      <ApprovalCard
        approval={view({ kind: "command", toolName: "execute_cmd", diff: null, command: "cargo test", workdir: "/repo" })}
        onDecide={async () => ({})}
      />,
    );
    expect(screen.getByLabelText("Command line").textContent).toContain("cargo test");
    expect(screen.getByText("/repo")).toBeTruthy();
  });

  it("shows tool name and pretty arguments for other tools", () => {
    render(
      <ApprovalCard approval={view({ kind: "tool", toolName: "mcp__gh__create_issue", diff: null, arguments: { title: "Bug" } })} onDecide={async () => ({})} />,
    );
    expect(screen.getByRole("heading", { name: "Approve mcp__gh__create_issue?" })).toBeTruthy();
    expect(screen.getByLabelText("Arguments").textContent).toContain('"title": "Bug"');
  });

  it("says so when the decision cannot be sent and lets you try again", async () => {
    const user = userEvent.setup();
    const onDecide = vi.fn().mockRejectedValueOnce({ code: "conflict", message: "already decided" }).mockResolvedValue({});
    render(<ApprovalCard approval={view()} onDecide={onDecide} />);
    await user.click(screen.getByRole("button", { name: "Approve" }));
    expect((await screen.findByRole("alert")).textContent).toContain("already decided");
    await user.click(screen.getByRole("button", { name: "Approve" }));
    expect(onDecide).toHaveBeenCalledTimes(2);
  });
});
