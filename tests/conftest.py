"""Shared fixtures, the services policy (README "Services": skips become failures in CI), and
waiting for a child ``sim run`` to be under way."""

from __future__ import annotations

import os
import re
import selectors
import subprocess
import time
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
REQUIRE_SERVICES = os.environ.get("SIM_REQUIRE_SERVICES") == "1"


def skip_or_fail(reason: str) -> None:
    """Skip with ``reason``; in CI (``SIM_REQUIRE_SERVICES=1``) fail instead."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{reason} (SIM_REQUIRE_SERVICES=1: a missing service is a failure)")
    pytest.skip(reason)


@pytest.fixture
def small_scenario() -> Path:
    return DATA / "small.toml"


_PROGRESS = re.compile(rb"simulated (?!0s )\S+ of ")
"""A plain progress line of ``sim run`` (sim/cli/progress.py) once virtual time has moved."""


def wait_for_progress(proc: subprocess.Popen[bytes], timeout_s: float) -> bytes:
    """Wait until the child ``sim run`` (stderr piped, no ``-q``) prints a progress line that
    says virtual time has moved: the run is under way, whatever the machine's load (the line
    comes every few wall seconds once the engine runs). Returns the line; fails, with what the
    child printed, when it exits first or stays silent for ``timeout_s``."""
    return wait_for_line(proc, _PROGRESS, timeout_s)


def wait_for_line(
    proc: subprocess.Popen[bytes], pattern: re.Pattern[bytes], timeout_s: float
) -> bytes:
    """Wait until the child (stderr piped) prints a line matching ``pattern`` on stderr, such as
    a stage of the run (``"small: writing the report"``, sim/cli/progress.py); returns it."""
    assert proc.stderr is not None
    fd = proc.stderr.fileno()
    seen = b""
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            assert left > 0, (
                f"no line {pattern.pattern!r} in {timeout_s:g} s; stderr: {seen.decode()}"
            )
            if not selector.select(left):
                continue
            chunk = os.read(fd, 4096)
            assert chunk, f"the child ended before {pattern.pattern!r}; stderr: {seen.decode()}"
            seen += chunk
            for line in seen.splitlines():
                if pattern.search(line):
                    return line
