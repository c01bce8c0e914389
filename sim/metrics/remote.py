"""Reducers in a second process: the run's metrics computed on the machine's other core.

The engine is one thread, and at full scale its reducers (the lifecycle invariant above all)
are a good share of the run's work (docs/performance.md "Reducers in a second process"). They
are pure folds over the log's chunks (README "Design rules" 4), so they can run anywhere the
chunks can be sent: this sink starts a child Python (``python -m sim.metrics.remote``) and
streams it the chunks' canonical bytes, which the log has already made for its fingerprint. The
child rebuilds each chunk with :meth:`Chunk.from_bytes`, feeds the same reducer objects the inline
:class:`~sim.metrics.base.ReducerSink` would, and at the end sends back what each group's
``finish`` function makes of them (the metrics, the report's tables). The results are those of
the inline sink, bit for bit: the reducers see equal chunks in the same order.

Frames on the child's stdin (parent -> child): a tag byte and a length, then the payload --
``O`` the pickled reducer groups and the log header, ``C`` one chunk's bytes, ``E`` the end.
The child answers once on its stdout: its outcome (the groups' results or its traceback) and
its peak resident memory. The child reads a whole frame before it reduces it, and a pipe holds
64 KB, so the run is at most one chunk (and a pipe's worth) ahead: the child's memory is bounded.

The child runs in its own process group: a Ctrl-C at the terminal reaches the run, which stops
and closes the log as partial, and the child then finishes the partial results (non-negotiable
5); it is not interrupted half-way.

The child calls ``gc.freeze()`` after each chunk (docs/performance.md "`gc.freeze()` in the
reducer process"): the reducers' state is long-lived and almost free of cycles, so the cyclic
collector's passes over it free next to nothing, yet each full collection walks all of it.
Frozen objects are still freed by their reference counts; the collector then walks only what
the last chunk allocated.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import select
import struct
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from sim.events.log import Chunk
from sim.metrics.base import Reducer, ReducerSink

_FRAME = struct.Struct("<cQ")
Finish = Callable[[list[Reducer]], Any]


class ReducerProcessError(RuntimeError):
    """The reducer process failed; the message carries its traceback."""


class ProcessReducerSink:
    """A :class:`~sim.events.log.Sink` that runs reducer groups in a child process.

    Construct it early (the child imports numpy and the reducers while the world is built), add
    groups with :meth:`add` before the log opens (the sink lets them go once it has sent them),
    and read :attr:`outcomes` (one per group, in order) after the log closes. :meth:`terminate`
    ends the child when its answer will not be read (the log never closed, or the run failed
    after).
    """

    def __init__(self) -> None:
        self.groups: list[tuple[list[Reducer], Finish]] = []
        self._outcomes: list[Any] | None = None
        self.child_peak_kb = 0
        """The child's peak resident memory (its own ``ru_maxrss``), known once
        :attr:`outcomes` has been read."""
        self._done = False
        self._closed = False
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        # The child must import the same ``sim`` as this process, installed or not.
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, env.get("PYTHONPATH", "")) if p
        )
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "sim.metrics.remote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            process_group=0,  # a terminal Ctrl-C is the run's to handle, not the child's
        )
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        self._to: IO[bytes] = self._proc.stdin
        self._from: IO[bytes] = self._proc.stdout

    def add(self, reducers: list[Reducer], finish: Finish) -> None:
        """A group of reducers and the module-level function that turns them into its outcome
        (both pickled when the log opens, so later additions to ``reducers`` still count)."""
        self.groups.append((reducers, finish))

    # -- the Sink protocol ------------------------------------------------------------------------
    def open(self, header: bytes) -> None:
        self._send(b"O", pickle.dumps((self.groups, header), protocol=pickle.HIGHEST_PROTOCOL))
        # The child has the reducers now: this process lets its copies go (at 20M videos the
        # songs' gaps and the run's truth, some 200 MB, would stay for the whole run).
        self.groups = []

    def write(self, chunk: Chunk, raw: bytes) -> None:
        if self._done:
            return
        # A child that failed has already answered: raise now, not at the end of the run.
        if select.select([self._from], [], [], 0)[0]:
            self._receive()
        self._send(b"C", raw)

    def close(self, fingerprint: str, partial: bool) -> None:
        # The end of the log is sent only when the outcomes are asked for: the child computes
        # the results (the findings, the report's tables) after the run's process has let its
        # model go (sim/runner.py), so that the two peaks do not add up.
        self._closed = True

    @property
    def outcomes(self) -> list[Any]:
        """One outcome per group, in order; after close, tells the child the log ended, waits
        for its answer, and raises :class:`ReducerProcessError` if it failed."""
        if self._outcomes is None:
            if self._done:
                raise ReducerProcessError("the reducer process was ended before it answered")
            if not self._closed:
                raise RuntimeError("the outcomes are known once the log is closed")
            self._send(b"E", b"")  # on a broken pipe, reads the child's answer (or raises)
            if self._outcomes is None:
                self._to.close()
                self._receive()
        assert self._outcomes is not None
        return self._outcomes

    # -- the child's lifetime --------------------------------------------------------------------
    def terminate(self) -> None:
        """End the child (idempotent): after close, or when the run ended before it."""
        self._done = True
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        for stream in (self._to, self._from):
            if not stream.closed:
                stream.close()

    def _send(self, tag: bytes, payload: bytes) -> None:
        try:
            self._to.write(_FRAME.pack(tag, len(payload)))
            self._to.write(payload)
            self._to.flush()
        except BrokenPipeError:
            self._receive()  # the child's answer says why it stopped reading

    def _receive(self) -> None:
        """Read the child's one answer; raise :class:`ReducerProcessError` unless it is ok."""
        head = self._from.read(_FRAME.size)
        if len(head) < _FRAME.size:
            code = self._proc.wait()
            self.terminate()
            raise ReducerProcessError(
                f"the reducer process (pid {self._proc.pid}) exited with code {code} "
                "without an answer (its error, if any, is above)"
            )
        _tag, size = _FRAME.unpack(head)
        status, value, self.child_peak_kb = pickle.loads(self._from.read(size))
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=10)  # it exits right after answering
        self.terminate()
        if status != "ok":
            raise ReducerProcessError(f"the reducer process failed:\n{value}")
        self._outcomes = value


def merged_result(reducers: list[Reducer]) -> dict[str, Any]:
    """A metrics group's outcome: :meth:`ReducerSink.result` of its reducers."""
    return ReducerSink(reducers).result()


# -- the child ----------------------------------------------------------------------------------
def _serve(inp: IO[bytes]) -> list[Any]:
    """Read frames until ``E``; return each group's outcome."""
    sinks: list[ReducerSink] = []
    finishes: list[Finish] = []
    first_seq = 0
    while True:
        head = inp.read(_FRAME.size)
        if len(head) < _FRAME.size:
            raise EOFError("the run's process closed the pipe before the end of the log")
        tag, size = _FRAME.unpack(head)
        payload = inp.read(size)
        if tag == b"O":
            groups, header = pickle.loads(payload)
            for reducers, finish in groups:
                sink = ReducerSink(reducers)
                sink.open(header)
                sinks.append(sink)
                finishes.append(finish)
        elif tag == b"C":
            chunk = Chunk.from_bytes(payload, first_seq)
            first_seq += chunk.n_events
            for sink in sinks:
                sink.write(chunk, payload)
            gc.freeze()  # the collector walks only what this chunk allocated (module docstring)
        else:
            return [finish(sink.reducers) for sink, finish in zip(sinks, finishes, strict=True)]


def main() -> None:
    import resource

    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the answer
    try:
        answer: tuple[str, Any] = ("ok", _serve(inp))
    except EOFError:
        return  # the run's process is gone: nobody to answer
    except BaseException:
        answer = ("error", traceback.format_exc())
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    blob = pickle.dumps((*answer, peak_kb), protocol=pickle.HIGHEST_PROTOCOL)
    out.write(_FRAME.pack(b"A", len(blob)))
    out.write(blob)
    out.flush()


if __name__ == "__main__":
    main()
