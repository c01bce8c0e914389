"""The event log: typed records, the chunked log with its fingerprint, and the saved format.

Importing this package registers every event kind, so the schema in a log header never depends on
which modules a process happened to import first.
"""

from sim.events import (
    cvsa_kinds,
    delivery_kinds,
    engine_kinds,
    table_kinds,
    upstream_kinds,
    write_kinds,
)
from sim.events.file import FileSink, SavedLog, read_events
from sim.events.log import CHUNK_EVENTS, Chunk, EventLog, Sink
from sim.events.schema import BY_NAME, ENUMS, KINDS, EventKind, kind_of

__all__ = [
    "BY_NAME",
    "CHUNK_EVENTS",
    "ENUMS",
    "KINDS",
    "Chunk",
    "EventKind",
    "EventLog",
    "FileSink",
    "SavedLog",
    "Sink",
    "cvsa_kinds",
    "delivery_kinds",
    "engine_kinds",
    "kind_of",
    "read_events",
    "table_kinds",
    "upstream_kinds",
    "write_kinds",
]
