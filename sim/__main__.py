"""``python -m sim`` is the same as the ``sim`` command, whose entry point is :func:`entry`."""

from __future__ import annotations

import sys


def entry() -> None:
    """The ``sim`` console script: a Ctrl-C while the commands are imported (a second or so)
    ends quietly, as one later does, rather than with an import traceback."""
    try:
        from sim.cli import main
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    main()


if __name__ == "__main__":
    entry()
