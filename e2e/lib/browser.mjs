// System Chromium through playwright-core (no downloaded browsers), plus screenshot paths.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { REPO_ROOT } from "./server.mjs";

export const SCREENSHOT_DIR = join(REPO_ROOT, "artifacts", "browser");

export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

export function screenshotPath(name) {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return join(SCREENSHOT_DIR, `${name}.png`);
}

/** Saves the whole page (scrolled parts too, unless `options` says otherwise) as `name`.png. */
export function screenshot(page, name, options = {}) {
  return page.screenshot({ path: screenshotPath(name), fullPage: true, ...options });
}

/** Resolves once the page's location hash is exactly `hash`. */
export function waitForHash(page, hash) {
  return page.waitForFunction((want) => window.location.hash === want, hash);
}

/**
 * A page in a fresh 1280×860 context; uncaught page errors are pushed onto `errors` (or onto the
 * array given as the second argument).
 */
export async function newPage(browser, optionsOrErrors = {}, more = {}) {
  const options = Array.isArray(optionsOrErrors) ? { ...more, errors: optionsOrErrors } : optionsOrErrors;
  const { timeoutMs = 15_000, errors = [], permissions = [], origin } = options;
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  if (permissions.length > 0) await context.grantPermissions(permissions, { origin });
  const page = await context.newPage();
  page.setDefaultTimeout(timeoutMs);
  page.on("pageerror", (error) => errors.push(String(error)));
  return page;
}
