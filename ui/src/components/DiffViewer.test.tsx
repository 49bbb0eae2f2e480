import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { fileDiff, newFileDiff } from "../test/mockBackend";
import { DiffViewer } from "./DiffViewer";

function rowsOf(container: HTMLElement, selector: string): HTMLElement[] {
  return [...container.querySelectorAll<HTMLElement>(selector)];
}

describe("diff viewer", () => {
  it("shows a unified diff with line numbers, signs and word-level marks", () => {
    const { container } = render(<DiffViewer diff={fileDiff()} />);
    expect(screen.getByText("src/main.rs")).toBeTruthy();
    expect(screen.getByText("+2")).toBeTruthy();
    const lines = rowsOf(container, "tr.diff-line");
    expect(lines.map((r) => r.dataset.tag)).toEqual(["context", "delete", "insert", "insert"]);
    expect(lines[1]?.textContent).toContain('println!("hello");');
    // Only the changed words are marked, on each side.
    const marks = rowsOf(container, "mark.word").map((m) => m.textContent);
    expect(marks).toEqual(["hello", "goodbye"]);
    expect(screen.getByText("@@ -1,2 +1,3 @@")).toBeTruthy();
  });

  it("switches to side by side, pairing the deletion with its replacement", async () => {
    const user = userEvent.setup();
    const { container } = render(<DiffViewer diff={fileDiff()} />);
    await user.click(screen.getByRole("button", { name: "Side by side" }));
    expect(screen.getByRole("button", { name: "Side by side" }).getAttribute("aria-pressed")).toBe("true");
    const pairs = rowsOf(container, "tr.diff-pair");
    expect(pairs).toHaveLength(3);
    const [ctx, changed, added] = pairs as [HTMLElement, HTMLElement, HTMLElement];
    const side = (row: HTMLElement, s: string) => row.querySelector<HTMLElement>(`[data-side="${s}"]`)?.textContent;
    expect(side(ctx, "old")).toBe("fn main() {");
    expect(side(ctx, "new")).toBe("fn main() {");
    expect(side(changed, "old")).toBe('    println!("hello");');
    expect(side(changed, "new")).toBe('    println!("goodbye");');
    // The extra insertion has nothing opposite it.
    expect(side(added, "old")).toBe("");
    expect(side(added, "new")).toBe("    exit();");
    expect(within(changed).getByText("hello").tagName).toBe("MARK");
  });

  it("marks a new file and colours its syntax by extension", () => {
    const diff = newFileDiff("app.ts", 2);
    diff.hunks[0]!.lines[0]!.text = 'const x = "a"; // note';
    const { container } = render(<DiffViewer diff={diff} />);
    expect(screen.getByText("new file")).toBeTruthy();
    expect(container.querySelector(".tok-keyword")?.textContent).toBe("const");
    expect(container.querySelector(".tok-string")?.textContent).toBe('"a"');
    expect(container.querySelector(".tok-comment")?.textContent).toBe("// note");
  });

  it("shows badges for CRLF, missing newline and binary files", () => {
    render(
      <DiffViewer
        diff={fileDiff({ kind: "binary", hunks: [], crlf: true, new_missing_newline: true, summary: "binary file, 3 KB → 4 KB" })}
      />,
    );
    expect(screen.getByText("binary")).toBeTruthy();
    expect(screen.getByText("CRLF")).toBeTruthy();
    expect(screen.getByText("no trailing newline")).toBeTruthy();
    expect(screen.getByText("binary file, 3 KB → 4 KB")).toBeTruthy();
    expect(screen.queryByRole("button", { name: "Unified" })).toBeNull();
  });

  it("folds a large file and shows the rest on request", async () => {
    const user = userEvent.setup();
    const { container } = render(<DiffViewer diff={newFileDiff("big.txt", 500)} foldAt={100} />);
    // 1 hunk header + 99 lines shown of 501 rows.
    expect(rowsOf(container, "tr.diff-line")).toHaveLength(99);
    expect(screen.queryByText("line 400")).toBeNull();
    await user.click(screen.getByRole("button", { name: "Show 401 more lines" }));
    expect(rowsOf(container, "tr.diff-line")).toHaveLength(500);
    expect(screen.getByText("line 400")).toBeTruthy();
    expect(screen.queryByRole("button", { name: /more lines/ })).toBeNull();
  });
});
