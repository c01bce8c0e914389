"""The exit statuses of every ``sim`` command (k6 conventions, libraries.md §1).

They live apart from the command group (:mod:`sim.cli`), which imports every command module:
a command takes its statuses from here, not from the package that imports it.
"""

from __future__ import annotations

EXIT_OK = 0
"""Success (every threshold or tolerance held)."""
EXIT_ERROR = 1
"""An unexpected error, or the environment's (a server unreachable: one line, no traceback)."""
EXIT_USAGE = 2
"""A usage or scenario error: nothing ran."""
EXIT_THRESHOLD = 99
"""An ``[expect]`` threshold or a ``--tolerance`` failed."""
EXIT_INTERRUPTED = 130
"""Ctrl-C: what was written is valid and marked partial. A signal ends a command with 128 + its
number, as a shell reports it: 130 for SIGINT, 143 for SIGTERM (:mod:`sim.engine.interrupts`)."""
