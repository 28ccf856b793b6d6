"""An older tree of the repository, exported for a before/after measurement.

    >>> before = export_tree("b6bae2f", Path(scratch))   # scratch/before/langchain_answer_metrics
    >>> subprocess.run([...], env={"PYTHONPATH": str(before)})

``git archive`` of the named paths (by default the package), extracted under
``folder/before``: a child interpreter with that folder first on ``PYTHONPATH`` imports the
old package, whatever is installed.
"""

from __future__ import annotations

import subprocess
import tarfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def export_tree(
    ref: str, folder: Path, paths: Sequence[str] = ("langchain_answer_metrics",)
) -> Path:
    """``paths`` as they were at ``ref``, in ``folder/before`` (returned)."""
    archive = folder / "before.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), ref, *paths], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder / "before", filter="data")
    return folder / "before"
