"""Scripted LiteLLM provider for Skald's independent-server tests.

LiteLLM's built-in mock cannot stream tool calls, so this provider plays a script instead. The
script travels in the conversation itself, which keeps the provider stateless: the most recent
user message containing a line `SCRIPT: [...]` (a JSON list) defines the replies, and the number
of assistant messages after that user message selects the current step. A step is either
`{"text": "..."}` or `{"tool": "name", "args": {...}}` (or `"raw_args": "..."` for text sent
verbatim). Past the end of the list, or without a script, the reply is
`independent reply to: <last user text>`.

Text streams in several small deltas; tool calls stream the OpenAI way: the first chunk carries
id and name, later chunks only argument pieces.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

from litellm import CustomLLM
from litellm.types.utils import GenericStreamingChunk, ModelResponse

SCRIPT_PREFIX = "SCRIPT:"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _next_step(messages: list[dict]) -> dict:
    """The reply this conversation calls for (see the module docs)."""
    last_user = ""
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if msg.get("role") != "user":
            continue
        text = _text(msg.get("content"))
        if not last_user:
            last_user = text
        script_line = next(
            (line for line in text.splitlines() if line.strip().startswith(SCRIPT_PREFIX)), None
        )
        if script_line is None:
            continue
        steps = json.loads(script_line.strip()[len(SCRIPT_PREFIX):])
        done = sum(1 for m in messages[i + 1 :] if m.get("role") == "assistant")
        if done < len(steps):
            return steps[done]
        break
    return {"text": f"independent reply to: {last_user.strip()}"}


def _args_of(step: dict) -> str:
    if "raw_args" in step:
        return step["raw_args"]
    return json.dumps(step.get("args", {}))


def _usage() -> dict:
    return {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def _pieces(s: str, size: int) -> list[str]:
    return [s[i : i + size] for i in range(0, len(s), size)] or [""]


def _chunks(step: dict) -> Iterator[GenericStreamingChunk]:
    if "tool" in step:
        call_id = f"call_{uuid.uuid4().hex[:12]}"
        args = _args_of(step)
        yield {
            "text": "",
            "tool_use": {
                "id": call_id,
                "type": "function",
                "function": {"name": step["tool"], "arguments": ""},
                "index": 0,
            },
            "is_finished": False,
            "finish_reason": "",
            "usage": None,
            "index": 0,
        }
        for piece in _pieces(args, 7):
            yield {
                "text": "",
                "tool_use": {
                    "id": None,
                    "type": "function",
                    "function": {"name": None, "arguments": piece},
                    "index": 0,
                },
                "is_finished": False,
                "finish_reason": "",
                "usage": None,
                "index": 0,
            }
        yield {
            "text": "",
            "tool_use": None,
            "is_finished": True,
            "finish_reason": "tool_calls",
            "usage": _usage(),
            "index": 0,
        }
        return
    words = step.get("text", "").split(" ")
    for n, word in enumerate(words):
        yield {
            "text": word if n == 0 else " " + word,
            "tool_use": None,
            "is_finished": False,
            "finish_reason": "",
            "usage": None,
            "index": 0,
        }
    yield {
        "text": "",
        "tool_use": None,
        "is_finished": True,
        "finish_reason": "stop",
        "usage": _usage(),
        "index": 0,
    }


def _response(model: str, step: dict) -> ModelResponse:
    if "tool" in step:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{uuid.uuid4().hex[:12]}",
                    "type": "function",
                    "function": {"name": step["tool"], "arguments": _args_of(step)},
                }
            ],
        }
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": step.get("text", "")}
        finish = "stop"
    return ModelResponse(
        id=f"chatcmpl-{uuid.uuid4().hex[:12]}",
        created=int(time.time()),
        model=model,
        choices=[{"index": 0, "message": message, "finish_reason": finish}],
        usage=_usage(),
    )


class ScriptedLLM(CustomLLM):
    def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:
        return _response(model, _next_step(messages))

    async def acompletion(
        self, model: str, messages: list, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        return _response(model, _next_step(messages))

    def streaming(
        self, model: str, messages: list, *args: Any, **kwargs: Any
    ) -> Iterator[GenericStreamingChunk]:
        yield from _chunks(_next_step(messages))

    async def astreaming(
        self, model: str, messages: list, *args: Any, **kwargs: Any
    ) -> AsyncIterator[GenericStreamingChunk]:
        for chunk in _chunks(_next_step(messages)):
            yield chunk


# `config.yaml` registers this instance as the `skald-scripted` provider.
handler = ScriptedLLM()
