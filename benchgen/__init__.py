"""benchgen: build, release and score contextual-integrity privacy benchmarks."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("benchgen")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
