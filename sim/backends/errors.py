"""What every adapter may raise when the environment is at fault, and how a URL is shown.

A module of its own so that the adapters (one file each) and the composition root
(:mod:`sim.backends`) import it without importing each other.
"""

from __future__ import annotations

import re


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***`` (manifests and messages are shared)."""
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", url)


class BackendError(RuntimeError):
    """The environment is at fault (a server unreachable, a schema holding foreign data): the
    message is one line naming the URL and what to do."""
