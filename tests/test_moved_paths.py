"""The import paths that moved in 0.2.0 (issue 32) keep working until 0.3.0: each old path
warns, naming the new one, and gives the very same module and objects.

Each import runs in a fresh interpreter (the old path may already be cached in this one,
and a cached import does not warn again).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import warnings
from typing import Any

import pytest

from langchain_answer_metrics.core.moved import MOVED, REMOVED_IN

ROOT = "langchain_answer_metrics"


def test_every_new_path_is_a_module_of_the_package() -> None:
    for new in MOVED.values():
        assert importlib.import_module(f"{ROOT}.{new}").__name__ == f"{ROOT}.{new}"


def test_no_old_path_is_left_as_a_file() -> None:
    """An old path is answered by the finder only: a file there would shadow it silently."""
    from pathlib import Path

    package = Path(importlib.import_module(ROOT).__file__ or "").parent
    for old in MOVED:
        relative = Path(*old.split("."))
        assert not (package / relative).with_suffix(".py").exists(), old
        assert not (package / relative / "__init__.py").exists(), old


_PROBE = """
import json, sys, warnings, importlib
found = {}
for old, new in json.loads(sys.argv[1]):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(f"import {old}")  # an import statement, as in users' code
    module, target = sys.modules[old], importlib.import_module(new)
    public = [n for n in dir(target) if not n.startswith("_")]
    found[old] = {
        "same_module": module is target,
        "same_objects": all(getattr(module, n) is getattr(target, n) for n in public),
        "public": len(public),
        "spec": target.__spec__.name,
        "warnings": [[w.category.__name__, str(w.message), w.filename] for w in caught],
    }
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def imported_old_paths() -> dict[str, dict[str, Any]]:
    """Every old path imported once, in a fresh interpreter, and what each import gave."""
    pairs = [[f"{ROOT}.{old}", f"{ROOT}.{new}"] for old, new in sorted(MOVED.items())]
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(pairs)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, dict[str, Any]] = json.loads(done.stdout.splitlines()[-1])
    return found


@pytest.mark.slow  # a fresh interpreter; test_from_an_old_path_import_a_name stays fast
@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_path_warns_and_gives_the_same_objects(
    old: str, new: str, imported_old_paths: dict[str, dict[str, Any]]
) -> None:
    found = imported_old_paths[f"{ROOT}.{old}"]
    assert found["same_module"] and found["same_objects"], found
    assert found["public"] > 0 or new == "adapters"  # a package of modules only
    assert found["spec"] == f"{ROOT}.{new}"  # the module keeps its own spec
    assert [w[:2] for w in found["warnings"]] == [
        [
            "DeprecationWarning",
            f"{ROOT}.{old} has moved to {ROOT}.{new}; the old path goes in {REMOVED_IN}. "
            f"Import from {ROOT}.{new}.",
        ]
    ]
    assert found["warnings"][0][2] == "<string>"  # the importing line, not importlib's


def test_from_an_old_path_import_a_name() -> None:
    """The common form in users' code, in this interpreter: the name is the new one."""
    from langchain_answer_metrics.run.runner import evaluate_dataset

    sys.modules.pop(f"{ROOT}.runner", None)
    with pytest.warns(DeprecationWarning, match=r"langchain_answer_metrics\.run\.runner"):
        from langchain_answer_metrics.runner import evaluate_dataset as old
    assert old is evaluate_dataset
    sys.modules.pop(f"{ROOT}.runner", None)


def test_the_new_paths_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for new in MOVED.values():
            importlib.import_module(f"{ROOT}.{new}")


def test_an_unknown_path_is_still_an_import_error() -> None:
    with pytest.raises(ModuleNotFoundError), pytest.warns(DeprecationWarning):
        importlib.import_module(f"{ROOT}.integrations.no_such_module")  # its parent warns
