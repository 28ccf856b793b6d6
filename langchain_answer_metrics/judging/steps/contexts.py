"""The context steps: the retrieved contexts, in rank order -> one verdict each, in ONE
request for all the contexts of a sample.

- ``judge_context_usefulness``: question + reference + numbered contexts -> per context,
  a reason and then "useful" or "not_useful" (useful for answering the question, as the
  reference answers it). ContextPrecision's step.
- ``judge_context_relevance``: query (the question the contexts were retrieved for) +
  numbered contexts -> per context, a reason and then "relevant" or "not_relevant"; no
  reference. ContextRelevance's step. Its question is tagged ``<query>``: the tag tells
  its requests apart from a claim verification's (``<question>`` + ``<source>``).

A reply with more or fewer verdicts than contexts is re-asked, never trimmed; one with a
verdict per context but numbered wrong (0-based, all 1, none) is taken in order and says
so, as :func:`~.claims.verify_claims` does (the same
:func:`~langchain_answer_metrics.judging.numbered.count_check` and
:func:`~langchain_answer_metrics.judging.numbered.in_item_order`). The steps are registered with
:func:`~langchain_answer_metrics.judging.prompt_set.register_step`, so custom prompts
and examples are checked against them and the cost estimate's dry run answers them.

    >>> judgement = await judge_context_usefulness(
    ...     judge, ["Paris is the capital of France.", "Lyon has a Roman theatre."],
    ...     question="What is the capital of France?", reference="Paris.")
    >>> [verdict.verdict for verdict in judgement.verdicts]
    ['useful', 'not_useful']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ConfigDict, Field, field_validator

from langchain_answer_metrics.core.result import DetailsModel, TokenUsage
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.numbered import count_check, in_item_order, item_numbers
from langchain_answer_metrics.judging.prompt_set import (
    DEFAULT_STEP_PROMPTS,
    StepPrompt,
    register_step,
)
from langchain_answer_metrics.judging.prompts import DATA_RULE, StepVariables, unescape_data
from langchain_answer_metrics.judging.step_specs import StepSpec
from langchain_answer_metrics.judging.steps.intent import StepIntent, asking
from langchain_answer_metrics.judging.structured import ask_structured
from langchain_answer_metrics.judging.tracing import step_run

CONTEXT_USEFULNESS = "judge_context_usefulness"
CONTEXT_RELEVANCE = "judge_context_relevance"

Usefulness = Literal["useful", "not_useful"]
Relevance = Literal["relevant", "not_relevant"]


def _context_label(value: Any) -> Any:
    """ "Useful", " not useful.", "Not-Relevant" as the schemas spell them; others as given."""
    if not isinstance(value, str):
        return value
    label = value.strip()
    label = label[:-1].rstrip() if label.endswith(".") else label
    return "_".join(label.lower().replace("-", " ").split())


def _index_asked_for(schema: dict[str, Any]) -> None:
    # Shown to the model as a required integer; a reply without it is still read.
    schema["properties"]["index"] = {
        "type": "integer",
        "title": "Index",
        "description": "The context's number (1-based).",
    }
    schema["required"] = ["index", *schema.get("required", [])]


class ContextVerdict(BaseModel):
    """The verdict on one numbered context."""

    model_config = ConfigDict(json_schema_extra=_index_asked_for)

    index: int | None = Field(default=None, description="The context's number (1-based).")
    reason: str = Field(description="One sentence on why, in the question's language.")
    verdict: Usefulness

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict_label(cls, value: Any) -> Any:
        return _context_label(value)


class ContextVerdicts(BaseModel):
    """One verdict per context, in context order."""

    verdicts: list[ContextVerdict]


class ContextRelevanceVerdict(BaseModel):
    """The relevance of one numbered context to the query."""

    model_config = ConfigDict(json_schema_extra=_index_asked_for)

    index: int | None = Field(default=None, description="The context's number (1-based).")
    reason: str = Field(description="One sentence on why, in the query's language.")
    verdict: Relevance

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict_label(cls, value: Any) -> Any:
        return _context_label(value)


class ContextRelevanceVerdicts(BaseModel):
    """One relevance verdict per context, in context order."""

    verdicts: list[ContextRelevanceVerdict]


class ContextVerdictDetail(DetailsModel):
    """One retrieved context, its rank (1 = retrieved first) and the judge's verdict."""

    absent_when_none = frozenset({"taken_in_order"})
    rank: int
    context: str
    verdict: Usefulness | Relevance
    reason: str
    taken_in_order: bool | None = None  # True: the judge's numbering was wrong


class ContextJudgement(BaseModel):
    verdicts: list[ContextVerdictDetail]
    usage: TokenUsage


CONTEXT_SYSTEM = f"""You judge, one by one, the contexts a search retrieved for a question.

<rules>
- The contexts are numbered <context index="i"> inside <source>, in the order retrieved;
  a <source> without <context> tags is a single context, number 1.
- Give exactly one verdict for every context, in order, with the context's number as index.
- Per context: first a one-sentence reason (in the question's language), then the verdict.
- "useful": the context states information that helps reach the reference answer to the
  question (any part of it), in any words or language.
- "not_useful": the context does not help reach that answer (off topic, or on topic but
  without any of the answer's facts).
- Judge each context on its own; its rank does not change its verdict.
- {DATA_RULE}
</rules>"""

CONTEXT_USER = """Give one verdict for each of the {count} contexts.

{question}{reference}
{source}"""

CONTEXT_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {
            "question": "When was the Eiffel Tower built?",
            "reference": "It was built from 1887 to 1889.",
            "source": [
                "Gustave Eiffel's company designed the tower for the 1889 World's Fair.",
                "Эйфелеву башню строили с 1887 по 1889 год.",
                "巴黎有许多博物馆。",
            ],
        },
        "output": {
            "verdicts": [
                {
                    "index": 1,
                    "reason": "It gives 1889, the year it was finished.",
                    "verdict": "useful",
                },
                {
                    "index": 2,
                    "reason": "It states the building years, 1887 to 1889.",
                    "verdict": "useful",
                },
                {
                    "index": 3,
                    "reason": "It is about museums, not the tower.",
                    "verdict": "not_useful",
                },
            ]
        },
    },
    {
        "input": {
            "question": "Какая река самая длинная в Европе?",
            "reference": "Волга.",
            "source": ["长江是亚洲最长的河流。", "Волга — самая длинная река Европы, 3530 км."],
        },
        "output": {
            "verdicts": [
                {
                    "index": 1,
                    "reason": "Контекст о реке в Азии, а не в Европе.",
                    "verdict": "not_useful",
                },
                {"index": 2, "reason": "Контекст прямо называет Волгу.", "verdict": "useful"},
            ]
        },
    },
)


def _dry_reply(verdict: str) -> Callable[[StepIntent | None], dict[str, Any]]:
    """The cost estimate's stand-in reply: ``verdict`` for every context asked about."""

    def reply(intent: StepIntent | None) -> dict[str, Any]:
        contexts = intent.items if intent is not None else ()
        return {
            "verdicts": [
                {"index": index, "reason": "dry run", "verdict": verdict}
                for index in range(1, len(contexts) + 1)
            ]
        }

    return reply


CONTEXT_USEFULNESS_STEP = register_step(
    StepSpec(
        name=CONTEXT_USEFULNESS,
        schema=ContextVerdicts,
        system=CONTEXT_SYSTEM,
        user=CONTEXT_USER,
        # question: what was searched for; reference: its answer; source: the contexts,
        # numbered; count: how many there are (a number, not judged text).
        variables=StepVariables(required=("question", "reference", "source"), optional=("count",)),
        examples=CONTEXT_EXAMPLES,
        version=1,
        dry_reply=_dry_reply("useful"),
    )
)


RELEVANCE_SYSTEM = f"""You judge, one by one, whether the contexts a search retrieved are
relevant to its query (the user's question).

<rules>
- The contexts are numbered <context index="i"> inside <source>, in the order retrieved;
  a <source> without <context> tags is a single context, number 1.
- Give exactly one verdict for every context, in order, with the context's number as index.
- Per context: first a one-sentence reason (in the query's language), then the verdict.
- "relevant": the context is about what the query asks and holds information that could
  help answer it, in any words or language; it need not answer it all.
- "not_relevant": the context is off topic, or only shares words with the query.
- Do not judge whether the context is true; judge each on its own, whatever its rank.
- {DATA_RULE}
</rules>"""

RELEVANCE_USER = """Give one verdict for each of the {count} contexts.

{query}
{source}"""

RELEVANCE_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {
            "query": "How tall is the Eiffel Tower?",
            "source": [
                "The Eiffel Tower is 330 metres tall.",
                "Эйфелева башня — самое посещаемое платное сооружение мира.",
                "埃菲尔铁塔高330米。",
            ],
        },
        "output": {
            "verdicts": [
                {"index": 1, "reason": "It gives the tower's height.", "verdict": "relevant"},
                {
                    "index": 2,
                    "reason": "It is about visitors, not height.",
                    "verdict": "not_relevant",
                },
                {"index": 3, "reason": "It gives the height, 330 m.", "verdict": "relevant"},
            ]
        },
    },
    {
        "input": {
            "query": "Кто написал «Войну и мир»?",
            "source": ["«Война и мир» — роман Льва Толстого.", "长江是亚洲最长的河流。"],
        },
        "output": {
            "verdicts": [
                {"index": 1, "reason": "Контекст называет автора романа.", "verdict": "relevant"},
                {
                    "index": 2,
                    "reason": "Контекст о реке, а не о романе.",
                    "verdict": "not_relevant",
                },
            ]
        },
    },
)


CONTEXT_RELEVANCE_STEP = register_step(
    StepSpec(
        name=CONTEXT_RELEVANCE,
        schema=ContextRelevanceVerdicts,
        system=RELEVANCE_SYSTEM,
        user=RELEVANCE_USER,
        # query: the question the contexts were retrieved for; source: the contexts,
        # numbered; count: how many there are.
        variables=StepVariables(required=("query", "source"), optional=("count",)),
        examples=RELEVANCE_EXAMPLES,
        version=1,
        dry_reply=_dry_reply("relevant"),
    )
)


async def judge_context_usefulness(
    judge: Judge,
    contexts: Sequence[str],
    *,
    question: str | None,
    reference: str,
    prompt: StepPrompt | None = None,
    config: RunnableConfig | None = None,
) -> ContextJudgement:
    """One verdict per context ("useful" or "not_useful", with a reason), in rank order.

    All the contexts go in one request; a reply with a verdict count other than the
    number of contexts is re-asked. Reasons are read back from the prompt's escaping.
    """
    values = {"question": question, "reference": reference}
    return await _judged(
        judge, CONTEXT_USEFULNESS, ContextVerdicts, contexts, values, reference, prompt, config
    )


async def judge_context_relevance(
    judge: Judge,
    contexts: Sequence[str],
    *,
    query: str,
    prompt: StepPrompt | None = None,
    config: RunnableConfig | None = None,
) -> ContextJudgement:
    """One verdict per context ("relevant" or "not_relevant" to ``query``, with a reason),
    in rank order, in one request; re-asked as :func:`judge_context_usefulness` is."""
    return await _judged(
        judge,
        CONTEXT_RELEVANCE,
        ContextRelevanceVerdicts,
        contexts,
        {"query": query},
        query,
        prompt,
        config,
    )


async def _judged(
    judge: Judge,
    step: str,
    schema: type[ContextVerdicts] | type[ContextRelevanceVerdicts],
    contexts: Sequence[str],
    values: dict[str, str | None],
    text: str,
    prompt: StepPrompt | None,
    config: RunnableConfig | None,
) -> ContextJudgement:
    """Ask ``step`` for a verdict per context with ``values`` beside the contexts."""
    contexts = list(contexts)
    if not contexts:
        return ContextJudgement(verdicts=[], usage=TokenUsage())
    prompt = prompt or DEFAULT_STEP_PROMPTS[step]
    messages = prompt.messages(step, {**values, "source": contexts, "count": len(contexts)})

    async def work(child: RunnableConfig) -> ContextJudgement:
        with asking(StepIntent(step=step, text=text, items=tuple(contexts))):
            reply = await ask_structured(
                judge,
                schema=schema,
                messages=messages,
                check=count_check(item_numbers(len(contexts)), "context"),
                config=child,
            )
        given: Sequence[ContextVerdict | ContextRelevanceVerdict] = reply.parsed.verdicts
        in_order, taken_in_order = in_item_order(given, item_numbers(len(contexts)))
        verdicts = [
            ContextVerdictDetail(
                rank=rank,
                context=context,
                verdict=verdict.verdict,
                reason=unescape_data(verdict.reason),
                taken_in_order=True if taken_in_order else None,
            )
            for rank, (context, verdict) in enumerate(zip(contexts, in_order), 1)
        ]
        return ContextJudgement(verdicts=verdicts, usage=reply.usage)

    return await step_run(step, {**values, "contexts": contexts}, work, config)
