"""Compiled (mypyc) and pure Python: the same event log, and never a stale build (sim/_native.py).

The end-to-end half needs an install that compiled the modules (``pip install -e .`` with a C
compiler). Where there is none it skips, unless ``SIM_REQUIRE_COMPILED=1`` (set by ``.ci/run``)
turns the skip into a failure.
"""

from __future__ import annotations

import ast
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim import _native

ROOT = Path(__file__).resolve().parent.parent
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def _package(tmp_path: Path, compiled: bool = True) -> Path:
    """A fake ``sim`` package: two sources, their build record, and (maybe) a compiled file."""
    pkg = tmp_path / "sim"
    (pkg / "cvsa").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "cvsa" / "__init__.py").write_text("")
    (pkg / "cvsa" / "windows.py").write_text("CAP = 1000\n")
    if compiled:
        (pkg / "cvsa" / f"windows{SUFFIX}").write_bytes(b"\x7fELF")
    record = _native.build_record(["sim.cvsa", "sim.cvsa.windows"], pkg)
    (pkg / _native.RECORD).write_text(json.dumps(record))
    return pkg


def test_build_record_names_every_source_by_path(tmp_path: Path) -> None:
    record = _native.build_record(["sim.cvsa", "sim.cvsa.windows"], _package(tmp_path))
    assert sorted(record["sources"]) == ["sim/cvsa/__init__.py", "sim/cvsa/windows.py"]


def test_a_fresh_build_runs_compiled(tmp_path: Path) -> None:
    assert _native.pure_reason(_package(tmp_path), env={}) is None


def test_an_edited_source_makes_the_build_stale(tmp_path: Path) -> None:
    pkg = _package(tmp_path)
    (pkg / "cvsa" / "windows.py").write_text("CAP = 3000\n")
    reason = _native.pure_reason(pkg, env={})
    assert reason == "sim/cvsa/windows.py not as compiled (edited, or from another build)"


def test_a_compiled_file_the_record_does_not_list_is_stale(tmp_path: Path) -> None:
    """Left by an earlier build with a longer module list: it must not run unchecked."""
    pkg = _package(tmp_path)
    (pkg / "cvsa" / "ticks.py").write_text("")
    (pkg / "cvsa" / f"ticks{SUFFIX}").write_bytes(b"\x7fELF")
    assert _native.stale_sources(pkg, _native.compiled_files(pkg)) == ["sim/cvsa/ticks.py"]


def test_a_missing_record_makes_the_build_stale(tmp_path: Path) -> None:
    pkg = _package(tmp_path)
    (pkg / _native.RECORD).unlink()
    reason = _native.pure_reason(pkg, env={})
    assert reason == "compiled modules without a build record (sim/_native_build.json)"


def test_the_source_first_finder_skips_the_compiled_file(tmp_path: Path) -> None:
    """What ``choose`` installs for a stale build: the ``.py`` file, though a compiled one is
    beside it (which the default finder would take first)."""
    pkg = _package(tmp_path)
    spec = _native._SourceFirst().find_spec("sim.cvsa.windows", [str(pkg / "cvsa")])
    assert spec is not None
    assert spec.origin == str(pkg / "cvsa" / "windows.py")
    default = importlib.machinery.PathFinder.find_spec("sim.cvsa.windows", [str(pkg / "cvsa")])
    assert default is not None
    assert default.origin == str(pkg / "cvsa" / f"windows{SUFFIX}")
    package = _native._SourceFirst().find_spec("sim.cvsa", [str(pkg)])
    assert package is not None
    assert package.origin == str(pkg / "cvsa" / "__init__.py")
    assert _native._SourceFirst().find_spec("numpy", None) is None


def test_pure_python_on_request_and_nothing_to_do_without_a_build(tmp_path: Path) -> None:
    pkg = _package(tmp_path)
    assert _native.pure_reason(pkg, env={_native.PURE_ENV: "1"}) == "SIM_PURE_PYTHON is set"
    assert _native.pure_reason(pkg, env={_native.PURE_ENV: "0"}) is None
    assert _native.pure_reason(_package(tmp_path / "pure", compiled=False), env={}) is None


def test_describe_says_which_code_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_native.PURE_ENV, raising=False)
    assert _native.describe(_package(tmp_path)) == "compiled (mypyc)"
    pure = _package(tmp_path / "pure", compiled=False)
    assert _native.describe(pure) == "pure Python (nothing compiled in this install)"
    monkeypatch.setenv(_native.PURE_ENV, "1")
    assert _native.describe(_package(tmp_path / "asked")) == "pure Python (SIM_PURE_PYTHON is set)"


def test_no_compiled_coroutine_awaits_inside_except_or_finally() -> None:
    """mypyc 2.4 miscompiles a coroutine closed while it waits inside an ``except`` block (it
    corrupted the interpreter: tests/timing/test_statuses.py, the backoff at the end of a run);
    checked on the source, so that a pure-Python install catches it too."""
    found = []
    for module in _native.COMPILED_MODULES:
        path = _native.source_path(module)
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Try):
                continue
            for block in [*(h.body for h in node.handlers), node.finalbody]:
                for stmt in block:
                    for sub in ast.walk(stmt):
                        if isinstance(sub, ast.Await | ast.AsyncWith | ast.AsyncFor):
                            found.append(f"{path.name}:{sub.lineno}")
    assert found == []


def test_no_compiled_module_is_meant_to_run_with_python_m() -> None:
    """``python -m`` cannot run a compiled module ("No code object available"): a documented
    command such as ``python -m sim.scenario.profile_doc`` must name an interpreted one."""
    main_blocks = [
        module
        for module in _native.COMPILED_MODULES
        if 'if __name__ == "__main__":' in _native.source_path(module).read_text()
    ]
    assert main_blocks == []


def test_every_listed_module_exists_and_setup_compiles_the_list() -> None:
    for module in _native.COMPILED_MODULES:
        assert _native.source_path(module).is_file(), module
    assert "COMPILED_MODULES" in (ROOT / "setup.py").read_text()


# -- end to end: an install that compiled the modules ------------------------------------------


def _install_is_compiled() -> bool:
    return bool(_native.compiled_files(ROOT / "sim"))


needs_compiled = pytest.mark.skipif(
    (not _install_is_compiled() or _native.pure_reason() is not None)
    and os.environ.get("SIM_REQUIRE_COMPILED") != "1",
    reason="no fresh compiled modules in this install (pip install -e . with a C compiler)",
)


def _run(scenario: str, out: Path, pure: bool) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != _native.PURE_ENV}
    if pure:
        env[_native.PURE_ENV] = "1"
    cmd = [sys.executable, "-m", "sim", "run", scenario, "--out", str(out), "-q", "--no-plots"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert "running pure Python" not in done.stderr, done.stderr  # a stale build is a bug here
    manifest: dict[str, object] = json.loads((out / "manifest.json").read_text())
    return manifest


@needs_compiled
@pytest.mark.parametrize("scenario", ["tests/data/small.toml", "scenarios/scheduler-restart.toml"])
def test_compiled_and_pure_python_write_the_same_log_and_metrics(
    scenario: str, tmp_path: Path
) -> None:
    native = _run(scenario, tmp_path / "native", pure=False)
    pure = _run(scenario, tmp_path / "pure", pure=True)
    assert native["compiled"] is True
    assert pure["compiled"] is False
    assert native["event_log_sha256"] == pure["event_log_sha256"]
    files = sorted(p.name for p in (tmp_path / "native").iterdir() if p.suffix in (".csv", ".json"))
    assert "summary.json" in files
    assert "windows.csv" in files
    for name in files:
        if name != "manifest.json":  # wall time and `compiled` differ, by design
            assert (tmp_path / "native" / name).read_bytes() == (
                tmp_path / "pure" / name
            ).read_bytes()
