"""The ``sim`` command line. Each subcommand lives in its own module and is registered here.

Exit codes (k6 conventions, libraries.md §1; :mod:`sim.cli.exits`): 0 ok; 1 unexpected error;
2 usage or scenario error; 99 a threshold or regression failed; 130 interrupted (143 on SIGTERM).
"""

from __future__ import annotations

import click

from sim import __version__
from sim.cli.exits import EXIT_INTERRUPTED


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="sim")
def cli() -> None:
    """A deterministic digital twin and load harness for the CVSA snapshot scheduler.

    Run a scenario file on a virtual clock (days in seconds), read its report, gate CI on its
    timing, or drive real SQLite/PostgreSQL/Redis backends with the same scheduler code.
    """


def _register() -> None:
    # Each command module imports its heavy dependencies (matplotlib, the model) inside the
    # command, so that `sim --help` stays fast.
    from sim.cli import capacity as _capacity
    from sim.cli import check as _check
    from sim.cli import compare as _compare
    from sim.cli import curves as _curves
    from sim.cli import explain as _explain
    from sim.cli import load as _load
    from sim.cli import plot as _plot
    from sim.cli import run as _run
    from sim.cli import sweep as _sweep

    cli.add_command(_run.run)
    cli.add_command(_check.check)
    cli.add_command(_plot.plot)
    cli.add_command(_compare.compare)
    cli.add_command(_sweep.sweep)
    cli.add_command(_capacity.capacity)
    cli.add_command(_curves.curves)
    cli.add_command(_load.load)
    cli.add_command(_explain.explain)


_register()


def main() -> None:
    """Console-script entry point."""
    from sim.engine.interrupts import Interrupted

    try:
        cli.main()
    except Interrupted as exc:  # a signal in a run's set-up that its command did not explain
        click.echo(f"interrupted ({exc.args[0]})", err=True)
        raise SystemExit(exc.exit_status) from None
    except KeyboardInterrupt:  # before or after a run's own Ctrl-C handling is in place
        click.echo("interrupted", err=True)
        raise SystemExit(EXIT_INTERRUPTED) from None
