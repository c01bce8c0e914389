"""``sim explain``: one video's story from a run saved with ``--save-events`` (issue 25)."""

from __future__ import annotations

import csv
import os
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import click

from sim.cli.common import WholeNumber
from sim.cli.exits import EXIT_ERROR, EXIT_USAGE
from sim.units import DurationError, InstantError, Ms, parse_duration_ms, parse_instant_ms

SUGGESTIONS = 5


class When(click.ParamType[tuple[str, Any], Any]):
    """An ISO instant (with an offset; without one, local to the scenario's time zone) or a
    duration from the run's start ("36h", "2d"); resolved once the scenario is read."""

    name = "TIME"

    def convert(self, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
        if isinstance(value, tuple):
            return value
        text = str(value).strip()
        try:
            return ("after_start", parse_duration_ms(text))
        except DurationError:
            pass
        try:
            return ("instant", parse_instant_ms(text))
        except InstantError:
            pass
        try:
            return ("local", datetime.fromisoformat(text))
        except ValueError:
            self.fail(
                f"{text!r} is neither an ISO time ('2031-01-06T08:00:00+08:00', or local to "
                "the scenario without an offset) nor a duration from the run's start ('36h', '2d')",
                param,
                ctx,
            )


def _resolve(when: tuple[str, Any] | None, default: Ms, start_ms: Ms, tz_ms: Ms) -> Ms:
    if when is None:
        return default
    how, value = when
    if how == "after_start":
        return start_ms + int(value)
    if how == "instant":
        return int(value)
    local = value.replace(tzinfo=timezone(timedelta(milliseconds=tz_ms)))
    ms: float = local.timestamp() * 1000
    return round(ms)


def _fail(message: str, code: int = EXIT_USAGE) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _suggest(run_dir: Path, sample: Any) -> list[int]:
    """Aids worth explaining: the findings' examples, milestone crossings, then the most
    snapshotted aids of the log's first chunks."""
    from sim.metrics.findings.verdicts import findings_in
    from sim.report.run_files import read_summary
    from sim.report.video_story import most_snapshotted

    out: list[int] = []
    try:
        for finding in findings_in(read_summary(run_dir)):
            out += [e["aid"] for e in finding.examples if isinstance(e.get("aid"), int)]
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        pass
    crossings = run_dir / "milestones.csv"
    if crossings.exists():
        with crossings.open(newline="") as fh:
            out += [int(r["aid"]) for r in csv.DictReader(fh) if r.get("aid", "").isdigit()]
    out += most_snapshotted(sample, SUGGESTIONS)
    return list(dict.fromkeys(out))[:SUGGESTIONS]


def _table(story: Any, tz_label: str, tz_ms: Ms, lo: Ms, hi: Ms) -> Any:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from sim.report.video_story import local_second
    from sim.report.video_story_lines import timeline

    table = Table(
        title=f"aid {story.aid}: times are local ({tz_label}); row = schedule row id",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for name, justify in (
        (f"time ({tz_label})", "left"),
        ("event", "left"),
        ("row", "right"),
        ("type", "left"),
        ("due", "left"),
        ("views", "right"),
        ("detail", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=name != "detail")  # type: ignore[arg-type]
    for line in timeline(story, tz_ms, lo, hi):
        event, detail = line.event, line.detail
        if line.repeats > 1:
            event = f"{event} x{line.repeats}"
            detail += f"; asked {line.repeats} times until {local_second(line.last_ms, tz_ms)}"
        table.add_row(
            local_second(line.t_ms, tz_ms),
            event,
            f"#{line.row}" if line.row >= 0 else "",
            line.type,
            local_second(line.due_ms, tz_ms) if line.due_ms >= 0 else "",
            f"{line.views:,}" if line.views >= 0 else "",
            Text(detail),  # plain text: a detail may cite "[scheduler] history"
        )
    return table


@click.command()
@click.argument(
    "run_dir", metavar="RUN_DIR", type=click.Path(file_okay=False, exists=True, path_type=Path)
)
@click.option("--aid", type=WholeNumber(min=0), required=True, help="The video to explain.")
@click.option("--from", "from_", type=When(), help="Start of the span [default: the run's start].")
@click.option("--to", "to", type=When(), help="End of the span [default: the run's end].")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="The PNG file, or a directory for explain-<aid>.png [default: RUN_DIR].",
)
def explain(
    run_dir: Path,
    aid: int,
    from_: tuple[str, Any] | None,
    to: tuple[str, Any] | None,
    out: Path | None,
) -> None:
    """Tell one video's story: its true view curve, every snapshot, every schedule row (created,
    moved, dispatched, started, finished, deleted), retries and upstream errors, as a table and
    a plot (explain-<aid>.png).

    RUN_DIR is a `sim run` directory saved with --save-events. --from and --to take an ISO time
    (with an offset, or local to the scenario's time zone) or a duration from the run's start
    ("36h", "2d"). The aids in the findings' examples are good ones to explain.
    """
    from sim.report.run_files import EVENTS_FILE, read_manifest, read_scenario
    from sim.scenario import ScenarioError

    log_path = run_dir / EVENTS_FILE
    if not log_path.exists():
        _fail(
            f"{log_path}: no saved event log; explain reads one. Run the scenario again with "
            f"--save-events: `sim run SCENARIO --out {run_dir} --save-events`"
        )
    try:
        scenario = read_scenario(run_dir)
        manifest = read_manifest(run_dir)
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    except ScenarioError as exc:
        _fail("; ".join(exc.problems))
    try:
        _explain(run_dir, scenario, manifest, aid, from_, to, out)
    except BrokenPipeError:  # `sim explain ... | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(EXIT_ERROR)
    except (OSError, ValueError) as exc:  # a damaged log, an unwritable --out
        _fail(str(exc), EXIT_ERROR)


def _explain(
    run_dir: Path,
    scenario: Any,
    manifest: dict[str, Any],
    aid: int,
    from_: tuple[str, Any] | None,
    to: tuple[str, Any] | None,
    out: Path | None,
) -> None:
    from rich.console import Console

    from sim.report.plots import PlotContext
    from sim.report.run_files import EVENTS_FILE
    from sim.report.video_story import read_story
    from sim.report.video_story_plot import draw_story
    from sim.report.video_story_world import headline, world_truth

    ctx = PlotContext.of(scenario, manifest)
    tz = scenario.timezone
    lo = _resolve(from_, ctx.start_ms, ctx.start_ms, tz)
    hi = _resolve(to, ctx.end_ms, ctx.start_ms, tz)
    if lo >= hi:
        raise click.BadParameter(
            "the span is empty: --from must be before --to", param_hint="'--from'"
        )
    story = read_story(run_dir / EVENTS_FILE, aid)
    if not story.found:
        hint = ", ".join(map(str, _suggest(run_dir, story.sample_aids))) or "none"
        _fail(f"aid {aid} is not in the event log of {run_dir}; aids that are: {hint}")
    truth = world_truth(scenario, aid, lo, hi)
    path = out if out is not None else run_dir
    if path.suffix.lower() != ".png":
        path = path / f"explain-{aid}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    # Drawn before the table is printed, so that `sim explain ... | head` still writes it.
    span = PlotContext(ctx.name, tz, ctx.cap, ctx.concurrency, lo, hi, ctx.partial)
    draw_story(story, truth, span, path)
    console = Console(highlight=False)
    if not console.is_terminal:  # piped or captured: wide enough that the table does not wrap
        console = Console(highlight=False, width=200)
    for line in headline(story, truth, tz, lo, hi):
        console.print(line)
    if not story.complete:
        console.print(
            "[yellow]The log was cut short (an interrupted run): the story may end early.[/]"
        )
    console.print(_table(story, ctx.tz_label, tz, lo, hi))
    click.echo(f"wrote {path}")
