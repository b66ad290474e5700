"""Provider abstraction and spec strings.

A spec is ``PROVIDER:MODEL[@BASE_URL]`` (``anthropic:claude-sonnet-4-6``, ``openai:gpt-4o``,
``openai:qwen2.5-7b-instruct@http://127.0.0.1:8000/v1``) or the bare word ``offline``.
"""

from __future__ import annotations

import abc
import re
from dataclasses import dataclass, field
from typing import Any

from benchgen.errors import ConfigError

KNOWN_PROVIDERS = ("offline", "anthropic", "openai")
_SPEC_RE = re.compile(r"^(?P<provider>[a-z][a-z0-9_-]*)(?::(?P<model>[^@\s]+))?(?:@(?P<url>\S+))?$")


@dataclass(frozen=True)
class ProviderSpec:
    provider: str
    model: str
    base_url: str | None = None

    def __str__(self) -> str:
        s = self.provider if self.provider == "offline" and self.model in ("", "offline") else (
            f"{self.provider}:{self.model}"
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
