"""A metric is one module (plus its step), plus one registry line.

The package root, ``langchain_answer_metrics.metrics``, the command line's ``--metric``
and the docs' tables (the CLI page's, the API reference's) read the registry: a metric
of the package gets all of them from its registry line, with no other edit. For type
checkers, the generated part of the two packages' TYPE_CHECKING blocks must agree with
the registry (``python -m langchain_answer_metrics.metrics.exports --write``).

Here a new metric, Politeness, is one module in a package made for the test, and one
line added to the registry's own entries.
"""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import answer_metrics, local_models, write_models_yaml

import langchain_answer_metrics
import langchain_answer_metrics.metrics as metrics_package
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.run_checks import chosen_metrics
from langchain_answer_metrics.metrics import exports, registry
from langchain_answer_metrics.metrics.registry import METRICS, MetricClassRef, MetricEntry
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

DOCS = Path(__file__).resolve().parent.parent / "docs"

POLITENESS = '''
"""Politeness: is the response polite? (A metric made for tests/test_exports.py.)"""

from typing import ClassVar

from langchain_answer_metrics.metrics.aspect_critic import AspectCritic


class Politeness(AspectCritic):
    """Whether the response is polite to the reader."""

    metric_key: ClassVar[str] = "politeness"
    criterion: str = "The response is polite to the reader."
    name: str = "politeness"
'''


def _hooks() -> tuple[object, object]:
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        cli_reference = importlib.import_module("cli_reference")
        registry_metrics = importlib.import_module("registry_metrics")
    finally:
        sys.path.remove(str(DOCS / "hooks"))
    return cli_reference, registry_metrics


@pytest.fixture
def politeness_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The metric's one module, in a package of its own on the path."""
    package = tmp_path / "polite_metrics"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "politeness.py").write_text(textwrap.dedent(POLITENESS), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "polite_metrics.politeness"


def _entry(module: str) -> MetricEntry:
    """The one registry line: where the class is, its key and fields, how it is built."""
    ref = MetricClassRef(f"{module}:Politeness", "politeness", ("response",))
    return MetricEntry(ref, lambda models, settings: ref.load()(llm=list(models.judges)))  # type: ignore[arg-type]


def _forget_cached(name: str) -> None:
    """The packages keep a name once imported: forget the test's metric after it."""
    for package in (langchain_answer_metrics, metrics_package):
        vars(package).pop(name, None)


@pytest.fixture
def built_in(politeness_module: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[MetricEntry]:
    """Politeness as a metric of the package: one more entry of the registry's own."""
    entry = _entry(politeness_module)
    monkeypatch.setattr(registry, "_ENTRIES", (*registry._ENTRIES, entry))
    monkeypatch.setitem(METRICS, entry.key, entry)
    yield entry
    _forget_cached("Politeness")


def test_a_registry_line_exports_the_metric_from_the_root_and_the_metrics_package(
    built_in: MetricEntry,
) -> None:
    from polite_metrics.politeness import Politeness

    assert "Politeness" in langchain_answer_metrics.__all__
    assert "Politeness" in metrics_package.__all__
    assert "Politeness" in dir(langchain_answer_metrics)
    assert langchain_answer_metrics.Politeness is Politeness
    assert metrics_package.Politeness is Politeness
    namespace: dict[str, object] = {}
    exec("from langchain_answer_metrics import *", namespace)
    assert namespace["Politeness"] is Politeness
    # The static view is now stale, and the check says what to add.
    stale = exports.differences()
    assert set(stale) == {"__init__.py", "metrics/__init__.py"}
    added = [line for line in stale["__init__.py"] if line.startswith("+") and "Polite" in line]
    assert added == [
        "+    from polite_metrics.politeness import Politeness as Politeness",
        '+        "Politeness",',
    ]


def test_a_registry_line_offers_the_metric_to_the_command_line_and_the_docs(
    built_in: MetricEntry,
) -> None:
    assert "politeness" in answer_metrics("evaluate", "--help").stdout
    assert chosen_metrics(["Politeness"], ()) == ["politeness"]
    with pytest.raises(UsageError, match=r"choose from .*politeness"):
        chosen_metrics(["politness-typo"], ())
    cli_reference, registry_metrics = _hooks()
    row = next(
        line
        for line in cli_reference.metric_table().splitlines()  # type: ignore[attr-defined]
        if line.startswith("| `politeness` |")
    )
    assert "Whether the response is polite to the reader." in row and "`response`" in row
    api = registry_metrics.on_page_markdown((DOCS / "api.md").read_text("utf-8"), None)  # type: ignore[attr-defined]
    assert "::: langchain_answer_metrics.Politeness" in api.splitlines()


def test_the_new_metric_scores_through_the_command_line(
    built_in: MetricEntry,
    server: LocalOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANSWER_METRICS_TEST_EXPORTS_KEY", "sk-test")
    models = write_models_yaml(tmp_path, local_models(server, "ANSWER_METRICS_TEST_EXPORTS_KEY"))
    data = tmp_path / "answers.jsonl"
    rows = [{"id": "a", "question": "Where is Paris?", "answer": "Paris is in France, thank you."}]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    done = answer_metrics(
        "evaluate", data, "--metric", "politeness", "--config", models, "--out", out
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert "politeness" in json.dumps(record)
    assert server.chat_requests >= 1


def test_a_metric_of_ones_own_is_offered_but_not_exported_by_the_package(
    politeness_module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = registry.register(_entry(politeness_module))
    try:
        assert "politeness" in registry.METRIC_NAMES
        assert "Politeness" not in langchain_answer_metrics.__all__
        with pytest.raises(AttributeError, match="Politeness"):
            langchain_answer_metrics.Politeness  # noqa: B018
    finally:
        del METRICS[entry.key]


def test_the_static_view_agrees_with_the_registry() -> None:
    assert exports.differences() == {}, (
        "run python -m langchain_answer_metrics.metrics.exports --write"
    )
    assert exports.main([]) == 0
    # Every registry metric, and the alias beside its class, is in the static imports.
    source = (Path(langchain_answer_metrics.__file__)).read_text(encoding="utf-8")
    for name in [*exports.metric_names(), *exports.metric_aliases()]:
        assert f"import {name} as {name}" in source or f"    {name} as {name}," in source


def test_the_root_and_the_metrics_package_name_no_registry_metric_by_hand() -> None:
    """Outside the generated part, neither package writes a registry metric's name."""
    for path in (Path(langchain_answer_metrics.__file__), Path(metrics_package.__file__)):
        text = path.read_text(encoding="utf-8")
        before, _, rest = text.partition(exports.BEGIN)
        _, _, after = rest.partition(exports.END)
        for name in exports.metric_exports():
            assert f'"{name}"' not in before + after, (path.name, name)
            assert f" {name}," not in before + after, (path.name, name)
