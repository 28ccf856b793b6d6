"""The names of the package's own metrics, as the package root and
:mod:`langchain_answer_metrics.metrics` export them: read from the registry, written
nowhere else.

A built-in metric is one module, its step if it has one, and one registry line
(:mod:`.registry`). At run time both packages answer ``__getattr__``, ``dir()`` and
``__all__`` from :func:`metric_exports`, so a registry line is all a new metric needs
to be ``from langchain_answer_metrics import NewMetric``.

Type checkers cannot run the registry. The two packages' ``TYPE_CHECKING`` blocks hold a
generated part, between the markers ``# registry: begin`` and ``# registry: end``: the
metrics' imports (and, for the root, its ``__all__``), written by::

    python -m langchain_answer_metrics.metrics.exports --write

and checked by ``tests/test_exports.py`` (``--check`` says what differs).

    >>> metric_exports()["FactualCorrectness"]
    'langchain_answer_metrics.metrics.factual_correctness'
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import re
from pathlib import Path

from langchain_answer_metrics.metrics.registry import builtin_classes

__all__ = ["BEGIN", "END", "generated_blocks", "metric_aliases", "metric_exports", "metric_names"]

BEGIN = "# registry: begin (generated: python -m langchain_answer_metrics.metrics.exports --write)"
END = "# registry: end"
ROOT = "langchain_answer_metrics"


def metric_exports() -> dict[str, str]:
    """Each built-in metric's class name (and its aliases) -> the module defining it, in
    the registry's order.

    Example:
        >>> metric_exports()["ResponseRelevancy"]  # an alias, beside ResponseRelevance
        'langchain_answer_metrics.metrics.response_relevancy'
    """
    return {name: ref.module for ref in builtin_classes() for name in (ref.name, *ref.aliases)}


def metric_names() -> list[str]:
    """The built-in metrics' class names, without their aliases: what ``__all__`` lists.

    Example:
        >>> metric_names()[:2]
        ['SemanticSimilarity', 'FactualCorrectness']
    """
    return [ref.name for ref in builtin_classes()]


def metric_aliases() -> set[str]:
    """Other names of built-in metric classes: exported, not listed in ``__all__``.

    Example:
        >>> metric_aliases()
        {'ResponseRelevancy'}
    """
    return {alias for ref in builtin_classes() for alias in ref.aliases}


LINE_LENGTH = 100  # ruff's, so that the generated part is as ruff format writes it


def _import(module: str, name: str, indent: str) -> list[str]:
    line = f"{indent}from {module} import {name} as {name}"
    if len(line) <= LINE_LENGTH:
        return [line]
    return [f"{indent}from {module} import (", f"{indent}    {name} as {name},", f"{indent})"]


def _imports(indent: str) -> list[str]:
    """One import per name, each re-exported explicitly (``X as X``), in isort's order."""
    names = sorted(
        (ref.module, name) for ref in builtin_classes() for name in (ref.name, *ref.aliases)
    )
    return [line for module, name in names for line in _import(module, name, indent)]


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's order for ``__all__`` (RUF022): constants, then classes, then the rest."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def _all(names: set[str], indent: str) -> list[str]:
    listed = sorted(names, key=_isort_key)
    return [f"{indent}__all__ = [", *(f'{indent}    "{name}",' for name in listed), f"{indent}]"]


def generated_blocks(root_names: list[str], metrics_names: list[str]) -> dict[str, list[str]]:
    """The lines each package's generated part should hold (its path inside the package
    -> lines): the metrics' imports, then ``__all__``: the package's own names
    (``root_names``, ``metrics_names``) and the metrics' names."""
    indent = "    "
    imports = _imports(indent)
    return {
        "__init__.py": [*imports, "", *_all({*root_names, *metric_names()}, indent)],
        "metrics/__init__.py": [*imports, "", *_all({*metrics_names, *metric_names()}, indent)],
    }


def _package_dir() -> Path:
    spec = importlib.util.find_spec(ROOT)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


_BLOCK = re.compile(
    rf"^(?P<indent>[ ]*){re.escape(BEGIN)}\n(?P<body>.*?)^[ ]*{re.escape(END)}$", re.S | re.M
)


def _current(text: str) -> list[str]:
    found = _BLOCK.search(text)
    if found is None:
        raise ValueError(f"no generated part ({BEGIN!r} ... {END!r})")
    return found.group("body").splitlines()


def _own_names() -> tuple[list[str], list[str]]:
    """The root's own public names (its ``_EXPORTS``) and the metrics package's
    (``_MODULES``): every name but the registry's metrics."""
    root = importlib.import_module(ROOT)
    metrics = importlib.import_module(f"{ROOT}.metrics")
    return list(root._EXPORTS), list(metrics._MODULES)


def differences() -> dict[str, list[str]]:
    """Per package file whose generated part is not what the registry says: a diff."""
    found = {}
    for path, wanted in generated_blocks(*_own_names()).items():
        text = (_package_dir() / path).read_text(encoding="utf-8")
        current = _current(text)
        if current != wanted:
            found[path] = list(difflib.unified_diff(current, wanted, path, "registry", lineterm=""))
    return found


def write() -> list[str]:
    """Rewrite the generated parts from the registry; the files changed."""
    changed = []
    for path, wanted in generated_blocks(*_own_names()).items():
        file = _package_dir() / path
        text = file.read_text(encoding="utf-8")
        found = _BLOCK.search(text)
        if found is None:
            raise ValueError(f"{path}: no generated part ({BEGIN!r} ... {END!r})")
        indent = found["indent"]
        block = f"{indent}{BEGIN}\n" + "".join(f"{line}\n" for line in wanted) + f"{indent}{END}"
        new = text[: found.start()] + block + text[found.end() :]
        if new != text:
            file.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    """``--check``: exit 1 with a diff when a generated part is stale; ``--write``: fix it."""
    parser = argparse.ArgumentParser(prog="python -m langchain_answer_metrics.metrics.exports")
    parser.add_argument("--write", action="store_true", help="rewrite the generated parts")
    args = parser.parse_args(argv)
    if args.write:
        for path in write():
            print(f"rewrote the generated part of {ROOT}/{path}")
        return 0
    stale = differences()
    for lines in stale.values():
        print("\n".join(lines))
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
