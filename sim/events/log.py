"""The run's event log: append-only typed records, streamed in chunks to sinks.

Records are buffered per kind as flat int64 vectors (``librt.vecs.vec[i64]``), which compiled
code appends to without boxing, as a full-scale run appends hundreds of millions of values: an
``array('q')`` converts each value through the generic protocol, and a list of boxed ints
converted later touches values that have left the CPU caches (docs/performance.md "A columnar
memory store"). Every ``CHUNK_EVENTS`` events (a count, so chunk boundaries are deterministic)
the buffers become one :class:`Chunk`, which is serialised canonically
(docs/event-log-format.md), hashed into the run's SHA-256 fingerprint, and handed to every sink:
the file writer of ``--save-events`` and the streaming reducers that compute every metric (README
"Design rules" 4). The log is never held whole in memory.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, Protocol, final

import numpy as np
from librt.vecs import append, vec
from mypy_extensions import i64

from sim.events.schema import BY_RECORD, ENUMS, KINDS, EventKind

MAGIC: Final = b"SIMLOG1\n"
FORMAT_VERSION: Final = 1
CHUNK_EVENTS = 65536
_CHUNK_HEAD: Final = struct.Struct("<4sIH")
_TABLE_HEAD: Final = struct.Struct("<HIH")
_NAME_HEAD: Final = struct.Struct("<IH")
_U32: Final = struct.Struct("<I")


class Chunk:
    """A contiguous run of events, as one int64 table (rows x columns) per kind."""

    def __init__(
        self,
        first_seq: int,
        n_events: int,
        tables: dict[int, np.ndarray],
        new_names: Sequence[tuple[int, str]] = (),
    ) -> None:
        self.first_seq = first_seq
        self.n_events = n_events
        self.tables = tables
        self.new_names = list(new_names)
        """Names (index, text) added to the name table while this chunk was written."""

    def table(self, record_type: type) -> np.ndarray:
        """Rows of one kind (shape ``(n, width)``); an empty table if none in this chunk."""
        kind = BY_RECORD[record_type]
        t = self.tables.get(kind.code)
        return t if t is not None else np.empty((0, kind.width), dtype=np.int64)

    def column(self, record_type: type, field: str) -> np.ndarray:
        """One field of one kind, e.g. ``chunk.column(JobStarted, "due_ms")``."""
        kind = BY_RECORD[record_type]
        names = ("seq", "t_ms", *kind.fields)
        return self.table(record_type)[:, names.index(field)]

    def records(self, record_type: type) -> Iterator[Any]:
        """Typed records of one kind, in log order."""
        for row in self.table(record_type).tolist():
            yield record_type(*row)

    def events(self) -> list[Any]:
        """Every record of the chunk as typed records, in ``seq`` order (for tests and tools)."""
        out: list[Any] = []
        for code, table in self.tables.items():
            cls = KINDS[code].record
            out.extend(cls(*row) for row in table.tolist())
        out.sort(key=lambda r: r[0])
        return out

    def to_bytes(self) -> bytes:
        """The canonical serialisation (little-endian, kinds by code, columns one after another)."""
        parts = [_CHUNK_HEAD.pack(b"SIMC", self.n_events, len(self.tables))]
        for code in sorted(self.tables):
            table = self.tables[code]
            parts.append(_TABLE_HEAD.pack(code, table.shape[0], table.shape[1]))
            parts.append(np.ascontiguousarray(table.T, dtype="<i8").tobytes())
        parts.append(_U32.pack(len(self.new_names)))
        for index, text in self.new_names:
            blob = text.encode()
            parts.append(_NAME_HEAD.pack(index, len(blob)))
            parts.append(blob)
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, data: bytes, first_seq: int) -> Chunk:
        magic, n_events, n_kinds = _CHUNK_HEAD.unpack_from(data, 0)
        if magic != b"SIMC":
            raise ValueError("not an event-log chunk")
        pos = _CHUNK_HEAD.size
        tables: dict[int, np.ndarray] = {}
        for _ in range(n_kinds):
            code, rows, cols = _TABLE_HEAD.unpack_from(data, pos)
            pos += _TABLE_HEAD.size
            size = rows * cols * 8
            flat = np.frombuffer(data, dtype="<i8", count=rows * cols, offset=pos)
            tables[code] = flat.reshape(cols, rows).T.astype(np.int64)
            pos += size
        (n_names,) = _U32.unpack_from(data, pos)
        pos += _U32.size
        names = []
        for _ in range(n_names):
            index, length = _NAME_HEAD.unpack_from(data, pos)
            pos += _NAME_HEAD.size
            names.append((index, data[pos : pos + length].decode()))
            pos += length
        return cls(first_seq, n_events, tables, names)


class Sink(Protocol):
    """Receives the log as it is written: the header once, then every chunk, then ``close``."""

    def open(self, header: bytes) -> None: ...

    def write(self, chunk: Chunk, raw: bytes) -> None: ...

    def close(self, fingerprint: str, partial: bool) -> None: ...


def header_bytes(names: Sequence[str]) -> bytes:
    """The log header: format, schema of every kind, enum tables and the name table."""
    doc = {
        "format": FORMAT_VERSION,
        "chunk_events": CHUNK_EVENTS,
        "kinds": [
            {"code": k.code, "name": k.name, "fields": list(k.fields)}
            for k in sorted(KINDS.values(), key=lambda k: k.code)
        ],
        "enums": {name: list(e.words) for name, e in sorted(ENUMS.items())},
        "names": list(names),
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


@final
class _Values:
    """One kind's values since the last chunk: ``(seq, t_ms, *fields)`` per record, flat."""

    def __init__(self) -> None:
        self.values: vec[i64] = vec[i64]()


class EventLog:
    """Append-only event log of one run.

    Register names (queues, job names, schedulers) with :meth:`name` before :meth:`open`; emit
    records with :meth:`emit` or the faster bound :meth:`emitter`; :meth:`close` flushes and returns
    the SHA-256 fingerprint of the canonical serialisation.
    """

    def __init__(self, sinks: Sequence[Sink] = ()) -> None:
        self.sinks = list(sinks)
        self.names: list[str] = []
        self._name_index: dict[str, int] = {}
        self._buffers: dict[int, _Values] = {code: _Values() for code in KINDS}
        self._seq = 0
        self._chunk_first = 0
        self._hash = hashlib.sha256()
        self._opened = False
        self._closed = False
        self._new_names: list[tuple[int, str]] = []
        self.fingerprint: str | None = None
        # Set by the engine while a lazily announced process runs: called before the next emit.
        self.lazy: Callable[[], None] | None = None

    @property
    def events(self) -> int:
        """Events emitted so far."""
        return self._seq

    def name(self, text: str) -> int:
        """The index of ``text`` in the name table, registering it if new.

        Names registered before :meth:`open` go into the header; later ones travel in the chunk
        being written (``Chunk.new_names``), so a reader always knows a name before it is used.
        """
        idx = self._name_index.get(text)
        if idx is None:
            idx = len(self.names)
            self.names.append(text)
            self._name_index[text] = idx
            if self._opened:
                self._new_names.append((idx, text))
        return idx

    def open(self) -> None:
        """Seal the name table and write the header."""
        head = MAGIC + header_bytes(self.names)
        self._hash.update(head)
        for sink in self.sinks:
            sink.open(head)
        self._opened = True

    def emit(self, record_type: type, t_ms: int, *fields: int) -> None:
        """Append one record (generic form; see :meth:`emitter` for hot paths)."""
        self.emitter(record_type)(t_ms, *fields)

    def emitter(self, record_type: type) -> Callable[..., None]:
        """A fast ``emit(t_ms, *fields)`` bound to one kind."""
        kind: EventKind = BY_RECORD[record_type]
        buf = self._buffers[kind.code]
        log = self

        def emit(t_ms: int, *fields: int) -> None:
            if log.lazy is not None:
                log.lazy()
            seq = log._seq
            log._seq = seq + 1
            try:
                values = append(append(buf.values, seq), t_ms)
                for value in fields:
                    values = append(values, value)
            # Compiled, an int beyond int64 raises ValueError; interpreted, OverflowError.
            except (TypeError, ValueError, OverflowError) as exc:
                msg = f"{kind.name}: a record had a field that is not an integer"
                raise RuntimeError(msg) from exc
            buf.values = values
            if log._seq - log._chunk_first >= CHUNK_EVENTS:
                log._flush()

        return emit

    def _take_chunk(self) -> Chunk:
        tables: dict[int, np.ndarray] = {}
        for code, buf in self._buffers.items():
            kind = KINDS[code]
            values = buf.values
            if not len(values):
                continue
            if len(values) % kind.width:
                raise RuntimeError(f"{kind.name}: a record had the wrong number of fields")
            flat = np.frombuffer(memoryview(values), dtype=np.int64)
            tables[code] = flat.reshape(-1, kind.width).copy()
            # As much room as this chunk took: the next one is usually alike.
            buf.values = vec[i64](capacity=len(values))
        n = self._seq - self._chunk_first
        seqs = np.concatenate([t[:, 0] for t in tables.values()]) if tables else np.empty(0)
        if len(seqs) != n or (
            n and not np.array_equal(np.sort(seqs), np.arange(self._chunk_first, self._seq))
        ):
            raise RuntimeError("event log corrupted: a record had the wrong number of fields")
        chunk = Chunk(self._chunk_first, n, dict(sorted(tables.items())), self._new_names)
        self._new_names = []
        self._chunk_first = self._seq
        return chunk

    def _flush(self) -> None:
        if self._seq == self._chunk_first and not self._new_names:
            return
        chunk = self._take_chunk()
        raw = chunk.to_bytes()
        self._hash.update(raw)
        for sink in self.sinks:
            sink.write(chunk, raw)

    def close(self, partial: bool = False) -> str:
        """Flush what is buffered, close the sinks, and return the fingerprint (idempotent)."""
        if self._closed:
            assert self.fingerprint is not None
            return self.fingerprint
        if not self._opened:
            self.open()
        self._flush()
        self.fingerprint = self._hash.hexdigest()
        self._closed = True
        for sink in self.sinks:
            sink.close(self.fingerprint, partial)
        return self.fingerprint
