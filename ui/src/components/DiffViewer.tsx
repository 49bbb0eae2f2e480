// Shows a reviewed FileDiff: unified or side by side, word-level marks, syntax colour, big diffs folded.
import { useMemo, useState, type ReactNode } from "react";
import type { DiffLine, DiffSpan, FileDiff } from "../backend";
import { HighlightedLine, highlightNow, languageFor, plainLines, useLanguageReady, type Segment } from "./highlight";
import { Visible, visibleString } from "./visible";

export type DiffMode = "unified" | "split";

/** How many diff rows show before the rest folds behind "Show N more lines". */
export const DIFF_FOLD_AT = 120;

/**
 * Highlighted runs of every line. Each hunk's old side (context and deletions) and new side
 * (context and insertions) are highlighted as one text, so a string or comment that spans lines
 * keeps its colour.
 */
function highlightHunks(diff: FileDiff, lang: string | null): Map<DiffLine, Segment[]> {
  const out = new Map<DiffLine, Segment[]>();
  for (const h of diff.hunks) {
    for (const side of ["delete", "insert"] as const) {
      const lines = h.lines.filter((l) => l.tag === side || l.tag === "context");
      const code = lines.map((l) => l.text).join("\n");
      const coloured = highlightNow(code, lang) ?? plainLines(code);
      // Context lines take the new side's colours.
      lines.forEach((l, i) => (side === "insert" || l.tag !== "context") && out.set(l, coloured[i] ?? []));
    }
  }
  return out;
}

/** Splits highlighted runs at the word-level spans' boundaries: marked and unmarked pieces. */
export function markRuns(segments: Segment[], spans: DiffSpan[]): { changed: boolean; segments: Segment[] }[] {
  const out: { changed: boolean; segments: Segment[] }[] = [];
  let seg = 0;
  let used = 0; // characters of segments[seg] already placed
  for (const span of spans) {
    const piece: Segment[] = [];
    let need = span.text.length;
    while (need > 0 && seg < segments.length) {
      const s = segments[seg] as Segment;
      const take = Math.min(need, s.text.length - used);
      piece.push({ text: s.text.slice(used, used + take), className: s.className });
      need -= take;
      used += take;
      if (used === s.text.length) {
        seg += 1;
        used = 0;
      }
    }
    out.push({ changed: span.changed, segments: piece });
  }
  return out;
}

function LineText({ line, segments }: { line: DiffLine; segments: Segment[] }): ReactNode {
  if (line.spans.length === 0) return <HighlightedLine segments={segments} />;
  return markRuns(segments, line.spans).map((run, i) =>
    run.changed ? (
      <mark key={i} className={`word word-${line.tag}`}>
        <HighlightedLine segments={run.segments} />
      </mark>
    ) : (
      <HighlightedLine key={i} segments={run.segments} />
    ),
  );
}

const SIGN: Record<DiffLine["tag"], string> = { context: " ", delete: "-", insert: "+" };

type Row = { kind: "hunk"; label: string } | { kind: "line"; line: DiffLine };
type SplitRow =
  | { kind: "hunk"; label: string }
  | { kind: "pair"; left: DiffLine | null; right: DiffLine | null };

function unifiedRows(diff: FileDiff): Row[] {
  return diff.hunks.flatMap((h): Row[] => [
    { kind: "hunk", label: `@@ -${h.old_start},${h.old_lines} +${h.new_start},${h.new_lines} @@` },
    ...h.lines.map((line): Row => ({ kind: "line", line })),
  ]);
}

/** Pairs each run of deletions with the insertions right after it, row by row. */
export function splitRows(diff: FileDiff): SplitRow[] {
  const rows: SplitRow[] = [];
  for (const h of diff.hunks) {
    rows.push({ kind: "hunk", label: `@@ -${h.old_start},${h.old_lines} +${h.new_start},${h.new_lines} @@` });
    let i = 0;
    while (i < h.lines.length) {
      const line = h.lines[i] as DiffLine;
      if (line.tag === "context") {
        rows.push({ kind: "pair", left: line, right: line });
        i += 1;
        continue;
      }
      const dels: DiffLine[] = [];
      const ins: DiffLine[] = [];
      while (i < h.lines.length && (h.lines[i] as DiffLine).tag === "delete") dels.push(h.lines[i++] as DiffLine);
      while (i < h.lines.length && (h.lines[i] as DiffLine).tag === "insert") ins.push(h.lines[i++] as DiffLine);
      for (let n = 0; n < Math.max(dels.length, ins.length); n++) {
        rows.push({ kind: "pair", left: dels[n] ?? null, right: ins[n] ?? null });
      }
    }
  }
  return rows;
}

function Badges({ diff }: { diff: FileDiff }) {
  const badges: string[] = [];
  if (diff.kind === "create") badges.push("new file");
  if (diff.kind === "delete") badges.push("deleted");
  if (diff.kind === "binary") badges.push("binary");
  if (diff.kind === "too_large") badges.push("too large to show");
  if (diff.kind === "unchanged") badges.push("no changes");
  if (diff.crlf) badges.push("CRLF");
  if (diff.old_missing_newline || diff.new_missing_newline) badges.push("no trailing newline");
  return (
    <span className="badges">
      {badges.map((b) => (
        <span key={b} className={`badge diff-badge diff-badge-${b.replace(/\s+/g, "-").toLowerCase()}`}>
          {b}
        </span>
      ))}
    </span>
  );
}

function Num({ n }: { n: number | null }) {
  return <td className="diff-num">{n ?? ""}</td>;
}

export function DiffViewer({
  diff,
  initialMode = "unified",
  foldAt = DIFF_FOLD_AT,
}: {
  diff: FileDiff;
  initialMode?: DiffMode;
  foldAt?: number;
}) {
  const [mode, setMode] = useState<DiffMode>(initialMode);
  const [expanded, setExpanded] = useState(false);
  const lang = languageFor(diff.path);
  const ready = useLanguageReady(lang);
  const coloured = useMemo(() => highlightHunks(diff, ready ? lang : null), [diff, lang, ready]);
  const text = (line: DiffLine) => <LineText line={line} segments={coloured.get(line) ?? plainLines(line.text)[0] ?? []} />;
  const rows = mode === "unified" ? unifiedRows(diff) : splitRows(diff);
  const shown = expanded ? rows : rows.slice(0, foldAt);
  const hidden = rows.length - shown.length;
  const hasLines = diff.hunks.length > 0;

  return (
    <figure className="diff" aria-label={`Changes to ${visibleString(diff.path)}`}>
      <figcaption className="diff-head">
        <code className="diff-path">
          <Visible text={diff.path} mode="line" />
        </code>
        <span className="diff-stat">
          <span className="diff-added">+{diff.added}</span> <span className="diff-removed">−{diff.removed}</span>
        </span>
        <Badges diff={diff} />
        {hasLines ? (
          <span className="diff-modes" role="group" aria-label="Diff layout">
            <button type="button" className="button button-small" aria-pressed={mode === "unified"} onClick={() => setMode("unified")}>
              Unified
            </button>
            <button type="button" className="button button-small" aria-pressed={mode === "split"} onClick={() => setMode("split")}>
              Side by side
            </button>
          </span>
        ) : null}
      </figcaption>
      {!hasLines ? (
        <p className="diff-summary muted">
          <Visible text={diff.summary} mode="line" />
        </p>
      ) : (
        <div className="diff-body">
          <table className={`diff-table diff-${mode}`} data-mode={mode}>
            <tbody>
              {shown.map((row, i) => {
                if (row.kind === "hunk") {
                  return (
                    <tr key={i} className="diff-hunk">
                      <td colSpan={4}>{row.label}</td>
                    </tr>
                  );
                }
                if (row.kind === "line") {
                  const l = row.line;
                  return (
                    <tr key={i} className={`diff-line diff-${l.tag}`} data-tag={l.tag}>
                      <Num n={l.old_line} />
                      <Num n={l.new_line} />
                      <td className="diff-sign" aria-hidden="true">{SIGN[l.tag]}</td>
                      <td className="diff-text">
                        {text(l)}
                      </td>
                    </tr>
                  );
                }
                return (
                  <tr key={i} className="diff-pair">
                    <Num n={row.left?.old_line ?? null} />
                    <td className={`diff-text diff-side-old${row.left ? ` diff-${row.left.tag}` : " diff-empty"}`} data-side="old">
                      {row.left ? text(row.left) : null}
                    </td>
                    <Num n={row.right?.new_line ?? null} />
                    <td className={`diff-text diff-side-new${row.right ? ` diff-${row.right.tag}` : " diff-empty"}`} data-side="new">
                      {row.right ? text(row.right) : null}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {hidden > 0 ? (
            <button type="button" className="button diff-more" onClick={() => setExpanded(true)}>
              Show {hidden.toLocaleString()} more lines
            </button>
          ) : null}
        </div>
      )}
    </figure>
  );
}
