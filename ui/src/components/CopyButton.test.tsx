import { act, fireEvent, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { CodeBlock } from "./CodeBlock";
import { COPY_FEEDBACK_MS, CopyButton } from "./CopyButton";

describe("copy button", () => {
  it("copies a code block by mouse, says so, and is named after what it copies", async () => {
    const user = userEvent.setup();
    render(<CodeBlock code={"fn main() {\n    run();\n}"} fence="rust" />);
    const button = screen.getByRole("button", { name: "Copy rust code" });
    await user.click(button);
    expect(await navigator.clipboard.readText()).toBe("fn main() {\n    run();\n}");
    expect(button.textContent).toMatch(/^Copied/);
    expect(screen.getByRole("status").textContent).toBe("Copied to the clipboard");
  });

  it("works from the keyboard", async () => {
    const user = userEvent.setup();
    render(<CodeBlock code="echo hi" fence="sh" />);
    // The code itself is a tab stop (to scroll long lines), then the copy button before it.
    await user.tab();
    expect(document.activeElement).toBe(screen.getByRole("button", { name: "Copy sh code" }));
    await user.keyboard("{Enter}");
    expect(await navigator.clipboard.readText()).toBe("echo hi");
    expect(screen.getByRole("status").textContent).toBe("Copied to the clipboard");
    await user.tab();
    expect(document.activeElement?.tagName).toBe("PRE");
  });

  it("says when the clipboard refuses, then reads Copy again", async () => {
    vi.useFakeTimers();
    const writeText = vi.fn().mockRejectedValue(new Error("denied"));
    const original = Object.getOwnPropertyDescriptor(navigator, "clipboard");
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    try {
      render(<CopyButton text="x" what="log" />);
      await act(async () => fireEvent.click(screen.getByRole("button", { name: "Copy log" })));
      expect(writeText).toHaveBeenCalledWith("x");
      expect(screen.getByRole("button").textContent).toMatch(/^Copy failed/);
      expect(screen.getByRole("status").textContent).toBe("Could not copy to the clipboard");
      await act(async () => vi.advanceTimersByTime(COPY_FEEDBACK_MS));
      expect(screen.getByRole("button", { name: "Copy log" })).toBeTruthy();
      expect(screen.getByRole("status").textContent).toBe("");
    } finally {
      vi.useRealTimers();
      if (original) Object.defineProperty(navigator, "clipboard", original);
      else Reflect.deleteProperty(navigator, "clipboard");
    }
  });
});
