"""The import paths that moved in 0.2.0, and the deprecation shims that keep them working
for one minor version (they go in 0.3.0).

An old path is not a file: the package root installs :class:`MovedPathFinder`, which
answers an import of an old path with the module at its new path, under both names, after
a :class:`DeprecationWarning` naming the new path. So the old path gives the very same
objects (classes, functions, and module state a test may patch), and the tree holds each
module once.

    >>> import langchain_answer_metrics.runner  # DeprecationWarning: ... run.runner
    >>> from langchain_answer_metrics.run.runner import evaluate_dataset  # the new path

Imports nothing of ours: the table is names, resolved when an old path is imported.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

ROOT = "langchain_answer_metrics"

# Old module path -> new module path (both relative to the package root).
MOVED: dict[str, str] = {
    "sample": "core.sample",
    "result": "core.result",
    "redaction": "core.redaction",
    "strict_options": "core.strict_options",
    "prices": "core.prices",
    "compat": "core.compat",
    "json_text": "core.json_text",
    "runner": "run.runner",
    "run_results": "run.results",
    "run_limits": "run.limits",
    "run_window": "run.window",
    "spend": "run.spend",
    "summary": "run.summary",
    "integrations": "adapters",
    "integrations.dataframes": "run.tables",
    "integrations.ray": "adapters.ray",
    "integrations.local_embeddings": "adapters.local_embeddings",
    "integrations.langsmith_evaluators": "adapters.langsmith.evaluators",
    "integrations.langsmith_summary": "adapters.langsmith.summary",
    "integrations.langsmith_comparative": "adapters.langsmith.comparative",
    "integrations.langsmith_feedback": "adapters.langsmith.feedback",
    "integrations.langsmith_results": "adapters.langsmith.results",
    "costs.estimator": "run.estimate.estimator",
    "costs.dry_run": "run.estimate.dry_run",
    "costs.replies": "run.estimate.replies",
    "costs.tally": "run.estimate.tally",
    "costs.tokens": "run.estimate.tokens",
}
REMOVED_IN = "0.3.0"


class _MovedLoader(importlib.abc.Loader):
    """Loads an old path as the module at its new path (imported, then aliased)."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new
        self._spec: ModuleSpec | None = None

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        # stacklevel 2 skips importlib's own frames: the warning names the importing line.
        warnings.warn(
            f"{self.old} has moved to {self.new}; the old path goes in {REMOVED_IN}. "
            f"Import from {self.new}.",
            DeprecationWarning,
            stacklevel=2,
        )
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system set the old name's spec on the module: give it back its own.
        module.__spec__ = self._spec


class MovedPathFinder(importlib.abc.MetaPathFinder):
    """A meta path finder for the old paths of :data:`MOVED` only."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if not fullname.startswith(f"{ROOT}."):
            return None
        new = MOVED.get(fullname.removeprefix(f"{ROOT}."))
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _MovedLoader(fullname, f"{ROOT}.{new}"))


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once), ahead of the file finders."""
    if not any(isinstance(finder, MovedPathFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedPathFinder())
