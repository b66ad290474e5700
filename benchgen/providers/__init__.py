"""Model providers: one async ``complete`` method each, registered by spec prefix."""

from benchgen.providers.base import Completion, Message, Provider, ProviderSpec, Request, parse_spec

__all__ = ["Completion", "Message", "Provider", "ProviderSpec", "Request", "parse_spec"]
