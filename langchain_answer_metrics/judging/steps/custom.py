"""The steps of a judge the user describes: a verdict of one output kind, ``votes`` times.

- ``judge_pass_fail``: PASS or FAIL on the criterion (:class:`PassFailVerdict`);
- ``judge_scale``: one level of an ordered scale (:class:`ScaleVerdict`, ``<levels>``);
- ``judge_category``: one of the user's categories (:class:`CategoryVerdict`, ``<categories>``);
- ``judge_continuous``: a score in [0, 1] (:class:`ContinuousVerdict`, ``<range>``).

Each step's variables are the sample's fields (``user_input``, ``response``, ``reference``,
``retrieved_contexts``), the ``criterion``, and the step's rubric; each arrives tagged and
escaped. ``question`` is the ``user_input`` of the default prompt, left out when absent.
The registered schemas take any label; :func:`verdict_schema` narrows one to the user's
labels or levels (a ``Literal``, so the model sees them as the schema's choices), under the
same name. Reason first, then the verdict, in every schema.

:func:`~.voting.ask_votes` (re-exported here) is the one way a step asks for several
independent votes (AspectCritic's and ResponseRelevance's steps use it too).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator

from langchain_answer_metrics.judging.prompt_set import register_step
from langchain_answer_metrics.judging.prompts import DATA_RULE, StepVariables
from langchain_answer_metrics.judging.step_specs import StepSpec
from langchain_answer_metrics.judging.steps.voting import Vote, ask_votes

# What a template of the user's may name besides the sample's fields, per step.
RUBRIC_VARIABLES: dict[str, str] = {
    "judge_scale": "levels",
    "judge_category": "categories",
    "judge_continuous": "range",
}
SAMPLE_VARIABLES = ("user_input", "retrieved_contexts", "reference", "response")


def _text_label(value: Any) -> Any:
    """A label as written: spaces and one final "." aside (case is the caller's)."""
    if not isinstance(value, str):
        return value
    label = value.strip()
    return label[:-1].rstrip() if label.endswith(".") else label


_LEVEL = re.compile(r"^(?:level\s*)?([+-]?\d+)(?:\.0*)?$", re.IGNORECASE)


def _level(value: Any) -> Any:
    """A level given as 4, 4.0, "4", " 4. " or "Level 4" as the integer 4."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        found = _LEVEL.match(_text_label(value))
        return int(found.group(1)) if found else value
    return value


def _fraction(value: Any) -> Any:
    """A score given as 0.8, "0.8", " 0.8. " or "80%" as the number 0.8."""
    if not isinstance(value, str):
        return value
    text = _text_label(value)
    try:
        return float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        return value


class PassFailVerdict(BaseModel):
    """PASS or FAIL on the criterion."""

    reason: str = Field(description="Why it does or does not meet the criterion.")
    verdict: Literal["PASS", "FAIL"]

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict_label(cls, value: Any) -> Any:
        label = _text_label(value)
        return label.upper() if isinstance(label, str) else label


class ScaleVerdict(BaseModel):
    """One level of the scale."""

    reason: str = Field(description="Why this level and not its neighbours.")
    verdict: int = Field(description="The level (an integer).")

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict_level(cls, value: Any) -> Any:
        return _level(value)


class CategoryVerdict(BaseModel):
    """One of the categories."""

    reason: str = Field(description="Why this category fits best.")
    verdict: str = Field(description="The category's name, exactly as listed.")

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict_label(cls, value: Any) -> Any:
        return _text_label(value)


class ContinuousVerdict(BaseModel):
    """A score from 0 to 1."""

    reason: str = Field(description="Why this score.")
    score: float = Field(ge=0.0, le=1.0, description="From 0 (not at all) to 1 (fully).")

    @field_validator("score", mode="before")
    @classmethod
    def _score_number(cls, value: Any) -> Any:
        return _fraction(value)


@functools.lru_cache(maxsize=256)
def verdict_schema(base: type[BaseModel], choices: tuple[str | int, ...]) -> type[BaseModel]:
    """``base`` with its ``verdict`` narrowed to ``choices`` (a category in any case).

    Named as ``base`` (the tool the model calls, and what the toy judge and the dry run
    know); its qualified name carries a digest of the choices, so two judges with
    different labels never share a call.
    """
    labels = {str(choice).casefold(): choice for choice in choices}
    levels = all(isinstance(choice, int) for choice in choices)

    def spelled(value: Any) -> Any:
        value = _level(value) if levels else value
        if isinstance(value, str):
            return labels.get(_text_label(value).casefold(), value)
        return value

    field = base.model_fields["verdict"]
    # A Literal of values known only now: built at run time, so typed as Any.
    allowed: Any = Literal.__getitem__(choices)
    narrowed: type[BaseModel] = create_model(
        base.__name__,
        __base__=base,
        verdict=(allowed, Field(description=field.description)),
        __validators__={
            "_verdict_spelled": field_validator("verdict", mode="before")(
                lambda cls, value: spelled(value)
            )
        },
    )
    digest = hashlib.blake2b(repr(choices).encode(), digest_size=6).hexdigest()
    narrowed.__qualname__ = f"{base.__name__}_{digest}"
    return narrowed


def _system(task: str, verdict: str) -> str:
    return f"""{task}

<rules>
- Judge what the data shows against the criterion and the instructions, nothing else.
- First a short reason, in the language of the response; then {verdict}.
- {DATA_RULE}
</rules>"""


_VARIABLES = ("criterion", "question", *SAMPLE_VARIABLES)


def _spec(
    name: str, schema: type[BaseModel], task: str, verdict: str, dry: dict[str, Any]
) -> StepSpec:
    rubric = RUBRIC_VARIABLES.get(name)
    return register_step(
        StepSpec(
            name=name,
            schema=schema,
            system=_system(task, verdict),
            user="Judge the response against the criterion.\n\n{criterion}\n"
            + (f"{{{rubric}}}\n" if rubric else "")
            + "{question}{response}",
            variables=StepVariables(
                required=(), optional=(*_VARIABLES, *((rubric,) if rubric else ()))
            ),
            version=1,
            # The dry run answers with the first of the choices the step asked about.
            dry_reply=lambda intent: {
                **dry,
                **({"verdict": _level(intent.items[0])} if intent and intent.items else {}),
            },
        )
    )


PASS_FAIL_STEP = _spec(
    "judge_pass_fail",
    PassFailVerdict,
    "You judge whether a response meets a criterion. Answer PASS or FAIL.",
    "PASS only if it clearly meets the criterion, otherwise FAIL",
    {"reason": "dry run", "verdict": "PASS"},
)
SCALE_STEP = _spec(
    "judge_scale",
    ScaleVerdict,
    "You rate a response on a scale whose levels are described in <levels>.",
    "the level (its number) whose description fits the response best",
    {"reason": "dry run", "verdict": 1},
)
CATEGORY_STEP = _spec(
    "judge_category",
    CategoryVerdict,
    "You classify a response into one of the categories described in <categories>.",
    "the name of the one category that fits best, exactly as listed",
    {"reason": "dry run", "verdict": "dry run"},
)
CONTINUOUS_STEP = _spec(
    "judge_continuous",
    ContinuousVerdict,
    "You score how well a response meets a criterion, from 0 to 1, as <range> describes.",
    "the score, a number from 0 to 1",
    {"reason": "dry run", "score": 1.0},
)


def numbered_contexts(contexts: Sequence[str] | None) -> str | None:
    """Retrieved contexts as one text, numbered ``[1]``, ``[2]``... (escaped as one value)."""
    if not contexts:
        return None
    return "\n\n".join(f"[{position}] {text}" for position, text in enumerate(contexts, 1))


__all__ = [
    "CATEGORY_STEP",
    "CONTINUOUS_STEP",
    "PASS_FAIL_STEP",
    "SCALE_STEP",
    "CategoryVerdict",
    "ContinuousVerdict",
    "PassFailVerdict",
    "ScaleVerdict",
    "Vote",
    "ask_votes",
    "numbered_contexts",
    "verdict_schema",
]
