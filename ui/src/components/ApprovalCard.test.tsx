import { render, screen, within } from "@testing-library/react";
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
     
      bypass: null,
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

  it("shows a job an agent asks to schedule: schedule in words, next runs and the whole prompt", () => {
    const args = {
      mode: "cron",
      title: "Morning digest",
      agent_id: "scout",
      prompt: "summarise the news\nand list three headlines",
      schedule: { kind: "cron", expr: "0 0 9 * * 1-5 *" },
      timezone: "Europe/Berlin",
      client: "fast",
      working_directory: "/repo",
      schedule_in_words: "every weekday at 09:00, Europe/Berlin",
      next_runs: ["2026-05-05T09:00:00+02:00", "2026-05-06T09:00:00+02:00"],
      run_context: { allow_fs_writes: ["/repo"] },
    };
    render(
      <ApprovalCard
        approval={view({ kind: "tool", toolName: "execute_task", arguments: args, path: null, diff: null })}
        onDecide={vi.fn()}
      />,
    );
    expect(screen.getByText(/every weekday at 09:00, Europe\/Berlin/)).toBeTruthy();
    expect(screen.getByText("Morning digest")).toBeTruthy();
    expect(screen.getByText(/2026-05-05T09:00:00\+02:00, 2026-05-06T09:00:00\+02:00/)).toBeTruthy();
    expect(screen.getByText(/"allow_fs_writes":\["\/repo"\]/)).toBeTruthy();
    expect(screen.getByLabelText("Prompt").textContent).toBe("summarise the news\nand list three headlines");
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

  it("shows a bidi override and terminal escapes in a command as marked tokens", () => {
    // Displayed raw, the override reverses the rest of the line and the escapes would erase
    // what came before them in a terminal: what the person reads is not what runs.
    const command = "echo hello \u202E; rm -rf ~ #\r\x1b[2Kcargo test";
    render(
      <ApprovalCard
        approval={view({ kind: "command", toolName: "execute_cmd", diff: null, command, workdir: "/repo\u200B" })}
        onDecide={async () => ({})}
      />,
    );
    const line = screen.getByLabelText("Command line");
    const marks = [...line.querySelectorAll(".hidden-char")];
    expect(marks.map((m) => m.textContent)).toEqual(["⟨U+202E⟩", "\\r", "\\e"]);
    expect(marks[0]?.getAttribute("title")).toContain("RIGHT-TO-LEFT OVERRIDE");
    expect(marks[1]?.getAttribute("title")).toContain("carriage return");
    expect(line.textContent).toBe("$ echo hello ⟨U+202E⟩; rm -rf ~ #\\r\\e[2Kcargo test");
    expect(screen.getByText("⟨U+200B⟩").closest("code")?.textContent).toBe("/repo⟨U+200B⟩");
  });

  it("shows a path with a newline as one path, in the title and the body", () => {
    const path = "notes.md\n/home/me/.ssh/authorized_keys";
    render(<ApprovalCard approval={view({ kind: "write", diff: null, path, arguments: { path } })} onDecide={async () => ({})} />);
    expect(screen.getByRole("heading").textContent).toBe("Approve writing notes.md\\n/home/me/.ssh/authorized_keys?");
    expect(screen.getByText(/^Writes/).textContent).toContain("notes.md\\n/home/me/.ssh/authorized_keys (diff not available)");
  });

  it("shows tool name and pretty arguments for other tools", () => {
    render(
      <ApprovalCard approval={view({ kind: "tool", toolName: "mcp__gh__create_issue", diff: null, arguments: { title: "Bug" } })} onDecide={async () => ({})} />,
    );
    expect(screen.getByRole("heading", { name: "Approve mcp__gh__create_issue?" })).toBeTruthy();
    expect(screen.getByLabelText("Arguments").textContent).toContain('"title": "Bug"');
  });

  it("names the file a tool call acts on, as the engine resolved it", () => {
    render(
      <ApprovalCard
        approval={view({ kind: "tool", toolName: "read_file", diff: null, arguments: { path: "docs/id_key" }, path: "/home/me/.ssh/id_key" })}
        onDecide={async () => ({})}
      />,
    );
    expect(screen.getByText("/home/me/.ssh/id_key").tagName).toBe("CODE");
    expect(screen.getByLabelText("Arguments").textContent).toContain('"path": "docs/id_key"');
  });

  it("offers a bypass only with the scopes that fit the call, for the three durations", async () => {
    const user = userEvent.setup();
    const onDecide = vi.fn(async () => ({}));
    render(
      <ApprovalCard
        approval={view({ kind: "command", toolName: "execute_cmd", diff: null, command: "make", toolCategory: "shell", mcpServer: null })}
        onDecide={onDecide}
      />,
    );
    const options = (label: string) => within(screen.getByLabelText(label)).getAllByRole("option").map((o) => o.textContent);
    expect(options("Covers")).toEqual(["shell tools", "All tools"]);
    expect(options("For")).toEqual(["15 minutes", "1 hour", "This session (until /new, at most 24 h)"]);
    await user.selectOptions(screen.getByLabelText("Covers"), "All tools");
    await user.selectOptions(screen.getByLabelText("For"), "1 hour");
    await user.click(screen.getByRole("button", { name: "Approve + bypass" }));
    expect(onDecide).toHaveBeenCalledWith(9, {
      approved: true,
      note: null,
      bypass: { duration: "one_hour", scope: "all" },
    });
    // Sent: the choice goes away with the card's buttons.
    expect(await screen.findByText(/Approved, waiting for the agent/)).toBeTruthy();
    expect(screen.queryByRole("button", { name: "Approve + bypass" })).toBeNull();
  });

  it("offers no bypass while the call's category is not known", () => {
    render(<ApprovalCard approval={view()} onDecide={async () => ({})} />);
    expect(screen.queryByRole("group", { name: /allow similar calls/ })).toBeNull();
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
