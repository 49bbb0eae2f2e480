// A tool's text result coloured like code blocks and diffs: a file as `read_file` returns it
// (`    12\tfn main() {` per line, the numbers a muted gutter that copying leaves out), or JSON.
import { Fragment } from "react";
import { HighlightedLine, useHighlightedLines } from "./highlight";
import { Visible } from "./visible";

const NUMBERED = /^( *\d+\t)(.*)$/;

export function FileView({ text, lang }: { text: string; lang: string | null }) {
  const rows = text.split("\n").map((line) => ({ line, numbered: NUMBERED.exec(line) }));
  const numbered = rows.some((r) => r.numbered);
  // Coloured as one text, so strings and comments that span lines keep their colour; marker
  // rows of a file (`[… 40 more lines]`) stand in as empty lines.
  const code = numbered ? rows.map((r) => r.numbered?.[2] ?? "").join("\n") : text;
  const lines = useHighlightedLines(code, lang);
  return (
    <pre className="code-pre tool-result file-view" data-lang={lang ?? undefined}>
      {rows.map((r, i) => (
        <Fragment key={i}>
          {numbered && !r.numbered ? (
            <Visible text={r.line} />
          ) : (
            <>
              {r.numbered ? <span className="file-num">{r.numbered[1]}</span> : null}
              <HighlightedLine segments={lines[i] ?? []} />
            </>
          )}
          {i < rows.length - 1 ? "\n" : null}
        </Fragment>
      ))}
    </pre>
  );
}
