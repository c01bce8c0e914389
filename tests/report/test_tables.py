"""CSV tables: fixed spelling, exact round trip, local times."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim.report.tables import Table, from_csv, local_times, read_tables, to_csv, write_tables
from tests.report.logs import T0


def test_a_table_round_trips_through_its_csv_text() -> None:
    table = Table(
        {
            "t_ms": np.array([T0, T0 + 300_000], dtype=np.int64),
            "type": np.array(["new", "all"], dtype=np.str_),
            "p50_s": np.array([-0.5, np.nan]),
            "count": np.array([0, 12], dtype=np.int64),
        }
    )
    text = to_csv(table)
    assert text == (f"t_ms,type,p50_s,count\n{T0},new,-0.500000,0\n{T0 + 300_000},all,,12\n")
    back = from_csv(text)
    assert back["t_ms"].dtype == np.int64
    assert back["count"].dtype == np.int64
    assert back["p50_s"].dtype == np.float64
    assert np.isnan(back.floats("p50_s")[1])
    assert back.texts("type").tolist() == ["new", "all"]
    assert to_csv(back) == text


def test_an_empty_table_keeps_its_header_and_reads_back_empty() -> None:
    table = Table({"aid": np.empty(0, np.int64), "latency_s": np.empty(0)})
    back = from_csv(to_csv(table))
    assert list(back.columns) == ["aid", "latency_s"]
    assert len(back) == 0
    assert back.ints("aid").dtype == np.int64


def test_columns_must_have_equal_lengths() -> None:
    with pytest.raises(ValueError, match="unequal length"):
        Table({"a": np.zeros(2, np.int64), "b": np.zeros(3, np.int64)})


def test_local_times_carry_the_offset() -> None:
    t = np.array([T0, T0 + 90 * 60_000], dtype=np.int64)
    assert local_times(t, 8 * 3_600_000).tolist() == [
        "2031-01-06T00:00+08:00",
        "2031-01-06T01:30+08:00",
    ]
    assert local_times(t, 0).tolist() == ["2031-01-05T16:00Z", "2031-01-05T17:30Z"]
    assert local_times(t, -(5 * 3_600_000 + 30 * 60_000))[0] == "2031-01-05T10:30-05:30"


def test_tables_are_written_and_read_by_name(tmp_path: Path) -> None:
    tables = {"b": Table({"x": np.array([1], np.int64)}), "a": Table({"y": np.array([0.25])})}
    paths = write_tables(tmp_path, tables)
    assert [p.name for p in paths] == ["a.csv", "b.csv"]
    assert read_tables(tmp_path, ["a", "b"])["a"].floats("y").tolist() == [0.25]
    with pytest.raises(FileNotFoundError, match=r"c\.csv"):
        read_tables(tmp_path, ["c"])
