"""Build: the modules where a run spends its time are compiled with mypyc when possible.

The list is ``sim._native.COMPILED_MODULES`` (docs/performance.md "Compiled modules"). Compiled
and pure Python give the same event log; compiled runs about a third faster. Pure Python is
what you get:

* with ``SIM_PURE_PYTHON=1`` at install time (nothing is compiled) or at run time (nothing
  compiled is loaded);
* when compilation fails (no C compiler, say): the install goes on with a warning;
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
    sys.stderr.write(f"\nsim setup.py: {msg}; sim will run as pure Python (slower).\n\n")


def _extensions() -> list[object]:
    if os.environ.get(native.PURE_ENV, "") not in ("", "0"):
        return []
    if not _BUILDING.intersection(sys.argv[1:]):
        return []
    record = ROOT / "sim" / native.RECORD
    record.unlink(missing_ok=True)
    paths = [
        str(native.source_path(m, ROOT / "sim").relative_to(ROOT)) for m in native.COMPILED_MODULES
    ]
    # The build environment holds setuptools and mypy only: the dependencies' types are unknown
    # there (Any), which costs the compiled code nothing it relies on; the project's own strict
    # mypy run (`mypy`, CI) is the type check, so this one uses no config file.
    flags = ["--config-file=", "--ignore-missing-imports", "--follow-imports=silent"]
    try:
        from mypyc.build import mypycify

        exts = mypycify([*flags, *paths], opt_level="3")
    except (Exception, SystemExit) as exc:  # mypy exits on errors: fall back, keep installing
        _warn(f"mypyc could not compile the modules ({type(exc).__name__}: {exc})")
        return []
    record.write_text(
        json.dumps(native.build_record(native.COMPILED_MODULES, ROOT / "sim"), indent=1)
    )
    return list(exts)


class _OptionalBuildExt(build_ext):
    """A compiler error removes every compiled file and the record, then carries on: a partial
    set of compiled modules would not import (they share one library)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:
            _warn(f"the C compiler failed ({type(exc).__name__}: {exc})")
            for ext in self.extensions:
                for path in (
                    self.get_ext_fullpath(ext.name),
                    ROOT / self.get_ext_filename(ext.name),
                ):
                    Path(path).unlink(missing_ok=True)
            (ROOT / "sim" / native.RECORD).unlink(missing_ok=True)


setup(ext_modules=_extensions(), cmdclass={"build_ext": _OptionalBuildExt})
