// The stylesheet is one hand-edited file that merges touch: an unclosed rule makes the bundler
// drop or swallow every rule after it with only a warning, so the braces are checked here.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// Read from disk: Vitest hands CSS imports (`?raw` too) to tests as empty strings.
const css = readFileSync(join(process.cwd(), "src", "styles.css"), "utf8");

/** Line numbers (1-based) where a block opened but never closed, or a `}` closed nothing. */
function unbalanced(css: string): number[] {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "));
  const open: number[] = [];
  const bad: number[] = [];
  let line = 1;
  for (const ch of text) {
    if (ch === "\n") line += 1;
    else if (ch === "{") open.push(line);
    else if (ch === "}") {
      if (open.length === 0) bad.push(line);
      else open.pop();
    }
  }
  return [...bad, ...open];
}

describe("styles.css", () => {
  it("has no rule left open and no stray closing brace", () => {
    expect(css.length).toBeGreaterThan(10_000);
    expect(unbalanced(css)).toEqual([]);
  });

  it("the check finds a rule left open by a bad merge", () => {
    expect(unbalanced(".a {\n  color: red;\n/* next */\n.b {\n  color: blue;\n}\n")).toEqual([1]);
    expect(unbalanced(".a { x: 1; }\n}\n")).toEqual([2]);
  });
});
