"""How a run answers Ctrl-C (SIGINT) and SIGTERM: at once, and without losing what ran.

A run passes through three stages, and a signal means something different in each:

* **set-up** (the world is drawn, the initial state loaded): nothing has been simulated, so the
  signal aborts at once with :class:`Interrupted`, which the command line reports in one line.
  Set-up can take tens of seconds at full scale without one trio checkpoint, so the handler is a
  plain Python one, which runs between any two bytecodes, not a trio signal receiver. An
  exception raised from a handler can be lost where it lands (seen: inside the import of a
  compiled module, whose initialisation dropped it), so the signal is also remembered and
  raised again at the set-up's checkpoints (:meth:`Interrupts.raise_pending`: the world built,
  the initial state loaded);
* **running**: the first signal asks the engine to stop after its current entry, so that the
  log closes, marked partial, and the report of what ran is written; a second one cancels
  in-flight I/O too (a hung server);
* **running** in other processes (the points of a sweep): SIGTERM raises :class:`Interrupted`
  in the parent, which stops the workers (a terminal's Ctrl-C reaches them itself);
* **closing** (the results are collected and the report written): the first signal is noted
  and the report finished, since it is seconds away and is what the run was for; a second one
  raises :class:`Interrupted`: every file already written stays valid (each is written through a
  rename), and the command says which are missing.

SIGTERM is handled like Ctrl-C (a supervisor's stop is a request to end cleanly), and the
command exits with 128 + the signal's number, as a shell would report it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Final, Literal

import trio

SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)

Stage = Literal["set-up", "running", "closing"]


class Interrupted(KeyboardInterrupt):
    """A run stopped by a signal before it could write its report; ``stage`` says when."""

    def __init__(self, signum: int, stage: Stage) -> None:
        super().__init__(signal.Signals(signum).name, stage)
        self.signum = signum
        self.stage: Stage = stage

    @property
    def exit_status(self) -> int:
        """128 + the signal's number: 130 for Ctrl-C, 143 for SIGTERM."""
        return 128 + self.signum


class Interrupts:
    """The signal handlers of one run, stage by stage (see the module docstring).

    ``say`` tells the user what a signal did (a line on stderr)."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.stage: Stage = "set-up"
        self.signum: int | None = None
        """The first signal received, if any."""
        self._stop: Callable[[], None] = _nothing
        self._say = say
        self._presses = 0
        self._cancel: Callable[[], None] | None = None
        self._pending = False

    def entered(self, stop: Callable[[], None], cancel: Callable[[], None]) -> None:
        """The run's trio loop has started: ``stop`` asks the engine to end after its current
        entry, ``cancel`` cancels the run's I/O (both safe to call from a handler)."""
        self._stop = stop
        self._cancel = cancel

    def running(self) -> None:
        """The engine's loop starts now (set-up is over)."""
        self.raise_pending()
        self.stage = "running"

    def raise_pending(self) -> None:
        """Raise a set-up signal that was not acted on: one that came while trio was in its own
        bookkeeping, where nothing may be raised (it cancelled the run's I/O instead, so the
        set-up ends soon), or one whose exception was lost where the handler raised it."""
        if self._pending:
            assert self.signum is not None
            raise Interrupted(self.signum, "set-up")

    def closing(self) -> None:
        """The log is closed: from now on a first signal is deferred."""
        self.stage = "closing"
        self._presses = 0

    def handle(self, signum: int, frame: FrameType | None) -> None:
        """The handler of SIGINT and SIGTERM."""
        if self.signum is None:
            self.signum = signum
        self._presses += 1
        name = signal.Signals(signum).name
        if self.stage == "set-up":
            self._pending = True  # raised again at the next checkpoint if this one is lost
            if _in_trio() and trio.lowlevel.currently_ki_protected():
                # In trio's own bookkeeping: end the set-up by cancelling.
                self._stop()
                if self._cancel is not None:
                    self._cancel()
                return
            raise Interrupted(signum, "set-up")
        if self.stage == "running":
            self._stop()
            if self._presses == 1:
                again = _again(signum, "abandon in-flight I/O too")
                self._say(
                    f"{name}: stopping after the current event; the report will cover the run "
                    f"so far ({again})"
                )
            elif self._cancel is not None:
                self._cancel()
            return
        if self._presses == 1:
            self._say(f"{name}: finishing the report first ({_again(signum, 'stop now')})")
            return
        raise Interrupted(signum, "closing")


@contextmanager
def handled(interrupts: Interrupts) -> Iterator[Interrupts]:
    """Install ``interrupts`` for SIGINT and SIGTERM, and restore the previous handlers after.

    Off the main thread (a test runner's worker, a Dask worker's thread) signals cannot be
    handled, and nothing is installed."""
    if threading.current_thread() is not threading.main_thread():
        yield interrupts
        return
    previous = {s: signal.signal(s, interrupts.handle) for s in SIGNALS}
    try:
        yield interrupts
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _in_trio() -> bool:
    try:
        trio.lowlevel.current_trio_token()  # set for the whole run, scheduler included
    except RuntimeError:
        return False
    return True


def _again(signum: int, to: str) -> str:
    if signum == signal.SIGINT:
        return f"press Ctrl-C again to {to}"
    return f"a second {signal.Signals(signum).name} would {to}"


def _nothing() -> None:
    pass
