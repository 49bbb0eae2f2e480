#!/usr/bin/env bash
# Browser end-to-end test: the built web UI served by `skald serve`, driven by system Chromium.
#
# tests/ui.test.mjs: `skald serve --port 0` on a temp data dir without an LLM (first run lands on
# #settings), 25 seeded sessions of source tic: #sessions, the TIC page (no ticks: sessions are not
# ticks), a session's debug tree, Back, and a live WebSocket update.
# tests/flows.test.mjs: `skald serve` against the strict fake provider (skald-fake-llm): a streamed
# turn, an edit rejected with a note from the Inbox then one approved (file checked on disk, note
# checked in the provider's journal), the debug tree with a raw request, a reload mid-turn that
# keeps STOP, and the Settings page.
# tests/chatflow.test.mjs: on a fresh install, a steer during a tool run (queued, then folded after
# the tool), a steer that outlives a streamed answer (both answers shown once), a message queued
# behind a write's approval, and a WebSocket dropped while a tool runs (the chat resyncs without a
# reload); live and after a reload.
# tests/render_a11y.test.mjs: a model answer with a GFM table, a task list, nested lists and code in
# five languages (cells and highlight.js token classes checked, copy button), the word marks of an
# approval's diff, and axe-core (npm `axe-core`) on every page in the light and the dark theme, with
# a conversation, a seeded session with a call in each end status, and on first run, then on a
# sample of every status, badge and notice class the stylesheet defines: no serious or critical
# violations.
# tests/long_session.test.mjs: 300 seeded turns (1,800 messages) and a write waiting for approval:
# the chat and the debug tree open at the newest rows with a bounded DOM, load earlier pages as
# they are scrolled up, open at a linked message highlighted, and jump to the pending approval.
# tests/interrupted.test.mjs: a command approved in the chat, the server SIGKILLed while it runs and
# started again on the same data dir: the turn goes on without running it again, and the Inbox
# lists the call under Interrupted calls (axe-core) until the user says it did not run.
# tests/search.test.mjs: 24 turns against the fake provider, then the Sessions page's search finds
# a word of one answer (only that session listed, the word marked in its snippet), the hit opens
# the session at that message (#session/ID?message=M), and Find in session counts and steps.
# tests/subagents.test.mjs: a sync sub-agent against the fake provider (one queue: parent delegates
# with execute_task to the built-in generalist, the child's write waits, the child answers, the
# parent answers): the chat shows the child's lane under its spawning call with its origin label
# and the child's approval card in it, the Inbox row and detail name the child, an approval writes
# the file, the child's answer ends the lane while the turn still runs, then the parent answers at
# the root; a reload rebuilds the same lane from history; the debug tree nests the child's rows
# (depth, indent, origin label) between its head and end right under the spawning call; every
# request the fake saw was scripted and accepted, execute_task offered only at the root.
# tests/mcp.test.mjs: the real MCP server-everything (npm, scripts/mcp-peers) declared in config.yml;
# a sub-agent activates it for itself, its call of a tool the server does not call read-only waits
# in its lane as an MCP approval naming server and tool, the approval runs it, the parent is never
# offered the server's tools; Settings lists the server and, once started, its tools.
# tests/mcp_media.test.mjs: server-everything's get-tiny-image and get-resource-links: the tool card
# shows the PNG the server returned (decoded by the browser, from the tool_media op), the links as
# text; the debug tree shows the same image; no request to the model carries base64.
# tests/live.test.mjs: events every process sees. The page of `skald serve` is open on a chat while
# `skald chat` runs a turn with a command on the same data dir and source from another process: the
# user message, the tool card and the answer show without a reload, each within 1 s of its commit
# (read from the database). Then the page's WebSocket is cut for 30 s (E2E_DISCONNECT_MS) while
# another terminal turn runs; on reconnect the page asks for the events after its last sequence and
# shows the missed turn from them (no resync, no reload, no re-read of the conversation).
# tests/jobs.test.mjs: the Jobs page against the fake provider: a job added through the form (the
# schedule's preview in words and its next five times, a five-field cron refused under its field),
# Run now, the run history showing the run done with its tokens, its link opening the run's session
# with the job's prompt and answer, the run's notice in the home chat (answer, session link,
# dismissed), the delete dialog asking about the history; a job added over the API shown through
# its job_changed event, its run that never ends killed from its history and the job deleted with
# its history; axe-core on the form, the run history, the notice and the dialog in both themes.
# tests/memory.test.mjs: agent memory against the fake provider: a turn whose memory_write the
# seeded rule lets through shows on the Memory page as the agent's edit (diff, session link); a
# second write arrives live and is undone from the page (the file on disk goes back); the person's
# save is recorded and an undo of the agent's first edit after it is refused with the reason;
# axe-core on the page with a diff and with the refusal in both themes.
# tests/tic.test.mjs: a Python-SDK MCP server that pushes notifications (scripts/mcp-peers/
# push_server.py, venv made by scripts/mcp-peers/install.sh) marked keep_connected: the engine
# starts it, stores its pushes, a tick (Run a tick now) has the tic agent read them (one request
# to the fake provider); the TIC page shows the tick done with its events as text and opens its
# session; axe-core on the page and the events in both themes.
# All but ui.test.mjs and render_a11y's first-run part start the same way, through
# e2e/lib/chat_fixture.mjs: a temp working directory, the fake provider with the test's script,
# `skald serve` on it, a Chromium page on the chat (or the page the test names).
# Screenshots land in artifacts/browser/*.png.
# Exits non-zero on any failure.
#
# Usage: scripts/e2e-browser.sh
#   CHROMIUM_PATH  browser binary (default /usr/bin/chromium; never downloaded)
#   SKALD_BIN      skald binary (default target/debug/skald, built here)
#   SKALD_FAKE_LLM_BIN  fake provider (default target/debug/skald-fake-llm, built here)
#   SKALD_UI_DIR   the built UI to serve (default ui/dist of this checkout, built here)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

chromium=${CHROMIUM_PATH:-/usr/bin/chromium}
if [[ ! -x $chromium ]]; then
  echo "e2e-browser: no Chromium at $chromium (install the Debian 'chromium' package or set CHROMIUM_PATH)" >&2
  exit 1
fi
command -v python3 >/dev/null || { echo "e2e-browser: python3 is needed to seed the database" >&2; exit 1; }

echo "e2e-browser: installing e2e dependencies (playwright-core, axe-core)"
npm --prefix e2e ci --no-audit --no-fund

if [[ -z ${SKALD_MCP_EVERYTHING:-} || ! -x scripts/mcp-peers/.venv/bin/python ]]; then
  echo "e2e-browser: installing the MCP test server (scripts/mcp-peers)"
  SKALD_MCP_EVERYTHING=$(scripts/mcp-peers/install.sh)
  export SKALD_MCP_EVERYTHING
fi

if [[ -z ${SKALD_BIN:-} ]]; then
  echo "e2e-browser: building skald"
  cargo build -p skald-cli
fi
if [[ -z ${SKALD_FAKE_LLM_BIN:-} ]]; then
  echo "e2e-browser: building skald-fake-llm"
  cargo build -p skald-testkit --bin skald-fake-llm
fi

if [[ ! -f ui/dist/index.html || -n $(find ui/src ui/index.html -newer ui/dist/index.html -print -quit) ]]; then
  echo "e2e-browser: ui/dist is missing or older than ui/src; building the UI"
  [[ -d ui/node_modules ]] || npm --prefix ui ci --no-audit --no-fund
  npm --prefix ui run build
fi

# The page this checkout built, also when SKALD_BIN comes from another checkout (which would
# otherwise serve its own ui/dist).
export SKALD_UI_DIR=${SKALD_UI_DIR:-$root/ui/dist}

echo "e2e-browser: running the browser suite"
npm --prefix e2e test
echo "e2e-browser: ok; screenshots in artifacts/browser/"
