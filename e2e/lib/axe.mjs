// axe-core run inside the page (through Playwright's evaluate, which the page's CSP does not
// block): the serious and critical violations, each with the elements it found.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** Serious and critical violations on the page as it is now, as readable lines. */
export async function seriousViolations(page) {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    // Only WCAG A/AA rules and best practices; experimental rules are off by default.
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary?.split("\n").slice(1).join(" ").trim()}`),
    }));
  });
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .flatMap((v) => v.nodes.map((n) => `[${v.impact}] ${v.id} (${v.help}) ${n}`));
}

/** Asserts no serious or critical violation on the page as it is, in the light and the dark
 * theme (named `what` in the failure); leaves the page in the light theme. */
export async function assertAxeBothThemes(page, what) {
  const found = [];
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const v of await seriousViolations(page)) found.push(`${scheme} · ${what}: ${v}`);
  }
  await page.emulateMedia({ colorScheme: "light" });
  assert.deepEqual(found, []);
}

/** Every status, badge and notice class the page's stylesheets define (`.status-done`,
 * `.badge-ok`, `.nav-badge`, `.notice-warn`…), each on a sample element of its kind added to the
 * page's main area, so a contrast check sees the colour pairs no page happens to show. Resolves
 * to the classes shown. */
export async function showEveryBadge(page) {
  return page.evaluate(() => {
    const kinds = /^\.((status|badge|notice)(-[a-z-]+)?|nav-badge)$/;
    const classes = new Set();
    const visit = (rules) => {
      for (const rule of rules) {
        if (rule.cssRules) visit(rule.cssRules);
        for (const part of rule.selectorText?.split(",") ?? []) {
          const m = kinds.exec(part.trim());
          if (m) classes.add(m[1]);
        }
      }
    };
    for (const sheet of document.styleSheets) visit(sheet.cssRules);
    const box = document.createElement("section");
    box.setAttribute("aria-label", "Every status and badge");
    for (const name of [...classes].sort()) {
      const el = document.createElement(name.startsWith("notice") ? "div" : "span");
      const base = name.split("-")[0];
      el.className = name === base || name === "nav-badge" ? name : `${base} ${name}`;
      el.textContent = `${name} sample`;
      box.append(el, " ");
    }
    document.querySelector("main")?.prepend(box);
    return [...classes].sort();
  });
}
