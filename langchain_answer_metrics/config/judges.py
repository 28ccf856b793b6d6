"""The config file's ``metrics:`` section: judges of your own, declared by name.

    metrics:
      conciseness:
        criterion: "The answer is brief and to the point."
        output: {scale: {1: rambling, 2: long, 3: ok, 4: brief, 5: one sentence}}
        strictness: 3
      harm:
        criterion: "The answer helps someone cause harm."
        output: pass_fail
        higher_is_better: false
        bands: {safe: 0.5, harmful: 0.0}

The section also gives the built-in metrics' settings, under their registry names::

    metrics:
      trajectory_match: {mode: unordered, tool_args: subset}

An entry with a ``criterion:``, a ``prompt:`` or another key only a judge has (or a key
close to one of them: a typo) declares a judge; any other entry gives settings
(:func:`declares_judge`). Which settings a
metric takes is the registry's knowledge, checked by the face that builds the metrics.

Pure validation of the section's shape: which keys, of which types, one of ``criterion``
and ``prompt``, an output kind that is one of four. What a rubric means (a scale with a
gap, a template variable that is no sample field) is the judge's own rule, checked when
the judge is built, still before any request (the CLI's ``metrics`` plan layer); the
declaration is a plain description, so the config layer knows nothing of the metrics.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from langchain_answer_metrics.core.strict_options import closest_name

__all__ = [
    "DECLARING_KEYS",
    "MAX_DECLARED_METRICS",
    "JudgeDeclaration",
    "JudgeOutput",
    "check_metric_name",
    "declares_judge",
]

MAX_DECLARED_METRICS = 100
"""The most judges one ``metrics:`` section may declare (each is asked about every sample)."""

OutputKind = Literal["pass_fail", "scale", "categories", "continuous"]

_KIND_WORDS: dict[str, OutputKind] = {
    "pass_fail": "pass_fail",
    "passfail": "pass_fail",
    "binary": "pass_fail",
    "scale": "scale",
    "categories": "categories",
    "continuous": "continuous",
}
_SHAPES = "pass_fail, continuous, {scale: {1: text, 2: text, ...}} or {categories: {label: score}}"


class JudgeOutput(BaseModel):
    """A declared judge's output kind, normalised: ``kind`` and, for a scale, ``levels``
    (level -> description); for categories, ``scores`` (label -> score) and
    ``descriptions``; for a continuous kind, what ``low`` (0) and ``high`` (1) mean.

    Example:
        >>> JudgeDeclaration(criterion="Polite.", output={"categories": {"yes": 1, "no": 0}}
        ...                  ).output.as_options()
        {'kind': 'categories', 'scores': {'yes': 1.0, 'no': 0.0}}
    """

    model_config = ConfigDict(frozen=True)

    kind: OutputKind
    levels: dict[int, str] = Field(default_factory=dict)
    scores: dict[str, float] = Field(default_factory=dict)
    descriptions: dict[str, str] = Field(default_factory=dict)
    low: str | None = None
    high: str | None = None

    def as_options(self) -> dict[str, Any]:
        """The output kind as the judge takes it: ``{"kind": ..., its settings}``."""
        return {"kind": self.kind, **self.model_dump(exclude={"kind"}, exclude_defaults=True)}


def _output(value: Any) -> Any:
    """``pass_fail`` / ``continuous`` / ``{scale: {...}}`` / ``{categories: {...}}``."""
    if isinstance(value, JudgeOutput):
        return value
    if isinstance(value, str):
        kind = _KIND_WORDS.get(value.strip().lower().replace("-", "_"))
        if kind in ("scale", "categories"):
            raise ValueError(
                f"a {kind} needs its {'levels' if kind == 'scale' else 'scores'}: "
                f"{{{kind}: {{...}}}}"
            )
        if kind is None:
            raise ValueError(f"must be one of {_SHAPES}")
        return JudgeOutput(kind=kind)
    if not isinstance(value, dict) or not value:
        raise ValueError(f"must be one of {_SHAPES}")
    value = dict(value)
    descriptions = value.pop("descriptions", None)
    if len(value) != 1:
        raise ValueError(f"must be one of {_SHAPES} (one kind)")
    ((word, body),) = value.items()
    kind = _KIND_WORDS.get(str(word).strip().lower().replace("-", "_"))
    if kind is None:
        raise ValueError(f"unknown output kind {str(word)[:40]!r}; use {_SHAPES}")
    if descriptions is not None and kind != "categories":
        raise ValueError("descriptions: only categories take them ({label: what it means})")
    if kind == "pass_fail" and body not in (None, {}, True):
        raise ValueError("pass_fail takes no settings; write output: pass_fail")
    if kind == "continuous":
        return _continuous(body)
    if kind == "pass_fail":
        return JudgeOutput(kind=kind)
    if not isinstance(body, dict) or not body:
        entry = "level: description" if kind == "scale" else "label: score"
        raise ValueError(f"{kind}: must be a mapping ({entry}), one entry per line")
    if kind == "scale":
        return JudgeOutput(kind=kind, levels=_levels(body))
    if descriptions is not None and not isinstance(descriptions, dict):
        raise ValueError("descriptions: must be a mapping of label: what it means")
    for label, text in (descriptions or {}).items():
        if not isinstance(text, str) or not text.strip():
            raise ValueError(
                f"descriptions: {str(label)[:40]!r} has no text (label: what it "
                "means; quote a text that holds a comma)"
            )
    described = {str(label).strip(): text for label, text in (descriptions or {}).items()}
    return JudgeOutput(kind=kind, scores=_scores(body), descriptions=described)


def _continuous(body: Any) -> JudgeOutput:
    """``continuous``, or ``{continuous: {low: text, high: text}}`` (what 0 and 1 mean)."""
    if body in (None, {}, True):
        return JudgeOutput(kind="continuous")
    if not isinstance(body, dict) or set(body) - {"low", "high"}:
        raise ValueError("continuous takes low: and high: (what 0 and 1 mean), nothing else")
    for end in ("low", "high"):
        if end in body and (not isinstance(body[end], str) or not body[end].strip()):
            raise ValueError(f"continuous: {end} must be a text (what {end} scores mean)")
    return JudgeOutput(kind="continuous", low=body.get("low"), high=body.get("high"))


def _levels(body: dict[Any, Any]) -> dict[int, str]:
    levels: dict[int, str] = {}
    for level, description in body.items():
        number = level if isinstance(level, int) and not isinstance(level, bool) else None
        if number is None and isinstance(level, str) and re.fullmatch(r"\s*-?\d+\s*", level):
            number = int(level)
        if number is None:
            raise ValueError(f"scale: level {str(level)[:40]!r} is not a whole number")
        if not isinstance(description, str) or not description.strip():
            raise ValueError(f"scale: level {number} has no description (level: text)")
        levels[number] = description
    return levels


def _scores(body: dict[Any, Any]) -> dict[str, float]:
    scores: dict[str, float] = {}
    for label, score in body.items():
        name = str(label).strip()
        if score is None:
            raise ValueError(f"categories: {name[:40]!r} has no score (label: score in [0, 1])")
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise ValueError(f"categories: {name[:40]!r}'s score must be a number in [0, 1]")
        if not math.isfinite(score) or not 0.0 <= score <= 1.0:
            raise ValueError(f"categories: {name[:40]!r}'s score {score} is not in [0, 1]")
        scores[name] = float(score)
    return scores


def _bands(value: Any) -> Any:
    """``{name: lowest score}``; what the bands mean (one at 0.0) is the judge's rule."""
    if value is not None and not isinstance(value, dict):
        raise ValueError("must be a mapping of band name: lowest score, e.g. {good: 0.7, poor: 0}")
    for name in value or {}:
        if not isinstance(name, str):
            raise ValueError(
                f"the band name {name!r} is not a text (quote yes, no, on, off "
                "and numbers used as names)"
            )
    return value


DECLARING_KEYS = (
    "criterion",
    "prompt",
    "examples",
    "threshold",
    "higher_is_better",
    "bands",
    "aggregation",
)
"""The keys only a judge of your own has (it needs ``criterion`` or ``prompt``): an entry
with one of them declares a judge. No built-in metric's setting is named like one, but
aspect_critic's ``criterion``, which a config gives as a judge of your own instead
(tests/test_metric_settings_config.py checks this)."""


def declares_judge(entry: Any) -> bool:
    """Whether a ``metrics:`` entry declares a judge of your own, rather than giving a
    built-in metric's settings: it has a key only a declaration has (``criterion:``,
    ``prompt:``, ``threshold:``...), or one most likely misspelt from them (``critrion:``
    is then reported as such). An entry that is no mapping is a declaration too, so the
    schema says what is wrong with it.

    Example:
        >>> declares_judge({"criterion": "Brief."}), declares_judge({"mode": "unordered"})
        (True, False)
    """
    if not isinstance(entry, dict):
        return True
    return any(
        key in DECLARING_KEYS or closest_name(str(key), DECLARING_KEYS) is not None for key in entry
    )


def check_metric_name(name: str) -> str:
    """A declared metric's name: its result key, its ``--metric`` name and a column of
    ``--out``: lower-case letters, digits and ``_``, starting with a letter.

    Example:
        >>> check_metric_name("conciseness")
        'conciseness'
    """
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name):
        raise ValueError(
            "a metric's name is lower-case letters, digits and _ (at most 64), starting "
            "with a letter: it is the --metric name and the result key"
        )
    return name


class JudgeDeclaration(BaseModel):
    """One judge of the ``metrics:`` section (its name is the section's key).

    Attributes:
        criterion: what the judge checks, in plain words (or give ``prompt``).
        prompt: the judge's instruction, a template over the sample fields ``{user_input}``,
            ``{response}``, ``{reference}`` and ``{retrieved_contexts}`` (and
            ``{criterion}`` when a criterion is given too).
        output: ``pass_fail`` (default), ``continuous`` (or ``{continuous: {low: text,
            high: text}}``), ``{scale: {level: text}}`` or ``{categories: {label: score},
            descriptions: {label: text}}`` (descriptions optional).
        strictness: votes per judge model (1 to 5).
        examples: few-shot examples, each ``{input: {field: text}, output: {...}}``.
        threshold: the pass mark in [0, 1].
        higher_is_better: false for a criterion where a high score is bad (harm).
        bands: the results' band names, each with the lowest score it holds
            (``{concise: 0.8, acceptable: 0.5, wordy: 0.0}``; one starts at 0.0).
        aggregation: how a panel's scores combine: mean (default), median, min, max or
            consensus.

    Example:
        >>> declared = JudgeDeclaration(criterion="Brief.", output={"scale": {1: "long", 2: "ok"}})
        >>> declared.output.levels
        {1: 'long', 2: 'ok'}
    """

    # Unknown keys are errors (``critrion:`` must not be ignored), as in the rest of the file.
    model_config = ConfigDict(extra="forbid", frozen=True)

    criterion: str | None = Field(default=None, min_length=1)
    prompt: str | None = Field(default=None, min_length=1)
    output: Annotated[JudgeOutput, BeforeValidator(_output)] = JudgeOutput(kind="pass_fail")
    strictness: int = Field(default=1, ge=1, le=5)
    examples: list[dict[str, Any]] = Field(default_factory=list, max_length=50)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    higher_is_better: bool = True
    bands: Annotated[dict[str, float] | None, BeforeValidator(_bands)] = None
    aggregation: Literal["mean", "median", "min", "max", "consensus"] | None = None

    def options(self) -> dict[str, Any]:
        """The judge's keyword arguments (all but ``llm`` and ``name``), plain data:
        ``CustomJudge(llm=panel.judges, name=name, **declaration.options())``."""
        options: dict[str, Any] = {
            "criterion": self.criterion,
            "prompt": self.prompt,
            "output": self.output.as_options(),
            "strictness": self.strictness,
            "threshold": self.threshold,
            "higher_is_better": self.higher_is_better,
        }
        if self.examples:
            options["examples"] = [dict(example) for example in self.examples]
        if self.aggregation is not None:
            options["aggregation"] = self.aggregation
        if self.bands is not None:
            options["bands"] = dict(self.bands)
        return options

    @model_validator(mode="after")
    def _criterion_or_prompt(self) -> JudgeDeclaration:
        if self.criterion is None and self.prompt is None:
            raise ValueError(
                "needs a criterion (what to judge, in plain words) or a prompt (the whole "
                "instruction, with {response} ...)"
            )
        for name in ("criterion", "prompt"):
            text = getattr(self, name)
            if text is not None and not text.strip():
                raise ValueError(f"{name} is empty")
        return self
