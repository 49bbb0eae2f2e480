// The media of an MCP result in the browser against a real `skald serve`, the strict fake
// provider and the real `@modelcontextprotocol/server-everything` (npm, scripts/mcp-peers): the
// model activates the server and calls `get-tiny-image`; the chat's tool card shows the image the
// server returned (decoded by the browser from the `tool_media` op's bytes), the card of
// `get-resource-links` lists its links as text, the session debug tree shows the same image, and
// no request the model got carries the image's base64.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { chatFixture } from "../lib/chat_fixture.mjs";
import { call } from "../lib/fake_llm.mjs";

const SERVER_BIN = process.env.SKALD_MCP_EVERYTHING;
const ANSWER = "Here is the server's tiny image.";
const IMAGE_ALT = "image 1 from everything/get-tiny-image";

describe("an MCP tool's image in the chat and the debug tree", () => {
  const chat = chatFixture({
    workdir: "mcp-media",
    chunkDelayMs: 5,
    script: [
      call("activate_tools", { groups: ["everything"] }),
      call("mcp__everything__get-tiny-image", {}),
      call("mcp__everything__get-resource-links", { count: 2 }),
      { type: "text", content: ANSWER },
    ],
    config: `mcp:\n  servers:\n    - name: everything\n      command: ${SERVER_BIN}\n      description: the MCP reference test server\n      trusted: true\n`,
  });
  const { pageErrors, shoot, send } = chat;
  let fake, server, page;
  /** The image's decoded width once the browser decoded it (0 for a broken image). */
  const decodedWidth = (img) =>
    img.evaluate((el) => (el.complete ? el.naturalWidth : new Promise((ok) => el.addEventListener("load", () => ok(el.naturalWidth), { once: true }))));

  before(async () => {
    assert.ok(SERVER_BIN && existsSync(SERVER_BIN), "SKALD_MCP_EVERYTHING: run scripts/mcp-peers/install.sh (scripts/e2e-browser.sh does)");
    ({ fake, server, page } = await chat.start());
  });

  after(() => chat.stop());

  test("the tool card shows the image the server returned and lists resource links", async () => {
    await send("Show me the test server's tiny image");
    await page.locator(".bubble-assistant:not(.is-streaming)", { hasText: ANSWER }).waitFor();

    const card = page.locator("article.tool-card", { hasText: "get-tiny-image" });
    const img = card.getByRole("img", { name: IMAGE_ALT });
    await img.waitFor();
    assert.match(await img.getAttribute("src"), /^data:image\/png;base64,iVBORw0KGgo/);
    assert.ok((await decodedWidth(img)) > 0, "the browser decoded the PNG");
    const box = await img.boundingBox();
    assert.ok(box.width >= 64 && box.height >= 64, `a tiny image is drawn large enough to see: ${JSON.stringify(box)}`);

    const links = page.getByRole("list", { name: "Resource links" });
    await links.waitFor();
    const listed = await links.innerText();
    assert.match(listed, /Blob Resource 1 <demo:\/\/resource\/[^>]+> \(text\/plain\)/);
    assert.match(listed, /Text Resource 2 <demo:\/\/resource\/[^>]+> \(text\/plain\)/);
    assert.equal(await links.locator("a").count(), 0, "links are listed, not followed");
    await img.scrollIntoViewIfNeeded();
    await shoot("70-mcp-image-in-chat");

    // Every request was scripted and valid, and none carried the image's bytes.
    const requests = await fake.requests();
    assert.equal(requests.length, 4);
    for (const r of requests) {
      assert.equal(r.validation_error ?? null, null, `request ${r.seq} was valid`);
      assert.equal(r.unscripted, false, `request ${r.seq} was scripted`);
      assert.doesNotMatch(JSON.stringify(r.body), /iVBORw0KGgo|[A-Za-z0-9+/]{200}/, `request ${r.seq} carried base64`);
    }
  });

  test("the session debug tree shows the same image", async () => {
    const { items } = await server.call("list_sessions", {});
    const id = items[0].id;
    // The op reads the same bytes the card shows, by call and index.
    const tree = await server.call("session_detail", { session_id: id });
    const tool = tree.messages.find((m) => m.kind === "tool" && m.name.endsWith("get-tiny-image"));
    assert.equal(tool.media.media[0].mime, "image/png");
    const file = await server.call("tool_media", { tool_call_id: tool.tool_call_id, index: 0 });
    assert.equal(Buffer.from(file.base64, "base64").subarray(0, 4).toString("latin1"), "\x89PNG");
    await assert.rejects(server.call("tool_media", { tool_call_id: tool.tool_call_id, index: 1 }), /404|not_found/);
    await page.goto(`${server.url}#session/${id}`);
    const img = page.locator(".row-tool").getByRole("img", { name: IMAGE_ALT });
    await img.waitFor();
    assert.ok((await decodedWidth(img)) > 0, "the tree's image decoded");
    await img.scrollIntoViewIfNeeded();
    await shoot("71-mcp-image-in-debug-tree");
  });

  test("no uncaught errors in the page", () => {
    assert.deepEqual(pageErrors, []);
  });
});
