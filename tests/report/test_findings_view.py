"""Where findings appear (issue 25): the terminal table, findings.md, local times in example
tables, and the severity changes ``sim compare`` opens with; built from Finding objects."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

from sim.cli import cli
from sim.metrics.findings import Finding, Severity, finding_metrics, findings_in
from sim.report.findings_md import findings_markdown
from sim.report.findings_term import print_changes, print_findings
from sim.report.findings_view import numbers, records_table, severity_changes, verdict_line
from sim.scenario import load_scenario
from tests.conftest import DATA

TZ_MS = 8 * 3_600_000  # UTC+8, as the scenarios
T_MS = 1_925_519_921_273  # 2031-01-07T10:38:41.273+08:00


def _finding(fid: str, severity: Severity, **kw: object) -> Finding:
    base: dict[str, object] = {
        "title": f"Title of {fid}",
        "sentence": f"{fid} says {severity.value} [with brackets].",
        "mechanism": f"why {fid}",
    }
    base.update(kw)
    return Finding(id=fid, severity=severity, **base)  # type: ignore[arg-type]


def _summary(*findings: Finding) -> dict[str, object]:
    out: dict[str, object] = {"snapshots.total": 3}
    for f in findings:
        out.update(finding_metrics(f))
    return out


CAPACITY = _finding(
    "capacity",
    Severity.FAIL,
    numbers={"saturated_from_day": 3, "peak_share": 1.25, "first_over_ms": T_MS},
    examples=(
        {"t_ms": T_MS, "aid": 5967138121, "requested": 1200, "last_below_ms": -1},
        {"t_ms": T_MS + 86_400_000, "aid": 42, "requested": 1100, "last_below_ms": T_MS},
    ),
    plots=("occupancy.png",),
    thresholds={"warn_share": 0.8, "fail_share": 1.0},
)
TICKS = _finding("ticks", Severity.OK, numbers={"queue_wait_p99_s": 0.5, "wait_ms": 3_500})
MILESTONES = _finding("milestones", Severity.INFO)


def test_example_tables_show_instants_as_local_times_and_aids_whole() -> None:
    header, rows = records_table(CAPACITY.examples, TZ_MS)
    assert header == ["aid", "t", "requested", "last_below"]
    assert rows == [
        ["5967138121", "2031-01-07T10:38:41+08:00", "1,200", "none"],
        ["42", "2031-01-08T10:38:41+08:00", "1,100", "2031-01-07T10:38:41+08:00"],
    ]
    # a duration in ms stays a number; an instant number loses its _ms and reads as a time
    assert numbers(CAPACITY, TZ_MS) == [
        ("first_over", "2031-01-07T10:38:41+08:00"),
        ("peak_share", "1.25"),
        ("saturated_from_day", "3"),
    ]
    assert numbers(TICKS, TZ_MS) == [("queue_wait_p99_s", "0.5"), ("wait_ms", "3,500")]


def test_the_terminal_table_is_worst_first_with_the_verdict_last() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    print_findings(console, findings_in(_summary(TICKS, MILESTONES, CAPACITY)))
    text = out.getvalue()
    lines = [line for line in text.splitlines() if "says" in line]
    assert [line.split("│")[2].strip() for line in lines] == ["capacity", "milestones", "ticks"]
    assert "capacity says fail [with brackets]." in text  # a "[" is not rich markup
    assert text.rstrip().endswith(
        "Verdict. The design did not hold: 1 of 3 findings fail (capacity)."
    )
    assert "PARTIAL" not in text


def test_a_partial_run_says_so_above_the_table() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    print_findings(console, findings_in(_summary(TICKS)), partial_end="2031-01-06T03:00:00+08:00")
    text = out.getvalue()
    assert text.startswith(
        "PARTIAL run: the findings cover the simulated time up to 2031-01-06T03:00:00+08:00 only."
    )
    assert text.index("PARTIAL") < text.index("ticks says ok")


def test_no_findings_say_so() -> None:
    out = io.StringIO()
    print_findings(Console(file=out, width=200), [])
    assert out.getvalue() == (
        "Verdict. No finding was judged in this run (its summary.json has no findings.* names).\n"
    )


def test_findings_md_holds_the_verdict_the_table_and_each_finding() -> None:
    scenario = load_scenario(DATA / "small.toml")
    manifest = {"start": "2031-01-06T00:00:00.000+08:00", "end": "2031-01-07T00:00:00.000+08:00"}
    text = findings_markdown(scenario, manifest, _summary(TICKS, CAPACITY))
    assert text.startswith(
        "# small: findings\n\nProfile `design`, seed 7, 2031-01-06T00:00:00+08:00"
    )
    assert "**Verdict.** The design did not hold: 1 of 2 findings fail (capacity).\n" in text
    assert "| ❌ fail | `capacity` | capacity says fail [with brackets]. |\n" in text
    assert text.index("`capacity`: Title of capacity") < text.index("`ticks`: Title of ticks")
    assert "| aid | t | requested | last_below |\n|---|---|---|---|\n" in text
    assert "| 5967138121 | 2031-01-07T10:38:41+08:00 | 1,200 | none |\n" in text
    assert "| `first_over` | 2031-01-07T10:38:41+08:00 |\n" in text
    assert "Thresholds (`[findings.capacity]`): `fail_share` = 1, `warn_share` = 0.8.\n" in text
    assert "Why: why capacity\n" in text
    assert "Plots: [occupancy.png](occupancy.png).\n" in text
    assert str(T_MS) not in text
    assert "Partial run" not in text
    partial = findings_markdown(scenario, {**manifest, "partial": True}, _summary(TICKS))
    assert "> **Partial run**: interrupted at 2031-01-07T00:00:00+08:00;" in partial


def test_severity_changes_list_worse_first_then_better_then_added() -> None:
    a = _summary(TICKS, MILESTONES, _finding("lateness", Severity.WARN))
    b = _summary(
        _finding("ticks", Severity.WARN),
        MILESTONES,
        _finding("lateness", Severity.OK),
        CAPACITY,
    )
    changes = severity_changes(a, b)
    assert [(c.id, c.arrow(), c.worse) for c in changes] == [
        ("capacity", "none -> fail", True),
        ("ticks", "ok -> warn", True),
        ("lateness", "warn -> ok", False),
    ]
    assert changes[1].sentence_a == "ticks says ok [with brackets]."
    assert changes[1].sentence_b == "ticks says warn [with brackets]."
    assert severity_changes(a, a) == []
    out = io.StringIO()
    print_changes(Console(file=out, width=200, color_system=None), [])
    assert out.getvalue() == "Findings: no finding changed severity.\n"


def test_verdict_line_of_findings() -> None:
    assert verdict_line([TICKS, MILESTONES]) == "The design held: all 2 findings are ok or info."


def test_sim_run_ends_with_the_findings_and_the_verdict(tmp_path: Path) -> None:
    args = ["run", str(DATA / "small.toml"), "--out", str(tmp_path), "-q", "--no-plots"]
    result = CliRunner().invoke(cli, [*args, "--set", 'duration="1h"'])
    assert result.exit_code == 0, result.output
    out = result.output
    ticks_row = re.search(r"│ ok\s+│ ticks\s+│", out)
    assert ticks_row is not None, out
    assert out.index("report: ") < out.index("Findings") < ticks_row.start()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert out.rstrip().splitlines()[-1] == f"Verdict. {verdict_line(findings_in(summary))}"
    assert (tmp_path / "findings.md").read_text().startswith("# small: findings\n")
