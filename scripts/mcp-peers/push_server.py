"""A stdio MCP server for Skald's tests that pushes notifications on its own (TIC's input).

Written with the official Python `mcp` package (installed into scripts/mcp-peers/.venv by
install.sh). What it pushes, on the connection's own channel (not tied to a request):

- PUSH_ON_START=N: N notifications right after the client first lists the tools;
- PUSH_EVERY_SECS=S: one every S seconds from then on;
- the `push` tool: `count` notifications of `method` with `params`, when called;
- the `push_resource_updated` tool: `notifications/resources/updated` for `uri`.

PUSH_METHOD (default `event/test`) and PUSH_PARAMS (JSON, default a small object) shape the
pushed notifications; each also carries `n`, its number since the process started. The
`exit` tool ends the process, and EXIT_AFTER_SECS=S ends it S seconds after the first listing
(a server that dies, for the reconnect test).
"""

import json
import os
import sys

import anyio
from typing import Any

from pydantic import BaseModel
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

ON_START = int(os.environ.get("PUSH_ON_START", "0"))
EVERY = float(os.environ.get("PUSH_EVERY_SECS", "0"))
EXIT_AFTER = float(os.environ.get("EXIT_AFTER_SECS", "0"))
METHOD = os.environ.get("PUSH_METHOD", "event/test")
PARAMS = json.loads(os.environ.get("PUSH_PARAMS", '{"text": "something happened"}'))

state = {"n": 0, "started": False, "tg": None}


class Pushed(BaseModel):
    """A notification of any method with free-form params (the SDK's typed ones cover only the
    protocol's own methods); `send_notification` sends what this model dumps."""

    method: str
    params: dict[str, Any]


async def push(session, method, params, count):
    # The SDK's generic notification: any method (a server's own `event/...`), sent on the
    # session's connection channel, serialised with its responses.
    for _ in range(count):
        state["n"] += 1
        body = dict(params) if isinstance(params, dict) else {"value": params}
        body["n"] = state["n"]
        await session.send_notification(Pushed(method=method, params=body))


async def every(session):
    while True:
        await anyio.sleep(EVERY)
        await push(session, METHOD, PARAMS, 1)


async def exit_after():
    await anyio.sleep(EXIT_AFTER)
    sys.stderr.write("push_server: exiting (EXIT_AFTER_SECS)\n")
    sys.stderr.flush()
    os._exit(3)


async def list_tools(ctx, params):
    if not state["started"]:
        state["started"] = True
        if ON_START:
            state["tg"].start_soon(push, ctx.session, METHOD, PARAMS, ON_START)
        if EVERY > 0:
            state["tg"].start_soon(every, ctx.session)
        if EXIT_AFTER > 0:
            state["tg"].start_soon(exit_after)
    obj = {"type": "object"}
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name="push",
                description="Push `count` notifications of `method` with `params`.",
                input_schema={
                    **obj,
                    "properties": {
                        "method": {"type": "string"},
                        "params": {"type": "object"},
                        "count": {"type": "integer"},
                    },
                },
            ),
            types.Tool(
                name="push_resource_updated",
                description="Push notifications/resources/updated for `uri`.",
                input_schema={**obj, "properties": {"uri": {"type": "string"}}},
            ),
            types.Tool(name="exit", description="End the server process.", input_schema=obj),
        ]
    )


async def call_tool(ctx, params):
    args = params.arguments or {}
    if params.name == "push":
        count = int(args.get("count", 1))
        await push(ctx.session, args.get("method", METHOD), args.get("params", PARAMS), count)
        text = f"pushed {count}"
    elif params.name == "push_resource_updated":
        await ctx.session.send_resource_updated(args.get("uri", "file:///tmp/x"))
        text = "pushed resource update"
    elif params.name == "exit":
        sys.stderr.write("push_server: exiting on request\n")
        sys.stderr.flush()
        os._exit(3)
    else:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"no tool {params.name}")], is_error=True
        )
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def main():
    server = Server("push-server", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with anyio.create_task_group() as tg:
        state["tg"] = tg
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        tg.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main)
