#!/usr/bin/env node
// A small MCP server (stdio) for the tests of what a server sends on its own, written with the
// official SDK: `add_tool` adds the tool `added` and `remove_tool` removes it (each sends
// `notifications/tools/list_changed`), `log` sends a log message (`notifications/message`),
// `emit_event` sends a server event (`event/new_email`), `broken_chart` fails with an image, `login` asks the user for a name and a
// password (`elicitation/create`; a secret by its name: the spec has no `format: password`) and
// says whether the password, read backwards, is what the call expects (so that the password
// itself is never in the call's arguments). server-everything has no way to
// change its tool list on demand. Every tool says it is read-only (`readOnlyHint`), which Skald
// honours only when the test marks the server trusted.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer(
  { name: "skald-test-notifier", version: "1.0.0" },
  { capabilities: { tools: { listChanged: true }, logging: {} } },
);

const text = (t) => ({ content: [{ type: "text", text: t }] });
const annotations = { readOnlyHint: true, openWorldHint: false };
let added = null;

server.registerTool("add_tool", { description: "Adds the tool `added`.", inputSchema: {}, annotations }, async () => {
  if (!added) {
    added = server.registerTool(
      "added",
      { description: "Exists only after add_tool.", inputSchema: { word: z.string() }, annotations },
      async ({ word }) => text(`added says ${word}`),
    );
  }
  return text("added the tool `added`");
});

server.registerTool("remove_tool", { description: "Removes the tool `added`.", inputSchema: {}, annotations }, async () => {
  if (added) {
    added.remove();
    added = null;
  }
  return text("removed the tool `added`");
});

server.registerTool(
  "log",
  {
    description: "Sends a log message.",
    inputSchema: { level: z.string(), message: z.string() },
    annotations,
  },
  async ({ level, message }) => {
    await server.sendLoggingMessage({ level, logger: "notifier", data: message });
    return text("logged");
  },
);

server.registerTool(
  "login",
  { description: "Asks the user to log in.", inputSchema: { expect: z.string() }, annotations },
  async ({ expect }) => {
    const answer = await server.server.elicitInput({
      message: "Log in to the test service",
      requestedSchema: {
        type: "object",
        properties: {
          user: { type: "string", title: "User" },
          password: { type: "string", title: "Password" },
        },
        required: ["user", "password"],
      },
    });
    if (answer.action !== "accept") return text(`login ${answer.action}`);
    const { user, password } = answer.content;
    return text(`user=${user}; password ${[...password].reverse().join("") === expect ? "matches" : "does not match"}`);
  },
);

// A failure that still carries media (a chart the server drew before it gave up): `isError` with
// a text and a 1x1 PNG.
const RED_DOT = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
server.registerTool("broken_chart", { description: "Fails, with the chart it drew so far.", inputSchema: {}, annotations }, async () => ({
  isError: true,
  content: [
    { type: "text", text: "the chart could not be finished" },
    { type: "image", data: RED_DOT, mimeType: "image/png" },
  ],
}));

server.registerTool(
  "emit_event",
  { description: "Sends the notification event/new_email.", inputSchema: { subject: z.string() }, annotations },
  async ({ subject }) => {
    await server.server.notification({ method: "event/new_email", params: { subject } });
    return text("sent");
  },
);

await server.connect(new StdioServerTransport());
