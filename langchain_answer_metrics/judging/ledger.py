"""What each panel member spent on a sample, recorded as its replies come back.

A member that fails has usually spent something first (a decomposition, re-asks that
stayed malformed): that spend was paid for, so it is counted in the failure
(:class:`~langchain_answer_metrics.core.result.ModelFailure` ``usage``) and from there in the
result's usage, the run's spend and its budget. The panel opens a :func:`member_ledger`
for each member; the steps :func:`record` what each reply cost, and the request path
:func:`record_failed_request` each attempt that got no reply (a 429, a 500, a timeout):
those are requests too, counted in ``max_requests`` and the spend, at no token cost. A
member that then succeeds reports them on top of its steps' usage
(:attr:`Ledger.failed_requests`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.judging.scope import current_scope


class Ledger:
    """A running total of one member's usage on one sample; with the member's ``label``,
    also added to the run scope's :attr:`~.scope.RunScope.spent` (what the run has
    spent so far, finished samples or not: batch mode's budget reads it)."""

    def __init__(self, label: str | None = None) -> None:
        self.usage = TokenUsage()
        self.failed_requests = 0  # attempts that got no reply: in ``usage`` too
        self.label = label

    def add(self, usage: TokenUsage) -> None:
        self.usage = self.usage.add(usage)
        scope = current_scope()
        if scope is not None and self.label is not None:
            spent = scope.spent.get(self.label)
            scope.spent[self.label] = usage if spent is None else spent.add(usage)


_current: ContextVar[Ledger | None] = ContextVar("answer_metrics_member_ledger", default=None)


def record(usage: TokenUsage) -> None:
    """Add one reply's (or request's) usage to the current member's ledger, if any."""
    ledger = _current.get()
    if ledger is not None:
        ledger.add(usage)


def record_failed_request() -> None:
    """Count one attempt that failed without a reply as a request of the current member."""
    ledger = _current.get()
    if ledger is not None:
        ledger.add(TokenUsage(requests=1))
        ledger.failed_requests += 1


@contextlib.contextmanager
def member_ledger(label: str | None = None) -> Iterator[Ledger]:
    """Record what the code inside spends (in this task and the tasks it starts), as
    member ``label``."""
    ledger = Ledger(label)
    token = _current.set(ledger)
    try:
        yield ledger
    finally:
        _current.reset(token)


def usage_of(message: Any) -> TokenUsage:
    """One reply's usage: a request and its tokens, or a cache hit that cost nothing."""
    metadata = getattr(message, "usage_metadata", None) or {}
    if served_from_cache(metadata):
        return TokenUsage(cached=1)
    details = metadata.get("input_token_details") or {}
    return TokenUsage(
        input_tokens=int(metadata.get("input_tokens", 0) or 0),
        output_tokens=int(metadata.get("output_tokens", 0) or 0),
        total_tokens=int(metadata.get("total_tokens", 0) or 0),
        requests=1,
        # The provider's prompt cache (a discounted part of input_tokens), not LangChain's.
        cached_input_tokens=int(details.get("cache_read", 0) or 0),
    )


def served_from_cache(usage_metadata: Any) -> bool:
    """Whether LangChain served this reply from its LLM cache.

    A cached reply keeps the usage it had when it was sent; LangChain marks a cache hit by
    setting ``total_cost`` to 0 in it (``BaseChatModel._convert_cached_generations``),
    which a provider's own reply does not carry. tests/test_cache.py pins this.
    """
    return isinstance(usage_metadata, dict) and usage_metadata.get("total_cost") == 0
