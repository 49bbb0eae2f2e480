// Stops what a flow test started, browser first, and checks the server shut down cleanly.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";

export async function stopAll({ browser, server, fake, workdir }) {
  await browser?.close();
  if (server) {
    const { code } = await server.stop();
    assert.equal(code, 0, `skald serve should exit 0 on SIGTERM; stderr: ${server.stderr()}`);
  }
  await fake?.stop();
  if (workdir) rmSync(workdir, { recursive: true, force: true });
}
