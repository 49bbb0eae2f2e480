import { render, screen, waitFor, within } from "@testing-library/react";
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

  it("shows a bidi override, a zero-width space and an escape in a diff line and its path", async () => {
    // "Trojan source": the override makes code read as part of a comment.
    const diff = newFileDiff("src/auth\u202Eyp.py", 2);
    diff.hunks[0]!.lines[0]!.text = 'access = "user"  # \u202E } \u2066if is_admin:\u2069 \u2066 admins only';
    diff.hunks[0]!.lines[1]!.text = 'key = "a\u200Bb"  # \x1b[8mhidden';
    const { container } = render(<DiffViewer diff={diff} />);
    const marked = (row: HTMLElement | undefined) => [...(row?.querySelectorAll(".hidden-char") ?? [])].map((m) => m.textContent);
    const lines = () => rowsOf(container, "tr.diff-line");
    expect(marked(lines()[0])).toEqual(["⟨U+202E⟩", "⟨U+2066⟩", "⟨U+2069⟩", "⟨U+2066⟩"]);
    expect(marked(lines()[1])).toEqual(["⟨U+200B⟩", "\\e"]);
    expect(container.querySelector(".diff-path")?.textContent).toBe("src/auth⟨U+202E⟩yp.py");
    expect(screen.getByRole("figure").getAttribute("aria-label")).toBe("Changes to src/auth⟨U+202E⟩yp.py");
    // Also once the syntax colour has split the lines into tokens, and side by side.
    await waitFor(() => expect(container.querySelector(".hljs-string")).toBeTruthy());
    expect(marked(lines()[1])).toEqual(["⟨U+200B⟩", "\\e"]);
    expect(lines()[1]?.querySelector(".hljs-string .hidden-char")?.textContent).toBe("⟨U+200B⟩");
    await userEvent.setup().click(screen.getByRole("button", { name: "Side by side" }));
    expect(marked(rowsOf(container, "tr.diff-pair")[0])).toEqual(["⟨U+202E⟩", "⟨U+2066⟩", "⟨U+2069⟩", "⟨U+2066⟩"]);
    for (const hidden of ["\u202E", "\u2066", "\u2069", "\u200B", "\x1b"]) expect(container.textContent).not.toContain(hidden);
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
    // Inside the mark whether or not the syntax colour (loading meanwhile) wraps it in a token.
    expect(within(changed).getByText("hello").closest("mark")).toBeTruthy();
  });

  it("marks a new file and colours its syntax by extension", async () => {
    const diff = newFileDiff("app.ts", 3);
    diff.hunks[0]!.lines[0]!.text = 'const x = "a"; /* a note';
    diff.hunks[0]!.lines[1]!.text = "   over two lines */";
    const { container } = render(<DiffViewer diff={diff} />);
    expect(screen.getByText("new file")).toBeTruthy();
    expect((await screen.findByText("const")).className).toBe("hljs-keyword");
    expect(container.querySelector(".hljs-string")?.textContent).toBe('"a"');
    // Lines are coloured together: the comment's second line is still a comment.
    const comments = [...container.querySelectorAll(".hljs-comment")].map((c) => c.textContent);
    expect(comments).toEqual(["/* a note", "   over two lines */"]);
  });

  it("marks the changed words of a line whose indentation and words changed, over the syntax colours", async () => {
    // The spans the engine computes for this pair (crates/skald-core approval::word_diff).
    const diff = fileDiff({
      hunks: [
        {
          old_start: 2,
          old_lines: 1,
          new_start: 2,
          new_lines: 1,
          lines: [
            {
              tag: "delete",
              old_line: 2,
              new_line: null,
              text: '    println!("hello");',
              spans: [
                { text: "    ", changed: true },
                { text: 'println!("hello");', changed: false },
              ],
            },
            {
              tag: "insert",
              old_line: null,
              new_line: 2,
              text: '\tprintln!("hello, world");',
              spans: [
                { text: "\t", changed: true },
                { text: 'println!("hello', changed: false },
                { text: ", world", changed: true },
                { text: '");', changed: false },
              ],
            },
          ],
        },
      ],
    });
    const { container } = render(<DiffViewer diff={diff} />);
    const marks = () => rowsOf(container, "mark.word").map((m) => [m.className, m.textContent]);
    expect(marks()).toEqual([
      ["word word-delete", "    "],
      ["word word-insert", "\t"],
      ["word word-insert", ", world"],
    ]);
    // Once Rust is loaded, the string token runs through the mark: coloured on both sides of it.
    await waitFor(() => expect(container.querySelector("mark.word-insert .hljs-string")?.textContent).toBe(", world"));
    const inserted = rowsOf(container, "tr.diff-insert .hljs-string").map((s) => s.textContent);
    expect(inserted).toEqual(['"hello', ", world", '"']);
    expect(rowsOf(container, "tr.diff-line")[1]?.querySelector(".diff-text")?.textContent).toBe('\tprintln!("hello, world");');

    await userEvent.setup().click(screen.getByRole("button", { name: "Side by side" }));
    expect(marks()).toEqual([
      ["word word-delete", "    "],
      ["word word-insert", "\t"],
      ["word word-insert", ", world"],
    ]);
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
