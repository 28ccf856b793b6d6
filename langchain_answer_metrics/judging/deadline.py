"""The limits every model request has: its deadline, the errors a limit raises, and the
count of HTTP requests one model request sends (a client's own retries included).

Kept apart from :mod:`.request` so that :mod:`.endpoints` (which names the failures) and
:mod:`langchain_answer_metrics.config.http_limits` (which raises them at the HTTP level)
can read them without importing the request path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = [
    "RequestDeadlineError",
    "RequestLimitError",
    "counting_http_sends",
    "note_http_send",
]


class RequestLimitError(Exception):
    """A request failed on one of the package's limits (its deadline, the size of its
    reply): the message says which. The openai SDK wraps the HTTP client's such errors
    (as their ``__cause__``); :func:`~.endpoints.error_text` shows them."""


class RequestDeadlineError(TimeoutError, RequestLimitError):
    """A request was still out at its deadline (a silent or trickling endpoint)."""


# Set while a model request is out: how many HTTP requests it has sent so far. A list,
# so that the copy of the context a sync call's worker thread runs in updates it too.
_http_sends: ContextVar[list[int] | None] = ContextVar("answer_metrics_http_sends", default=None)


def note_http_send() -> None:
    """One HTTP request went out for the current model request (the package's HTTP
    clients call this for every request they send, retries included)."""
    counter = _http_sends.get()
    if counter is not None:
        counter[0] += 1


@contextlib.contextmanager
def counting_http_sends() -> Iterator[list[int]]:
    """Count the HTTP requests sent by the code inside (``[n]``; stays 0 for a model
    whose HTTP client is not the package's)."""
    counter = [0]
    token = _http_sends.set(counter)
    try:
        yield counter
    finally:
        _http_sends.reset(token)
