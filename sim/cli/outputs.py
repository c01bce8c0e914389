"""Where a command's files go, and what it says when writing them fails or a signal stops it.

Nothing is lost to a bad output path: the directory is created and tried before anything runs
(a path through a file, a read-only file system, ``/proc``: one line, exit status 2, in well
under a second). A write that fails later (a full disk) and a second Ctrl-C while the report is
written leave every file already written valid, since each goes through a rename
(:func:`sim.report.tables.write_atomic`); the command lists what is there and what is missing.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from sim.cli.exits import EXIT_ERROR, EXIT_USAGE
from sim.engine.interrupts import Interrupted

if TYPE_CHECKING:
    from sim.runner import RunResult

RUN_RECORD = ("manifest.json", "summary.json", "scenario.json")
"""The files that make a run's record: with them, `sim plot` and `sim compare` can work."""

_STARTED_S = time.time()
"""When this command started: a file older than this is an earlier run's, not this one's."""


def ensure_out_dir(path: Path, *, flag: str = "--out", default: bool = False) -> Path:
    """Create ``path`` (and its parents) and check a file can be written there, or exit with
    status 2 and one line naming ``flag`` (for a default path: the flag it is the default of)."""
    what = f"{path} (the default of {flag})" if default else f"{flag} {path}"
    if path.exists() and not path.is_dir():
        _usage(f"{what}: is a file, not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _usage(f"{what}: cannot create the directory: {_reason(exc)}")
    try:
        with tempfile.NamedTemporaryFile(dir=path, prefix=".sim-write-check-"):
            pass
    except OSError as exc:
        _usage(f"{what}: cannot write there: {_reason(exc)}")
    return path


def write_failed(exc: OSError, out: Path) -> NoReturn:
    """A write into ``out`` failed part-way (a full disk): say which file, what is there and
    what is missing, and exit with status 1."""
    where = f" ({exc.filename})" if exc.filename else ""
    click.echo(f"error: writing to {out} failed{where}: {_reason(exc)}", err=True)
    click.echo(f"  {what_is_there(out)}", err=True)
    sys.exit(EXIT_ERROR)


def interrupted(exc: Interrupted, out: Path | None) -> NoReturn:
    """A signal stopped the command before its report was complete: say when and what is
    there, and exit with 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM)."""
    name = str(exc.args[0])
    if exc.stage == "set-up":
        click.echo(
            f"interrupted ({name}) during set-up, before the simulation started: nothing to report",
            err=True,
        )
    else:
        click.echo(f"interrupted ({name}) while the report was written", err=True)
        if out is not None:
            click.echo(f"  {what_is_there(out)}", err=True)
    sys.exit(exc.exit_status)


def written_under(exc: OSError, out: Path) -> bool:
    """Whether ``exc`` is a failed write of a file in ``out`` (else it is not ours to explain)."""
    if exc.filename is None:
        return False
    return Path(exc.filename).resolve().is_relative_to(out.resolve())


def ended(result: RunResult, out: Path | None) -> None:
    """A run's last words on stderr: a saved log that could not be written in full, and a
    signal that stopped the run or came while its report was written (the command then ends
    with 128 + the signal's number: 130 for Ctrl-C, 143 for SIGTERM). Returns if neither."""
    error = result.manifest.get("events_file_error")
    if error:
        click.echo(f"warning: the saved event log is incomplete: {error}", err=True)
    if result.signum is None:
        return
    name = signal.Signals(result.signum).name
    if not result.partial:
        click.echo(f"{name} came after the run had ended: its report is complete", err=True)
    sys.exit(128 + result.signum)


def what_is_there(out: Path) -> str:
    """One line: whether the run's record is complete, and how to get the rest."""
    present = (
        sorted(p.name for p in out.iterdir() if p.stat().st_mtime >= _STARTED_S - 1)
        if out.is_dir()
        else []
    )
    record = [f for f in RUN_RECORD if f in present]
    missing = [f for f in RUN_RECORD if f not in present]
    drawn = [f for f in present if f.endswith(".png") or f == "report.html"]
    csvs = [f for f in present if f.endswith(".csv")]
    if missing:
        return (
            f"written: {', '.join(record) or 'nothing'}; missing: {', '.join(missing)} "
            "(the run's results are lost: run it again)"
        )
    if "report.html" not in present:
        how = "`sim plot " + str(out) + "` draws them"
        return (
            f"written: the run's record ({', '.join(RUN_RECORD)}), {len(csvs)} CSV series and "
            f"{len(drawn)} plots; missing: report.html"
            + ("" if drawn else " and the plots")
            + f" ({how}{'' if csvs else ' once the CSV series are there: run it again'})"
        )
    return f"written: the run's record, {len(csvs)} CSV series, {len(drawn) - 1} plots, report.html"


def _reason(exc: OSError) -> str:
    return exc.strerror or os.strerror(exc.errno or 0) or str(exc)


def _usage(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_USAGE)
