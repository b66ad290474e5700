"""Provider abstraction and spec strings.

A spec is ``PROVIDER:MODEL[@BASE_URL]`` (``anthropic:claude-sonnet-4-6``, ``openai:gpt-4o``,
``openai:qwen2.5-7b-instruct@http://127.0.0.1:8000/v1``) or the bare word ``offline``.
"""

from __future__ import annotations

import abc
import json
import re
from dataclasses import dataclass, field
from typing import Any

from benchgen.errors import ConfigError, ProviderError

KNOWN_PROVIDERS = ("offline", "anthropic", "openai")
_SPEC_RE = re.compile(r"^(?P<provider>[a-z][a-z0-9_-]*)(?::(?P<model>[^@\s]+))?(?:@(?P<url>\S+))?$")


@dataclass(frozen=True)
class ProviderSpec:
    provider: str
    model: str
    base_url: str | None = None

    def __str__(self) -> str:
        s = (
            self.provider
            if self.provider == "offline" and self.model in ("", "offline")
            else (f"{self.provider}:{self.model}")
        )
        return f"{s}@{self.base_url}" if self.base_url else s

    @property
    def family(self) -> str:
        """Model family, used to enforce a heterogeneous judge (generator family != judge family)."""
        return model_family(self)


def parse_spec(spec: str) -> ProviderSpec:
    """Parse ``PROVIDER:MODEL[@BASE_URL]``; raise :class:`ConfigError` with the accepted forms."""
    text = (spec or "").strip()
    m = _SPEC_RE.match(text)
    if not m:
        raise ConfigError(
            f"cannot parse provider spec {spec!r}",
            hint="use PROVIDER:MODEL[@BASE_URL], e.g. offline, anthropic:claude-sonnet-4-6, "
            "openai:gpt-4o, openai:my-model@http://127.0.0.1:8000/v1",
        )
    provider, model, url = m.group("provider"), m.group("model") or "", m.group("url")
    if provider not in KNOWN_PROVIDERS:
        raise ConfigError(
            f"unknown provider {provider!r} in spec {spec!r}",
            hint=f"known providers: {', '.join(KNOWN_PROVIDERS)} (any OpenAI-compatible server: openai:MODEL@URL)",
        )
    if provider == "offline":
        return ProviderSpec("offline", model or "offline", url)
    if not model:
        raise ConfigError(f"provider spec {spec!r} names no model", hint=f"write {provider}:MODEL_NAME")
    if url and not re.match(r"^https?://", url):
        raise ConfigError(f"base URL {url!r} in spec {spec!r} must start with http:// or https://")
    return ProviderSpec(provider, model, url)


_FAMILY_PATTERNS = (
    ("claude", "anthropic-claude"),
    ("gpt", "openai-gpt"),
    ("o1", "openai-gpt"),
    ("o3", "openai-gpt"),
    ("o4", "openai-gpt"),
    ("qwen", "qwen"),
    ("llama", "llama"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("gemma", "gemma"),
    ("gemini", "gemini"),
    ("deepseek", "deepseek"),
    ("phi", "phi"),
)


def model_family(spec: ProviderSpec) -> str:
    """Best-effort model family from the model name; falls back to the provider name."""
    if spec.provider == "offline":
        return f"offline:{spec.model}"
    name = spec.model.lower().rsplit("/", 1)[-1]
    for needle, family in _FAMILY_PATTERNS:
        if name.startswith(needle) or f"-{needle}" in name:
            return family
    return f"{spec.provider}:{name.split('-')[0]}"


@dataclass(frozen=True)
class Message:
    role: str  # "user" | "assistant"
    content: str


@dataclass(frozen=True)
class Request:
    """One model call. Everything that changes the answer is here (and in the cache key)."""

    messages: tuple[Message, ...]
    system: str | None = None
    temperature: float = 0.0
    max_tokens: int = 1024
    json_mode: bool = False
    item_id: str = ""  # for logs and progress only; not part of the cache key

    def cache_payload(self) -> dict[str, Any]:
        return {
            "messages": [[m.role, m.content] for m in self.messages],
            "system": self.system,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_mode": self.json_mode,
        }


@dataclass
class Completion:
    text: str
    finish_reason: str = "stop"  # stop | length | content_filter | refusal | error
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.finish_reason == "stop"

    @property
    def failure_reason(self) -> str | None:
        """The failure reason recorded for this answer (None when it finished normally).

        ``length`` is reported as ``truncated``; ``refusal``, ``content_filter`` and ``error`` as is.
        """
        if self.ok:
            return None
        return FINISH_TO_FAILURE.get(self.finish_reason, self.finish_reason)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "finish_reason": self.finish_reason,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "model": self.model,
            "extra": self.extra,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Completion:
        return cls(
            text=d.get("text", ""),
            finish_reason=d.get("finish_reason", "stop"),
            input_tokens=int(d.get("input_tokens", 0)),
            output_tokens=int(d.get("output_tokens", 0)),
            model=d.get("model", ""),
            extra=dict(d.get("extra") or {}),
        )


FINISH_TO_FAILURE = {"length": "truncated", "content_filter": "content_filter", "refusal": "refusal"}
"""Completion.finish_reason -> failure reason written to run outputs."""

FAILURE_REASONS = ("refusal", "truncated", "content_filter", "unparsed", "error")
"""Failure reasons the runner records (stages may add their own, e.g. ``span_mismatch``)."""


class TransientProviderError(ProviderError):
    """A failure worth retrying: HTTP 429 / 408 / 409 / 5xx, a timeout or a connection error.

    ``retry_after`` (seconds) is the server's ``Retry-After`` hint when it sent one.
    """

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None, kind: str = "http"
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.kind = kind  # http | timeout | connection


class FatalProviderError(ProviderError):
    """A failure retrying cannot fix (HTTP 400/401/403/404/422...): the run stops."""

    def __init__(self, message: str, *, status: int | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.status = status


class TooManyFailures(ProviderError):
    """N consecutive items failed after retries: the run stopped instead of hammering the provider."""


NON_RETRYABLE_HINTS = {
    400: "the request was rejected as invalid; check the model name and request parameters",
    401: "the API key was rejected; check the key in the environment variable",
    403: "the key lacks permission for this model or endpoint",
    404: "model or endpoint not found; check the model name and base URL",
    422: "the request was rejected as unprocessable; check the request parameters",
}


def parse_retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (seconds) headers; None when absent or a date."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw) * scale
        except (TypeError, ValueError):
            continue
        if value >= 0:
            return value
    return None


def translate_status_error(provider: str, status: int, message: str, headers: Any) -> ProviderError:
    """Map an HTTP error status to a transient (retry) or fatal (stop) :class:`ProviderError`."""
    if status in (408, 409, 429) or status >= 500:
        return TransientProviderError(
            f"{provider}: HTTP {status}: {message}", status=status, retry_after=parse_retry_after(headers)
        )
    return FatalProviderError(
        f"{provider}: HTTP {status}: {message}",
        status=status,
        hint=NON_RETRYABLE_HINTS.get(status, "the provider rejected the request; retrying will not help"),
    )


_FENCE_RE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def extract_json_object(text: str) -> dict[str, Any] | None:
    """Parse a JSON object from a model answer: bare, in a ```json fence, or amid prose.

    Returns None unless the answer holds exactly one decodable top-level JSON object.
    """
    if not text:
        return None
    candidates = [text.strip()]
    m = _FENCE_RE.match(text)
    if m:
        candidates.append(m.group(1))
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for cand in candidates:
        try:
            value = json.loads(cand)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


class Provider(abc.ABC):
    """One abstract method. Capability flags let stages adapt (e.g. native JSON mode)."""

    supports_json_mode: bool = False
    supports_system: bool = True

    def __init__(self, spec: ProviderSpec) -> None:
        self.spec = spec

    @abc.abstractmethod
    async def complete(self, request: Request) -> Completion:  # pragma: no cover - interface
        ...

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release network resources (HTTP sessions)."""


def check_heterogeneous(
    generator_spec: str | ProviderSpec, judge_spec: str | ProviderSpec, allow_same_family: bool = False
) -> None:
    """Raise :class:`ConfigError` when generator and judge come from the same model family.

    A judge from the generator's own family shares its blind spots (self-preference), so the
    consistency check would be weak. ``offline`` vs ``offline`` is accepted: both are local
    deterministic baselines, not models. ``allow_same_family=True`` turns the check off.
    """
    gen = generator_spec if isinstance(generator_spec, ProviderSpec) else parse_spec(generator_spec)
    jud = judge_spec if isinstance(judge_spec, ProviderSpec) else parse_spec(judge_spec)
    if allow_same_family or (gen.provider == "offline" and jud.provider == "offline"):
        return
    if gen.family == jud.family:
        raise ConfigError(
            f"generator {gen} and judge {jud} are both from the model family {gen.family!r}; "
            "a judge must come from a different family than the generator (self-preference bias)",
            hint="pick a judge from another family (e.g. generator anthropic:..., judge openai:...), "
            "or pass --allow-same-family to accept the bias knowingly",
        )
