// Syntax colour with highlight.js (through lowlight, which yields a tree, never HTML): the engine
// and each language load on first use, so none of it is in the first paint.
import { Fragment, useEffect, useMemo, useState, type ReactNode } from "react";
import type { Element, ElementContent, Root } from "hast";
import { ALIASES, EMBEDS, LOADERS } from "virtual:hljs-languages";
import { Visible } from "./visible";

type Lowlight = ReturnType<typeof import("lowlight").createLowlight>;

/** A run of text and the highlight.js classes of its innermost token (null = plain). */
export type Segment = { text: string; className: string | null };
/** Highlighted code split into lines (without their newlines). */
export type Lines = Segment[][];

function resolve(key: string): string | null {
  const name = Object.hasOwn(LOADERS, key) ? key : Object.hasOwn(ALIASES, key) ? (ALIASES[key] as string) : null;
  // Plain text (`txt`, `text`) has nothing to colour: no grammar to fetch.
  return name === "plaintext" ? null : name;
}

/** The language for a fence name (`rust`, `rs`) or a file path (`src/main.rs`); null = plain text. */
export function languageFor(nameOrPath: string | null | undefined): string | null {
  if (!nameOrPath) return null;
  const lower = nameOrPath.trim().toLowerCase();
  const base = lower.slice(lower.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  return resolve(lower) ?? resolve(base) ?? (dot >= 0 ? resolve(base.slice(dot + 1)) : null);
}

let engine: Lowlight | null = null;
let engineLoad: Promise<Lowlight> | null = null;
const grammarLoads = new Map<string, Promise<void>>();
const languageLoads = new Map<string, Promise<void>>();
/** Languages whose grammar and embedded grammars are all registered. */
const ready = new Set<string>();

function loadEngine(): Promise<Lowlight> {
  engineLoad ??= import("lowlight").then(({ createLowlight }) => (engine = createLowlight()));
  return engineLoad;
}

/** Fetches and registers one grammar, once; a failed fetch may be retried later. */
function loadGrammar(lang: string): Promise<void> {
  let load = grammarLoads.get(lang);
  if (!load) {
    const loader = LOADERS[lang];
    if (!loader) return Promise.reject(new Error(`no grammar for ${lang}`));
    load = Promise.all([loadEngine(), loader()]).then(([lowlight, grammar]) => lowlight.register(lang, grammar.default));
    load.catch(() => grammarLoads.delete(lang));
    grammarLoads.set(lang, load);
  }
  return load;
}

/** Whether `lang` can be highlighted right now, without waiting. */
export function isLoaded(lang: string): boolean {
  return ready.has(lang);
}

/**
 * Loads the engine, the grammar of `lang` and the grammars it embeds (HTML's CSS and JavaScript),
 * once; later calls share the first load. Embedded grammars' own embeds are not followed (they
 * can be cyclic: JavaScript embeds HTML).
 */
export function loadLanguage(lang: string): Promise<void> {
  let load = languageLoads.get(lang);
  if (!load) {
    load = Promise.all([lang, ...(EMBEDS[lang] ?? [])].map(loadGrammar)).then(() => void ready.add(lang));
    load.catch(() => languageLoads.delete(lang));
    languageLoads.set(lang, load);
  }
  return load;
}

/** `code` as unhighlighted lines. */
export function plainLines(code: string): Lines {
  return code.split("\n").map((text) => (text ? [{ text, className: null }] : []));
}

function classOf(el: Element): string | null {
  const names = el.properties.className;
  return Array.isArray(names) ? names.join(" ") : null;
}

/** Flattens highlight.js's token tree into lines of runs, each with its innermost token class. */
export function treeToLines(root: Root): Lines {
  const lines: Lines = [[]];
  const walk = (nodes: ElementContent[], className: string | null) => {
    for (const node of nodes) {
      if (node.type === "element") {
        walk(node.children, classOf(node) ?? className);
      } else if (node.type === "text") {
        node.value.split("\n").forEach((part, i) => {
          if (i > 0) lines.push([]);
          if (part) (lines[lines.length - 1] as Segment[]).push({ text: part, className });
        });
      }
    }
  };
  walk(root.children as ElementContent[], null);
  return lines;
}

/** Longer texts stay plain: colouring them would hold the page for a noticeable moment. */
export const MAX_HIGHLIGHT_CHARS = 200_000;

/**
 * Highlights `code` now if its grammar is loaded; null if it is not, `lang` is unknown, or the
 * text is too long to colour.
 */
export function highlightNow(code: string, lang: string | null): Lines | null {
  if (!lang || !engine || !isLoaded(lang) || code.length > MAX_HIGHLIGHT_CHARS) return null;
  return treeToLines(engine.highlight(lang, code));
}

/** Whether `lang`'s grammar is loaded; starts loading it and re-renders once it is. */
export function useLanguageReady(lang: string | null): boolean {
  const ready = lang !== null && isLoaded(lang);
  const [, setLoaded] = useState(0);
  useEffect(() => {
    if (!lang || ready || !LOADERS[lang]) return;
    let live = true;
    loadLanguage(lang).then(
      () => live && setLoaded((n) => n + 1),
      () => undefined, // Stays plain text: colour is a nicety, the code is all there.
    );
    return () => {
      live = false;
    };
  }, [lang, ready]);
  return ready;
}

/**
 * `code` as lines, highlighted once its grammar is loaded (plain until then). The result is
 * memoised on the text, so a block that stops changing is never highlighted again.
 */
export function useHighlightedLines(code: string, lang: string | null): Lines {
  const ready = useLanguageReady(lang);
  return useMemo(() => (ready ? highlightNow(code, lang) : null) ?? plainLines(code), [code, lang, ready]);
}

/** One line's runs; characters that hide (bidi controls, ESC, …) show as marked tokens. */
export function HighlightedLine({ segments }: { segments: Segment[] }): ReactNode {
  return segments.map((s, i) =>
    s.className ? (
      <span key={i} className={s.className}>
        <Visible text={s.text} />
      </span>
    ) : (
      <Fragment key={i}>
        <Visible text={s.text} />
      </Fragment>
    ),
  );
}

/** Lines joined by newlines, for a `<pre>`. */
export function HighlightedLines({ lines }: { lines: Lines }): ReactNode {
  return lines.map((segments, i) => (
    <Fragment key={i}>
      <HighlightedLine segments={segments} />
      {i < lines.length - 1 ? "\n" : null}
    </Fragment>
  ));
}
