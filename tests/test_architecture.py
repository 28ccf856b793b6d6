"""The layering of docs/architecture.md, checked on the source: arrows point down only.

Read from the files (``ast``), so a lazy import inside a function counts as much as one at
the top, and so does an import under ``if TYPE_CHECKING:`` (a type-only cycle is still a
cycle, and a type named from a layer above is still an upward arrow). There is no
exception list: a lower module that offers a face's convenience (``metric.as_evaluator()``)
reaches it through the package root, the public face, at call time only. The page's diagram
is checked too: it places every top-level module and package in one layer, in an order
the imports agree with. And modules stay short, by job: see LONG_MODULES.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "langchain_answer_metrics"
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
ROOT = "langchain_answer_metrics"

# Sizes. A module does one job, and one job usually fits in MODULE_LINES. A module past it
# names its one job in LONG_MODULES, and why that job does not split further. There is no
# hard cap: a line count that forces code to be packed (``# fmt: skip``) reads worse than a
# long module with one job. A module growing past MODULE_LINES is the moment to look for
# the job boundary (docs/architecture.md, "Sizes").
MODULE_LINES = 350
LONG_MODULES: dict[str, str] = {
    "judging/judges.py": "what a judge and an embedder are: accepted model objects, their labels",
    "mapping/__init__.py": "a Sample from a row, run or example, naming what is missing",
    "metrics/custom_judge.py": "CustomJudge: a user's criteria, its output kinds and their reading",
    "core/sample.py": "Sample and its checks: every field refused before any request, named",
    "cli/datasets.py": "reading every dataset format (JSONL, JSON, CSV, Parquet) into rows",
    "cli/output/html_report.py": "the HTML report, written a sample at a time (its style apart)",
    # Two steps sharing one request shape; one module per step is the split if it grows.
    "judging/steps/contexts.py": "the context steps: every context judged in one request",
    "metrics/base.py": "the Runnable surface every metric shares, and result assembly",
    "adapters/langsmith/evaluators.py": (
        "a metric as a LangSmith evaluator: its row logic once, as a RunEvaluator and as "
        "openevals-style functions"
    ),
    "core/result.py": "MetricResult and the built-in details models (one schema each)",
    "testing/heuristic_judge.py": "the toy judge's answers, one rule set per judge step",
    "testing/openai_server.py": "the local OpenAI-compatible HTTP server and its log",
}

# Which parts of the package a part may import (besides itself). The package root is the
# lazy face of everything and imports by name at run time, so it is left out; a module
# below it may import it only inside a function (test_the_root_is_reached_only_at_call_time).
LAYERS: dict[str, set[str]] = {
    # data and shared rules: samples, results, redaction, strict options, prices, JSON
    # text, 0.1.0's data, the moved import paths: imports nothing above it
    "core": set(),
    # an agent's trajectory as data: the message forms, the calls, the matching of calls
    "agents": {"core"},
    # a conversation as data: the thread cut into turns, and the text a judge reads of it
    "conversations": {"agents", "core"},
    # the machinery under the metrics
    "judging": {"core"},
    # langchain_answer_metrics.prompts: the default judge prompts' short name
    "prompts": {"judging"},
    # the metrics: nothing of LangSmith, nothing above them
    "metrics": {"judging", "core", "agents", "conversations"},
    # shared by the faces
    "mapping": {"core", "agents"},
    # the user simulator: drives an app, asks the user model as a judge is asked
    "simulation": {"judging", "agents", "conversations", "core"},
    # what a run keeps (checkpoints and --out): fingerprints, signatures, durable lines
    "checkpoints": {"metrics", "judging", "core"},
    "config": {"judging", "core"},
    # test helpers: the judging prompts they answer, nothing above
    "testing": {"judging"},
    # the run wing: the public functions, options, engine, results, limits, spend, summary,
    # tables in and out, and the estimate (a dry run of the run: a budget admits its first
    # sample on it)
    "run": {"metrics", "judging", "core", "checkpoints", "mapping"},
    # the estimate's short name (it lives in run/estimate/), and the prices
    "costs": {"run", "core"},
    # where the metrics meet other tools: each adapter wraps a metric or a run
    "adapters": {"run", "metrics", "judging", "core", "mapping", "config"},
    "ray": {"adapters"},  # langchain_answer_metrics.ray: the Ray adapter's short name
    # calibration against labels and the comparison of runs: over the run's results
    "analysis": {"run", "metrics", "judging", "core", "mapping", "costs"},
    "cli": {
        "metrics",
        "judging",
        "core",
        "mapping",
        "run",
        "config",
        "agents",
        "adapters",
        "analysis",
        "checkpoints",
        "costs",
        "testing",  # toy-judge: the local server, to try the package without a key
        "simulation",
        "conversations",  # simulate: scenarios in, threads out
    },
}


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imports(path: Path, module: str) -> set[str]:
    """Every module of ours that ``path`` imports, anywhere (type-only imports too)."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"

    def visit(node: ast.AST) -> None:
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


MODULES = _modules()


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """What each module of ours imports of ours. Parsed when a test first asks, not while
    collecting: every test process collects this file, and parsing the package costs half
    a second."""
    return {
        module: {name for name in _imports(path, module) if name in MODULES and name != module}
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
        for target in sorted(import_graph()[module]):
            if target == ROOT:
                continue
            if state.get(target) == 1:
                cycles.append([*stack[stack.index(target) :], target])
            elif target not in state:
                walk(target)
        stack.pop()
        state[module] = 2

    for module in sorted(import_graph()):
        if module not in state:
            walk(module)
    assert cycles == [], "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_an_import_inside_a_function_counts_as_much_as_one_at_the_top(tmp_path: Path) -> None:
    """A lazy import (inside a function or a method, at call time) is an arrow too, as is a
    type-only one: each climbs as much as a module-level import."""
    source = tmp_path / "lazy.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from langchain_answer_metrics.cli.parser import build_parser\n"
        "def f():\n"
        "    from langchain_answer_metrics.costs import estimate\n"
        "class C:\n"
        "    async def m(self):\n"
        "        import langchain_answer_metrics.adapters.ray\n"
        "        from ..analysis import stats\n",
        encoding="utf-8",
    )
    found = _imports(source, f"{ROOT}.run.lazy")
    assert {
        f"{ROOT}.cli.parser",
        f"{ROOT}.costs",
        f"{ROOT}.adapters.ray",
        f"{ROOT}.analysis",
    } <= found
    # and in the package itself: the runner's call-time import of the dry run is an arrow
    assert f"{ROOT}.run.estimate.estimator" in import_graph()[f"{ROOT}.run.runner"]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != ROOT))
def test_imports_point_down_the_layers(module: str) -> None:
    part = _part(module)
    assert part in LAYERS, f"{module}: its part {part!r} is not placed in a layer"
    allowed = LAYERS[part] | {part}
    upward = sorted(
        target
        for target in import_graph()[module]
        if target != ROOT and _part(target) not in allowed
    )
    assert upward == [], f"{module} imports from a layer above it: {upward}"


def _module_level_root_imports(path: Path) -> list[str]:
    """The lines that import the package root's own names at module level (run when the
    module loads); inside a function (at call time) or under TYPE_CHECKING they do not."""
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import) and any(alias.name == ROOT for alias in node.names):
            found.append(ast.unparse(node))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == ROOT:
            names = [alias.name for alias in node.names if f"{ROOT}.{alias.name}" not in MODULES]
            if names:
                found.append(ast.unparse(node))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def test_the_root_is_reached_only_at_call_time() -> None:
    """A module below the package root may call the public face (``metric.as_evaluator()``
    calls ``langchain_answer_metrics.evaluator``) only from inside a function: the root
    imports its names' modules on first use, so no import-time cycle forms through it."""
    found = {
        module: lines
        for module, path in MODULES.items()
        if module != ROOT and (lines := _module_level_root_imports(path))
    }
    assert found == {}


def test_the_metrics_name_no_adapter_even_for_types() -> None:
    """The LangSmith adapter wraps a metric; no metric module imports it, in any form."""
    for module, path in MODULES.items():
        if _part(module) == "metrics":
            assert not any(".adapters" in name for name in _imports(path, module)), module


def test_prompts_and_schemas_import_nothing_of_ours() -> None:
    for module in ("judging.prompts", "judging.schemas"):
        assert import_graph()[f"{ROOT}.{module}"] == set(), module


SIZES = {
    path.relative_to(PACKAGE).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
    for path in MODULES.values()
}


def test_a_long_module_names_its_one_job() -> None:
    long = {name for name, size in SIZES.items() if size > MODULE_LINES}
    unnamed = sorted(long - set(LONG_MODULES))
    assert unnamed == [], (
        f"over {MODULE_LINES} lines: {unnamed}. Split it where its jobs part, or name its "
        "one job in LONG_MODULES"
    )
    # An entry leaves the table when its module is short again (or gone).
    assert sorted(set(LONG_MODULES) - long) == []


# No function over FUNCTION_LINES, counted as written after ruff format: from its first
# decorator to its last line, signature and docstring included. There is no exception
# list: a long function is split where its jobs part (docs/architecture.md, "Sizes").
FUNCTION_LINES = 80


def _function_sizes(sources: dict[str, str]) -> dict[str, int]:
    """``module:qualified name`` -> lines, for every function and method of ``sources``
    (module -> its text), nested ones included."""
    sizes: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str, module: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    sizes[f"{module}:{name}"] = (child.end_lineno or child.lineno) - first + 1
                visit(child, f"{name}.", module)
            else:
                visit(child, prefix, module)

    for module, text in sources.items():
        visit(ast.parse(text), "", module)
    return sizes


def test_no_function_is_over_80_lines() -> None:
    sources = {
        path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8")
        for path in MODULES.values()
    }
    long = {name: size for name, size in _function_sizes(sources).items() if size > FUNCTION_LINES}
    unsplit = sorted(f"{name} ({size} lines)" for name, size in long.items())
    assert unsplit == [], f"over {FUNCTION_LINES} lines: split each where its jobs part"


def test_the_function_size_counts_decorators_docstrings_and_nested_functions() -> None:
    body = "            x = 1\n" * 78
    source = (
        "class A:\n"
        "    @staticmethod\n"
        "    def method():\n"
        '        """Its docstring."""\n'
        "        async def inner():\n" + body
    )
    assert _function_sizes({"m.py": source}) == {"m.py:A.method": 82, "m.py:A.method.inner": 79}
    assert _function_sizes({"m.py": source})["m.py:A.method"] > FUNCTION_LINES


# Limits have one home: judging/limits.py. Nowhere else is a limit's default a number: not a
# parameter's default, a field's (``= 16`` or ``Field(default=16)``), nor a flag's.
LIMITS_HOME = "judging/limits.py"
LIMIT_NAMES = {
    "max_concurrency",
    "max_attempts",
    "max_reasks",
    "max_retries",
    "max_consecutive_failures",
    "max_requests",
    "max_cost",
    "budget",
    "initial_delay",
    "max_delay",
    "initial_interval",
    "max_interval",
    "multiplier",
}


def _number(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _numeric_limit_defaults(module: str, text: str) -> list[str]:
    """``module:line name`` for each limit given a number as its default in ``text``."""
    found = []
    for node in ast.walk(ast.parse(text)):
        named: list[tuple[str, ast.AST | None]] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            positional = node.args.posonlyargs + node.args.args
            defaults = [None] * (len(positional) - len(node.args.defaults))
            named += [(a.arg, d) for a, d in zip(positional, [*defaults, *node.args.defaults])]
            named += [(a.arg, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            value = node.value
            if isinstance(value, ast.Call):  # Field(default=...)
                value = next((k.value for k in value.keywords if k.arg == "default"), None)
            named.append((node.target.id, value))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            flags = [a.value for a in node.args if isinstance(a, ast.Constant)]
            default = next((k.value for k in node.keywords if k.arg == "default"), None)
            named += [(str(flag).lstrip("-").replace("-", "_"), default) for flag in flags]
        found += [
            f"{module}:{node.lineno} {name}"
            for name, default in named
            if name in LIMIT_NAMES and _number(default)
        ]
    return found


def test_limits_have_one_home() -> None:
    numbers = [
        found
        for path in MODULES.values()
        if (module := path.relative_to(PACKAGE).as_posix()) != LIMITS_HOME
        for found in _numeric_limit_defaults(module, path.read_text(encoding="utf-8"))
    ]
    assert numbers == [], f"a limit's default belongs in {LIMITS_HOME}, by name"


def test_the_limit_check_finds_numbers_in_each_form() -> None:
    source = (
        "def f(a, max_concurrency=16, *, max_cost=0.5, budget=None): ...\n"
        "class C:\n"
        "    max_attempts: int = 4\n"
        "    max_reasks: int = Field(default=2, ge=0)\n"
        "    max_delay: float = DEFAULT_MAX_DELAY\n"
        "parser.add_argument('--max-concurrency', type=int, default=16)\n"
    )
    assert _numeric_limit_defaults("m.py", source) == [
        "m.py:1 max_concurrency",
        "m.py:1 max_cost",
        "m.py:3 max_attempts",
        "m.py:4 max_reasks",
        "m.py:6 max_concurrency",
    ]


# --------------------------------------------------------------------------- the diagram

DIAGRAM_LAYERS = ("faces", "shared", "metrics", "judging", "data")  # top to bottom
_NAME = re.compile(r"(?<![\w/.])([a-z_]+)(\.py|/)(?![\w/])")  # not "sync/async"


def _diagram() -> dict[str, list[str]]:
    """The page's first code block: per layer (a row starting with its name), the
    top-level modules (``name.py``) and packages (``name/``) it names."""
    block = ARCHITECTURE.read_text(encoding="utf-8").split("```")[1]
    rows: dict[str, list[str]] = {layer: [] for layer in DIAGRAM_LAYERS}
    layer = None
    for line in block.splitlines()[1:]:
        first = line.split(maxsplit=1)[0] if line.strip() else ""
        if first in DIAGRAM_LAYERS:
            layer = first
        elif not line.startswith(" "):
            layer = None  # a legend line, not a layer's
        if layer is not None:
            rows[layer] += [name for name, _ in _NAME.findall(line)]
    return rows


TOP_LEVEL = sorted({_part(module) for module in MODULES if module != ROOT})


def test_the_diagram_places_every_top_level_module_once() -> None:
    placed = [name for names in _diagram().values() for name in names]
    assert sorted(placed) == sorted(set(placed)), "named in two places"
    assert sorted(set(TOP_LEVEL) - set(placed)) == [], "not in docs/architecture.md's diagram"
    assert sorted(set(placed) - set(TOP_LEVEL)) == [], "in the diagram, not in the package"


def test_the_diagrams_layers_agree_with_the_imports() -> None:
    level = {
        name: DIAGRAM_LAYERS.index(layer) for layer, names in _diagram().items() for name in names
    }
    upward = sorted(
        f"{part} ({DIAGRAM_LAYERS[level[part]]}) -> {target} ({DIAGRAM_LAYERS[level[target]]})"
        for part in TOP_LEVEL
        for target in LAYERS[part]
        if target in level and level[target] < level[part]
    )
    assert upward == []


# --------------------------------------------------------------------------- the CLI

CLI = PACKAGE / "cli"
NAMESPACE_READERS = {"cli/command.py", "cli/command_options.py", "cli/group_options.py"}
"""Where the parsed arguments are read: the entry point (``main``) and the one reading of
them into each command's typed options (and the option groups they are made of), built at
the entry point. Every function below takes the typed options, or plain values."""


def _reads_a_namespace(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """What in ``function``'s own signature and body reads an ``argparse.Namespace``."""
    found = []
    arguments = function.args
    for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
        if argument.annotation is not None and "Namespace" in ast.unparse(argument.annotation):
            found.append(f"parameter {argument.arg}: {ast.unparse(argument.annotation)}")
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "vars")
            and node.args
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == "args"
        ):
            found.append(ast.unparse(node))
        if isinstance(node, ast.Attribute) and node.attr == "Namespace":
            found.append(ast.unparse(node))
    return found


def test_no_function_below_a_commands_entry_point_reads_the_parsed_arguments() -> None:
    readers = []
    for path in sorted(CLI.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name in NAMESPACE_READERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                readers += [
                    f"{name}:{node.lineno} {node.name}: {what}" for what in _reads_a_namespace(node)
                ]
    assert readers == [], "\n".join(readers)


def _flags_added(path: Path) -> list[str]:
    """The literal flags ``path`` gives ``add_argument``."""
    return [
        node.args[0].value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "add_argument"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and str(node.args[0].value).startswith("--")
    ]


def test_each_shared_option_is_declared_once() -> None:
    from langchain_answer_metrics.cli import option_groups

    shared = {
        value.flag
        for value in vars(option_groups).values()
        if isinstance(value, option_groups.Option)
    }
    shared |= {option.flag for option in option_groups.BATCH}
    assert {"--config", "--base-url", "--model", "--max-concurrency", "--max-cost"} <= shared
    again = sorted(
        f"{path.relative_to(PACKAGE).as_posix()}: {flag}"
        for path in CLI.rglob("*.py")
        for flag in _flags_added(path)
        if flag in shared
    )
    assert again == [], f"declared again beside cli/option_groups.py: {again}"


def test_the_cli_goes_down_from_its_entry_point() -> None:
    # Only the entry point reaches the commands, and no command reaches the entry point:
    # a command's flow goes down through cli/ into the library, never back up.
    for module, targets in import_graph().items():
        if not module.startswith(f"{ROOT}.cli"):
            continue
        commands = {t for t in targets if t.startswith(f"{ROOT}.cli.commands")}
        if module not in (f"{ROOT}.cli.command",) and not module.startswith(f"{ROOT}.cli.commands"):
            assert commands == set(), f"{module} imports a command: {sorted(commands)}"
        assert f"{ROOT}.cli.command" not in targets or module == f"{ROOT}.cli", module
        if module.startswith(f"{ROOT}.cli.commands"):  # they take the typed options
            tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
            imported = {
                alias.name
                for node in ast.walk(tree)
                if isinstance(node, ast.Import)
                for alias in node.names
            }
            assert "argparse" not in imported, module
