// `virtual:hljs-languages`: every highlight.js language as a lazy import (one chunk each) plus the
// alias table (`rs` → `rust`), read from the installed highlight.js at build time so it can never
// drift from the grammars that ship.
import { createRequire } from "node:module";
import type { Plugin } from "vite";

const ID = "virtual:hljs-languages";
const RESOLVED = `\0${ID}`;

type HljsLanguage = { aliases?: string[] };
type Hljs = { listLanguages(): string[]; getLanguage(name: string): HljsLanguage | undefined };

/** The module's source: `LOADERS` by language name and `ALIASES` from alias to name. */
export function languagesModule(hljs: Hljs): string {
  const names = hljs.listLanguages().sort();
  const aliases: Record<string, string> = {};
  for (const name of names) {
    for (const alias of hljs.getLanguage(name)?.aliases ?? []) aliases[alias.toLowerCase()] ??= name;
  }
  const loaders = names.map((n) => `  ${JSON.stringify(n)}: () => import(${JSON.stringify(`highlight.js/lib/languages/${n}`)}),`);
  return [
    `export const LOADERS = {\n${loaders.join("\n")}\n};`,
    `export const ALIASES = ${JSON.stringify(aliases)};`,
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
