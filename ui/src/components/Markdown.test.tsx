import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { Markdown, safeHref } from "./Markdown";

describe("markdown", () => {
  it("renders headings, emphasis, lists, code and tables as elements", () => {
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
    expect(container.querySelector("pre.md-code .tok-keyword")?.textContent).toBe("fn");
    expect(screen.getByRole("table")).toBeTruthy();
    expect(screen.getByRole("cell", { name: "2" })).toBeTruthy();
  });

  it("renders HTML in model text as inert text", () => {
    const { container } = render(
      <Markdown text={'Hi <script>alert(1)</script> <img src=x onerror="alert(2)"> <b>x</b>'} />,
    );
    expect(container.querySelector("script")).toBeNull();
    expect(container.querySelector("img")).toBeNull();
    expect(container.querySelector("b")).toBeNull();
    expect(container.textContent).toContain("<script>alert(1)</script>");
  });

  it("keeps safe links and disarms javascript: and data: links", () => {
    const { container } = render(
      <Markdown text="[docs](https://example.com/a) [evil](javascript:alert(1)) [data](data:text/html,hi) [JS](JaVaScRiPt:alert(1))" />,
    );
    const links = [...container.querySelectorAll("a")];
    expect(links).toHaveLength(1);
    expect(links[0]?.getAttribute("href")).toBe("https://example.com/a");
    expect(links[0]?.getAttribute("rel")).toBe("noopener noreferrer");
    expect(screen.getByText("evil").closest("a")).toBeNull();
    expect(screen.getByText("JS").closest("a")).toBeNull();
    expect(container.innerHTML.toLowerCase()).not.toContain("javascript:");
  });

  it("allows only http, https, mailto and in-page links", () => {
    expect(safeHref("https://x.org")).toBe("https://x.org/");
    expect(safeHref("mailto:a@b.c")).toBe("mailto:a@b.c");
    expect(safeHref("#session/3")).toBe("#session/3");
    expect(safeHref(" javascript:alert(1)")).toBeNull();
    expect(safeHref("vbscript:x")).toBeNull();
    expect(safeHref("file:///etc/passwd")).toBeNull();
  });
});
