// Sizes of a built UI (raw and gzip level 9): what the first paint loads (the files index.html
// names) and what loads later (every other chunk: the highlighter, one chunk per language).
//
// Usage: node bench/bundle-size.mjs [DIST]     (default ui/dist)
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { REPO_ROOT } from "../lib/server.mjs";

const dist = resolve(process.argv[2] ?? join(REPO_ROOT, "ui", "dist"));
const html = readFileSync(join(dist, "index.html"), "utf8");
const initialNames = new Set([...html.matchAll(/(?:src|href)="\.?\/?assets\/([^"]+)"/g)].map((m) => m[1]));

const files = readdirSync(join(dist, "assets")).map((name) => {
  const bytes = readFileSync(join(dist, "assets", name));
  return { name, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
});
const kb = (n) => `${(n / 1024).toFixed(1)} kB`;
const total = (fs) => fs.reduce((s, f) => s + f.gzip, 0);
const initial = files.filter((f) => initialNames.has(f.name));
const lazy = files.filter((f) => !initialNames.has(f.name) && f.name.endsWith(".js"));
const engine = lazy.filter((f) => f.name.startsWith("lowlight-"));
const languages = lazy.filter((f) => !f.name.startsWith("lowlight-")).sort((a, b) => a.gzip - b.gzip);

console.log(`dist: ${dist}`);
for (const f of initial) console.log(`initial  ${f.name.padEnd(28)} ${kb(f.raw).padStart(10)}  gzip ${kb(f.gzip)}`);
console.log(`initial total gzip: ${kb(total(initial))}`);
for (const f of engine) console.log(`lazy     ${f.name.padEnd(28)} ${kb(f.raw).padStart(10)}  gzip ${kb(f.gzip)}`);
if (languages.length > 0) {
  const median = languages[Math.floor(languages.length / 2)];
  // Vite names a chunk `<name>-<8-character hash>.js`.
  const pick = (n) => languages.find((f) => new RegExp(`^${n}-[\\w-]{8}\\.js$`).test(f.name));
  console.log(`lazy     ${languages.length} language chunks: median gzip ${kb(median.gzip)}, largest ${languages.at(-1).name} ${kb(languages.at(-1).gzip)}, all together ${kb(total(languages))}`);
  for (const n of ["rust", "python", "typescript", "go", "bash"]) {
    const f = pick(n);
    if (f) console.log(`           ${n.padEnd(11)} gzip ${kb(f.gzip)}`);
  }
}
