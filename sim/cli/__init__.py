"""The ``sim`` command line. Each subcommand lives in its own module and is registered here.

Exit codes (k6 conventions, libraries.md §1): 0 ok; 1 unexpected error; 2 usage or scenario
error; 99 a threshold or regression failed; 130 interrupted.
"""

from __future__ import annotations

import importlib
import sys

import click

from sim import __version__

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_THRESHOLD = 99
EXIT_INTERRUPTED = 130


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="sim")
def cli() -> None:
    """A deterministic digital twin and load harness for the CVSA snapshot scheduler.

    Run a scenario file on a virtual clock (days in seconds), read its report, gate CI on its
    timing, or drive real SQLite/PostgreSQL/Redis backends with the same scheduler code.
    """


def _register() -> None:
    # Imported here so that `sim --help` stays fast and each command owns its imports.
    from sim.cli import curves as _curves

    cli.add_command(_curves.curves)
    # Branches land separately: a subcommand whose module is not on this branch yet is skipped
    # (any other import error still surfaces).
    try:
        _run = importlib.import_module("sim.cli.run")
    except ModuleNotFoundError as exc:
        if exc.name != "sim.cli.run":
            raise
    else:
        cli.add_command(_run.run)


_register()


def main() -> None:
    """Console-script entry point."""
    sys.exit(cli.main(standalone_mode=True) or 0)
