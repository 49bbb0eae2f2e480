// Model text as CommonMark + GFM (micromark's parser, mdast → hast → React elements; raw HTML is
// shown as text, never parsed). Each message is parsed once; a streaming one re-parses only its
// last block, and finished blocks are memoised so their code is never highlighted again.
import { memo, useId, useState, type ComponentProps, type MouseEvent, type ReactNode } from "react";
import { Fragment, jsx, jsxs } from "react/jsx-runtime";
import type { Element, ElementContent, Text } from "hast";
import type { Root, RootContent } from "mdast";
import { toJsxRuntime, type Components } from "hast-util-to-jsx-runtime";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { toHast, type Handler } from "mdast-util-to-hast";
import { gfm } from "micromark-extension-gfm";
import { CodeBlock } from "./CodeBlock";

/** Only these link targets are live; anything else (javascript:, data:, file:) renders as text. */
export function safeHref(url: string): string | null {
  const trimmed = url.trim();
  if (trimmed.startsWith("#")) return trimmed;
  try {
    const parsed = new URL(trimmed);
    return ["http:", "https:", "mailto:"].includes(parsed.protocol) ? parsed.toString() : null;
  } catch {
    return null;
  }
}

/** One top-level block: its source text (its identity while streaming) and its syntax tree. */
export type Block = { source: string; node: Root };
/** A parsed message. `whole`: it uses references or footnotes, so it renders as one block. */
export type Parsed = { text: string; blocks: Block[]; whole: boolean };

// Definitions (`[x]: url`, `[^1]: note`) may be anywhere and change blocks before them.
const DEFINITION = /^ {0,3}\[[^\]\n]+\]:/m;

const parse = (text: string): Root => fromMarkdown(text, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });

function parseBlocks(text: string): Block[] {
  const { children } = parse(text);
  // Each block's source runs from the start of its line (indentation is part of it) to the next
  // block's line, so the sources of all blocks add up to the text.
  const lineStart = (node: RootContent | undefined, i: number) => {
    if (!node) return text.length;
    const offset = node.position?.start.offset ?? 0;
    return i === 0 ? 0 : text.lastIndexOf("\n", offset - 1) + 1;
  };
  return children.map((node, i) => ({
    source: text.slice(lineStart(node, i), lineStart(children[i + 1], i + 1)),
    node: { type: "root", children: [node] },
  }));
}

/**
 * Parses `text`, reusing `previous` when `text` only grew: everything before the last block is
 * final (appending can only change the block being written), so only that block is re-parsed.
 */
export function parseMarkdown(text: string, previous?: Parsed | null): Parsed {
  const whole = DEFINITION.test(text);
  if (whole) return { text, whole, blocks: [{ source: text, node: parse(text) }] };
  if (previous && !previous.whole && previous.blocks.length > 0 && text.startsWith(previous.text)) {
    const kept = previous.blocks.slice(0, -1);
    const from = kept.reduce((n, b) => n + b.source.length, 0);
    return { text, whole, blocks: [...kept, ...parseBlocks(text.slice(from))] };
  }
  return { text, whole, blocks: parseBlocks(text) };
}

// HTML in model text is shown as the text it is.
const htmlAsText: Handler = (_state, node, parent) => {
  const text: Text = { type: "text", value: (node as { value: string }).value };
  const inParagraph = parent?.type === "paragraph" || parent?.type === "heading" || parent?.type === "tableCell";
  return inParagraph ? text : ({ type: "element", tagName: "p", properties: {}, children: [text] } satisfies Element);
};

function textOf(nodes: ElementContent[]): string {
  return nodes.map((n) => (n.type === "text" ? n.value : n.type === "element" ? textOf(n.children) : "")).join("");
}

/** Starts the ids of footnotes (and their links); no app route starts so. */
const FOOTNOTE_ID = "md-";

function Link({ href, children, node: _node, ...rest }: ComponentProps<"a"> & { node?: Element }) {
  const safe = href ? safeHref(href) : null;
  if (!safe) {
    return (
      <span className="md-link-blocked" title="Link removed: unsupported address">
        {children}
      </span>
    );
  }
  if (safe.startsWith(`#${FOOTNOTE_ID}`)) {
    // A footnote: scroll to it instead of changing the app's hash route.
    const jump = (e: MouseEvent) => {
      e.preventDefault();
      document.getElementById(decodeURIComponent(safe.slice(1)))?.scrollIntoView({ block: "nearest" });
    };
    return (
      <a {...rest} href={safe} onClick={jump}>
        {children}
      </a>
    );
  }
  const external = !safe.startsWith("#");
  // The tooltip is the address the link opens, never a title the text chose: link text can
  // name one site and point at another.
  return (
    <a {...rest} href={safe} {...(external ? { target: "_blank", rel: "noopener noreferrer", title: safe } : {})}>
      {children}
    </a>
  );
}

const heading = (level: 3 | 4 | 5 | 6) =>
  function Heading({ node: _node, ...props }: ComponentProps<"h3"> & { node?: Element }) {
    const Tag = `h${level}` as const;
    return <Tag className="md-heading" {...props} />;
  };

const COMPONENTS: Components = {
  a: Link,
  // Headings sit under the page's own h1/h2.
  h1: heading(3),
  h2: heading(4),
  h3: heading(5),
  h4: heading(6),
  h5: heading(6),
  h6: heading(6),
  pre({ node }: { node?: Element }) {
    const code = node?.children.find((c): c is Element => c.type === "element" && c.tagName === "code");
    const classes = code?.properties.className;
    const fence = Array.isArray(classes) ? String(classes.find((c) => String(c).startsWith("language-")) ?? "").slice(9) : "";
    return <CodeBlock code={textOf(code?.children ?? []).replace(/\n$/, "")} fence={fence || null} />;
  },
  // Remote images are not fetched (privacy, CSP): the alt text links to the image instead.
  img({ src, alt }: { src?: string; alt?: string }) {
    return <Link href={typeof src === "string" ? src : undefined}>{alt || "image"}</Link>;
  },
  table({ node: _node, ...props }: ComponentProps<"table"> & { node?: Element }) {
    return (
      <div className="md-table-wrap" tabIndex={0}>
        <table className="md-table" {...props} />
      </div>
    );
  },
  input({ node: _node, checked, type }: ComponentProps<"input"> & { node?: Element }) {
    if (type !== "checkbox") return null;
    return <input type="checkbox" className="md-task" checked={Boolean(checked)} disabled aria-label={checked ? "Done" : "Not done"} />;
  },
} as Components;

function render(root: Root, idPrefix: string): ReactNode {
  const hast = toHast(root, { handlers: { html: htmlAsText }, clobberPrefix: `${idPrefix}-` });
  return toJsxRuntime(hast, { Fragment, jsx, jsxs, components: COMPONENTS, passKeys: true, passNode: true });
}

/** A block re-renders only when its own source changed. */
const BlockView = memo(
  function BlockView({ block, idPrefix }: { block: Block; idPrefix: string }) {
    return render(block.node, idPrefix);
  },
  (a, b) => a.block.source === b.block.source && a.idPrefix === b.idPrefix,
);

/** Parses of whole messages by text, so a message scrolled out and back in is not parsed again. */
const parsedMessages = new Map<string, Parsed>();
const PARSED_MESSAGES_KEPT = 200;

function parseMessage(text: string, previous: Parsed | null): Parsed {
  const known = parsedMessages.get(text);
  if (known) return known;
  const parsed = parseMarkdown(text, previous);
  // A streaming message's prefixes are not kept: they would push finished messages out.
  if (!previous) {
    if (parsedMessages.size >= PARSED_MESSAGES_KEPT) parsedMessages.delete(parsedMessages.keys().next().value as string);
    parsedMessages.set(text, parsed);
  }
  return parsed;
}

export function Markdown({ text }: { text: string }) {
  const normal = text.replace(/\r\n?/g, "\n");
  // The last parse, which the next one starts from while a message streams in. Kept in state and
  // replaced while rendering, so the parse runs once per text and nothing reads a ref in render.
  const [last, setLast] = useState(() => ({ text: normal, parsed: parseMessage(normal, null) }));
  let parsed: Parsed;
  if (last.text === normal) parsed = last.parsed;
  else {
    parsed = parseMessage(normal, last.parsed);
    setLast({ text: normal, parsed });
  }
  // Footnote ids must not collide between messages.
  const idPrefix = `${FOOTNOTE_ID}${useId().replace(/[^\w-]/g, "")}`;
  return (
    <div className="markdown">
      {parsed.blocks.map((block, i) => (
        <BlockView key={i} block={block} idPrefix={idPrefix} />
      ))}
    </div>
  );
}
