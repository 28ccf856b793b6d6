"""The metrics one run may choose from: the registry's, and the judges ``--config`` declares.

A judge declared under ``metrics:`` in the config file (``conciseness:``) is offered as a
metric of that run only: :func:`metric_entries` gives the registry's entries plus one
:class:`DeclaredJudge` entry per declaration, and the global registry is never changed
(a second run in the same process, with another config, sees its own judges only). Each
entry builds a :class:`~langchain_answer_metrics.metrics.custom_judge.CustomJudge` with
the run's judges; what the judge refuses (a scale with a gap, a template variable that is
no sample field) is reported as a config problem at the declaration's YAML line, before
any request.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from langchain_answer_metrics.checkpoints import metric_signature, settings_signature
from langchain_answer_metrics.checkpoints.fingerprints import MetricSignature
from langchain_answer_metrics.cli.aligned_files import aligned_entries
from langchain_answer_metrics.cli.configured import configured_settings
from langchain_answer_metrics.config.declared import declaration_error, declared_metrics
from langchain_answer_metrics.config.judges import JudgeDeclaration
from langchain_answer_metrics.core.sample import SAMPLE_FIELDS, SampleField
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.metrics.custom_judge import CustomJudge
from langchain_answer_metrics.metrics.registry import METRICS, MetricEntry, MetricModels

__all__ = ["DeclaredJudge", "build_declared", "metric_entries"]


@dataclass(frozen=True)
class DeclaredJudge(MetricEntry):
    """The registry entry of a judge declared in a config file: keyed by its name.

    Attributes:
        name: the declared name: the ``--metric`` name and the result key.
        declaration: what the file says of the judge.
        source: the config file (its lines name a problem found when the judge is built).

    Example:
        >>> entry = metric_entries(Path("judges.yaml"))["conciseness"]
        >>> entry.key, entry.required_fields, entry.needs_judge
        ('conciseness', ('response',), True)
    """

    name: str = ""
    declaration: JudgeDeclaration | None = None
    source: Path | None = None

    @property
    def key(self) -> str:
        return self.name

    @property
    def required_fields(self) -> tuple[SampleField, ...]:
        assert self.declaration is not None
        return fields_used(self.declaration)

    @property
    def needs_judge(self) -> bool:
        return True

    @property
    def needs_embeddings(self) -> bool:
        return False

    def signature_of(self, metric: AnswerMetric) -> str:
        """The runner's signature of ``metric`` with the declared output kind's settings
        (levels, scores, descriptions): a resume after one of them changed scores again.
        The judge's ``bands`` are in ``metric_signature`` (a setting off its default): a
        resume after they changed names the bands again."""
        assert self.declaration is not None
        output = self.declaration.output.model_dump(mode="json")
        # Its judges' part (model ids, sampling settings) is the runner's, after the dot.
        runner = metric_signature(metric)
        base, _, judges = runner.partition(".")
        signed = settings_signature(self.name, {"metric": base, "output": output})
        return MetricSignature(f"{signed}.{judges}", getattr(runner, "judges", None))


def metric_entries(
    config: Path | None, metric_files: Sequence[Path] = ()
) -> Mapping[str, MetricEntry]:
    """The registry's metrics, those declared under ``metrics:`` in ``config``, and those
    of the ``--metric-file`` files.

    Raises:
        ConfigError: the file's shape is wrong, a declared name is a built-in metric's, or
            a built-in metric's settings are not its own (:mod:`.configured`).

    Example:
        >>> list(metric_entries(Path("judges.yaml")))[-2:]
        ['conciseness', 'tone']
    """
    files = aligned_entries(metric_files)  # --metric-file: metrics that align saved
    if config is None:
        return {**METRICS, **files} if files else METRICS
    declared = declared_metrics(config)
    taken = [name for name in declared if name in METRICS]
    if taken:
        raise declaration_error(
            config,
            [
                (
                    f"metrics.{name}",
                    f"{name!r} is a built-in metric: give your judge another name (a built-in "
                    "metric's settings are given without criterion: or prompt:)",
                )
                for name in taken
            ],
        )
    configured_settings(config, METRICS)  # the built-in metrics' settings, checked now
    entries: dict[str, MetricEntry] = dict(METRICS)
    for name, declaration in declared.items():
        entries[name] = DeclaredJudge(
            CustomJudge,
            _maker(name, declaration, config),
            name=name,
            declaration=declaration,
            source=config,
        )
    return {**entries, **files}


def _maker(name: str, declaration: JudgeDeclaration, source: Path) -> Any:
    def make(models: MetricModels, settings: Mapping[str, Any]) -> AnswerMetric:
        return build_declared(name, declaration, judges=list(models.judges), source=source)

    return make


def fields_used(declaration: JudgeDeclaration) -> tuple[SampleField, ...]:
    """The sample fields a declared judge needs: its template's variables for a
    ``prompt``; the ``response`` for a ``criterion``."""
    if declaration.prompt is None:
        return ("response",)
    try:
        named = {name for _, name, _, _ in string.Formatter().parse(declaration.prompt) if name}
    except ValueError:
        return ("response",)  # an unbalanced brace: the judge names the problem when built
    return tuple(field for field in SAMPLE_FIELDS if field in named)


def build_declared(
    name: str, declaration: JudgeDeclaration, *, judges: list[Any], source: Path
) -> CustomJudge:
    """The judge ``declaration`` describes, asking ``judges``.

    Raises:
        ConfigError: what the judge refuses, at the declaration's key path and YAML line.

    Example:
        >>> declared = declared_metrics("judges.yaml")
        >>> build_declared("tone", declared["tone"], judges=panel.judges,
        ...                source=Path("judges.yaml")).output.kind
        'categories'
    """
    try:
        return CustomJudge(llm=judges, name=name, **declaration.options())
    except (ValidationError, ValueError) as error:
        problem = _problem(error)
        text = "prompt" if declaration.prompt is not None else "criterion"
        bands = problem.startswith(f"CustomJudge({name!r}): bands")
        field = _field_of(error) or (
            "bands" if bands else "examples" if "example" in problem else text
        )
        raise declaration_error(source, [(f"metrics.{name}.{field}", problem)]) from None


def _field_of(error: Exception) -> str | None:
    """The declaration key a judge's refusal is about, when its error says."""
    if isinstance(error, ValidationError):
        for item in error.errors(include_input=False):
            if item["loc"] and isinstance(item["loc"][0], str) and item["loc"][0] != "llm":
                return item["loc"][0]
    return None


def _problem(error: Exception) -> str:
    """The judge's own words, on one line, without pydantic's framing: a message that
    quotes pydantic's (an example that does not fit) loses its type tags, input echo
    and help link."""
    if isinstance(error, ValidationError):
        text = "\n".join(
            str(item["msg"]).removeprefix("Value error, ")
            for item in error.errors(include_input=False, include_url=False)
        )
    else:
        text = str(error)
    text = re.sub(r"\s*\[type=[^\]]*\]", "", text)
    lines = [line.strip() for line in text.splitlines()]
    return ": ".join(line for line in lines if line and not line.startswith("For further"))
