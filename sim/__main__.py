"""``python -m sim`` is the same as the ``sim`` command."""

from sim.cli import main

main()
