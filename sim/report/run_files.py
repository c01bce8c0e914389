"""The files of a run directory besides the report's own: their names, writing and reading them.

``run_scenario`` (:mod:`sim.runner`) writes them at the end of a run; ``sim plot``, ``sim compare``
and the sweep table read them back. They live with the report, which reads run files and never
the runner: the runner takes the names and the writer from here.

* ``manifest.json``: the event log's fingerprint, the seed, versions and wall-clock timings;
* ``summary.json``: every metric under its stable dotted name, a pure function of the log
  (byte-identical for the same scenario and seed);
* ``scenario.json``: the validated scenario with every ``--set`` applied, from which a reader
  rebuilds what the run used;
* ``findings.md``: the verdict and the findings in Markdown (:mod:`sim.report.findings_md`),
  read from the summary;
* ``events.simlog``: the event log, when the run saved it (``--save-events``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sim.report.tables import write_atomic
from sim.scenario import Scenario

EVENTS_FILE = "events.simlog"
MANIFEST_FILE = "manifest.json"
SUMMARY_FILE = "summary.json"
SCENARIO_FILE = "scenario.json"


def _write_json(path: Path, doc: Any) -> None:
    write_atomic(path, (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode())


def write_run_files(
    out_dir: Path, manifest: dict[str, Any], summary: dict[str, Any], scenario: Scenario
) -> None:
    """Write ``manifest.json``, ``summary.json``, ``scenario.json`` and ``findings.md`` into
    ``out_dir``."""
    from sim.report.findings_md import write_findings_md

    out_dir.mkdir(parents=True, exist_ok=True)
    _write_json(out_dir / MANIFEST_FILE, manifest)
    _write_json(out_dir / SUMMARY_FILE, summary)
    _write_json(out_dir / SCENARIO_FILE, scenario.model_dump(mode="json", by_alias=True))
    write_findings_md(out_dir, scenario, manifest, as_saved(summary))


def as_saved(summary: dict[str, Any]) -> dict[str, Any]:
    """``summary`` as ``summary.json`` holds it (keys sorted, tuples as lists, numpy scalars as
    numbers): what is drawn from the live metrics comes out as from the file."""
    doc: dict[str, Any] = json.loads(json.dumps(summary, sort_keys=True))
    return doc


def read_json(path: Path) -> Any:
    """A JSON file of a run directory; a missing one is an error that says what was expected."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; is {path.parent} a `sim run` report directory?")
    return json.loads(path.read_text(encoding="utf-8"))


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """``manifest.json`` of ``run_dir``."""
    doc: dict[str, Any] = read_json(run_dir / MANIFEST_FILE)
    return doc


def read_summary(run_dir: Path) -> dict[str, Any]:
    """``summary.json`` of ``run_dir``: every metric by name."""
    doc: dict[str, Any] = read_json(run_dir / SUMMARY_FILE)
    return doc


def read_scenario(run_dir: Path) -> Scenario:
    """The validated scenario a run used (``scenario.json``)."""
    from pydantic import ValidationError

    from sim.scenario.messages import format_validation_error
    from sim.scenario.parse import ScenarioError

    path = run_dir / SCENARIO_FILE
    try:
        return Scenario.model_validate(read_json(path))
    except ValidationError as exc:
        # Written by another version of sim: say which keys no longer fit, not a pydantic dump.
        problems = format_validation_error(str(path), exc, {})
        raise ScenarioError([*problems, f"{path}: rerun the scenario with this version"]) from None
