"""sim: a deterministic digital twin and load harness for the CVSA snapshot scheduler."""

from importlib.metadata import PackageNotFoundError, version

from sim import _native

# Before any other sim module is imported: a stale or unwanted compiled build must not load.
_native.choose()

try:
    __version__ = version("sim")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
