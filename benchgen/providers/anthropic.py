"""Anthropic Messages API adapter (official ``anthropic`` async SDK, aiohttp transport).

Notes on this SDK generation (anthropic 2.x, API version 2026-10-21):

* sampling parameters (``temperature``, ``top_p``, ``top_k``) were removed from the SDK and the API
  rejects them with HTTP 400, so :attr:`Request.temperature` is *not sent* by default. It stays
  in the cache key. ``send_temperature=True`` forwards it through ``extra_body`` for
  Anthropic-compatible servers (custom base URL) that still accept it.
* JSON output is requested through the system prompt (a fixed instruction is appended) and
  parsed leniently by :func:`benchgen.runner.complete_json` (bare, fenced or amid prose).
* ``stop_reason`` ``max_tokens`` / ``model_context_window_exceeded`` -> ``length`` (truncated),
  ``refusal`` -> ``refusal``; anything but ``end_turn`` / ``stop_sequence`` is a failure.
* The SDK's own retries are disabled (``max_retries=0``): the runner's tenacity layer is the
  only retry layer.
"""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2

from benchgen.providers.base import (
    Completion,
    Provider,
    ProviderSpec,
    Request,
    TransientProviderError,
    translate_status_error,
)

JSON_INSTRUCTION = (
    "Respond with a single valid JSON object and nothing else: no prose before or after it, "
    "no Markdown code fences."
)

_STOP_MAP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
}


def make_http_client(timeout: float, max_connections: int) -> Any:
    """The SDK's aiohttp-backed httpx2 client with our timeout and connection-pool size."""
    return anthropic.DefaultAioHttpClient(
        timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
        limits=httpx2.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
    )


class AnthropicProvider(Provider):
    """``anthropic:MODEL[@BASE_URL]``."""

    supports_json_mode = False  # JSON via instruction + lenient parsing
    supports_system = True

    def __init__(
        self,
        spec: ProviderSpec,
        api_key: str,
        *,
        timeout: float = 120.0,
        max_connections: int = 512,
        send_temperature: bool = False,
    ) -> None:
        super().__init__(spec)
        self.timeout = timeout
        self.send_temperature = send_temperature
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=spec.base_url,
            max_retries=0,
            timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
            http_client=make_http_client(timeout, max_connections),
        )

    def build_params(self, request: Request) -> dict[str, Any]:
        """Keyword arguments for ``messages.create`` (exposed for tests)."""
        system = request.system or ""
        if request.json_mode:
            system = f"{system}\n\n{JSON_INSTRUCTION}" if system else JSON_INSTRUCTION
        params: dict[str, Any] = {
            "model": self.spec.model,
            "max_tokens": request.max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        if system:
            params["system"] = system
        if self.send_temperature:
            params["extra_body"] = {"temperature": request.temperature}
        return params

    async def complete(self, request: Request) -> Completion:
        try:
            msg = await self._client.messages.create(**self.build_params(request))
        except anthropic.APIStatusError as exc:
            raise translate_status_error(
                "anthropic", exc.status_code, _message(exc), exc.response.headers
            ) from None
        except anthropic.APITimeoutError:
            raise TransientProviderError(
                f"anthropic: request timed out after {self.timeout:g}s", kind="timeout"
            ) from None
        except anthropic.APIConnectionError as exc:
            raise TransientProviderError(f"anthropic: connection error: {exc}", kind="connection") from None
        text = "".join(getattr(b, "text", "") for b in msg.content if getattr(b, "type", "") == "text")
        stop = msg.stop_reason or "end_turn"
        extra: dict[str, Any] = {"stop_reason": stop}
        if stop not in _STOP_MAP:
            extra["detail"] = f"unexpected stop_reason {stop!r}"
        usage = msg.usage
        return Completion(
            text=text,
            finish_reason=_STOP_MAP.get(stop, "error"),
            input_tokens=int(usage.input_tokens or 0),
            output_tokens=int(usage.output_tokens or 0),
            model=msg.model or self.spec.model,
            extra=extra,
        )

    async def aclose(self) -> None:
        await self._client.close()


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", exc))
