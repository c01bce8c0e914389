"""Nothing lost to a signal or an output path (issue 29): SIGTERM as Ctrl-C, Ctrl-C during
set-up and while the report is written, an unwritable --out, a disk that fills up.

The subprocess tests wait for the run's own stage or progress lines before they signal, never a
fixed time (tests/conftest.py ``wait_for_line``)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sim.cli import cli
from sim.cli.outputs import what_is_there
from sim.engine.interrupts import Interrupted, Interrupts
from sim.events import SavedLog
from sim.events.file import FileSink
from tests.conftest import DATA, ROOT, wait_for_line, wait_for_progress


def _start(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "sim", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own group, so that the group can be signalled
    )


def test_sigterm_is_a_ctrl_c_a_valid_report_marked_partial_and_exit_143(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _start("run", str(DATA / "small.toml"), "--out", str(out), "--save-events",
                  "--set", 'duration="30d"')  # fmt: skip
    wait_for_progress(proc, timeout_s=120)
    proc.send_signal(signal.SIGTERM)  # a supervisor's stop: the process alone, not its group
    stdout, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err.decode()
    assert (
        "SIGTERM: stopping after the current event; the report will cover the run so far "
        "(a second SIGTERM would abandon in-flight I/O too)" in err.decode()
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["partial"] is True
    assert 0 < manifest["simulated_seconds"] < 30 * 86_400
    assert "PARTIAL (interrupted)" in stdout.decode()
    assert "Partial run" in (out / "report.html").read_text()
    with SavedLog(out / "events.simlog") as saved:
        list(saved.chunks())
        assert saved.complete
        assert saved.partial is True


def test_ctrl_c_during_set_up_answers_at_once_and_writes_nothing(tmp_path: Path) -> None:
    """Drawing a world of two million videos takes seconds without one trio checkpoint: the
    signal must not wait for the run to start."""
    out = tmp_path / "run"
    proc = _start("run", str(ROOT / "scenarios" / "full-scale.toml"), "--out", str(out))
    wait_for_line(proc, re.compile(rb"full-scale: drawing the world"), timeout_s=120)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err.decode()
    assert err.decode().endswith(
        "interrupted (SIGINT) during set-up, before the simulation started: nothing to report\n"
    )
    assert list(out.iterdir()) == []  # created and checked before the run; nothing in it


def test_ctrl_c_while_the_report_is_written_finishes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _start("run", str(DATA / "small.toml"), "--out", str(out), "--set", 'duration="7d"')
    wait_for_line(proc, re.compile(rb"small: writing the report"), timeout_s=180)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    text = err.decode()
    if proc.returncode == 0:  # the report was done before the signal landed: nothing to test
        pytest.skip("the report was written before the signal arrived")
    assert proc.returncode == 130, text
    assert "SIGINT: finishing the report first (press Ctrl-C again to stop now)" in text
    assert "SIGINT came after the run had ended: its report is complete" in text
    assert json.loads((out / "manifest.json").read_text())["partial"] is False
    assert (out / "report.html").exists()


def test_a_second_signal_while_closing_raises_and_says_what_is_there(tmp_path: Path) -> None:
    said: list[str] = []
    interrupts = Interrupts(said.append)
    interrupts.closing()
    interrupts.handle(signal.SIGINT, None)
    assert said == ["SIGINT: finishing the report first (press Ctrl-C again to stop now)"]
    with pytest.raises(Interrupted) as caught:
        interrupts.handle(signal.SIGINT, None)
    assert caught.value.stage == "closing"
    assert caught.value.exit_status == 130
    for name in ("manifest.json", "summary.json", "scenario.json", "occupancy.csv", "a.png"):
        (tmp_path / name).write_text("{}")
    assert what_is_there(tmp_path) == (
        "written: the run's record (manifest.json, summary.json, scenario.json), 1 CSV series "
        f"and 1 plots; missing: report.html (`sim plot {tmp_path}` draws them)"
    )
    (tmp_path / "summary.json").unlink()
    assert what_is_there(tmp_path) == (
        "written: manifest.json, scenario.json; missing: summary.json (the run's results are "
        "lost: run it again)"
    )


def test_a_signal_during_set_up_raises_and_one_while_running_stops_the_engine() -> None:
    said: list[str] = []
    stopped: list[bool] = []
    cancelled: list[bool] = []
    interrupts = Interrupts(said.append)
    with pytest.raises(Interrupted) as caught:
        interrupts.handle(signal.SIGTERM, None)
    assert caught.value.stage == "set-up"
    assert caught.value.exit_status == 143
    interrupts = Interrupts(said.append)
    interrupts.entered(lambda: stopped.append(True), lambda: cancelled.append(True))
    interrupts.running()
    interrupts.handle(signal.SIGINT, None)
    assert stopped == [True]
    assert cancelled == []
    interrupts.handle(signal.SIGINT, None)
    assert cancelled == [True]


def test_a_set_up_signal_whose_exception_was_lost_is_raised_at_the_next_checkpoint() -> None:
    """The handler's exception can land where it is dropped (the import of a compiled module
    dropped one, and the run went on); the set-up's checkpoints raise it again."""
    interrupts = Interrupts(lambda _: None)
    with contextlib.suppress(Interrupted):  # lost, as it was inside that import
        interrupts.handle(signal.SIGINT, None)
    with pytest.raises(Interrupted) as caught:
        interrupts.running()  # the checkpoint before the engine's loop
    assert (caught.value.stage, caught.value.exit_status) == ("set-up", 130)
    assert interrupts.stage == "set-up"  # never ran


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("/proc/sim-test/x",
         "--out /proc/sim-test/x: cannot create the directory: No such file or directory"),
        ("{tmp}/a-file/x", "--out {tmp}/a-file/x: cannot create the directory: Not a directory"),
    ],
)  # fmt: skip
def test_an_unwritable_out_is_refused_before_anything_runs(
    tmp_path: Path, out: str, message: str
) -> None:
    (tmp_path / "a-file").write_text("")
    target = out.format(tmp=tmp_path)
    result = CliRunner().invoke(cli, ["run", str(DATA / "small.toml"), "--out", target, "-q"])
    assert result.exit_code == 2
    assert result.output == f"error: {message.format(tmp=tmp_path)}\n"


def test_a_disk_that_fills_up_leaves_valid_files_and_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    real = Path.write_bytes

    def full_for_plots(self: Path, data: bytes) -> int:  # type: ignore[override]
        if self.name.endswith(".png.tmp"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", full_for_plots)
    result = CliRunner().invoke(cli, ["run", str(DATA / "small.toml"), "--out", str(out), "-q"])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert re.fullmatch(
        rf"error: writing to {out} failed \({out}/\w+\.png\): No space left on device", lines[0]
    ), lines[0]
    assert lines[1].startswith(
        "  written: the run's record (manifest.json, summary.json, scenario.json), "
    )
    assert lines[1].endswith(f"missing: report.html and the plots (`sim plot {out}` draws them)")
    assert json.loads((out / "manifest.json").read_text())["partial"] is False
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_a_saved_log_that_cannot_be_written_does_not_stop_the_run() -> None:
    """/dev/full fails every write with ENOSPC: the sink keeps the error and lets the run go on."""
    sink = FileSink(Path("/dev/full"))
    sink.open(b"SIMLOG1\n{}")
    sink.close("00" * 32, partial=False)
    assert sink.error is not None
    assert sink.error.errno == errno.ENOSPC
