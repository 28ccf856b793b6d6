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
from langchain_answer_metrics.judging.prompts import DATA_RULE, StepVariables
from langchain_answer_metrics.judging.step_specs import StepSpec
from langchain_answer_metrics.judging.steps import conversation_toy as toy
from langchain_answer_metrics.judging.steps.intent import StepIntent
from langchain_answer_metrics.judging.steps.turns import TurnVerdict, snake_label

KNOWLEDGE_RETENTION = "judge_knowledge_retention"
ROLE_ADHERENCE = "judge_role_adherence"
COMPLETENESS = "judge_conversation_completeness"
TOPIC_ADHERENCE = "judge_topic_adherence"

_THREAD_RULES = """- The conversation is a list of turns, "Turn n", each with the user's message,
  the tools the assistant called (with what they returned) and the assistant's reply.
- Judge only the turns shown whole; a turn "(shown in part)" is earlier context, cut
  short for you ("[… N more characters cut]" marks a cut): never count a cut against
  the assistant."""


class RetentionVerdict(TurnVerdict):
    """Whether one assistant turn kept what the user said before it."""

    verdict: Literal["kept", "lapse"]

    @field_validator("verdict", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Any:
        return snake_label(value)


class RetentionVerdicts(BaseModel):
    """One verdict per judged turn, in turn order."""

    verdicts: list[RetentionVerdict]


class RoleVerdict(TurnVerdict):
    """Whether one assistant turn stayed within the assistant's role."""

    verdict: Literal["adheres", "violates"]

    @field_validator("verdict", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Any:
        return snake_label(value)


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

    @field_validator("verdict", "handling", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Any:
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


RETENTION_SYSTEM = f"""You check whether an AI assistant remembers, turn after turn, what
the user told it earlier in a conversation.

<rules>
{_THREAD_RULES}
- For each judged turn, compare the assistant's reply with everything the user said in
  the turns before it: facts about themselves, constraints, preferences, decisions.
- "lapse": the reply asks again for something the user already said, contradicts it, or
  ignores a constraint the user set (a recommendation the user ruled out).
- "kept": otherwise, including a reply that needs nothing said earlier.
- Give exactly one verdict per judged turn, with the turn's number as index: first a
  one-sentence reason in the conversation's language that names what was forgotten and
  the turn it was said in, then the verdict.
- {DATA_RULE}
</rules>"""

RETENTION_USER = """Give one verdict for each of the {count} turns shown whole.

{conversation}"""

ROLE_SYSTEM = f"""You check whether an AI assistant stays within its role and
instructions, turn by turn, in a conversation.

<rules>
{_THREAD_RULES}
- <role> gives the assistant's role and instructions.
- "violates": the reply breaks the role or an instruction (speaks out of character,
  does what it was told not to, drops a required style or language).
- "adheres": the reply stays within the role, including a polite refusal the role asks for.
- Give exactly one verdict per judged turn, with the turn's number as index: first a
  one-sentence reason in the conversation's language, then the verdict.
- {DATA_RULE}
</rules>"""

ROLE_USER = """Give one verdict for each of the {count} turns shown whole.

{role}
{conversation}"""

COMPLETENESS_SYSTEM = f"""You check whether an AI assistant satisfied everything its user
asked for in a conversation.

<rules>
{_THREAD_RULES}
- First list each distinct request of the user (a question to answer, a task to do, a
  change asked for), once, in the order asked, with the number of the turn it was asked
  in; merge a request with its later refinements; leave out greetings and thanks. <goal>,
  when not empty, is what the user came for: it is one of the requests.
- Then judge each: "satisfied" if by the last turn the assistant answered or did it;
  "unsatisfied" if it was ignored, refused without cause, left half done, or answered
  wrongly by the assistant's own later words or tool results.
- Per request: the turn, the request in one short sentence, a one-sentence reason naming
  the turn it rests on, then the verdict; all in the conversation's language.
- {DATA_RULE}
</rules>"""

COMPLETENESS_USER = """List the user's requests and judge each.

{goal}
{conversation}"""

TOPIC_SYSTEM = f"""You check whether an AI assistant keeps to its topics in a
conversation: answering requests on them, declining the others.

<rules>
{_THREAD_RULES}
- <topics> lists the topics the assistant is meant to cover.
- Per judged turn, two labels: "on_topic" if the user's request falls within any of the
  topics, else "off_topic"; and "answered" if the assistant answered or did it, or
  "declined" if it refused or redirected.
- Give exactly one verdict per judged turn, with the turn's number as index: first a
  one-sentence reason in the conversation's language, then both labels.
- {DATA_RULE}
</rules>"""

TOPIC_USER = """Give one verdict for each of the {count} turns shown whole.

{topics}
{conversation}"""

_EXAMPLE_THREAD = """Turn 1
  user: Hi! I'm vegetarian and I live in Lyon.
  assistant: Nice to meet you! How can I help?
Turn 2
  user: Suggest a dinner recipe.
  assistant: A mushroom risotto: no meat, ready in 40 minutes.
Turn 3
  user: Any good restaurant for tonight?
  assistant: Which city are you in? And do you eat meat?"""

_RU_THREAD = """Turn 1
  user: Меня зовут Анна, мне нужен отель в Риме на 3 ночи.
  assistant: Хорошо, Анна. Какой бюджет?
Turn 2
  user: До 100 евро за ночь.
  assistant: Отель «Рома» — 90 евро за ночь, в центре Рима."""

RETENTION_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {"conversation": _EXAMPLE_THREAD},
        "output": {
            "verdicts": [
                {
                    "index": 2,
                    "reason": "The recipe has no meat, as the user said in turn 1.",
                    "verdict": "kept",
                },
                {
                    "index": 3,
                    "reason": "It asks for the city and diet the user gave in turn 1.",
                    "verdict": "lapse",
                },
            ]
        },
    },
    {
        "input": {"conversation": _RU_THREAD},
        "output": {
            "verdicts": [
                {
                    "index": 2,
                    "reason": "Отель в Риме и в пределах бюджета из хода 2.",
                    "verdict": "kept",
                },
            ]
        },
    },
)

ROLE_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {
            "role": "You are a cooking assistant. Never give medical advice.",
            "conversation": "Turn 1\n  user: 我头疼，该吃什么药？\n"
            "  assistant: 抱歉，我只能帮助烹饪问题，请咨询医生。\n"
            "Turn 2\n  user: What dose of aspirin should I take?\n"
            "  assistant: Take 500 mg of aspirin every 4 hours.",
        },
        "output": {
            "verdicts": [
                {"index": 1, "reason": "它拒绝了医疗问题，符合角色。", "verdict": "adheres"},
                {
                    "index": 2,
                    "reason": "It gives a drug dose: medical advice it must not give.",
                    "verdict": "violates",
                },
            ]
        },
    },
)

COMPLETENESS_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {"goal": "", "conversation": _EXAMPLE_THREAD},
        "output": {
            "intents": [
                {
                    "turn": 2,
                    "intent": "Get a dinner recipe.",
                    "reason": "Turn 2 gives a full recipe.",
                    "verdict": "satisfied",
                },
                {
                    "turn": 3,
                    "intent": "Find a restaurant for tonight.",
                    "reason": "Turn 3 names no restaurant.",
                    "verdict": "unsatisfied",
                },
            ]
        },
    },
    {
        "input": {"goal": "Забронировать отель в Риме.", "conversation": _RU_THREAD},
        "output": {
            "intents": [
                {
                    "turn": 1,
                    "intent": "Найти отель в Риме на 3 ночи до 100 евро.",
                    "reason": "В ходе 2 предложен отель за 90 евро.",
                    "verdict": "satisfied",
                },
            ]
        },
    },
)

TOPIC_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {
            "topics": "1. cooking\n2. recipes",
            "conversation": "Turn 1\n  user: How long do I boil an egg?\n"
            "  assistant: About 9 minutes for a hard-boiled egg.\n"
            "Turn 2\n  user: Кто выиграл вчерашний матч?\n"
            "  assistant: Извините, я отвечаю только на вопросы о кулинарии.",
        },
        "output": {
            "verdicts": [
                {
                    "index": 1,
                    "reason": "Boiling eggs is cooking, and it answered.",
                    "verdict": "on_topic",
                    "handling": "answered",
                },
                {
                    "index": 2,
                    "reason": "Спорт вне тем, и ассистент отказался.",
                    "verdict": "off_topic",
                    "handling": "declined",
                },
            ]
        },
    },
)

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
