// A tiny line-based syntax colourer: keywords, strings, comments and numbers for a few languages.
import type { ReactNode } from "react";

type Lang = { keywords: Set<string>; lineComment: string[]; blockComment: boolean };

const words = (s: string) => new Set(s.split(/\s+/).filter(Boolean));

const C_LIKE = "if else for while do return break continue switch case default new delete try catch finally throw class struct enum const static public private protected void null true false this";
const LANGS: Record<string, Lang> = {
  rust: { keywords: words(`${C_LIKE} fn let mut pub use mod impl trait where match as in loop move ref self Self crate super async await dyn type unsafe extern Some None Ok Err`), lineComment: ["//"], blockComment: true },
  ts: { keywords: words(`${C_LIKE} function let var import export from as async await typeof instanceof interface type extends implements of in yield undefined readonly keyof`), lineComment: ["//"], blockComment: true },
  py: { keywords: words("def class if elif else for while return import from as with try except finally raise pass break continue lambda yield None True False and or not in is global nonlocal async await"), lineComment: ["#"], blockComment: false },
  sh: { keywords: words("if then else elif fi for while do done case esac function in export local return echo cd set unset"), lineComment: ["#"], blockComment: false },
  go: { keywords: words(`${C_LIKE} func package import var type interface map chan go defer range select nil`), lineComment: ["//"], blockComment: true },
  c: { keywords: words(`${C_LIKE} int char long short unsigned signed float double bool auto include define sizeof typedef union extern inline namespace template typename using`), lineComment: ["//"], blockComment: true },
  json: { keywords: words("true false null"), lineComment: [], blockComment: false },
  toml: { keywords: words("true false"), lineComment: ["#"], blockComment: false },
  css: { keywords: words("important"), lineComment: [], blockComment: true },
};

const ALIASES: Record<string, string> = {
  rs: "rust", rust: "rust", ts: "ts", tsx: "ts", js: "ts", jsx: "ts", mjs: "ts", cjs: "ts",
  javascript: "ts", typescript: "ts", py: "py", python: "py", sh: "sh", bash: "sh", zsh: "sh",
  shell: "sh", go: "go", c: "c", h: "c", cpp: "c", cc: "c", hpp: "c", java: "c", cs: "c",
  json: "json", toml: "toml", yaml: "toml", yml: "toml", css: "css",
};

/** The language for a fence name (`rust`) or a file path (`src/main.rs`); null = plain text. */
export function languageFor(nameOrPath: string | null | undefined): string | null {
  if (!nameOrPath) return null;
  const lower = nameOrPath.toLowerCase();
  const dot = lower.lastIndexOf(".");
  const key = dot >= 0 && !lower.includes(" ") ? lower.slice(dot + 1) : lower;
  return ALIASES[key] ?? ALIASES[lower] ?? null;
}

export type Token = { type: "plain" | "keyword" | "string" | "comment" | "number"; text: string };

export function tokenize(line: string, lang: string | null): Token[] {
  const spec = lang ? LANGS[lang] : undefined;
  if (!spec) return [{ type: "plain", text: line }];
  const out: Token[] = [];
  const push = (type: Token["type"], text: string) => {
    const last = out[out.length - 1];
    if (last && last.type === type) last.text += text;
    else out.push({ type, text });
  };
  let i = 0;
  while (i < line.length) {
    const rest = line.slice(i);
    const lc = spec.lineComment.find((m) => rest.startsWith(m));
    if (lc) {
      push("comment", rest);
      break;
    }
    if (spec.blockComment && rest.startsWith("/*")) {
      const end = rest.indexOf("*/", 2);
      const len = end < 0 ? rest.length : end + 2;
      push("comment", rest.slice(0, len));
      i += len;
      continue;
    }
    const ch = line[i] as string;
    if (ch === '"' || ch === "'" || ch === "`") {
      let j = i + 1;
      while (j < line.length && line[j] !== ch) j += line[j] === "\\" ? 2 : 1;
      push("string", line.slice(i, Math.min(j + 1, line.length)));
      i = Math.min(j + 1, line.length);
      continue;
    }
    const num = /^\d[\d_.xa-fA-F]*/.exec(rest);
    if (num && (i === 0 || !/[\w$]/.test(line[i - 1] as string))) {
      push("number", num[0]);
      i += num[0].length;
      continue;
    }
    const word = /^[A-Za-z_$][\w$]*/.exec(rest);
    if (word) {
      push(spec.keywords.has(word[0]) ? "keyword" : "plain", word[0]);
      i += word[0].length;
      continue;
    }
    push("plain", ch);
    i += 1;
  }
  return out;
}

export function Highlighted({ text, lang }: { text: string; lang: string | null }): ReactNode {
  return tokenize(text, lang).map((t, i) =>
    t.type === "plain" ? t.text : (
      <span key={i} className={`tok-${t.type}`}>
        {t.text}
      </span>
    ),
  );
}

/** Colours a multi-line block line by line (comments and strings do not span lines here). */
export function HighlightedBlock({ code, lang }: { code: string; lang: string | null }) {
  const lines = code.split("\n");
  return (
    <>
      {lines.map((line, i) => (
        <span key={i}>
          <Highlighted text={line} lang={lang} />
          {i < lines.length - 1 ? "\n" : null}
        </span>
      ))}
    </>
  );
}
