"""OpenAI Chat Completions adapter (official ``openai`` async SDK, aiohttp transport).

Works for api.openai.com and any OpenAI-compatible server (vLLM, llama.cpp, Ollama...) through
``openai:MODEL@BASE_URL``. Differences between the two:

* the token cap is sent as ``max_completion_tokens`` to api.openai.com (``max_tokens`` is
  deprecated there and rejected by reasoning models) and as ``max_tokens`` to custom base URLs
  (what OpenAI-compatible servers universally accept);
* JSON mode is ``response_format={"type": "json_object"}`` (a JSON instruction is also added to
  the system prompt, which the API requires when JSON mode is on).

``finish_reason`` ``length`` -> truncated, ``content_filter`` -> content filter, a non-empty
``message.refusal`` -> refusal. The SDK's own retries are disabled (``max_retries=0``).
"""

from __future__ import annotations

from typing import Any

import httpx2
import openai

from benchgen.providers.base import (
    Completion,
    Provider,
    ProviderSpec,
    Request,
    TransientProviderError,
    translate_status_error,
)

JSON_INSTRUCTION = "Respond with a single valid JSON object and nothing else."


def make_http_client(timeout: float, max_connections: int) -> Any:
    """The SDK's aiohttp-backed httpx2 client with our timeout and connection-pool size."""
    return openai.DefaultAioHttpClient(
        timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
        limits=httpx2.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
    )


class OpenAIProvider(Provider):
    """``openai:MODEL[@BASE_URL]``."""

    supports_json_mode = True
    supports_system = True

    def __init__(
        self,
        spec: ProviderSpec,
        api_key: str,
        *,
        timeout: float = 120.0,
        max_connections: int = 512,
        send_temperature: bool = True,
    ) -> None:
        super().__init__(spec)
        self.timeout = timeout
        self.send_temperature = send_temperature
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=spec.base_url,
            max_retries=0,
            timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
            http_client=make_http_client(timeout, max_connections),
        )

    def build_params(self, request: Request) -> dict[str, Any]:
        """Keyword arguments for ``chat.completions.create`` (exposed for tests)."""
        messages: list[dict[str, str]] = []
        system = request.system or ""
        if request.json_mode and "json" not in system.lower():
            system = f"{system}\n\n{JSON_INSTRUCTION}" if system else JSON_INSTRUCTION
        if system:
            messages.append({"role": "system", "content": system})
        messages += [{"role": m.role, "content": m.content} for m in request.messages]
        params: dict[str, Any] = {"model": self.spec.model, "messages": messages}
        if self.spec.base_url:
            params["max_tokens"] = request.max_tokens
        else:
            params["max_completion_tokens"] = request.max_tokens
        if self.send_temperature:
            params["temperature"] = request.temperature
        if request.json_mode:
            params["response_format"] = {"type": "json_object"}
        return params

    async def complete(self, request: Request) -> Completion:
        try:
            resp = await self._client.chat.completions.create(**self.build_params(request))
        except openai.APIStatusError as exc:
            raise translate_status_error(
                "openai", exc.status_code, _message(exc), exc.response.headers
            ) from None
        except openai.APITimeoutError:
            # note: openai's vendored aiohttp transport also reports refused connections as timeouts
            raise TransientProviderError(
                f"openai: request timed out after {self.timeout:g}s (or the connection failed)",
                kind="timeout",
            ) from None
        except openai.APIConnectionError as exc:
            raise TransientProviderError(f"openai: connection error: {exc}", kind="connection") from None
        usage = resp.usage
        in_tok = int(getattr(usage, "prompt_tokens", 0) or 0)
        out_tok = int(getattr(usage, "completion_tokens", 0) or 0)
        if not resp.choices:
            return Completion(
                "",
                "error",
                in_tok,
                out_tok,
                resp.model or self.spec.model,
                {"detail": "response has no choices"},
            )
        choice = resp.choices[0]
        message = choice.message
        finish = choice.finish_reason or "stop"
        extra: dict[str, Any] = {"finish_reason": finish}
        refusal = getattr(message, "refusal", None)
        if refusal:
            finish_reason = "refusal"
            extra["refusal"] = refusal
        elif finish in ("stop", "length", "content_filter"):
            finish_reason = finish
        else:
            finish_reason = "error"
            extra["detail"] = f"unexpected finish_reason {finish!r}"
        return Completion(
            text=message.content or "",
            finish_reason=finish_reason,
            input_tokens=in_tok,
            output_tokens=out_tok,
            model=resp.model or self.spec.model,
            extra=extra,
        )

    async def aclose(self) -> None:
        await self._client.close()


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", exc))
