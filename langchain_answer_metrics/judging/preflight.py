"""A check of each judge before a large run: one cheap request, the run's own way.

A judge that cannot produce the structured output (a model without tool calling asked
through ``function_calling``, a wrong model name, a revoked key) fails every sample of a
run. :func:`check_judges` finds it first: one short AspectVerdict request per judge,
through the judge's own structured-output method, without re-asks, and says what to try
for each judge whose reply was unusable or whose request was refused (400, 401, 403,
404). An endpoint that is down or overloaded is left to the run's retries and breaker.
The CLI runs it before scoring more than :data:`PREFLIGHT_ABOVE` samples
(``--no-preflight`` turns it off).

    >>> checked = check_judges_sync([judge_a, judge_b])  # doctest: +SKIP
    >>> checked.problems  # one line per judge that cannot answer, [] when all can
    []
    >>> checked.usage["judge-a"].requests  # what the check spent, counted in the run's spend
    1
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import NamedTuple

from langchain_core.messages import BaseMessage

from langchain_answer_metrics.core.redaction import redact
from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.judging.endpoints import error_text
from langchain_answer_metrics.judging.errors import StructuredOutputError
from langchain_answer_metrics.judging.judge_health import is_permanent
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.ledger import member_ledger
from langchain_answer_metrics.judging.prompts import ASPECT_SYSTEM, ASPECT_USER, chat_messages, tag
from langchain_answer_metrics.judging.schemas import AspectVerdict
from langchain_answer_metrics.judging.structured import ask_structured
from langchain_answer_metrics.judging.sync import run_sync

__all__ = ["PREFLIGHT_ABOVE", "JudgeChecks", "check_judges", "check_judges_sync"]

PREFLIGHT_ABOVE = 20
"""Runs of more samples than this check their judges first (the CLI's default)."""


def _probe() -> list[BaseMessage]:
    """A short judging request: a few dozen tokens in, one small verdict out."""
    user = ASPECT_USER.format(
        criterion=tag("criterion", "The response gives a year."),
        question="",
        response=tag("response", "The Eiffel Tower was completed in 1889."),
    )
    return chat_messages(ASPECT_SYSTEM, user)


class JudgeChecks(NamedTuple):
    """What the check found: a line per judge that cannot answer, and what each judge's
    check spent (by label: its request, tokens, and attempts that got no reply)."""

    problems: list[str]
    usage: dict[str, TokenUsage]


async def _check(judge: Judge) -> tuple[str, TokenUsage]:
    with member_ledger() as ledger:  # the check's requests are the run's spend too
        problem = await _ask(judge)
    return problem, ledger.usage


async def _ask(judge: Judge) -> str:
    once = judge.model_copy(update={"max_reasks": 0})
    try:
        await ask_structured(once, schema=AspectVerdict, messages=_probe())
    except StructuredOutputError as error:
        return redact(f"{judge.label}: cannot produce the structured output: {error}")
    except Exception as error:
        if not is_permanent(error):
            # An endpoint down or overloaded: the run's retries and circuit breaker decide.
            return ""
        return redact(
            f"{judge.label}: the check request was refused: {error_text(error)}; "
            "check its model name, key and access"
        )
    return ""


async def check_judges(judges: Sequence[Judge]) -> JudgeChecks:
    """One line per judge that could not answer a short judging request (none when all
    can), and what each judge's check spent.

    Each judge gets one request (no re-ask), through its own structured-output method;
    the judges are checked at once.

    Example:
        >>> (await check_judges([Judge(model=llm)])).problems  # doctest: +SKIP
        []
    """
    results = await asyncio.gather(*(_check(judge) for judge in judges))
    return JudgeChecks(
        problems=[problem for problem, _ in results if problem],
        usage={judge.label: usage for judge, (_, usage) in zip(judges, results)},
    )


def check_judges_sync(judges: Sequence[Judge]) -> JudgeChecks:
    """:func:`check_judges`, from sync code (the CLI)."""
    return run_sync(check_judges(judges))
