"""The saved event log (``events.simlog``): writer sink and streaming reader.

Layout (docs/event-log-format.md)::

    MAGIC (8 bytes "SIMLOG1\\n")
    u32 header length, header (JSON, sorted keys)
    repeated: u32 compressed length, u32 raw length, zlib(raw chunk)     -- one per chunk
    u32 0, u8 partial flag, 32 bytes SHA-256 fingerprint                 -- trailer

The fingerprint is SHA-256 over ``MAGIC + header + raw chunks``, the same bytes the run hashed,
so ``read_log`` can verify a file against its manifest. A file cut short (a killed process) reads
up to its last complete chunk and reports ``complete = False``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from sim.events.log import MAGIC, Chunk

_U32 = struct.Struct("<I")
_CHUNK = struct.Struct("<II")
COMPRESSION_LEVEL = 1  # fast: at full scale the log is large and level 6 buys little on int64s


class FileSink:
    """Streams the log to ``path`` as it is written.

    A write that fails (a full disk) does not stop the run, which needs no saved log: the file
    ends at its last complete chunk (read as cut short, ``complete = False``) and ``error`` says
    why, for the manifest and the command's last words."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: BinaryIO | None = None
        self.error: OSError | None = None

    def open(self, header: bytes) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "wb")  # noqa: SIM115 - closed in close()
        body = header[len(MAGIC) :]
        self._put(MAGIC + _U32.pack(len(body)) + body)

    def write(self, chunk: Chunk, raw: bytes) -> None:
        if self._fh is None:
            return  # a write failed: the file stays cut short
        packed = zlib.compress(raw, COMPRESSION_LEVEL)
        self._put(_CHUNK.pack(len(packed), len(raw)) + packed)

    def close(self, fingerprint: str, partial: bool) -> None:
        if self._fh is None:
            return
        self._put(_U32.pack(0) + bytes([1 if partial else 0]) + bytes.fromhex(fingerprint))
        if self._fh is not None:
            try:
                self._fh.close()  # flushes: a full disk may show only now
            except OSError as exc:
                self.error = exc
            self._fh = None

    def _put(self, data: bytes) -> None:
        assert self._fh is not None
        try:
            self._fh.write(data)
        except OSError as exc:
            self.error = exc
            with contextlib.suppress(OSError):  # the buffered rest cannot be written either
                self._fh.close()
            self._fh = None


class SavedLog:
    """A saved log opened for streaming: ``header``, then ``chunks()``; verifies as it reads."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fh = open(self.path, "rb")  # noqa: SIM115 - closed by close()/context manager
        magic = self._fh.read(len(MAGIC))
        if magic != MAGIC:
            self._fh.close()
            raise ValueError(f"{self.path}: not a sim event log (bad magic {magic!r})")
        (n,) = _U32.unpack(self._fh.read(4))
        body = self._fh.read(n)
        self.header: dict[str, Any] = json.loads(body)
        self._names: list[str] = list(self.header["names"])
        self._hash = hashlib.sha256(MAGIC + body)
        self.complete = False
        self.partial: bool | None = None
        self.stored_fingerprint: str | None = None

    def __enter__(self) -> SavedLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._fh.close()

    @property
    def names(self) -> list[str]:
        """The name table as far as it has been read (header names plus chunks' new names)."""
        return self._names

    def chunks(self) -> Iterator[Chunk]:
        """Every complete chunk, in order."""
        first_seq = 0
        while True:
            head = self._fh.read(4)
            if len(head) < 4:
                return  # truncated: no trailer
            (clen,) = _U32.unpack(head)
            if clen == 0:
                tail = self._fh.read(33)
                if len(tail) == 33:
                    self.partial = bool(tail[0])
                    self.stored_fingerprint = tail[1:].hex()
                    self.complete = True
                return
            rlen_b = self._fh.read(4)
            packed = self._fh.read(clen)
            if len(rlen_b) < 4 or len(packed) < clen:
                return
            raw = zlib.decompress(packed)
            if len(raw) != _U32.unpack(rlen_b)[0]:
                raise ValueError(f"{self.path}: corrupted chunk")
            self._hash.update(raw)
            chunk = Chunk.from_bytes(raw, first_seq)
            for index, text in chunk.new_names:
                if index != len(self._names):
                    raise ValueError(f"{self.path}: name table out of order at {index}")
                self._names.append(text)
            first_seq += chunk.n_events
            yield chunk

    def fingerprint(self) -> str:
        """SHA-256 of what was read so far (the run's fingerprint once every chunk is read)."""
        return self._hash.hexdigest()


def read_events(path: Path) -> Iterator[Any]:
    """Every record of a saved log as typed records, in order (small logs, tests, tools)."""
    with SavedLog(path) as log:
        for chunk in log.chunks():
            yield from chunk.events()
