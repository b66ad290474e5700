"""A scripted fake of the Anthropic Messages and OpenAI Chat Completions HTTP APIs.

Tests run the *real* SDKs against it on 127.0.0.1. Behaviour per request:

1. a global queue (``server.script(["500", "ok"])``) is consumed first, one entry per request;
2. else a marker in any message, ``<<NAME>>``, ``<<NAMExK>>`` (only the first K requests sharing
   this first user message misbehave, so retries and repair re-asks count) or ``<<NAME:ARG>>`` / ``<<NAMExK:ARG>>``;
3. else the default: a deterministic answer derived from the prompt. For generation prompts
   (they contain ``Required values (JSON list): [...]``) a valid JSON ``{"query", "spans"}``
   using every value; for JSON requests ``{"answer": "echo", "digest": ...}``; else text.

Behaviours: ``ok``, ``429`` (ARG: Retry-After seconds, default 0.05), ``500``, ``503``, ``400``,
``401``, ``403``, ``404``, ``hang`` (no answer for ``hang_seconds``), ``slow`` (ARG seconds extra
latency), ``malformed`` (content that is not JSON), ``truncate`` (length / max_tokens),
``refusal``, ``filter`` (OpenAI content_filter; Anthropic has none, so a refusal). The API key
``bad-key`` always gets 401.

Counters: ``paths[path]``, ``by_prompt[first user message]``, ``by_hash[sha of conversation]``.
``python tests/scripted_server.py --latency 0.25`` serves in its own process and prints its URL.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import re
import threading
import time
from collections import Counter, deque
from typing import Any

from aiohttp import web

MARKER = re.compile(r"<<([a-z0-9]+?)(?:x(\d+))?(?::([\d.]+))?>>")
VALUES = re.compile(r"Required values \(JSON list\): (\[.*\])")


def conversation_hash(body: dict[str, Any]) -> str:
    convo = {"system": body.get("system"), "messages": body.get("messages")}
    return hashlib.sha256(json.dumps(convo, sort_keys=True).encode()).hexdigest()


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def default_answer(body: dict[str, Any], wants_json: bool) -> str:
    """The deterministic answer for a request with no misbehaviour."""
    texts = [_text_of(m.get("content")) for m in body.get("messages", [])]
    first_user = next(
        (t for m, t in zip(body.get("messages", []), texts, strict=False) if m.get("role") == "user"), ""
    )
    m = VALUES.search(first_user)
    if m:
        values = json.loads(m.group(1))
        query = "Hello. " + " ".join(f"Note: {v}." for v in values) + " Can you help me with this?"
        return json.dumps({"query": query, "spans": {v: v for v in values}})
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:12]
    return json.dumps({"answer": "echo", "digest": digest}) if wants_json else f"echo {digest}"


class ScriptedServer:
    """Run with ``start()`` (background thread) / ``stop()``; or as a context manager."""

    def __init__(
        self, latency: float = 0.0, hang_seconds: float = 30.0, port: int = 0, keep_log: bool = True
    ) -> None:
        self.latency = latency
        self.keep_log = keep_log
        self.hang_seconds = hang_seconds
        self.port = port
        self.paths: Counter[str] = Counter()
        self.by_prompt: Counter[str] = Counter()
        self.by_hash: Counter[str] = Counter()
        self.log: list[dict[str, Any]] = []
        self._queue: deque[str] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()

    # ---- control -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    def script(self, behaviours: list[str]) -> None:
        """Queue behaviours consumed by the next requests, in order, before markers apply."""
        self._queue.extend(behaviours)

    def reset(self) -> None:
        self.paths.clear()
        self.by_prompt.clear()
        self.by_hash.clear()
        self.log.clear()
        self._queue.clear()

    @property
    def total(self) -> int:
        return sum(self.paths.values())

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/messages", self._anthropic)
        app.router.add_post("/v1/chat/completions", self._openai)
        return app

    async def serve(self) -> None:
        """Start serving on the current loop (used by the thread and the process modes)."""
        self._stopping = asyncio.Event()
        self._runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, backlog=2048)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def start(self) -> ScriptedServer:
        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self.serve())
            self._ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="scripted-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("scripted server did not start")
        return self

    def stop(self) -> None:
        if self._loop is None:
            return

        async def shutdown() -> None:
            assert self._stopping is not None and self._runner is not None
            self._stopping.set()
            await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        self._loop = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- request handling ----------------------------------------------------------------
    async def _behaviour(self, request: web.Request, body: dict[str, Any]) -> tuple[str, float | None]:
        h = conversation_hash(body)
        msgs = body.get("messages", [])
        first_user = next((_text_of(m.get("content")) for m in msgs if m.get("role") == "user"), "")
        self.paths[request.path] += 1
        self.by_hash[h] += 1
        self.by_prompt[first_user] += 1
        seen = self.by_prompt[first_user]
        auth = request.headers.get("authorization", "") + request.headers.get("x-api-key", "")
        behaviour, arg = "ok", None
        if "bad-key" in auth:
            behaviour = "401"
        elif self._queue:
            behaviour = self._queue.popleft()
        else:
            text = (
                (_text_of(body.get("system")) if body.get("system") else "")
                + "\n"
                + "\n".join(_text_of(m.get("content")) for m in msgs)
            )
            m = MARKER.search(text)
            if m and (m.group(2) is None or seen <= int(m.group(2))):
                behaviour = m.group(1)
                arg = float(m.group(3)) if m.group(3) else None
        if self.keep_log:
            self.log.append(
                {
                    "path": request.path,
                    "hash": h,
                    "prompt": first_user,
                    "behaviour": behaviour,
                    "body": body,
                    "auth": request.headers.get("authorization", ""),
                    "t": time.monotonic(),
                }
            )
        if behaviour == "hang":  # wakes early when the server stops, so shutdown is quick
            assert self._stopping is not None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.hang_seconds)
            return behaviour, arg
        delay = self.latency + ((arg or 0.0) if behaviour == "slow" else 0.0)
        if delay > 0:
            await asyncio.sleep(delay)
        return behaviour, arg

    @staticmethod
    def _error(kind: str, status: int, arg: float | None) -> web.Response | None:
        if not status:
            return None
        headers = {"retry-after": f"{arg if arg is not None else 0.05:g}"} if status == 429 else {}
        if kind == "anthropic":
            payload = {"type": "error", "error": {"type": "api_error", "message": f"scripted {status}"}}
        else:
            payload = {"error": {"message": f"scripted {status}", "type": "scripted", "code": str(status)}}
        return web.json_response(payload, status=status, headers=headers)

    async def _anthropic(self, request: web.Request) -> web.Response:
        body = await request.json()
        behaviour, arg = await self._behaviour(request, body)
        err = self._error("anthropic", int(behaviour) if behaviour.isdigit() else 0, arg)
        if err is not None:
            return err
        wants_json = "json" in _text_of(body.get("system") or "").lower()
        text, stop = default_answer(body, wants_json), "end_turn"
        if behaviour == "malformed":
            text = 'Sure! Here it is: {"query": "unterminated'
        elif behaviour == "truncate":
            text, stop = text[: max(1, len(text) // 2)], "max_tokens"
        elif behaviour in ("refusal", "filter"):
            text, stop = "", "refusal"
        prompt_chars = len(json.dumps(body.get("messages"))) + len(str(body.get("system") or ""))
        return web.json_response(
            {
                "id": "msg_scripted",
                "type": "message",
                "role": "assistant",
                "model": body.get("model"),
                "content": [{"type": "text", "text": text}] if text else [],
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": prompt_chars // 4 + 1, "output_tokens": len(text) // 4 + 1},
            }
        )

    async def _openai(self, request: web.Request) -> web.Response:
        body = await request.json()
        behaviour, arg = await self._behaviour(request, body)
        err = self._error("openai", int(behaviour) if behaviour.isdigit() else 0, arg)
        if err is not None:
            return err
        wants_json = (body.get("response_format") or {}).get("type") == "json_object"
        text: str | None = default_answer(body, wants_json)
        finish, refusal = "stop", None
        if behaviour == "malformed":
            text = 'Sure! Here it is: {"query": "unterminated'
        elif behaviour == "truncate":
            text, finish = (text or "")[: max(1, len(text or "") // 2)], "length"
        elif behaviour == "refusal":
            text, refusal = None, "I can't help with that."
        elif behaviour == "filter":
            text, finish = "", "content_filter"
        prompt_chars = len(json.dumps(body.get("messages")))
        return web.json_response(
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": finish,
                        "logprobs": None,
                        "message": {"role": "assistant", "content": text, "refusal": refusal},
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_chars // 4 + 1,
                    "completion_tokens": len(text or "") // 4 + 1,
                    "total_tokens": 0,
                },
            }
        )


async def _serve_forever(latency: float, port: int) -> None:
    server = ScriptedServer(latency=latency, port=port, keep_log=False)
    await server.serve()
    print(server.url, flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="serve the scripted fake APIs in this process")
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--port", type=int, default=0)
    ns = ap.parse_args()
    asyncio.run(_serve_forever(ns.latency, ns.port))
