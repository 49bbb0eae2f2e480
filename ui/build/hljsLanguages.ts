// `virtual:hljs-languages`: every highlight.js language as a lazy import (one chunk each) plus the
// alias table (`rs` → `rust`), read from the installed highlight.js at build time so it can never
// drift from the grammars that ship.
import { createRequire } from "node:module";
import type { Plugin } from "vite";

const ID = "virtual:hljs-languages";
const RESOLVED = `\0${ID}`;

type Mode = { subLanguage?: string | string[]; contains?: unknown[]; variants?: unknown[]; starts?: unknown };
type HljsLanguage = Mode & { aliases?: string[] };
type Hljs = { listLanguages(): string[]; getLanguage(name: string): HljsLanguage | undefined };

/** The languages a grammar hands parts of its text to (`xml` → `css`, `javascript`). */
function embedded(mode: unknown, seen = new Set<unknown>(), out = new Set<string>()): Set<string> {
  if (!mode || typeof mode !== "object" || seen.has(mode)) return out;
  seen.add(mode);
  const m = mode as Mode;
  for (const name of [m.subLanguage ?? []].flat()) out.add(name);
  for (const child of [...(m.contains ?? []), ...(m.variants ?? []), m.starts]) embedded(child, seen, out);
  return out;
}

/**
 * The module's source: `LOADERS` by language name, `ALIASES` from alias to name, and `EMBEDS`:
 * the languages each grammar embeds.
 */
export function languagesModule(hljs: Hljs): string {
  const names = hljs.listLanguages().sort();
  const aliases: Record<string, string> = {};
  for (const name of names) {
    for (const alias of hljs.getLanguage(name)?.aliases ?? []) aliases[alias.toLowerCase()] ??= name;
  }
  const embeds: Record<string, string[]> = {};
  for (const name of names) {
    const inner = [...embedded(hljs.getLanguage(name))].filter((n) => n !== name && names.includes(n)).sort();
    if (inner.length > 0) embeds[name] = inner;
  }
  const loaders = names.map((n) => `  ${JSON.stringify(n)}: () => import(${JSON.stringify(`highlight.js/lib/languages/${n}`)}),`);
  return [
    `export const LOADERS = {\n${loaders.join("\n")}\n};`,
    `export const ALIASES = ${JSON.stringify(aliases)};`,
    `export const EMBEDS = ${JSON.stringify(embeds)};`,
  ].join("\n");
}

export function hljsLanguages(): Plugin {
  return {
    name: "skald-hljs-languages",
    resolveId: (id) => (id === ID ? RESOLVED : null),
    load(id) {
      if (id !== RESOLVED) return null;
      // The full CommonJS build registers every grammar; only its names and aliases are read.
      const hljs = createRequire(import.meta.url)("highlight.js") as Hljs;
      return languagesModule(hljs);
    },
  };
}
