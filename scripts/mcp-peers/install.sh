#!/usr/bin/env bash
# Installs the real third-party MCP servers the Rust tests connect to (pinned in
# scripts/mcp-peers/package-lock.json), and the official SDK that scripts/mcp-peers/
# notifying-server.mjs (a test server that changes its tool list) is written with, and prints the
# path of `mcp-server-everything`, which the tests read from SKALD_MCP_EVERYTHING. It also makes
# a Python venv (scripts/mcp-peers/.venv) with the official Python SDK pinned in requirements.txt,
# which push_server.py (a test server that pushes notifications, TIC's input) is written with:
#
#   export SKALD_MCP_EVERYTHING=$(scripts/mcp-peers/install.sh)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
npm --prefix "$here" ci --no-audit --no-fund --loglevel=error >&2
bin="$here/node_modules/.bin/mcp-server-everything"
[[ -x "$bin" ]] || { echo "mcp-server-everything was not installed ($bin)" >&2; exit 1; }
[[ -d "$here/node_modules/@modelcontextprotocol/sdk" ]] \
  || { echo "@modelcontextprotocol/sdk was not installed (notifying-server.mjs needs it)" >&2; exit 1; }
venv="$here/.venv"
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
"$venv/bin/python" -c "import mcp.server.lowlevel" \
  || { echo "the Python mcp package was not installed (push_server.py needs it)" >&2; exit 1; }
echo "$bin"
