#!/usr/bin/env node
// An MCP server over streamable HTTP behind OAuth 2.1, for the Rust tests of Skald's OAuth flow
// (crates/skald-mcp/tests/oauth.rs): it is its own authorization server. Protected-resource
// metadata (RFC 9728) names it; its metadata (RFC 8414) offers dynamic registration; /authorize
// consents at once (a person pressing Allow) and redirects with a code; /token checks PKCE S256
// and the `resource` and issues access tokens that live TOKEN_TTL seconds, with refresh tokens
// that rotate. /mcp answers only a live token issued for it (401 with a challenge otherwise) and
// offers `echo` and `whoami`. Test controls: POST /revoke-all drops every token, GET /stats says
// what clients did. PRM_RESOURCE makes the metadata name another resource, TOKEN_ENDPOINT another
// token endpoint (a hostile server).
// It prints `listening <base URL>` when ready.
import http from "node:http";
import crypto from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const ttl = Number(process.env.TOKEN_TTL ?? 3600);
let base = "";
const codes = new Map();
const access = new Map();
const refresh = new Map();
const stats = { registrations: 0, authorizations: [], code_grants: 0, refresh_grants: 0, refused_tokens: 0, mcp_requests: 0 };

const b64url = (buf) => buf.toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const token = (prefix) => `${prefix}-${crypto.randomBytes(12).toString("hex")}`;

function send(res, status, body, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString("utf8");
}

function issue(resource, scope) {
  const a = token("at");
  const r = token("rt");
  access.set(a, { expires: Date.now() + ttl * 1000, resource });
  refresh.set(r, { resource, scope });
  return { access_token: a, token_type: "Bearer", expires_in: ttl, refresh_token: r, scope };
}

function mcpServer() {
  const server = new McpServer({ name: "skald-test-oauth", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.registerTool("echo", { description: "Echoes its text.", inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: "text", text: `echo: ${text}` }],
  }));
  return server;
}

const challenge = () =>
  `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp"`;

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, base);
  const path = url.pathname;
  try {
    if (req.method === "GET" && path === "/.well-known/oauth-protected-resource/mcp") {
      return send(res, 200, {
        resource: process.env.PRM_RESOURCE ?? `${base}/mcp`,
        authorization_servers: [base],
        scopes_supported: ["mcp"],
      });
    }
    if (req.method === "GET" && path === "/.well-known/oauth-authorization-server") {
      return send(res, 200, {
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: process.env.TOKEN_ENDPOINT ?? `${base}/token`,
        registration_endpoint: `${base}/register`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["none"],
        scopes_supported: ["mcp", "offline_access"],
      });
    }
    if (req.method === "POST" && path === "/register") {
      const body = JSON.parse(await readBody(req));
      stats.registrations += 1;
      return send(res, 201, { client_id: `client-${stats.registrations}`, redirect_uris: body.redirect_uris, token_endpoint_auth_method: "none" });
    }
    if (req.method === "GET" && path === "/authorize") {
      const q = Object.fromEntries(url.searchParams);
      stats.authorizations.push(q);
      if (q.response_type !== "code" || q.code_challenge_method !== "S256" || !q.code_challenge) {
        return send(res, 400, { error: "invalid_request" });
      }
      const code = token("code");
      codes.set(code, { challenge: q.code_challenge, redirect_uri: q.redirect_uri, resource: q.resource, scope: q.scope ?? "" });
      const back = new URL(q.redirect_uri);
      back.searchParams.set("code", code);
      if (q.state) back.searchParams.set("state", q.state);
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    if (req.method === "POST" && path === "/token") {
      const form = new URLSearchParams(await readBody(req));
      const grant = form.get("grant_type");
      if (grant === "authorization_code") {
        const c = codes.get(form.get("code"));
        codes.delete(form.get("code"));
        const verifier = form.get("code_verifier") ?? "";
        const ok = c && b64url(crypto.createHash("sha256").update(verifier).digest()) === c.challenge
          && form.get("redirect_uri") === c.redirect_uri && form.get("resource") === c.resource;
        if (!ok) return send(res, 400, { error: "invalid_grant" });
        stats.code_grants += 1;
        return send(res, 200, issue(c.resource, c.scope));
      }
      if (grant === "refresh_token") {
        const r = refresh.get(form.get("refresh_token"));
        refresh.delete(form.get("refresh_token"));
        if (!r) return send(res, 400, { error: "invalid_grant", error_description: "refresh token revoked" });
        stats.refresh_grants += 1;
        return send(res, 200, issue(r.resource, r.scope));
      }
      return send(res, 400, { error: "unsupported_grant_type" });
    }
    if (req.method === "POST" && path === "/revoke-all") {
      access.clear();
      refresh.clear();
      return send(res, 200, {});
    }
    if (req.method === "GET" && path === "/stats") return send(res, 200, stats);
    if (path === "/mcp") {
      const auth = req.headers.authorization ?? "";
      const t = auth.startsWith("Bearer ") ? access.get(auth.slice(7)) : undefined;
      if (!t || t.expires < Date.now() || t.resource !== `${base}/mcp`) {
        if (auth) stats.refused_tokens += 1;
        return send(res, 401, { error: "invalid_token" }, { "www-authenticate": challenge() });
      }
      stats.mcp_requests += 1;
      if (req.method !== "POST") return send(res, 405, {});
      const body = JSON.parse(await readBody(req));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const mcp = mcpServer();
      res.on("close", () => {
        transport.close();
        mcp.close();
      });
      await mcp.connect(transport);
      return await transport.handleRequest(req, res, body);
    }
    send(res, 404, { error: "not_found" });
  } catch (e) {
    send(res, 500, { error: String(e) });
  }
});

server.listen(0, "127.0.0.1", () => {
  base = `http://127.0.0.1:${server.address().port}`;
  console.log(`listening ${base}`);
});
