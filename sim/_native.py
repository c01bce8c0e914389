"""Compiled or pure Python: which code runs, and never a stale build.

``pip install`` compiles the modules in :data:`COMPILED_MODULES` with mypyc when it can
(``setup.py``; docs/performance.md "Compiled hot modules (mypyc)"): the scheduler's rules, the
ports' memory adapters and the event log, where a run spends its time. A compiled module shadows
the ``.py`` file beside it, so two things must never happen silently:

* **a stale build**: in an editable install, an edited ``.py`` file would not run until the next
  build. ``setup.py`` records the SHA-256 of every compiled source (:data:`RECORD`); at import,
  ``sim`` compares it with the files on disk, and on any difference runs pure Python and says so
  on stderr;
* **not knowing which ran**: the run manifest says (``compiled``), and ``SIM_PURE_PYTHON=1``
  runs pure Python on purpose (tracebacks with lines, cProfile and py-spy see every function).

Both forms produce the same event log (tests/test_native.py). This module is stdlib only:
``setup.py`` loads it by path, before any dependency is installed.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

COMPILED_MODULES = (
    "sim.units",
    "sim.ports",
    "sim.cvsa",
    "sim.cvsa.calendar",
    "sim.cvsa.profile",
    "sim.cvsa.intervals",
    "sim.cvsa.jsmath",
    "sim.cvsa.lifecycle",
    "sim.cvsa.milestones",
    "sim.cvsa.params",
    "sim.cvsa.schedule",
    "sim.cvsa.snapshots",
    "sim.cvsa.ticks",
    "sim.cvsa.vocabulary",
    "sim.cvsa.windows",
    "sim.engine.core",
    "sim.engine.jobs",
    "sim.engine.realtime",
    "sim.engine.virtual",
    "sim.events.log",
    "sim.events.cvsa_kinds",
    "sim.events.engine_kinds",
    "sim.backends.memory",
    "sim.backends.memory.columns",
    "sim.backends.memory.counter",
    "sim.backends.memory.keyheap",
    "sim.backends.memory.schedules",
    "sim.backends.memory.snapshot_pages",
    "sim.backends.memory.store",
    "sim.backends.memory.videos",
    "sim.world.scalar",
    "sim.world.traffic",
    "sim.scheduler",
    "sim.scheduler.cleanup",
    "sim.scheduler.context",
    "sim.scheduler.deployment",
    "sim.scheduler.dispatch",
    "sim.scheduler.estimates",
    "sim.scheduler.faults",
    "sim.scheduler.feed",
    "sim.scheduler.metering",
    "sim.scheduler.schedule_snapshot",
    "sim.scheduler.snapshot_ticks",
    "sim.scheduler.workers",
    "sim.upstream.limiter",
    "sim.upstream.network",
)
"""What setup.py compiles. Left out on purpose: ``sim.cvsa.retry`` (a keyword-only dataclass
field after defaults crashes mypyc 2.4), the world's numpy code (its memoryviews' items are
typed ``int`` but hold floats; only its per-video answers are compiled, ``sim.world.scalar``,
which types the columns ``Any``) and everything that runs once per run (CLI, scenarios,
reports)."""

PURE_ENV = "SIM_PURE_PYTHON"
RECORD = "_native_build.json"
"""Written by setup.py beside this file: ``{"sources": {relative path: sha256}}``."""

PACKAGE_DIR = Path(__file__).resolve().parent


def source_path(module: str, package_dir: Path = PACKAGE_DIR) -> Path:
    """The ``.py`` file of a dotted ``sim`` module name (a package's ``__init__.py``)."""
    parts = module.split(".")[1:]
    base = package_dir.joinpath(*parts)
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_record(
    modules: Sequence[str], package_dir: Path = PACKAGE_DIR
) -> dict[str, dict[str, str]]:
    """What setup.py writes to :data:`RECORD` once it compiled ``modules``."""
    sources = {}
    for m in modules:
        path = source_path(m, package_dir)
        sources[path.relative_to(package_dir.parent).as_posix()] = digest(path)
    return {"sources": sources}


def compiled_files(package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """The compiled module files under the package (setup.py removes them before a build)."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return sorted(p for p in package_dir.rglob("*") if p.name.endswith(suffixes))


def stale_sources(package_dir: Path, compiled: Sequence[Path]) -> list[str] | None:
    """Compiled modules that may not run: a source that differs from the build record, and a
    compiled file (of ``compiled``) whose source the record does not list (left by another
    build). None when there is no readable record."""
    root = package_dir.parent
    try:
        recorded = json.loads((package_dir / RECORD).read_text())["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    stale = []
    for rel, want in sorted(recorded.items()):
        path = root / rel
        if not path.is_file() or digest(path) != want:
            stale.append(rel)
    for path in compiled:
        source = path.with_name(path.name.split(".")[0] + ".py")
        rel = source.relative_to(root).as_posix()
        if rel not in recorded and rel not in stale:
            stale.append(rel)
    return stale


def pure_reason(
    package_dir: Path = PACKAGE_DIR, env: Mapping[str, str] | None = None
) -> str | None:
    """Why compiled modules present here must not run, or None (none present, or all fresh)."""
    if (os.environ if env is None else env).get(PURE_ENV, "") not in ("", "0"):
        return f"{PURE_ENV} is set"
    compiled = compiled_files(package_dir)
    if not compiled:
        return None
    stale = stale_sources(package_dir, compiled)
    if stale is None:
        return f"compiled modules without a build record (sim/{RECORD})"
    if not stale:
        return None
    more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
    return f"{', '.join(stale[:3])}{more} not as compiled (edited, or from another build)"


class _SourceFirst(importlib.abc.MetaPathFinder):
    """Finds ``sim`` modules from their ``.py`` files only, ahead of the compiled ones."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("sim.") or path is None:
            return None
        loaders = [(importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES)]
        for entry in path:
            spec = importlib.machinery.FileFinder(entry, *loaders).find_spec(fullname, target)
            if spec is not None:
                return spec
        return None


def choose() -> None:
    """Called once by ``sim/__init__.py``: run pure Python if :func:`pure_reason` says so."""
    reason = pure_reason()
    if reason is None:
        return
    if reason != f"{PURE_ENV} is set":  # asked for: no need to say it on every command
        sys.stderr.write(
            f"sim: running pure Python (slower): {reason}; rebuild with `pip install -e .`\n"
        )
    sys.meta_path.insert(0, _SourceFirst())


def describe(package_dir: Path = PACKAGE_DIR) -> str:
    """What a run started now would execute, for benchmarks: compiled, or pure Python and why."""
    if not compiled_files(package_dir):
        return "pure Python (nothing compiled in this install)"
    reason = pure_reason(package_dir)
    return "compiled (mypyc)" if reason is None else f"pure Python ({reason})"


def compiled() -> bool:
    """Whether the rules running in this process are the compiled ones."""
    mod = sys.modules.get("sim.scheduler.workers")
    if mod is None:
        import sim.scheduler.workers as mod
    file = getattr(mod, "__file__", "") or ""
    return file.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
