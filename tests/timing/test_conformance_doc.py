"""``docs/conformance.md`` names real tests and real code, and covers every switch and test.

The conformance tables map each timing rule and each switch to code (``module:attribute``) and
to tests (``tests/timing/test_x.py::test_name``). This test parses every table row, imports what
they name, and fails on a name that does not exist, on a switch without a row, and on a timing
test that no row names.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from sim.cvsa.profile import PARAM_NAMES, PROFILE_PARAMS, SWITCH_NAMES
from sim.scenario.switches import MOVED_TO_DESIGN

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "conformance.md"
TEST_REF = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")
CODE_REF = re.compile(r"`(sim(?:\.\w+)+):([\w.]+)`")


def table_rows(text: str) -> list[list[str]]:
    """The cells of every table body row (header and separator rows left out)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|") or set(line) <= {"|", "-", " "}:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] in ("rule", "switch"):
            continue
        rows.append(cells)
    return rows


def switch_rows(text: str) -> dict[str, list[str]]:
    section = text.split("## Switches", 1)[1].split("\n## ", 1)[0]
    return {row[0].strip("`"): row for row in table_rows(section)}


TEXT = DOC.read_text(encoding="utf-8")
ROWS = table_rows(TEXT)
TEST_REFS = sorted({m.groups() for row in ROWS for m in TEST_REF.finditer(row[-1])})
CODE_REFS = sorted({m.groups() for row in ROWS for m in CODE_REF.finditer(row[-2])})


def test_the_tables_are_found() -> None:
    assert len(ROWS) >= 40
    assert len(TEST_REFS) >= 60
    assert len(CODE_REFS) >= 30


@pytest.mark.parametrize(("path", "name"), TEST_REFS)
def test_every_named_test_exists(path: str, name: str) -> None:
    assert (ROOT / path).is_file(), path
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    assert name.startswith("test_")
    assert callable(getattr(module, name, None)), f"{path}::{name} does not exist"


@pytest.mark.parametrize(("module_name", "attr"), CODE_REFS)
def test_every_named_code_exists(module_name: str, attr: str) -> None:
    obj: object = importlib.import_module(module_name)
    for part in attr.split("."):
        assert hasattr(obj, part), f"{module_name}:{attr}"
        obj = getattr(obj, part)


def test_every_switch_has_a_row() -> None:
    rows = switch_rows(TEXT)
    differ = {
        name
        for name in PARAM_NAMES
        if getattr(PROFILE_PARAMS["design"], name) != getattr(PROFILE_PARAMS["cvsa-2026"], name)
    }
    assert set(rows) == set(SWITCH_NAMES) | set(MOVED_TO_DESIGN)
    assert differ <= set(rows)  # every number on which the profiles differ has its row
    for name, row in rows.items():
        if not TEST_REF.search(row[-1]):  # a switch without a test must say why
            assert row[-1] == "none", name
            assert "not modelled" in row[-2], name


def test_every_timing_test_is_in_the_tables() -> None:
    named = {(path, name) for path, name in TEST_REFS}
    here = Path(__file__).resolve()
    for file in sorted(here.parent.glob("test_*.py")):
        if file == here:
            continue
        rel = file.relative_to(ROOT).as_posix()
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                assert (rel, node.name) in named, f"{rel}::{node.name} is not in {DOC.name}"
