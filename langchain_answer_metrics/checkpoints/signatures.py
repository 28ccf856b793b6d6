"""Signatures: what a saved score must share with a rerun to be reused.

A sample is fingerprinted by its text (:func:`sample_fingerprint`); a metric is signed by
its name, its models' labels, the settings its registry entry names and any other setting
moved off its default, and its prompts (:func:`metric_signature`): their text where the
caller replaced them, else the version of the default prompts (:func:`prompt_settings`),
never a repr; and by what its judges are: model ids and sampling settings
(:mod:`.judge_settings`). The runner's ``checkpoint=`` and the CLI's ``--out`` both sign this way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from pydantic import BaseModel

from langchain_answer_metrics.checkpoints.fingerprints import (
    judged_signature,
)
from langchain_answer_metrics.checkpoints.fingerprints import (
    sample_fingerprint as sample_fingerprint,
)
from langchain_answer_metrics.checkpoints.fingerprints import (
    settings_signature as settings_signature,
)
from langchain_answer_metrics.checkpoints.judge_settings import judge_settings
from langchain_answer_metrics.judging.prompt_set import (
    DEFAULT_STEP_PROMPTS,
    REGISTERED_STEPS,
    FewShotExample,
)
from langchain_answer_metrics.judging.prompts import DEFAULT_PROMPTS, PROMPT_VERSION
from langchain_answer_metrics.metrics.base import AnswerMetric, JudgedMetric
from langchain_answer_metrics.metrics.registry import METRICS


def metric_signature(metric: AnswerMetric) -> str:
    """The settings of ``metric`` a saved score must share to be reused: its models'
    labels and the settings its registry entry names (criterion, strictness ...), then,
    after a dot, what its judges are (:func:`~.judge_settings.judge_settings`: model ids,
    temperature, max_tokens ...).

    The first part alone is what lines written before judges' settings were signed carry;
    :func:`~.fingerprints.same_judged_metric` accepts it for them.

    Example:
        >>> metric_signature(Faithfulness(llm=ChatOpenAI(model="gpt-4o-mini", temperature=0)))
        '8d0b5c1f2a3e4d67.1f0e9c8b7a6d5e4f'
    """
    return judged_signature(base_signature(metric), judge_settings(metric))


def base_signature(metric: AnswerMetric) -> str:
    """The metric's name, its models' labels, its settings and prompts, as a hash: the
    whole signature before its judges' settings were signed."""
    entry = next((entry for entry in METRICS.values() if type(metric) is entry.metric_class), None)
    settings: dict[str, Any] = {}
    models: dict[str, Any] = dict(metric)
    if "llm" in models:
        settings["judges"] = [judge.label for judge in models["llm"]]
    if "embeddings" in models:
        settings["embedders"] = [embedder.label for embedder in models["embeddings"]]
    if entry is not None:
        settings.update({name: getattr(metric, field) for name, field in entry.signature.items()})
        # Settings a Python caller moved off their defaults (mode, beta, aggregation ...).
        changed = _changed_settings(metric, set(entry.signature.values()))
        if changed:
            settings["changed"] = changed
        settings.update(prompt_settings(metric))
        if settings.get("judges") and "prompt_version" not in settings:
            # A composite (AnswerCorrectness) asks its judges through a component built
            # with the default prompts: their version is what its scores depend on.
            settings["prompt_version"] = PROMPT_VERSION
        return settings_signature(entry.key, settings)
    # A metric of the user's own: its class and its plain settings.
    plain: dict[str, Any] = {
        name: value
        for name, value in vars(metric).items()
        if isinstance(value, (str, int, float, bool, type(None)))
    }
    if getattr(metric, "judge_weights", None):  # a weighted panel scores otherwise
        plain["judge_weights"] = dict(getattr(metric, "judge_weights"))  # noqa: B009
    # Settings that are models or collections (a CustomJudge's output: its levels,
    # categories and scores) change its scores as much as the plain ones do.
    structured = {
        name: value
        for name, value in _changed_settings(metric, set(plain)).items()
        if name != "judge_weights"
    }
    if structured:
        plain["changed"] = structured
    inner = getattr(metric, "metric", None)
    if isinstance(inner, AnswerMetric):  # a wrapper (SimilarExamples): the metric it runs
        plain["metric"] = base_signature(inner)
        plain["pool"] = _stable(getattr(metric, "pool", None))
    return settings_signature(
        f"{type(metric).__module__}.{type(metric).__qualname__}",
        {**settings, **plain, **prompt_settings(metric)},
    )


def prompt_settings(metric: AnswerMetric) -> dict[str, Any]:
    """What a metric's prompts add to its signature: for a metric with judge steps, the
    version of the default prompts (:data:`~.judging.prompts.PROMPT_VERSION`) and, for
    each step whose prompt or examples the caller replaced, their text (never a repr,
    which changes with langchain-core's)."""
    if not isinstance(metric, JudgedMetric) or not metric.prompt_steps:
        return {}
    custom: dict[str, Any] = {}
    for step in metric.prompt_steps:
        template = metric.prompts.get(step, DEFAULT_PROMPTS[step])
        examples = tuple(metric.examples.get(step, ()))
        signed = {"messages": _template_text(template), "examples": _examples_text(examples)}
        default = DEFAULT_STEP_PROMPTS[step]
        if signed != {
            "messages": _template_text(default.template),
            "examples": _examples_text(default.examples),
        }:
            custom[step] = signed
    versions = {
        step: REGISTERED_STEPS[step].version
        for step in metric.prompt_steps
        if step in REGISTERED_STEPS
    }
    return {
        "prompt_version": PROMPT_VERSION,
        **({"step_versions": versions} if versions else {}),
        **({"prompts": custom} if custom else {}),
    }


def _template_text(template: ChatPromptTemplate) -> list[str]:
    """Each message of a template as ``role: text``."""
    lines = []
    for message in template.messages:
        if isinstance(message, BaseMessage):
            content = message.content
            text = content if isinstance(content, str) else json.dumps(content, sort_keys=True)
            lines.append(f"{message.type}: {text}")
        elif isinstance(message, MessagesPlaceholder):
            lines.append(f"placeholder: {message.variable_name}")
        else:
            role = (
                getattr(message, "role", None)
                or type(message).__name__.removesuffix("MessagePromptTemplate").lower()
            )
            prompts = getattr(message, "prompt", None)
            parts = prompts if isinstance(prompts, list) else [prompts]
            text = "".join(str(getattr(part, "template", part)) for part in parts)
            lines.append(f"{role}: {text}")
    return lines


def _examples_text(examples: Iterable[FewShotExample]) -> list[str]:
    return [
        json.dumps(
            {"input": dict(example.input), "output": example.output.model_dump(mode="json")},
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )
        for example in examples
    ]


def _changed_settings(metric: AnswerMetric, named: set[str]) -> dict[str, Any]:
    """The metric's settings that differ from their defaults, other than its models, its
    name, its prompts (:func:`prompt_settings`) and the ``named`` ones, as stable
    JSON-ready values."""
    skip = {"llm", "embeddings", "name", "prompts", "examples", *named}
    changed: dict[str, Any] = {}
    for field, info in type(metric).model_fields.items():
        if field in skip:
            continue
        value = getattr(metric, field)
        if value != info.get_default(call_default_factory=True):
            changed[field] = _stable(value)
    return changed


def _stable(value: Any) -> Any:
    """``value`` as something that serialises the same in every process."""
    if isinstance(value, AnswerMetric):
        # A component metric (AnswerCorrectness): its judges are signed with the whole's.
        return base_signature(value)
    if callable(value) and not isinstance(value, type):
        # A custom aggregation: named by where it is defined (an address would change).
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', repr(value))}"
    if isinstance(value, Mapping):
        return {str(key): _stable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_stable(item) for item in value]
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if isinstance(value, BaseModel):
        return _stable(value.model_dump(mode="json"))
    return repr(value)
