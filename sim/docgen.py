"""The entry point shared by the generated docs (``python -m sim.scenario.profile_doc
docs/profiles.md``, ``python -m sim.scenario.scenario_doc docs/scenario.md``): a test keeps each
file current."""

from __future__ import annotations

import sys


def write_or_print(text: str, argv: list[str]) -> int:
    """Write ``text`` to ``argv[0]``, or print it when no path is given; the exit status."""
    if argv:
        with open(argv[0], "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0
