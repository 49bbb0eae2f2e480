import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { ReconcileChoice } from "../backend";
import { interruptedCall } from "../test/mockBackend";
import { InterruptedCallBar } from "./InterruptedCallBar";

describe("interrupted call bar", () => {
  it.each([
    ["It ran", "ran"],
    ["It did not run", "did_not_run"],
    ["Run it again", "run_again"],
  ] as const)("%s sends %s for the call", async (button, choice) => {
    const user = userEvent.setup();
    const onReconcile = vi.fn((_id: number, _c: ReconcileChoice) => Promise.resolve());
    render(<InterruptedCallBar call={interruptedCall(7)} onReconcile={onReconcile} />);
    const bar = screen.getByRole("group", { name: "Interrupted call execute_cmd make install" });
    expect(bar.textContent).toContain("may have run");
    await user.click(screen.getByRole("button", { name: button }));
    expect(onReconcile).toHaveBeenCalledWith(7, choice);
  });

  it("shows what the user said instead of the buttons once reconciled, with a re-run's result", () => {
    const { unmount } = render(
      <InterruptedCallBar call={interruptedCall(7, { choice: "ran" })} onReconcile={() => Promise.resolve()} />,
    );
    expect(screen.queryByRole("button")).toBeNull();
    expect(screen.getByRole("group", { name: /Interrupted call/ }).textContent).toContain("You said it ran");
    unmount();
    render(
      <InterruptedCallBar
        call={interruptedCall(7, { choice: "run_again", rerun_status: "failed", rerun_result: "exit code 2" })}
        onReconcile={() => Promise.resolve()}
      />,
    );
    expect(screen.getByRole("group", { name: /Interrupted call/ }).textContent).toContain("It failed; the model got the error.");
    expect(screen.getByText("exit code 2")).toBeTruthy();
  });

  it("says why a choice was refused and keeps the buttons", async () => {
    const user = userEvent.setup();
    const refused = { code: "invalid_input", message: "the approval rules deny running `execute_cmd` again" };
    render(<InterruptedCallBar call={interruptedCall(7)} onReconcile={() => Promise.reject(refused)} />);
    await user.click(screen.getByRole("button", { name: "Run it again" }));
    expect((await screen.findByRole("alert")).textContent).toContain("deny running");
    expect(screen.getByRole("button", { name: "It ran" })).toBeTruthy();
  });
});
