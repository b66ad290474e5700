"""Error hierarchy. Every message says what went wrong *and* what to do about it.

The CLI catches :class:`BenchgenError` and prints ``message`` (and ``hint``) without a traceback.
"""

from __future__ import annotations


class BenchgenError(Exception):
    """Base class: an expected failure with a message a user can act on."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class ConfigError(BenchgenError):
    """A YAML/Jinja/recipe file is malformed; the message names the file and the field."""

    exit_code = 2


class ProviderError(BenchgenError):
    """A model provider failed in a way retrying will not fix (or retries were exhausted)."""

    exit_code = 3


class MissingKeyError(ProviderError):
    """An API key environment variable is not set."""

    def __init__(self, env_var: str, provider: str) -> None:
        super().__init__(
            f"{provider} needs an API key but the environment variable {env_var} is not set.",
            hint=f"export {env_var}=... (or pass --api-key-env NAME to read the key from another variable); "
            "use --generator offline / --judge offline to run without any provider.",
        )
        self.env_var = env_var


class NotAvailableError(BenchgenError):
    """A feature that is recognised but not available in this build."""


class BudgetExceeded(BenchgenError):
    """--max-cost was reached; completed work is kept and a rerun resumes."""


class ReleaseError(BenchgenError):
    """A release would overwrite an immutable version, or its files fail verification."""

    exit_code = 4


class DataError(BenchgenError):
    """An input data file (JSONL/Parquet) is missing, unreadable or lacks a required field."""
