"""The newcomer notebook (notebook.ipynb) runs headless, top to bottom, and shows its plots."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tests.conftest import ROOT


def test_the_notebook_runs_headless_and_shows_its_plots(tmp_path: Path) -> None:
    # The notebook reads tests/data/ and writes reports/ relative to the repository root; run it
    # in a scratch directory that sees the same tests/ so the repository stays clean.
    (tmp_path / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    nb = nbformat.read(ROOT / "notebook.ipynb", as_version=4)
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError, naming the cell, if any cell fails
    images = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if "image/png" in out.get("data", {})
    ]
    assert len(images) == 4
    assert (tmp_path / "reports" / "notebook" / "cap-1000" / "report.html").exists()
    assert (tmp_path / "reports" / "notebook" / "compare" / "overlay.png").exists()
