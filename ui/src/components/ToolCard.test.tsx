import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { ToolItem } from "../backend";
import { fileDiff } from "../test/mockBackend";
import { RESULT_PREVIEW_CHARS, ToolCard } from "./ToolCard";

function tool(over: Partial<ToolItem> = {}): ToolItem {
  return {
    kind: "tool",
    key: "tool-1",
    toolCallId: 1,
    name: "read_file",
    label: "Read src/lib.rs",
    arguments: { path: "src/lib.rs" },
    status: "done",
    result: "file body",
    resultType: "string",
    error: null,
    approval: null,
    question: null,
    diff: null,
    depth: 0,
    truncated: false,
    resultChars: 9,
    ...over,
  };
}

describe("tool card", () => {
  it("shows hidden characters in the label, arguments, error and result as tokens", async () => {
    const user = userEvent.setup();
    render(
      <ToolCard
        tool={tool({
          name: "execute_cmd",
          label: "execute_cmd: echo ok\u202E",
          arguments: { command: "echo ok\u202E" },
          status: "error",
          error: "exit 1\r\x1b[2Kall fine",
          result: "\x1b[31mred\x1b[0m\nline\u200B",
          resultChars: 20,
        })}
      />,
    );
    const marks = (el: Element | null | undefined) => [...(el?.querySelectorAll(".hidden-char") ?? [])].map((m) => m.textContent);
    expect(marks(document.querySelector(".tool-label"))).toEqual(["⟨U+202E⟩"]);
    expect(screen.getByRole("article").getAttribute("aria-label")).toBe("Tool execute_cmd: echo ok⟨U+202E⟩, error");
    // JSON escapes controls itself, not a bidi override.
    expect(marks(screen.getByText("Arguments").parentElement)).toEqual(["⟨U+202E⟩"]);
    expect(marks(document.querySelector("p.tool-error"))).toEqual(["\\r", "\\e"]);
    await user.click(screen.getByRole("button", { name: /Show result/ }));
    expect(marks(document.querySelector(".tool-result"))).toEqual(["\\e", "\\e", "⟨U+200B⟩"]);
  });

  it("shows the change a finished write made as a diff, and none for other calls", () => {
    const { unmount } = render(
      <ToolCard tool={tool({ name: "edit_file", label: "edit_file src/main.rs", diff: fileDiff() })} />,
    );
    const change = screen.getByRole("figure", { name: "Changes to src/main.rs" });
    expect(change.textContent).toContain('println!("goodbye");');
    expect(screen.getByText("+2")).toBeTruthy();
    unmount();
    render(<ToolCard tool={tool()} />);
    expect(screen.queryByRole("figure")).toBeNull();
  });

  it("shows the full label, a status and pretty arguments", () => {
    render(<ToolCard tool={tool({ status: "running", result: null })} />);
    const card = screen.getByRole("article", { name: "Tool Read src/lib.rs, running" });
    expect(card.dataset.status).toBe("running");
    expect(card.className).toContain("tool-running");
    expect(screen.getByText(/"path": "src\/lib.rs"/)).toBeTruthy();
    expect(screen.queryByRole("button", { name: /Show result/ })).toBeNull();
  });

  it.each([
    ["error", "error"],
    ["cancelled", "cancelled"],
    ["rejected", "rejected"],
    ["pending", "waiting for approval"],
  ] as const)("marks a %s call", (status, text) => {
    render(<ToolCard tool={tool({ status, error: status === "error" ? "boom" : null })} />);
    expect(screen.getByRole("article").dataset.status).toBe(status);
    expect(screen.getByText(text)).toBeTruthy();
  });

  it("shows an error text for a failed call", () => {
    render(<ToolCard tool={tool({ status: "error", result: null, error: "No such file" })} />);
    expect(screen.getByText("No such file")).toBeTruthy();
  });

  it("keeps the result folded until asked, and pretty-prints JSON", async () => {
    const user = userEvent.setup();
    render(<ToolCard tool={tool({ result: '{"ok":true}', resultType: "json" })} />);
    expect(screen.queryByText(/"ok": true/)).toBeNull();
    const toggle = screen.getByRole("button", { name: /Show result/ });
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    await user.click(toggle);
    expect(screen.getByText(/"ok": true/)).toBeTruthy();
    await user.click(screen.getByRole("button", { name: /Hide result/ }));
    expect(screen.queryByText(/"ok": true/)).toBeNull();
  });

  it("truncates long output with Show all", async () => {
    const user = userEvent.setup();
    const long = `${"a".repeat(RESULT_PREVIEW_CHARS)}TAIL-END`;
    render(<ToolCard tool={tool({ result: long })} />);
    await user.click(screen.getByRole("button", { name: /Show result/ }));
    const pre = document.querySelector(".tool-result") as HTMLElement;
    expect(pre.textContent).not.toContain("TAIL-END");
    await user.click(screen.getByRole("button", { name: /Show all/ }));
    expect(pre.textContent).toContain("TAIL-END");
    expect(screen.queryByRole("button", { name: /Show all/ })).toBeNull();
  });
});

describe("tool results as files", () => {
  it("colours a read file by its path, its line numbers a gutter, markers left as they are", async () => {
    const user = userEvent.setup();
    const result = '     1\tfn main() {\n     2\t    let s = "a /* not a comment */";\n     3\t}\n[… 12 more lines]';
    const { container } = render(<ToolCard tool={tool({ arguments: { path: "src/main.rs" }, result })} />);
    await user.click(screen.getByRole("button", { name: /Show result/ }));
    const view = container.querySelector("pre.file-view")!;
    expect(view.textContent).toBe(result);
    expect(await screen.findByText("fn")).toHaveProperty("className", "hljs-keyword");
    expect([...view.querySelectorAll(".file-num")].map((n) => n.textContent)).toEqual(["     1\t", "     2\t", "     3\t"]);
    expect(view.querySelector(".hljs-string")?.textContent).toBe('"a /* not a comment */"');
    expect(view.querySelector(".hljs-comment")).toBeNull();
  });

  it("colours a JSON result, and leaves other results plain", async () => {
    const user = userEvent.setup();
    const { container, unmount } = render(
      <ToolCard tool={tool({ name: "mcp__x__y", arguments: {}, result: '{"ok":true}', resultType: "json" })} />,
    );
    await user.click(screen.getByRole("button", { name: /Show result/ }));
    expect((await screen.findByText('"ok"')).className).toBe("hljs-attr");
    expect(container.querySelector(".hljs-keyword")?.textContent).toBe("true");
    unmount();
    const plain = render(<ToolCard tool={tool({ name: "execute_cmd", arguments: { command: "ls" }, result: "fn x" })} />);
    await user.click(screen.getByRole("button", { name: /Show result/ }));
    expect(plain.container.querySelector("pre.tool-result")?.textContent).toBe("fn x");
    expect(plain.container.querySelector("pre.file-view")).toBeNull();
  });
});

describe("tool card progress", () => {
  it("shows a running call's progress as a bar and text, and none once it ended", () => {
    const running = tool({ status: "running", result: null, progress: { progress: 3, total: 4, message: "step 3\u202E" } });
    const { rerender } = render(<ToolCard tool={running} />);
    const bar = screen.getByRole("progressbar");
    expect(bar.getAttribute("value")).toBe("3");
    expect(bar.getAttribute("max")).toBe("4");
    const text = document.querySelector(".tool-progress-text");
    expect(text?.textContent).toBe("3 of 4 (75%) · step 3⟨U+202E⟩");
    rerender(<ToolCard tool={{ ...running, status: "done", result: "ok", progress: null }} />);
    expect(screen.queryByRole("progressbar")).toBeNull();
    expect(document.querySelector(".tool-progress")).toBeNull();
  });

  it("shows a count without a bar when the server gives no total", () => {
    render(<ToolCard tool={tool({ status: "running", result: null, progress: { progress: 12, total: null, message: null } })} />);
    expect(screen.queryByRole("progressbar")).toBeNull();
    expect(document.querySelector(".tool-progress-text")?.textContent).toBe("12");
  });
});
