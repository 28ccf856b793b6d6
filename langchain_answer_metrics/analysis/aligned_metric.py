"""An aligned metric as a file: what :func:`~.alignment.align` fitted, saved and loaded.

The file (YAML, or JSON by its suffix) holds the metric's kind and settings, the judges it
keeps and their weights, the pass threshold, every step's examples in effect (the
defaults and the chosen ones) and any custom prompt, the default prompts' version, and the
data it was fitted on (row count and a fingerprint of the rows and labels). No model and
no key: the judges are given again when it is loaded, by label.

    >>> aligned = AlignedMetric.of(metric, fitted_on=FittedOn(rows=48, fingerprint="..."))
    >>> aligned.save("aligned.yaml")
    >>> metric = load_aligned("aligned.yaml", llm=[judge_a, judge_b])
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import yaml
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate
from pydantic import BaseModel, Field

from langchain_answer_metrics.judging.judges import as_judges
from langchain_answer_metrics.judging.prompts import DEFAULT_PROMPTS, PROMPT_VERSION
from langchain_answer_metrics.metrics.base import AnswerMetric, JudgedMetric
from langchain_answer_metrics.metrics.custom_judge import CustomJudge
from langchain_answer_metrics.metrics.registry import METRICS
from langchain_answer_metrics.metrics.similar_examples import SimilarExamples

FORMAT: Final = "langchain-answer-metrics/aligned-metric"
_NOT_SETTINGS = {"llm", "prompts", "examples", "judge_weights", "threshold"}
_LITERAL = {"system": SystemMessage, "human": HumanMessage, "ai": AIMessage}


class FittedOn(BaseModel):
    """The labelled data an alignment was fitted on.

    Example:
        >>> FittedOn(rows=48, fingerprint="4c95bc7fb9204918", label_field="human").rows
        48
    """

    rows: int = Field(description="Labelled rows fitted on.")
    fingerprint: str = Field(description="A hash of the rows' fields and labels.")
    label_field: str = "human"
    label_type: Literal["binary", "continuous"] = "binary"


class AlignedMetric(BaseModel):
    """The saved form of an aligned metric (see the module docs); :meth:`build` makes the
    metric again with the judges given.

    Example:
        >>> AlignedMetric.read("aligned.yaml").judge_weights
        {'judge-a': 1.0}
    """

    format: Literal["langchain-answer-metrics/aligned-metric"] = FORMAT
    version: int = 1
    metric: str = Field(description="The registry's metric name, or module:Class.")
    settings: dict[str, Any] = Field(default_factory=dict)
    judges: list[str] = Field(description="The labels of the judges kept, in order.")
    dropped_judges: list[str] = Field(default_factory=list)
    judge_weights: dict[str, float] | None = None
    threshold: float | None = None
    examples: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    prompts: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict, description="Custom templates only: per step, its messages."
    )
    select: dict[str, Any] | None = Field(
        default=None,
        description="select='similar': k, the pool of examples per step, and "
        "the label of the embedding model they were chosen with.",
    )
    prompt_version: int = PROMPT_VERSION
    fitted_on: FittedOn
    gain: dict[str, Any] = Field(
        default_factory=dict,
        description="The measured gain, as align reported it (for the record; never read).",
    )

    @classmethod
    def of(
        cls,
        metric: JudgedMetric | SimilarExamples,
        *,
        fitted_on: FittedOn,
        dropped: Sequence[str] = (),
        gain: Mapping[str, Any] | None = None,
    ) -> AlignedMetric:
        """The file of ``metric`` (already aligned: its judges, examples, weights)."""
        if isinstance(metric, SimilarExamples):
            saved = cls.of(metric.metric, fitted_on=fitted_on, dropped=dropped, gain=gain)
            saved.select = {
                "k": metric.k,
                "embedding": metric.embeddings[0].label,
                "pool": json.loads(json.dumps(metric.pool)),
            }
            return saved
        if callable(metric.aggregation):
            raise ValueError(
                f"{metric.key}: a metric with a custom aggregation function "
                "cannot be saved (name one: mean, median ...)"
            )
        kind = type(metric)
        entry = next((e for e in METRICS.values() if e.metric_class is kind), None)
        settings = {
            name: _plain(metric.key, name, getattr(metric, name))
            for name, info in kind.model_fields.items()
            if name not in _NOT_SETTINGS
            and getattr(metric, name) != info.get_default(call_default_factory=True)
        }
        # A CustomJudge's examples are given in sample fields: its question is user_input.
        fields = {"question": "user_input"} if isinstance(metric, CustomJudge) else {}
        try:
            plain = json.loads(json.dumps(settings))
        except TypeError as error:
            raise ValueError(f"{metric.key}: a setting cannot be saved ({error})") from None
        return cls(
            metric=entry.key if entry is not None else f"{kind.__module__}:{kind.__qualname__}",
            settings=plain,
            judges=[judge.label for judge in metric.llm],
            dropped_judges=list(dropped),
            judge_weights=metric.judge_weights,
            threshold=metric.threshold,
            examples={
                step: [_example_data(example, fields) for example in examples]
                for step, examples in metric.examples.items()
            },
            prompts={}
            if "prompt" in settings
            else {
                step: _template_data(template)
                for step, template in metric.prompts.items()
                if template is not DEFAULT_PROMPTS.get(step)
            },
            fitted_on=fitted_on,
            gain=dict(gain or {}),
        )

    def save(self, path: str | Path) -> Path:
        """Write it as YAML (``.yaml``/``.yml``) or JSON (any other suffix)."""
        path = Path(path)
        data = self.model_dump(mode="json")
        if path.suffix.lower() in {".yaml", ".yml"}:
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        else:
            text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        path.write_text(text, encoding="utf-8")
        return path

    @classmethod
    def read(cls, path: str | Path) -> AlignedMetric:
        """Read a saved file; a ValueError names the file and what is wrong."""
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as error:
            raise ValueError(f"{path}: cannot read the aligned metric ({error})") from None
        except RecursionError:
            raise ValueError(f"{path}: nested too deeply to be an aligned metric file") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"{path}: not an aligned metric file (format: {FORMAT})")
        try:
            return cls.model_validate(data)
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None

    def build(self, llm: Any, embeddings: Any = None) -> JudgedMetric | SimilarExamples:
        """The metric again, with the judges of ``llm`` (models or Judges, matched by label:
        the kept ones are used, in the saved order; others are ignored), and, for a
        ``select="similar"`` alignment, the embedding model ``embeddings``."""
        inner = self._build(llm)
        if self.select is None:
            return inner
        if embeddings is None:
            raise ValueError(
                f"aligned {self.metric}: its examples are chosen per sample; give "
                f"the embedding model ({self.select['embedding']}) as "
                "embeddings="
            )
        return SimilarExamples(
            metric=inner, pool=self.select["pool"], embeddings=embeddings, k=self.select["k"]
        )

    def _build(self, llm: Any) -> JudgedMetric:
        given = {judge.label: judge for judge in as_judges(llm)}
        missing = [label for label in self.judges if label not in given]
        if missing:
            raise ValueError(
                f"aligned {self.metric}: the judges {', '.join(missing)} were kept by the "
                f"alignment but are not among those given ({', '.join(given) or 'none'})"
            )
        kind = metric_class(self.metric)
        # Every step's examples: a step not listed has none (its defaults were kept in the
        # file when it had them). A metric of one step (a CustomJudge's or a
        # TrajectoryJudge's is named by its output kind) takes them as one list.
        examples: Any = (
            [e for step in self.examples.values() for e in step]
            if issubclass(kind, CustomJudge) or len(kind.prompt_steps) == 1
            else {step: self.examples.get(step, []) for step in kind.prompt_steps}
        )
        return kind(
            **self.settings,
            llm=[given[label] for label in self.judges],
            examples=examples,
            prompts={step: _template_of(data) for step, data in self.prompts.items()},
            judge_weights=self.judge_weights,
            threshold=self.threshold,
        )


def load_aligned(
    path: str | Path, *, llm: Any, embeddings: Any = None
) -> JudgedMetric | SimilarExamples:
    """The aligned metric saved at ``path`` (by :func:`~.alignment.align`), judged by ``llm``.

    Args:
        path: the YAML or JSON file ``AlignmentResult.save`` wrote.
        llm: the judges (a chat model, a :class:`Judge`, or a list): matched by label.
        embeddings: for an alignment with ``select="similar"``, the embedding model.

    Raises:
        ValueError: not an aligned metric file, or a kept judge missing from ``llm``.

    Example:
        >>> metric = load_aligned("aligned.yaml", llm=ChatOpenAI(model="gpt-4o-mini"))
    """
    return AlignedMetric.read(path).build(llm, embeddings)


def metric_class(name: str) -> type[JudgedMetric]:
    """The class a file's ``metric`` names: a registry name, or this package's module:Class."""
    if name in METRICS:
        kind: type[AnswerMetric] = METRICS[name].metric_class
    else:
        module, _, qualname = name.partition(":")
        if not module.startswith("langchain_answer_metrics.") or not qualname:
            raise ValueError(f"aligned metric {name!r}: not a known metric of this package")
        kind = getattr(importlib.import_module(module), qualname)
    if not (isinstance(kind, type) and issubclass(kind, JudgedMetric)):
        raise ValueError(f"aligned metric {name!r}: not a judged metric")
    return kind


def _example_data(example: Any, fields: Mapping[str, str]) -> dict[str, Any]:
    given = {fields.get(name, name): value for name, value in example.input.items()}
    return {"input": given, "output": example.output.model_dump(mode="json")}


def _plain(key: str, name: str, value: Any) -> Any:
    """A setting as plain data (an output kind as its dict); a template cannot be saved."""
    if isinstance(value, ChatPromptTemplate):
        raise ValueError(f"{key}: a {name}= template cannot be saved; give it as a string")
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def _template_data(template: ChatPromptTemplate) -> list[dict[str, Any]]:
    data = []
    for message in template.messages:
        if isinstance(message, BaseMessage):
            data.append({"role": message.type, "text": str(message.content), "literal": True})
        else:
            role = type(message).__name__.removesuffix("MessagePromptTemplate").lower()
            role = {"ai": "ai", "system": "system"}.get(role, "human")
            text = str(getattr(getattr(message, "prompt", None), "template", ""))
            data.append({"role": role, "text": text, "literal": False})
    return data


def _template_of(data: list[dict[str, Any]]) -> ChatPromptTemplate:
    return ChatPromptTemplate.from_messages(
        [
            _LITERAL[item["role"]](item["text"])
            if item.get("literal")
            else (item["role"], item["text"])
            for item in data
        ]
    )
