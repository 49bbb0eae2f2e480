// A fenced code block of model output: language label, copy button, lazily highlighted lines.
import { memo } from "react";
import { CopyButton } from "./CopyButton";
import { HighlightedLines, languageFor, useHighlightedLines } from "./highlight";

export const CodeBlock = memo(function CodeBlock({ code, fence }: { code: string; fence: string | null }) {
  const lang = languageFor(fence);
  const lines = useHighlightedLines(code, lang);
  const label = fence || "text";
  return (
    <div className="code-block">
      <div className="code-head">
        <span className="code-lang">{label}</span>
        <CopyButton text={code} what={`${label} code`} />
      </div>
      {/* Focusable so a keyboard can scroll a long line sideways. */}
      <pre className="md-code" data-lang={lang ?? undefined} tabIndex={0}>
        <code className={lang ? `hljs language-${lang}` : undefined}>
          <HighlightedLines lines={lines} />
        </code>
      </pre>
    </div>
  );
});
