// WCAG 2 contrast of the stylesheet's colour pairs: the theme variables of the light `:root` and
// the dark `prefers-color-scheme` override, and every rule that sets both a background and a text
// colour from them (badges, statuses, notices), read from the CSS text.

/** Theme name → custom property (`--ok`) → its value (`#1a7f4b`). */
export type Themes = Record<"light" | "dark", Record<string, string>>;

/** A rule's selector and the variables its background and text colour come from. */
export type ColourPair = { selector: string; background: string; color: string };

const withoutComments = (css: string) => css.replace(/\/\*[\s\S]*?\*\//g, "");

function properties(block: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const m of block.matchAll(/(--[\w-]+)\s*:\s*([^;]+);/g)) found[m[1] as string] = (m[2] as string).trim();
  return found;
}

/** The light theme (the first top-level `:root`) and the dark one (light overridden by the
 * `:root` inside `@media (prefers-color-scheme: dark)`). */
export function themes(css: string): Themes {
  const text = withoutComments(css);
  const light = /(?:^|\})\s*:root\s*\{([^}]*)\}/.exec(text);
  const dark = /@media\s*\(prefers-color-scheme:\s*dark\)\s*\{\s*:root\s*\{([^}]*)\}/.exec(text);
  if (!light || !dark) throw new Error("styles.css: no light :root or no dark-scheme :root");
  const base = properties(light[1] as string);
  return { light: base, dark: { ...base, ...properties(dark[1] as string) } };
}

/** Every top-level rule (outside at-rules) whose `background` and `color` are both `var(--x)`. */
export function colourPairs(css: string): ColourPair[] {
  const text = withoutComments(css).replace(/@[^{]+\{(?:[^{}]*\{[^}]*\})*[^{}]*\}/g, "");
  const pairs: ColourPair[] = [];
  for (const m of text.matchAll(/([^{}]+)\{([^}]*)\}/g)) {
    const body = m[2] as string;
    const background = /(?:^|[;\s])background(?:-color)?\s*:\s*var\((--[\w-]+)\)\s*;/.exec(body)?.[1];
    const color = /(?:^|[;\s])color\s*:\s*var\((--[\w-]+)\)\s*;/.exec(body)?.[1];
    if (!background || !color) continue;
    for (const selector of (m[1] as string).split(",")) pairs.push({ selector: selector.trim(), background, color });
  }
  return pairs;
}

/** Relative luminance of a `#rrggbb` colour. */
function luminance(hex: string): number {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) throw new Error(`not a #rrggbb colour: ${hex}`);
  const [r, g, b] = m.slice(1).map((h) => {
    const c = parseInt(h, 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** The WCAG contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}
