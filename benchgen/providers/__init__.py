"""Model providers: one async ``complete`` method each, registered by spec prefix.

Importing this package does not import the ``anthropic`` / ``openai`` SDKs; the factory does.
"""

from benchgen.providers.base import (
    Completion,
    FatalProviderError,
    Message,
    Provider,
    ProviderSpec,
    Request,
    TooManyFailures,
    TransientProviderError,
    check_heterogeneous,
    parse_spec,
)
from benchgen.providers.registry import PROVIDERS, make_provider, resolve_api_key

__all__ = [
    "PROVIDERS",
    "Completion",
    "FatalProviderError",
    "Message",
    "Provider",
    "ProviderSpec",
    "Request",
    "TooManyFailures",
    "TransientProviderError",
    "check_heterogeneous",
    "make_provider",
    "parse_spec",
    "resolve_api_key",
]
