import { render, screen, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { Markdown, parseMarkdown, safeHref, type Parsed } from "./Markdown";

// Every text the highlighter is asked to colour, to prove finished blocks are not coloured again.
const highlighted = vi.hoisted(() => [] as string[]);
vi.mock("lowlight", async (importOriginal) => {
  const real = await importOriginal<typeof import("lowlight")>();
  return {
    ...real,
    createLowlight: () => {
      const lowlight = real.createLowlight();
      return {
        ...lowlight,
        highlight: (...args: Parameters<typeof lowlight.highlight>) => {
          highlighted.push(args[1]);
          return lowlight.highlight(...args);
        },
      };
    },
  };
});

// Every text the Markdown parser is given.
const parsedTexts = vi.hoisted(() => [] as string[]);
vi.mock("mdast-util-from-markdown", async (importOriginal) => {
  const real = await importOriginal<typeof import("mdast-util-from-markdown")>();
  const fromMarkdown = (...args: Parameters<typeof real.fromMarkdown>) => {
    parsedTexts.push(String(args[0]));
    return real.fromMarkdown(...args);
  };
  return { ...real, fromMarkdown };
});

/** The mdast of each block, without source positions (those are relative to what was parsed). */
function shapes(parsed: Parsed): unknown[] {
  return parsed.blocks.map((b) => JSON.parse(JSON.stringify(b.node, (k, v) => (k === "position" ? undefined : v))));
}

describe("markdown", () => {
  it("renders headings, emphasis, lists, code and tables as elements", async () => {
    const text = [
      "# Plan",
      "Some **bold** and *soft* text with `code`.",
      "",
      "- one",
      "- two",
      "",
      "1. first",
      "2. second",
      "",
      "```rust",
      "fn main() {}",
      "```",
      "",
      "| a | b |",
      "|---|---|",
      "| 1 | 2 |",
    ].join("\n");
    const { container } = render(<Markdown text={text} />);
    expect(screen.getByRole("heading", { name: "Plan" })).toBeTruthy();
    expect(screen.getByText("bold").tagName).toBe("STRONG");
    expect(screen.getByText("soft").tagName).toBe("EM");
    expect(screen.getByText("code").tagName).toBe("CODE");
    expect(container.querySelectorAll("ul > li")).toHaveLength(2);
    expect(container.querySelectorAll("ol > li")).toHaveLength(2);
    // The grammar loads lazily: plain text first, then real highlight.js tokens.
    expect(container.querySelector("pre.md-code")?.textContent).toBe("fn main() {}");
    expect((await screen.findByText("fn")).className).toBe("hljs-keyword");
    expect(container.querySelector("pre.md-code .hljs-title")?.textContent).toBe("main");
    expect(screen.getByRole("table")).toBeTruthy();
    expect(screen.getByRole("cell", { name: "2" })).toBeTruthy();
  });

  it("renders GFM: aligned tables, task lists, nested lists, strikethrough and autolinks", () => {
    const text = [
      "| Tool | Calls |",
      "|:-----|------:|",
      "| `read_file` | 12 |",
      "| write_file | 3 |",
      "",
      "- [x] parse once",
      "- [ ] copy buttons",
      "",
      "1. outer",
      "   - inner *a*",
      "     1. deepest",
      "2. second",
      "",
      "~~gone~~ and www.example.com",
    ].join("\n");
    const { container } = render(<Markdown text={text} />);
    const table = screen.getByRole("table");
    expect(within(table).getAllByRole("columnheader").map((c) => c.textContent)).toEqual(["Tool", "Calls"]);
    expect(within(table).getAllByRole("cell").map((c) => c.textContent)).toEqual(["read_file", "12", "write_file", "3"]);
    expect(within(table).getByRole("cell", { name: "12" }).style.textAlign).toBe("right");
    const boxes = screen.getAllByRole("checkbox");
    expect(boxes.map((b) => (b as HTMLInputElement).checked)).toEqual([true, false]);
    expect(boxes.every((b) => (b as HTMLInputElement).disabled)).toBe(true);
    expect(screen.getByRole("checkbox", { name: "Done" })).toBe(boxes[0]);
    expect(container.querySelector("ol > li > ul > li > ol > li")?.textContent).toBe("deepest");
    expect(screen.getByText("a").tagName).toBe("EM");
    expect(screen.getByText("gone").tagName).toBe("DEL");
    expect(screen.getByRole("link", { name: "www.example.com" }).getAttribute("href")).toBe("http://www.example.com/");
  });

  it("renders HTML in model text as inert text", () => {
    const { container } = render(
      <Markdown text={'Hi <script>alert(1)</script> <img src=x onerror="alert(2)"> <b>x</b>\n\n<div onclick="x()">block</div>'} />,
    );
    expect(container.querySelector("script")).toBeNull();
    expect(container.querySelector("img")).toBeNull();
    expect(container.querySelector("b")).toBeNull();
    expect(container.querySelector("div[onclick]")).toBeNull();
    expect(container.textContent).toContain("<script>alert(1)</script>");
    expect(container.textContent).toContain('<div onclick="x()">block</div>');
  });

  it("keeps safe links and disarms javascript: and data: links", () => {
    const { container } = render(
      <Markdown text="[docs](https://example.com/a) [evil](javascript:alert(1)) [data](data:text/html,hi) [JS](JaVaScRiPt:alert(1))" />,
    );
    const links = [...container.querySelectorAll("a")];
    expect(links).toHaveLength(1);
    expect(links[0]?.getAttribute("href")).toBe("https://example.com/a");
    expect(links[0]?.getAttribute("rel")).toBe("noopener noreferrer");
    expect(links[0]?.getAttribute("target")).toBe("_blank");
    expect(screen.getByText("evil").closest("a")).toBeNull();
    expect(screen.getByText("JS").closest("a")).toBeNull();
    expect(container.innerHTML.toLowerCase()).not.toContain("javascript:");
  });

  it("disarms script links however they are spelled, and titles a live link with its real address", () => {
    const { container } = render(
      <Markdown
        text={
          "[a](&#106;avascript:alert(1)) [b](vbscript:msgbox) [c](data:text/html;base64,PHNjcmlwdD4=) " +
          "<javascript:alert(2)> [d](<java\tscript:alert(3)>) [https://bank.example](https://evil.example/login \"https://bank.example\")"
        }
      />,
    );
    const links = [...container.querySelectorAll("a")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual(["https://evil.example/login"]);
    // The tooltip says where the link goes, not what its text or its title claim.
    expect(links[0]?.getAttribute("title")).toBe("https://evil.example/login");
    for (const text of ["a", "b", "c", "d"]) expect(screen.getByText(text).closest("a")).toBeNull();
    const targets = [...container.querySelectorAll("[href], [src]")].map((e) => e.getAttribute("href") ?? e.getAttribute("src"));
    expect(targets).toEqual(["https://evil.example/login"]);
    // The autolink stays readable as the text it is.
    expect(container.querySelector(".md-link-blocked")?.textContent).toBe("a");
    expect(container.textContent).toContain("javascript:alert(2)");
  });

  it("never loads remote images: the alt text links to them", () => {
    const { container } = render(<Markdown text="![chart](https://example.com/c.png) ![x](javascript:alert(1))" />);
    expect(container.querySelector("img")).toBeNull();
    expect(screen.getByRole("link", { name: "chart" }).getAttribute("href")).toBe("https://example.com/c.png");
    expect(screen.getByText("x").closest("a")).toBeNull();
  });

  it("links footnotes within the message without touching the app's route", () => {
    const scrolled: Element[] = [];
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this);
    };
    const { container } = render(<Markdown text={"Claim[^1].\n\n[^1]: Source."} />);
    const ref = screen.getByRole("link", { name: "1" });
    const target = container.querySelector(`[id="${decodeURIComponent(ref.getAttribute("href")!.slice(1))}"]`);
    expect(target?.textContent).toContain("Source.");
    const click = new MouseEvent("click", { bubbles: true, cancelable: true });
    ref.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true);
    expect(scrolled).toEqual([target]);
    Reflect.deleteProperty(Element.prototype, "scrollIntoView");
  });

  it("allows only http, https, mailto and in-page links", () => {
    expect(safeHref("https://x.org")).toBe("https://x.org/");
    expect(safeHref("mailto:a@b.c")).toBe("mailto:a@b.c");
    expect(safeHref("#session/3")).toBe("#session/3");
    expect(safeHref(" javascript:alert(1)")).toBeNull();
    expect(safeHref("vbscript:x")).toBeNull();
    expect(safeHref("file:///etc/passwd")).toBeNull();
  });

  it("parses a streamed message incrementally into the same blocks as a full parse", () => {
    const doc = [
      "Intro line\nstill intro",
      "===",
      "",
      "- a",
      "- b",
      "",
      "  continued b",
      "",
      "| x | y |",
      "|---|---|",
      "| 1 | 2 |",
      "",
      "```ts",
      "const s = `multi",
      "line`;",
      "```",
      "",
      "    indented code",
      "",
      "    more of it",
      "> quote",
      "lazy",
      "",
      "1) one",
      "2) two",
      "",
      "end",
    ].join("\n");
    let previous: Parsed | null = null;
    for (let n = 1; n <= doc.length; n++) {
      const text = doc.slice(0, n);
      const incremental = parseMarkdown(text, previous);
      const full = parseMarkdown(text);
      expect(shapes(incremental), `after ${n} characters`).toEqual(shapes(full));
      expect(incremental.blocks.map((b) => b.source).join("")).toBe(text);
      // Finished blocks are reused as they are, not parsed again.
      previous?.blocks.slice(0, -1).forEach((b, i) => expect(incremental.blocks[i]).toBe(b));
      previous = incremental;
    }
    // heading, list, table, fenced code, indented code, quote, ordered list, paragraph
    expect(previous?.blocks.map((b) => b.node.children[0]?.type)).toEqual([
      "heading", "list", "table", "code", "code", "blockquote", "list", "paragraph",
    ]);
  }, 30_000); // a full parse of every prefix: slow on a busy machine

  it("re-parses from the start once a definition appears (it can change earlier blocks)", () => {
    const before = parseMarkdown("See [the docs][d].\n\nMore");
    const after = parseMarkdown("See [the docs][d].\n\nMore\n\n[d]: https://example.com", before);
    expect(after.whole).toBe(true);
    render(<Markdown text={after.text} />);
    expect(screen.getByRole("link", { name: "the docs" }).getAttribute("href")).toBe("https://example.com/");
  });

  it("parses a message once, even when it is shown again later", () => {
    const text = "A *once* parsed message\n\n- item";
    const first = render(<Markdown text={text} />);
    const em = first.container.querySelector("em");
    first.unmount();
    expect(parsedTexts.filter((t) => t === text)).toHaveLength(1);
    const again = render(<Markdown text={text} />);
    expect(again.container.querySelector("em")?.textContent).toBe(em?.textContent);
    expect(parsedTexts.filter((t) => t === text)).toHaveLength(1);
  });

  it("while streaming, colours only the block being written", async () => {
    const done = "```rust\nfn done() {}\n```\n\n";
    const { rerender, container } = render(<Markdown text={`${done}Now`} />);
    await screen.findByText("done");
    expect(highlighted).toContain("fn done() {}");
    highlighted.length = 0;
    let text = `${done}Now`;
    for (const chunk of [" writing", " more.\n\n```python\n", "def f():", "\n    return 1"]) {
      text += chunk;
      rerender(<Markdown text={text} />);
    }
    await screen.findByText("def");
    expect(highlighted).not.toContain("fn done() {}");
    expect(highlighted.at(-1)).toBe("def f():\n    return 1");
    expect(container.querySelectorAll("pre.md-code")).toHaveLength(2);
  });
});
