"""Provider factory: ``make_provider("openai:gpt-4o")`` -> a :class:`Provider`.

The registry is a plain dict from provider name to factory. Each factory imports its SDK lazily,
so ``import benchgen`` never imports ``anthropic`` / ``openai``.

API keys come from the environment only: ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY``, or the
variable named by ``api_key_env`` (``--api-key-env``). A missing key raises
:class:`MissingKeyError` naming the variable, before any work starts. Keys are handed to the SDK
client and nowhere else (never logged, cached, or written to manifests).

OpenAI-compatible local servers: for ``openai:MODEL@BASE_URL`` with no key set (and no
``api_key_env`` given) the placeholder key ``EMPTY`` is sent, as vLLM and similar servers expect.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from benchgen.errors import MissingKeyError, NotAvailableError
from benchgen.providers.base import Provider, ProviderSpec, parse_spec

DEFAULT_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
LOCAL_PLACEHOLDER_KEY = "EMPTY"


def key_env_name(spec: ProviderSpec, api_key_env: str | None = None) -> str | None:
    """The environment variable a spec's key is read from (None for offline)."""
    if spec.provider == "offline":
        return None
    return api_key_env or DEFAULT_KEY_ENV[spec.provider]


def resolve_api_key(spec: str | ProviderSpec, api_key_env: str | None = None) -> str | None:
    """Return the API key for ``spec`` or raise :class:`MissingKeyError` naming the variable.

    Call it up front (the CLI does, for generator and judge) so a missing key fails before any work.
    """
    spec = spec if isinstance(spec, ProviderSpec) else parse_spec(spec)
    env = key_env_name(spec, api_key_env)
    if env is None:
        return None
    key = os.environ.get(env, "").strip()
    if key:
        return key
    if spec.provider == "openai" and spec.base_url and not api_key_env:
        return LOCAL_PLACEHOLDER_KEY
    raise MissingKeyError(env, spec.provider)


def _anthropic(spec: ProviderSpec, api_key: str | None, **settings: Any) -> Provider:
    from benchgen.providers.anthropic import AnthropicProvider

    assert api_key is not None
    return AnthropicProvider(spec, api_key, **settings)


def _openai(spec: ProviderSpec, api_key: str | None, **settings: Any) -> Provider:
    from benchgen.providers.openai import OpenAIProvider

    assert api_key is not None
    return OpenAIProvider(spec, api_key, **settings)


def _offline(spec: ProviderSpec, api_key: str | None, **settings: Any) -> Provider:
    raise NotAvailableError(
        "`offline` is not a chat-completion provider: with spec `offline`, each stage runs benchgen's "
        "local deterministic generator / judge / reformulator in-process, without the runner",
        hint="use an anthropic:... or openai:... spec where a model endpoint is needed",
    )


PROVIDERS: dict[str, Callable[..., Provider]] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "offline": _offline,
}
"""Provider name -> factory(spec, api_key, **settings). Add an entry to support a new provider."""


def make_provider(spec: str | ProviderSpec, api_key_env: str | None = None, **settings: Any) -> Provider:
    """Build a provider from a spec string.

    ``settings`` go to the adapter: ``timeout`` (seconds per request, default 120),
    ``max_connections`` (HTTP pool size, default 512; keep it >= the run's concurrency) and
    ``send_temperature`` (default True for OpenAI, False for Anthropic — see
    :mod:`benchgen.providers.anthropic`).
    """
    parsed = spec if isinstance(spec, ProviderSpec) else parse_spec(spec)
    factory = PROVIDERS.get(parsed.provider)
    if factory is None:
        raise NotAvailableError(f"no provider registered for {parsed.provider!r}")
    key = resolve_api_key(parsed, api_key_env)
    return factory(parsed, key, **settings)
