// A small, safe Markdown renderer: model text becomes React elements, never raw HTML.
import type { ReactNode } from "react";
import { HighlightedBlock, languageFor } from "./highlight";

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

type InlineRule = { re: RegExp; render: (m: RegExpExecArray, key: number) => ReactNode };

const INLINE_RULES: InlineRule[] = [
  { re: /`([^`\n]+)`/, render: (m, k) => <code key={k}>{m[1]}</code> },
  {
    re: /\[([^\]\n]+)\]\(([^()\s]+(?:\([^()\s]*\))?)(?:\s+"[^"]*")?\)/,
    render: (m, k) => {
      const href = safeHref(m[2] as string);
      const children = inline(m[1] as string);
      if (!href) return <span key={k} className="md-link-blocked" title="Link removed: unsupported address">{children}</span>;
      const external = !href.startsWith("#");
      return (
        <a key={k} href={href} {...(external ? { target: "_blank", rel: "noopener noreferrer" } : {})}>
          {children}
        </a>
      );
    },
  },
  {
    re: /<(https?:\/\/[^\s<>]+)>/,
    render: (m, k) => (
      <a key={k} href={safeHref(m[1] as string) ?? "#"} target="_blank" rel="noopener noreferrer">
        {m[1]}
      </a>
    ),
  },
  { re: /\*\*([^*\n](?:[^\n]*?[^*\n])?)\*\*|__([^_\n](?:[^\n]*?[^_\n])?)__/, render: (m, k) => <strong key={k}>{inline((m[1] ?? m[2]) as string)}</strong> },
  { re: /~~([^~\n]+)~~/, render: (m, k) => <del key={k}>{inline(m[1] as string)}</del> },
  { re: /\*([^*\s](?:[^*\n]*[^*\s])?)\*|(?<![\w])_([^_\s](?:[^_\n]*[^_\s])?)_(?![\w])/, render: (m, k) => <em key={k}>{inline((m[1] ?? m[2]) as string)}</em> },
];

/** Inline spans: the earliest match of any rule wins, the text around it recurses. */
export function inline(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  let rest = text;
  let key = 0;
  while (rest.length > 0) {
    let best: { m: RegExpExecArray; rule: InlineRule } | null = null;
    for (const rule of INLINE_RULES) {
      const m = rule.re.exec(rest);
      if (m && (!best || m.index < best.m.index)) best = { m, rule };
    }
    if (!best) {
      out.push(rest);
      break;
    }
    if (best.m.index > 0) out.push(rest.slice(0, best.m.index));
    out.push(best.rule.render(best.m, key++));
    rest = rest.slice(best.m.index + best.m[0].length);
  }
  return out;
}

function inlineLines(lines: string[]): ReactNode[] {
  return lines.flatMap((l, i) => (i === 0 ? inline(l) : ["\n", ...inline(l)]));
}

const FENCE = /^\s{0,3}(```+|~~~+)\s*([\w+#.-]*)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const HR = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const BULLET = /^(\s*)([-*+])\s+(.*)$/;
const ORDERED = /^(\s*)(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

function cells(row: string): string[] {
  return row.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
}

function isBlockStart(line: string, next: string | undefined): boolean {
  return (
    FENCE.test(line) || HEADING.test(line) || HR.test(line) || BULLET.test(line) || ORDERED.test(line) ||
    QUOTE.test(line) || (line.includes("|") && next !== undefined && TABLE_SEP.test(next))
  );
}

function blocks(lines: string[], keyPrefix: string): ReactNode[] {
  const out: ReactNode[] = [];
  let i = 0;
  const key = () => `${keyPrefix}${out.length}`;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (line.trim() === "") {
      i += 1;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1] as string;
      const body: string[] = [];
      i += 1;
      while (i < lines.length && !(lines[i] as string).trim().startsWith(marker)) body.push(lines[i++] as string);
      i += 1;
      const lang = languageFor(fence[2]);
      out.push(
        <pre key={key()} className="md-code" data-lang={fence[2] || undefined}>
          <code>
            <HighlightedBlock code={body.join("\n")} lang={lang} />
          </code>
        </pre>,
      );
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = Math.min(6, (heading[1] as string).length + 2);
      const Tag = `h${level}` as "h3";
      out.push(<Tag key={key()} className="md-heading">{inline(heading[2] as string)}</Tag>);
      i += 1;
      continue;
    }
    if (HR.test(line)) {
      out.push(<hr key={key()} />);
      i += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i] as string)) body.push((QUOTE.exec(lines[i++] as string) as RegExpExecArray)[1] as string);
      out.push(<blockquote key={key()}>{blocks(body, `${key()}-`)}</blockquote>);
      continue;
    }
    const ordered = ORDERED.exec(line);
    if (BULLET.test(line) || ordered) {
      const re = ordered ? ORDERED : BULLET;
      const indent = ((re.exec(line) as RegExpExecArray)[1] as string).length;
      const items: string[][] = [];
      while (i < lines.length) {
        const l = lines[i] as string;
        const m = re.exec(l);
        if (m && (m[1] as string).length === indent) {
          items.push([m[3] as string]);
        } else if (l.trim() !== "" && (/^\s/.test(l) || !isBlockStart(l, lines[i + 1])) && items.length > 0) {
          // Continuation or nested content, de-indented for the recursive pass.
          (items[items.length - 1] as string[]).push(l.replace(new RegExp(`^\\s{0,${indent + 4}}`), ""));
        } else if (l.trim() === "" && i + 1 < lines.length && /^\s+\S/.test(lines[i + 1] as string)) {
          (items[items.length - 1] as string[]).push("");
        } else {
          break;
        }
        i += 1;
      }
      const children = items.map((body, n) => {
        const nested = body.slice(1).some((l) => isBlockStart(l, undefined)) || body.includes("");
        return <li key={n}>{nested ? blocks(body, `${key()}-${n}-`) : inlineLines(body)}</li>;
      });
      const start = ordered ? Number(ordered[2]) : 1;
      out.push(ordered ? <ol key={key()} start={start === 1 ? undefined : start}>{children}</ol> : <ul key={key()}>{children}</ul>);
      continue;
    }
    const next = lines[i + 1];
    if (line.includes("|") && next !== undefined && TABLE_SEP.test(next)) {
      const head = cells(line);
      const rows: string[][] = [];
      i += 2;
      while (i < lines.length && (lines[i] as string).includes("|") && (lines[i] as string).trim() !== "") rows.push(cells(lines[i++] as string));
      out.push(
        <div key={key()} className="md-table-wrap">
          <table className="md-table">
            <thead>
              <tr>{head.map((c, n) => <th key={n}>{inline(c)}</th>)}</tr>
            </thead>
            <tbody>
              {rows.map((r, n) => (
                <tr key={n}>{head.map((_, c) => <td key={c}>{inline(r[c] ?? "")}</td>)}</tr>
              ))}
            </tbody>
          </table>
        </div>,
      );
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && (lines[i] as string).trim() !== "" && (para.length === 0 || !isBlockStart(lines[i] as string, lines[i + 1]))) {
      para.push(lines[i++] as string);
    }
    out.push(<p key={key()}>{inlineLines(para)}</p>);
  }
  return out;
}

export function Markdown({ text }: { text: string }) {
  return <div className="markdown">{blocks(text.replace(/\r\n?/g, "\n").split("\n"), "b")}</div>;
}
