"""Build: the modules where a run spends its time are compiled with mypyc when possible.

The list is ``sim._native.COMPILED_MODULES`` (docs/performance.md "Compiled hot modules
(mypyc)"). Compiled and pure Python give the same event log; compiling cuts the per-call cost of
Python, not the number of calls. Pure Python is what you get:

* with ``SIM_PURE_PYTHON=1`` at install time (nothing is compiled, and an earlier build is
  removed) or at run time (nothing compiled is loaded);
* when compilation fails (no C compiler, say): the install goes on, with a warning that pip
  shows only with ``-v`` (``SIM_REQUIRE_COMPILED=1`` makes it fail instead, as in CI);
* when a compiled module's source changed after the build (an editable install being edited):
  ``sim`` notices at import, says so on stderr, and loads the sources.

Metadata lives in pyproject.toml; this file only adds the extension modules.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("_sim_native", ROOT / "sim" / "_native.py")
assert _spec is not None
assert _spec.loader is not None
native = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(native)

# Commands that build code; metadata queries (egg_info, dist_info) must not run mypyc.
_BUILDING = {"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install"}


def _warn(msg: str) -> None:
    # pip shows a build's output only with -v or on failure: the manifest's "compiled" and the
    # benchmark's "code:" line are where a user sees the result. CI wants the failure itself.
    if os.environ.get("SIM_REQUIRE_COMPILED") == "1":
        raise SystemExit(f"sim setup.py: {msg} (SIM_REQUIRE_COMPILED=1)")
    sys.stderr.write(f"\nsim setup.py: {msg}; sim will run as pure Python (slower).\n\n")


def _remove_old_build() -> None:
    """Every build starts from no compiled file and no record, whatever it then compiles: a
    leftover compiled module that the new record does not list would otherwise run unchecked."""
    for path in [*native.compiled_files(ROOT / "sim"), *ROOT.glob("*__mypyc*")]:
        path.unlink()
    (ROOT / "sim" / native.RECORD).unlink(missing_ok=True)


_RECORD: dict[str, dict[str, str]] = {}
"""The record of what is being compiled; written by the build_ext step once it succeeded."""


def _extensions() -> list[object]:
    if not _BUILDING.intersection(sys.argv[1:]):
        return []
    _remove_old_build()
    if os.environ.get(native.PURE_ENV, "") not in ("", "0"):
        return []
    paths = [
        str(native.source_path(m, ROOT / "sim").relative_to(ROOT)) for m in native.COMPILED_MODULES
    ]
    # numpy and trio are in the build requirements for their types; the project's own strict
    # mypy run (`mypy`, CI) is the type check, so this one uses no config file and lets
    # whatever else the modules import be Any.
    flags = ["--config-file=", "--ignore-missing-imports", "--follow-imports=silent"]
    # The sources are hashed before mypyc reads them: a file edited while it compiles then
    # differs from the record and runs as Python (hashed after, the edit would pass as built).
    record = native.build_record(native.COMPILED_MODULES, ROOT / "sim")
    try:
        from mypyc.build import mypycify

        exts = mypycify([*flags, *paths], opt_level="3")
    except (Exception, SystemExit) as exc:  # mypy exits on errors: fall back, keep installing
        _warn(f"mypyc could not compile the modules ({type(exc).__name__}: {exc})")
        return []
    _RECORD.update(record)
    return list(exts)


class _OptionalBuildExt(build_ext):
    """Writes the record only once every module compiled (an interrupted build leaves none, so
    nothing compiled runs unchecked); a compiler error removes every compiled file and carries
    on: a partial set would not import (the modules share one library)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:
            for ext in self.extensions:
                for path in (
                    self.get_ext_fullpath(ext.name),
                    ROOT / self.get_ext_filename(ext.name),
                ):
                    Path(path).unlink(missing_ok=True)
            _warn(f"the C compiler failed ({type(exc).__name__}: {exc})")
            return
        if self.extensions and _RECORD:
            text = json.dumps(_RECORD, indent=1)
            for pkg in {ROOT / "sim", Path(self.build_lib) / "sim"}:
                if pkg.is_dir():
                    (pkg / native.RECORD).write_text(text)


setup(ext_modules=_extensions(), cmdclass={"build_ext": _OptionalBuildExt})
