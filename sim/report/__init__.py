"""Reports of a run: time series from the event log, CSV files, plots, ``report.html``, and the
comparison of runs and parameter sweeps built on them (docs/report.md)."""

from sim.report.build import (
    REPORT_FILE,
    TABLES,
    SeriesSet,
    crossings_for,
    draw_report,
    redraw,
    report_from_log,
    write_report,
)
from sim.report.tables import Table, from_csv, read_tables, to_csv, write_tables

__all__ = [
    "REPORT_FILE",
    "TABLES",
    "SeriesSet",
    "Table",
    "crossings_for",
    "draw_report",
    "from_csv",
    "read_tables",
    "redraw",
    "report_from_log",
    "to_csv",
    "write_report",
    "write_tables",
]
