// The stylesheet is one hand-edited file that merges touch: an unclosed rule makes the bundler
// drop or swallow every rule after it with only a warning, so the braces are checked here.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { colourPairs, contrast, themes } from "./test/contrast";

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

/** WCAG AA for text under 18.66 px bold / 24 px: the badges are 11 px. */
const AA_SMALL = 4.5;

/** Each coloured pair below 4.5:1, as `theme selector: ratio (text on background)`. */
function failingPairs(css: string): string[] {
  const vars = themes(css);
  const failing: string[] = [];
  for (const [theme, values] of Object.entries(vars)) {
    for (const { selector, background, color } of colourPairs(css)) {
      const [bg, fg] = [values[background], values[color]];
      if (!bg || !fg) throw new Error(`${theme} ${selector}: ${background} or ${color} is not defined`);
      const ratio = contrast(fg, bg);
      if (ratio < AA_SMALL) failing.push(`${theme} ${selector}: ${ratio.toFixed(2)}:1 (${fg} on ${bg})`);
    }
  }
  return failing;
}

describe("styles.css colour contrast (WCAG AA, small text)", () => {
  it("reads every status and badge colour pair of the stylesheet", () => {
    const selectors = colourPairs(css).map((p) => p.selector);
    // The statuses the UI shows and the settings' badges: a parse that misses them checks nothing.
    for (const s of [".status", ".badge", ".status-pending", ".status-running", ".status-done", ".status-failed",
      ".status-rejected", ".status-cancelled", ".status-error", ".badge-ok", ".badge-warn", ".badge-env",
      ".badge-failed", ".badge-synthetic", ".badge-seed", ".nav-badge"]) {
      expect(selectors).toContain(s);
    }
  });

  it("gives every status and badge at least 4.5:1 in the light and the dark theme", () => {
    expect(failingPairs(css)).toEqual([]);
  });

  it("the check finds a pair below 4.5:1 in either theme", () => {
    const sample = `:root { --ok: #1a7f4b; --ok-bg: #e3f5ea; --x: #000000; --x-bg: #ffffff; }
@media (prefers-color-scheme: dark) { :root { --x: #333333; --x-bg: #222222; } }
.status-done { background: var(--ok-bg); color: var(--ok); }
.a, .b { background: var(--x-bg); color: var(--x); }`;
    expect(failingPairs(sample)).toEqual([
      "light .status-done: 4.43:1 (#1a7f4b on #e3f5ea)",
      "dark .status-done: 4.43:1 (#1a7f4b on #e3f5ea)",
      "dark .a: 1.26:1 (#333333 on #222222)",
      "dark .b: 1.26:1 (#333333 on #222222)",
    ]);
    expect(contrast("#000000", "#ffffff")).toBeCloseTo(21, 5);
  });
});
