"""The layering of docs/architecture.md, checked on the source: arrows point down only.

Read from the files (``ast``), so a lazy import inside a function counts as much as one at
the top; imports under ``if TYPE_CHECKING:`` do not (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "langchain_answer_metrics"
ROOT = "langchain_answer_metrics"
MAX_LINES = 400

# Which parts of the package a part may import (besides itself). The package root is the
# lazy face of everything and imports by name at run time, so it is left out.
LAYERS: dict[str, set[str]] = {
    # data and shared rules: what users pass in and get back
    "sample": {"redaction"},
    "result": {"compat"},
    # what keeps 0.1.0's data readable, until 0.3.0: imports nothing of ours
    "compat": set(),
    "redaction": set(),
    "strict_options": set(),
    # the machinery under the metrics
    "judging": {"sample", "result", "redaction", "strict_options"},
    # langchain_answer_metrics.prompts: the default judge prompts' short name
    "prompts": {"judging"},
    # the metrics
    "metrics": {"judging", "sample", "result", "redaction", "strict_options"},
    # shared by the faces
    "mapping": {"sample", "strict_options", "result"},
    "summary": {"result"},
    # what a run keeps (checkpoints and --out): fingerprints, signatures, durable lines
    "checkpoints": {"metrics", "judging", "sample", "result", "redaction", "strict_options"},
    "config": {"judging", "redaction", "strict_options", "prices"},
    # the faces
    # (the runner reaches integrations.dataframes lazily, only for DataFrames in and out;
    # integrations.ray drives the runner on each Ray actor: no module cycle either way)
    # what a run gives back (rows, progress, why it stopped); what it may spend
    "run_results": {"result", "integrations", "spend"},  # spend: lazily, in .spend()
    "spend": {"metrics", "judging", "result", "prices"},
    "run_limits": {"run_results", "spend", "sample", "judging", "prices"},
    # the runner's read-ahead window: the samples it keeps started, and how they start
    "run_window": {"metrics", "judging", "run_results", "result", "redaction", "sample"},
    # a run as one object: its options and one collaborator per job
    "run": {
        "metrics", "judging", "sample", "result", "redaction", "strict_options", "integrations",
        "checkpoints", "run_results", "run_limits", "run_window", "spend", "prices",
    },
    # the public functions: thin faces over run/, with the dry-run estimate for admission
    "runner": {
        "metrics", "judging", "sample", "result", "redaction", "strict_options", "run",
        "run_results", "prices", "costs",
    },
    "integrations": {
        "metrics", "judging", "sample", "result", "mapping", "summary", "redaction",
        "strict_options", "config", "runner", "run_results", "run_limits", "spend", "prices",
    },
    "ray": {"integrations"},  # langchain_answer_metrics.ray: the Ray adapter's short name
    "cli": {
        "metrics", "judging", "sample", "result", "mapping", "summary", "runner", "config",
        "redaction", "strict_options", "integrations", "analysis",
        "checkpoints", "run_results", "run_limits", "spend", "prices", "costs", "compat",
        "testing",  # toy-judge: the local server, to try the package without a key
    },
    # calibration against labels and the comparison of runs: over the runner's results
    "analysis": {
        "runner", "run_results", "metrics", "judging", "sample", "result", "mapping", "summary",
        "redaction", "strict_options",
        "costs", "spend", "prices", "run_limits",  # align: the estimate, then a budget
    },
    # prices: a table and a lookup, nothing of ours (the config may read it)
    "prices": set(),
    # cost before a run: a dry run of the metrics through the runner
    "costs": {
        "run", "metrics", "judging", "sample", "result", "prices", "redaction",
        "strict_options", "run_results", "spend",
    },
    # test helpers: the judging prompts they answer, nothing above
    "testing": {"judging"},
}


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(path: Path, module: str) -> set[str]:
    """Every module of ours that ``path`` imports, anywhere but under TYPE_CHECKING."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {name for name in found if name.startswith(ROOT + ".")}


# A lower module may reach a face only by importing it inside the one method that needs it
# (the module above is loaded by then, so no cycle runs); each such import is declared here.
# tests/test_evaluator_hook.py checks that importing the metrics still loads no face.
LAZY_UPWARD: set[tuple[str, str]] = {
    (f"{ROOT}.metrics.base", f"{ROOT}.integrations.langsmith_evaluators"),
    (f"{ROOT}.metrics.pairwise", f"{ROOT}.integrations.langsmith_comparative"),
}

MODULES = _modules()
GRAPH = {
    module: {
        name
        for name in _imports(path, module)
        if name in MODULES and name != module and (module, name) not in LAZY_UPWARD
    }
    for module, path in MODULES.items()
}


def _part(module: str) -> str:
    return module.split(".")[1] if module != ROOT else ROOT


def test_no_import_cycles() -> None:
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in sorted(GRAPH[module]):
            if target == ROOT:
                continue
            if state.get(target) == 1:
                cycles.append([*stack[stack.index(target):], target])
            elif target not in state:
                walk(target)
        stack.pop()
        state[module] = 2

    for module in sorted(GRAPH):
        if module not in state:
            walk(module)
    assert cycles == [], "\n".join(" -> ".join(cycle) for cycle in cycles)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != ROOT))
def test_imports_point_down_the_layers(module: str) -> None:
    part = _part(module)
    assert part in LAYERS, f"{module}: its part {part!r} is not placed in a layer"
    allowed = LAYERS[part] | {part}
    upward = sorted(
        target for target in GRAPH[module] if target != ROOT and _part(target) not in allowed
    )
    assert upward == [], f"{module} imports from a layer above it: {upward}"


def test_prompts_and_schemas_import_nothing_of_ours() -> None:
    for module in ("judging.prompts", "judging.schemas"):
        assert GRAPH[f"{ROOT}.{module}"] == set(), module


def test_no_module_is_over_the_size_limit() -> None:
    sizes = {
        module: len(path.read_text(encoding="utf-8").splitlines())
        for module, path in MODULES.items()
    }
    assert {module: size for module, size in sizes.items() if size > MAX_LINES} == {}
