import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { CodeBlock } from "./CodeBlock";
import { MAX_HIGHLIGHT_CHARS, highlightNow, languageFor, loadLanguage, treeToLines } from "./highlight";

describe("highlighter", () => {
  it("finds the grammar for fence names, aliases, paths and file names", () => {
    expect(languageFor("rust")).toBe("rust");
    expect(languageFor("RS")).toBe("rust");
    expect(languageFor("tsx")).toBe("typescript");
    expect(languageFor("src/app/main.py")).toBe("python");
    expect(languageFor("deploy/Dockerfile")).toBe("dockerfile");
    expect(languageFor("Makefile")).toBe("makefile");
    expect(languageFor("config.yml")).toBe("yaml");
    expect(languageFor("index.html")).toBe("xml");
    expect(languageFor("notes.unknownext")).toBeNull();
    expect(languageFor("notes.txt")).toBeNull();
    expect(languageFor("")).toBeNull();
  });

  it("splits the token tree into lines, each run with its innermost token class", async () => {
    await loadLanguage("javascript");
    const lines = highlightNow("/* a\nb */ let x = `t\n${y}`;", "javascript");
    expect(lines).toEqual([
      [{ text: "/* a", className: "hljs-comment" }],
      [
        { text: "b */", className: "hljs-comment" },
        { text: " ", className: null },
        { text: "let", className: "hljs-keyword" },
        { text: " x = ", className: null },
        { text: "`t", className: "hljs-string" },
      ],
      [
        { text: "${y}", className: "hljs-subst" },
        { text: "`", className: "hljs-string" },
        { text: ";", className: null },
      ],
    ]);
    expect(treeToLines({ type: "root", children: [] })).toEqual([[]]);
    // Past the limit the text stays plain rather than holding the page.
    expect(highlightNow("x".repeat(MAX_HIGHLIGHT_CHARS + 1), "javascript")).toBeNull();
  });

  it("loads the grammars a language embeds: HTML colours its style and script", async () => {
    const { container } = render(<CodeBlock code={"<style>p { color: red; }</style>\n<script>let n = 1;</script>"} fence="html" />);
    expect((await screen.findByText("let")).className).toBe("hljs-keyword");
    expect(container.querySelector(".hljs-selector-tag")?.textContent).toBe("p");
  });
});
