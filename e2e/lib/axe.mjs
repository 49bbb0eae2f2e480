// axe-core run inside the page (through Playwright's evaluate, which the page's CSP does not
// block): the serious and critical violations, each with the elements it found.
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
