import { render } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { Visible, revealPieces, visibleString } from "./visible";

/** The tokens `text` shows, in order. */
function tokens(text: string, mode: "multiline" | "line" = "multiline"): string[] {
  return revealPieces(text, mode).flatMap((p) => (typeof p === "string" ? [] : [p.token]));
}

describe("hidden characters made visible", () => {
  it("leaves ordinary text, newlines and tabs of a command alone", () => {
    expect(revealPieces("cargo test\n\techo done — ünïcödé 日本 שלום")).toEqual(["cargo test\n\techo done — ünïcödé 日本 שלום"]);
  });

  it("marks every bidi control", () => {
    const bidi = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c];
    const text = bidi.map((cp) => `a${String.fromCodePoint(cp)}`).join("");
    expect(tokens(text)).toEqual(bidi.map((cp) => `⟨U+${cp.toString(16).toUpperCase().padStart(4, "0")}⟩`));
    const override = revealPieces("ls \u202Etxt.exe")[1];
    expect(override).toEqual({
      token: "⟨U+202E⟩",
      title: expect.stringContaining("RIGHT-TO-LEFT OVERRIDE: changes the order in which the text around it is displayed"),
    });
  });

  it("marks zero-width and other invisible characters, tag characters included", () => {
    expect(tokens("r\u200Bm \u200C\u200D\u2060\uFEFF\u00AD\u2028\u{E0041}")).toEqual([
      "⟨U+200B⟩",
      "⟨U+200C⟩",
      "⟨U+200D⟩",
      "⟨U+2060⟩",
      "⟨U+FEFF⟩",
      "⟨U+00AD⟩",
      "⟨U+2028⟩",
      "⟨U+E0041⟩",
    ]);
  });

  it("marks C0 and C1 controls and DEL with their escapes", () => {
    expect(tokens("safe\r\x1b[2Kevil\x00\x07\x08\x0b\x0c\x01\x7f\x9b")).toEqual([
      "\\r",
      "\\e",
      "\\0",
      "\\a",
      "\\b",
      "\\v",
      "\\f",
      "\\x01",
      "\\x7f",
      "\\x9b",
    ]);
    expect(revealPieces("a\rb")).toEqual(["a", { token: "\\r", title: expect.stringContaining("carriage return") }, "b"]);
  });

  it("marks newlines and tabs too where text is one line (a path, a label)", () => {
    expect(tokens("notes.md\n/etc/passwd\tx", "line")).toEqual(["\\n", "\\t"]);
    expect(visibleString("a.md\n/etc/passwd")).toBe("a.md\\n/etc/passwd");
  });

  it("renders each token as a marked element that says what it is", () => {
    const { container } = render(<Visible text={"echo ok\u202E\r"} />);
    const marks = [...container.querySelectorAll(".hidden-char")];
    expect(marks.map((m) => m.textContent)).toEqual(["⟨U+202E⟩", "\\r"]);
    expect(marks[0]?.getAttribute("title")).toContain("It is part of the text.");
    expect(container.textContent).toBe("echo ok⟨U+202E⟩\\r");
    // Nothing of the hidden characters is left in the page.
    expect(container.textContent).not.toMatch(/[\u202E\r]/);
  });
});
