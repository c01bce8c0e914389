"""Tables of time series and their CSV files (stdlib ``csv``, fixed formatting, libraries.md §5).

A :class:`Table` is a set of equally long numpy columns in a fixed order: ``int64`` (counts,
epoch-ms instants), ``float64`` (seconds; NaN where undefined) or text (local times, labels). The
CSV spelling is fixed so that files are byte-identical for the same run: integers in decimal,
floats with six decimals (NaN as an empty field), text as is, ``\\n`` line ends.

Reading a file back gives the same table: a column whose every field is an integer is ``int64``,
one whose fields are decimals or empty is ``float64`` (floats always carry a decimal point), and
anything else is text. Plots are always drawn from tables read back from the CSV text, so a
report drawn during the run, from a saved log, or from the CSVs alone is the same.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sim.units import MINUTE_MS, Ms

Column = npt.NDArray[np.int64] | npt.NDArray[np.float64] | npt.NDArray[np.str_]
_INT = re.compile(r"-?\d+")
_FLOAT = re.compile(r"-?\d+\.\d+|")


@dataclass(frozen=True)
class Table:
    """Named columns of equal length, in order."""

    columns: dict[str, Column]

    def __post_init__(self) -> None:
        lengths = {len(c) for c in self.columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of unequal length: {sorted(lengths)}")

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def __getitem__(self, name: str) -> Column:
        return self.columns[name]

    def ints(self, name: str) -> npt.NDArray[np.int64]:
        """An integer column (an empty text column reads as empty ints)."""
        return np.asarray(self.columns[name], dtype=np.int64)

    def floats(self, name: str) -> npt.NDArray[np.float64]:
        return np.asarray(self.columns[name], dtype=np.float64)

    def texts(self, name: str) -> npt.NDArray[np.str_]:
        return np.asarray(self.columns[name], dtype=np.str_)

    def where(self, mask: npt.NDArray[np.bool_]) -> Table:
        """The rows where ``mask`` holds."""
        return Table({k: v[mask] for k, v in self.columns.items()})

    def preview(self, rows: int = 5) -> str:
        """The header and the first ``rows`` rows, as the CSV file spells them."""
        head = Table({k: v[:rows] for k, v in self.columns.items()})
        more = len(self) - min(rows, len(self))
        return to_csv(head) + (f"... {more:,} more rows\n" if more else "")


def local_times(t_ms: npt.NDArray[np.int64], tz_ms: Ms) -> npt.NDArray[np.str_]:
    """``2031-01-06T08:05+08:00``: each instant as local time to the minute, with the offset."""
    sign = "+" if tz_ms >= 0 else "-"
    minutes = abs(tz_ms) // MINUTE_MS
    suffix = "Z" if tz_ms == 0 else f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"
    local = (np.asarray(t_ms, dtype=np.int64) + tz_ms).astype("datetime64[ms]")
    text = np.datetime_as_string(local.astype("datetime64[m]"), unit="m")
    return np.char.add(text, suffix)


def _format(column: Column) -> list[str]:
    if column.dtype.kind in "iu":
        return [str(v) for v in column.tolist()]
    if column.dtype.kind == "f":
        return ["" if v != v else f"{v:.6f}" for v in column.tolist()]
    return [str(v) for v in column.tolist()]


def to_csv(table: Table) -> str:
    """The table's CSV text (fixed formatting; see the module docstring)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(list(table.columns))
    cells = [_format(c) for c in table.columns.values()]
    writer.writerows(zip(*cells, strict=True))
    return out.getvalue()


def from_csv(text: str) -> Table:
    """Parse CSV text written by :func:`to_csv` back into a table."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise ValueError("an empty CSV file (not even a header)")
    header, body = rows[0], rows[1:]
    columns: dict[str, Column] = {}
    for j, name in enumerate(header):
        fields = [r[j] for r in body]
        if fields and all(_INT.fullmatch(f) for f in fields):
            columns[name] = np.array([int(f) for f in fields], dtype=np.int64)
        elif all(_FLOAT.fullmatch(f) for f in fields):
            columns[name] = np.array([float(f) if f else np.nan for f in fields], dtype=np.float64)
        else:
            columns[name] = np.array(fields, dtype=np.str_)
    return Table(columns)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename: an interrupted report
    never leaves half a file behind."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:  # a full disk: no half file either, and the error names the file
        tmp.unlink(missing_ok=True)
        if exc.filename is None or Path(exc.filename) == tmp:
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise


def write_tables(out_dir: Path, tables: Mapping[str, Table]) -> list[Path]:
    """Write each table as ``<name>.csv``; returns the paths in name order."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in sorted(tables):
        path = out_dir / f"{name}.csv"
        write_atomic(path, to_csv(tables[name]).encode())
        paths.append(path)
    return paths


def read_tables(out_dir: Path, names: list[str]) -> dict[str, Table]:
    """Read ``<name>.csv`` for each name; a missing file is an error naming it."""
    out = {}
    for name in names:
        path = out_dir / f"{name}.csv"
        if not path.exists():
            raise FileNotFoundError(f"{path}: missing (re-run with `sim run`, or --save-events)")
        out[name] = from_csv(path.read_text(encoding="utf-8"))
    return out
