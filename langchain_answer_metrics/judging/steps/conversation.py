"""The conversation steps: a thread (+ the role, the topics, the intents) -> one verdict
per turn or per intent, in ONE request per thread, reason first.

- ``judge_knowledge_retention``: per assistant turn after the first, "kept" or "lapse"
  (asked again for, or contradicted, what the user said earlier).
- ``judge_role_adherence``: per assistant turn, "adheres" or "violates" the role.
- ``judge_conversation_completeness``: the user's intents across the thread (the goal
  among them), each with the turn it was asked in, then "satisfied" or "unsatisfied";
  extracted and judged in the same request.
- ``judge_topic_adherence``: per assistant turn, whether the user's request was
  "on_topic" or "off_topic" for the topics, and whether the assistant "answered" or
  "declined" it.

The thread arrives as numbered turn blocks (:mod:`~..conversation_text`), tagged and
escaped like any judged text; the turns to judge are the ones shown whole. Each step is
registered with :func:`~langchain_answer_metrics.judging.prompt_set.register_step`, so
custom prompts and examples are checked against it, the cost estimate's dry run answers
it and the toy judge answers it with the rule declared beside it
(:mod:`.conversation_toy`). A step knows nothing of the metrics that use it.

    >>> RetentionVerdict.model_validate({"index": 2, "reason": "r", "verdict": "Lapse."}).verdict
    'lapse'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from langchain_answer_metrics.judging.prompt_set import register_step
from langchain_answer_metrics.judging.prompts import StepVariables
from langchain_answer_metrics.judging.step_specs import StepSpec
from langchain_answer_metrics.judging.steps import conversation_toy as toy
from langchain_answer_metrics.judging.steps.conversation_prompts import (
    COMPLETENESS_EXAMPLES,
    COMPLETENESS_SYSTEM,
    COMPLETENESS_USER,
    RETENTION_EXAMPLES,
    RETENTION_SYSTEM,
    RETENTION_USER,
    ROLE_EXAMPLES,
    ROLE_SYSTEM,
    ROLE_USER,
    TOPIC_EXAMPLES,
    TOPIC_SYSTEM,
    TOPIC_USER,
)
from langchain_answer_metrics.judging.steps.intent import StepIntent
from langchain_answer_metrics.judging.steps.turns import TurnVerdict, snake_label

KNOWLEDGE_RETENTION = "judge_knowledge_retention"
ROLE_ADHERENCE = "judge_role_adherence"
COMPLETENESS = "judge_conversation_completeness"
TOPIC_ADHERENCE = "judge_topic_adherence"


class RetentionVerdict(TurnVerdict):
    """Whether one assistant turn kept what the user said before it."""

    verdict: Literal["kept", "lapse"]


class RetentionVerdicts(BaseModel):
    """One verdict per judged turn, in turn order."""

    verdicts: list[RetentionVerdict]


class RoleVerdict(TurnVerdict):
    """Whether one assistant turn stayed within the assistant's role."""

    verdict: Literal["adheres", "violates"]


class RoleVerdicts(BaseModel):
    """One verdict per judged turn, in turn order."""

    verdicts: list[RoleVerdict]


class IntentVerdict(BaseModel):
    """One thing the user wanted, the turn it was asked in, and whether it was satisfied
    by the end of the conversation (reason before verdict)."""

    turn: int = Field(description="The number of the turn the user asked it in.")
    intent: str = Field(description="What the user wanted, in one short sentence.")
    reason: str = Field(description="One sentence on why, naming the turn it rests on.")
    verdict: Literal["satisfied", "unsatisfied"]

    @field_validator("verdict", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Any:
        return snake_label(value)


class IntentVerdicts(BaseModel):
    """The user's intents across the conversation, in the order asked, each judged."""

    intents: list[IntentVerdict]


class TopicVerdict(TurnVerdict):
    """Whether one turn's request was on topic, and whether the assistant answered it."""

    verdict: Literal["on_topic", "off_topic"]
    handling: Literal["answered", "declined"]

    @field_validator("handling", mode="before")
    @classmethod
    def _handling_label(cls, value: Any) -> Any:
        return snake_label(value)


class TopicVerdicts(BaseModel):
    """One verdict per judged turn, in turn order."""

    verdicts: list[TopicVerdict]


def _per_item(
    labels: dict[str, Any],
) -> Callable[[StepIntent | None], dict[str, Any]]:
    """The cost estimate's stand-in reply: ``labels`` for every item asked about."""

    def reply(intent: StepIntent | None) -> dict[str, Any]:
        numbers = intent.items if intent is not None else ("1",)
        return {
            "verdicts": [
                {"index": int(number), "reason": "dry run", **labels} for number in numbers
            ]
        }

    return reply


def _dry_intents(intent: StepIntent | None) -> dict[str, Any]:
    """One satisfied intent per turn shown (the estimate counts requests, not intents)."""
    numbers = intent.items if intent is not None else ("1",)
    return {
        "intents": [
            {"turn": int(number), "intent": "dry run", "reason": "dry run", "verdict": "satisfied"}
            for number in numbers
        ]
    }


_CONVERSATION = StepVariables(required=("conversation",), optional=("count",))

register_step(
    StepSpec(
        name=KNOWLEDGE_RETENTION,
        schema=RetentionVerdicts,
        system=RETENTION_SYSTEM,
        user=RETENTION_USER,
        variables=_CONVERSATION,
        examples=RETENTION_EXAMPLES,
        dry_reply=_per_item({"verdict": "kept"}),
        toy_reply=toy.retention,
        toy_marks=frozenset({"conversation"}),
    )
)
register_step(
    StepSpec(
        name=ROLE_ADHERENCE,
        schema=RoleVerdicts,
        system=ROLE_SYSTEM,
        user=ROLE_USER,
        variables=StepVariables(required=("role", "conversation"), optional=("count",)),
        examples=ROLE_EXAMPLES,
        dry_reply=_per_item({"verdict": "adheres"}),
        toy_reply=toy.role,
    )
)
register_step(
    StepSpec(
        name=COMPLETENESS,
        schema=IntentVerdicts,
        system=COMPLETENESS_SYSTEM,
        user=COMPLETENESS_USER,
        variables=StepVariables(required=("goal", "conversation")),
        examples=COMPLETENESS_EXAMPLES,
        dry_reply=_dry_intents,
        toy_reply=toy.completeness,
    )
)
register_step(
    StepSpec(
        name=TOPIC_ADHERENCE,
        schema=TopicVerdicts,
        system=TOPIC_SYSTEM,
        user=TOPIC_USER,
        variables=StepVariables(required=("topics", "conversation"), optional=("count",)),
        examples=TOPIC_EXAMPLES,
        dry_reply=_per_item({"verdict": "on_topic", "handling": "answered"}),
        toy_reply=toy.topics,
    )
)
