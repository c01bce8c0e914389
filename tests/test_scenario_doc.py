"""``docs/scenario.md`` is generated from the scenario models and documents every key in use."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from sim.scenario.scenario_doc import render_markdown

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "scenario.md"


def test_committed_doc_matches_the_generated_one() -> None:
    assert DOC.read_text(encoding="utf-8") == render_markdown(), (
        "docs/scenario.md is stale: run `python -m sim.scenario.scenario_doc docs/scenario.md`"
    )


def test_defaults_are_written_as_a_scenario_writes_them() -> None:
    text = render_markdown()
    assert '| `timezone` | UTC offset | `"UTC+8"` |' in text
    assert '| `history` | list of duration | `["1d", "0ms"]` |' in text
    # A nested table's defaults come from its parent ([upstream] gives [upstream.single] them).
    assert '| `median` | duration (> 0) | `"250ms"` |' in text
    assert '| `viral_rise_median` | duration (>= 6m) | `"4h"` |' in text
    assert "| `name` | string (matches `^[A-Za-z0-9_.-]+$`) | required |" in text


PINNED_TITLES = {
    "[[world.videos]]": "A pinned video",
    "[[world.videos]].recounts": "`recounts = [...]`",
}


def _keys(table: dict[str, Any], prefix: str) -> set[tuple[str, str]]:
    """(table path, key) of every scalar key; nested tables recurse."""
    out = set()
    for key, value in table.items():
        if isinstance(value, dict) and prefix not in ("switches", "expect"):
            out |= _keys(value, f"{prefix}.{key}" if prefix else key)
        elif isinstance(value, list) and value and isinstance(value[0], dict) and key == "faults":
            for item in value:
                out |= {(f"[[{key}]] {item['kind']}", k) for k in item if k != "kind"}
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for item in value:
                out |= _keys(item, f"[[{prefix}.{key}]]" if prefix else f"[[{key}]]")
        else:
            out.add((prefix, key))
    return out


def test_every_key_of_the_scenario_library_is_documented() -> None:
    text = render_markdown()
    sections = {
        block.split("\n", 1)[0]: block for block in text.split("\n## ") + text.split("\n### ")
    }
    for path in sorted((ROOT / "scenarios").glob("*.toml")):
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        for table, key in _keys(doc, ""):
            if table in ("switches", "design", "expect"):
                continue
            if table.startswith("[[faults]]"):
                title = f'`kind = "{table.split()[-1]}"`'
            elif table in PINNED_TITLES:
                title = PINNED_TITLES[table]
            else:
                title = f"`[{table}]`" if table else "Top level"
            assert title in sections, f"{path.name}: no section {title}"
            assert f"| `{key}` |" in sections[title], f"{path.name}: {table}.{key} undocumented"
