// One tool call in the chat: label, status colour, the progress its MCP server reports while it
// runs, the file change a write made, the media an MCP call returned, arguments, and a foldable,
// truncated result.
import { useState, type ReactNode } from "react";
import type { CardStatus, ToolItem } from "../backend";
import { DiffViewer } from "./DiffViewer";
import { FileView } from "./FileView";
import { languageFor } from "./highlight";
import { prettyJson } from "./json";
import { ToolMediaView } from "./ToolMedia";
import { Visible, visibleString } from "./visible";

/** Results longer than this show a head and a "Show all" button. */
export const RESULT_PREVIEW_CHARS = 2_000;

const STATUS_TEXT: Record<CardStatus, string> = {
  running: "running",
  done: "done",
  error: "error",
  cancelled: "cancelled",
  rejected: "rejected",
  pending: "waiting for approval",
};

/** The language a result is coloured in: a read file's, or JSON's; null = plain text. */
function resultLanguage(tool: ToolItem): string | null {
  if (tool.resultType === "json") return "json";
  const path = (tool.arguments as { path?: unknown } | null)?.path;
  return tool.name === "read_file" && typeof path === "string" ? languageFor(path) : null;
}

/**
 * A result's head and a "Show all" button. `total` counts the whole result; when the page held
 * only a preview of it (`onLoadAll`), the button fetches the rest first.
 */
function ResultBody({
  text,
  total,
  lang,
  onLoadAll,
}: {
  text: string;
  total: number;
  lang: string | null;
  onLoadAll?: () => Promise<void>;
}) {
  const [all, setAll] = useState(false);
  const long = total > RESULT_PREVIEW_CHARS || text.length > RESULT_PREVIEW_CHARS;
  const shown = long && !all ? `${text.slice(0, RESULT_PREVIEW_CHARS)}…` : text;
  return (
    <>
      {lang ? (
        <FileView text={shown} lang={lang} />
      ) : (
        <pre className="code-pre tool-result">
          <Visible text={shown} />
        </pre>
      )}
      {long && !all ? (
        <button
          type="button"
          className="button button-small"
          onClick={() => void (onLoadAll ? onLoadAll() : Promise.resolve()).then(() => setAll(true))}
        >
          Show all ({total.toLocaleString()} chars)
        </button>
      ) : null}
    </>
  );
}

/** "3 of 4 (75%) · message", or "3 · message" when the server gives no total. */
function progressText(p: NonNullable<ToolItem["progress"]>): string {
  const amount =
    p.total !== null && p.total > 0
      ? `${p.progress.toLocaleString()} of ${p.total.toLocaleString()} (${Math.min(100, Math.round((100 * p.progress) / p.total))}%)`
      : p.progress.toLocaleString();
  return p.message ? `${amount} · ${p.message}` : amount;
}

/** The latest progress a running call's server reported: a bar when it says of how much. */
function ProgressLine({ progress }: { progress: NonNullable<ToolItem["progress"]> }) {
  const text = progressText(progress);
  const bounded = progress.total !== null && progress.total > 0;
  return (
    <div className="tool-section tool-progress">
      {bounded ? (
        <progress value={Math.min(progress.progress, progress.total as number)} max={progress.total as number} aria-label={visibleString(text)} />
      ) : null}
      <span className="tool-progress-text">
        <Visible text={text} mode="line" />
      </span>
    </div>
  );
}

/** `onLoadAll` fetches the whole call when the page held a preview of it (`tool.truncated`). */
export function ToolCard({
  tool,
  children,
  onLoadAll,
}: {
  tool: ToolItem;
  children?: ReactNode;
  onLoadAll?: () => Promise<void>;
}) {
  const [open, setOpen] = useState(false);
  const result = tool.result === null ? null : tool.resultType === "json" ? prettyJson(tool.result) : tool.result;
  const resultId = `tool-result-${tool.toolCallId}`;
  const total = result === null ? 0 : Math.max(result.length, tool.truncated ? tool.resultChars : 0);
  return (
    <article
      className={`tool-card tool-${tool.status}`}
      data-status={tool.status}
      aria-label={`Tool ${visibleString(tool.label)}, ${STATUS_TEXT[tool.status]}`}
    >
      <header className="tool-card-head">
        <span className="tool-label">
          <Visible text={tool.label} mode="line" />
        </span>
        <span className={`status status-${tool.status}`}>{STATUS_TEXT[tool.status]}</span>
      </header>
      {tool.status === "running" && tool.progress ? <ProgressLine progress={tool.progress} /> : null}
      {tool.diff ? (
        <div className="tool-section tool-diff">
          <DiffViewer diff={tool.diff} />
        </div>
      ) : null}
      <ToolMediaView toolCallId={tool.toolCallId} name={tool.name} media={tool.media} />
      <details className="tool-section">
        <summary>Arguments</summary>
        <pre className="code-pre">
          <Visible text={prettyJson(tool.arguments)} />
        </pre>
        {tool.truncated && onLoadAll ? (
          <button type="button" className="button button-small" onClick={() => void onLoadAll()}>
            Load the whole call
          </button>
        ) : null}
      </details>
      {tool.error ? (
        <p className="tool-error">
          <Visible text={tool.error} />
        </p>
      ) : null}
      {result !== null ? (
        <div className="tool-section">
          <button
            type="button"
            className="button button-small button-ghost"
            aria-expanded={open}
            aria-controls={resultId}
            onClick={() => setOpen((o) => !o)}
          >
            {open ? "Hide result" : "Show result"} ({total.toLocaleString()} chars)
          </button>
          {open ? (
            <div id={resultId}>
              <ResultBody
                text={result}
                total={total}
                lang={resultLanguage(tool)}
                onLoadAll={tool.truncated ? onLoadAll : undefined}
              />
            </div>
          ) : null}
        </div>
      ) : null}
      {children}
    </article>
  );
}
