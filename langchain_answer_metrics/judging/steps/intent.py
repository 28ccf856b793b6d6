"""What a step is asking its judge, for whoever answers in the model's place.

A step sets its :class:`StepIntent` while it asks (:func:`asking`): which step, and the
data it asks about, unescaped and in order. A stand-in for a model (the cost estimate's
dry run) reads it with :func:`current_intent` instead of reading the rendered prompt
back, so it answers what the step asked even under a custom prompt. A real model never
sees it. It lives in a context variable: each sample's task, and the threads a
synchronous model runs in (their context is copied), see the intent of their own step.

    >>> with asking(StepIntent(step="decompose_claims", text="Paris is in France.")):
    ...     current_intent().text
    'Paris is in France.'
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from pydantic import BaseModel, ConfigDict


class StepIntent(BaseModel):
    """One step's request, as data: the step and what it asks about.

    Example:
        >>> StepIntent(step="verify_claims", claims=("Paris is in France.",), sources=("x",))
    """

    model_config = ConfigDict(frozen=True)

    step: str
    # decompose_claims: the text broken into claims.
    text: str | None = None
    # verify_claims: the claims, in the order their verdicts are asked for, and sources.
    claims: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    # judge_aspect: the criterion and the response judged against it.
    criterion: str | None = None
    response: str | None = None
    # A registered step's own data (judging.prompt_set.register_step): the items it asks
    # one verdict each for (contexts to rank, answers to compare), in order.
    items: tuple[str, ...] = ()


_CURRENT: ContextVar[StepIntent | None] = ContextVar("answer_metrics_step_intent", default=None)


def current_intent() -> StepIntent | None:
    """The intent of the step asking now, or None outside a step."""
    return _CURRENT.get()


@contextmanager
def asking(intent: StepIntent) -> Iterator[StepIntent]:
    """Mark the requests made inside the block as ``intent``'s."""
    token = _CURRENT.set(intent)
    try:
        yield intent
    finally:
        _CURRENT.reset(token)
