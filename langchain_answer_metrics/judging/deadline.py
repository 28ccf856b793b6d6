"""The limits every model request has: its deadline, the errors a limit raises, and the
count of HTTP requests one model request sends (a client's own retries included), and the
end of that request, after which the package's HTTP clients send nothing more for it.

Kept apart from :mod:`.request` so that :mod:`.endpoints` (which names the failures) and
:mod:`langchain_answer_metrics.config.http_limits` (which raises them at the HTTP level)
can read them without importing the request path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = [
    "HttpSends",
    "RequestAbandoned",
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


class RequestAbandoned(BaseException):
    """Raised by the package's HTTP clients, in place of sending, for a model request that
    has already ended: its run returned (stopped, interrupted) or it passed its deadline,
    while its sync call still ran in a worker thread (a client's retry, or a call that
    started late). A ``BaseException``, so that the openai client does not retry it; it
    ends that call, whose result nobody reads any more."""


class HttpSends:
    """The HTTP requests one model request has sent so far (``count``), and whether that
    request has ended (``ended``: no more may go out for it)."""

    __slots__ = ("count", "ended")

    def __init__(self) -> None:
        self.count = 0
        self.ended = False


# Set while a model request is out. The copy of the context a sync call's worker thread
# runs in holds the same object, so the thread counts into it and sees it end.
_http_sends: ContextVar[HttpSends | None] = ContextVar("answer_metrics_http_sends", default=None)


def note_http_send() -> None:
    """One HTTP request goes out for the current model request (the package's HTTP
    clients call this before every request they send, retries included).

    Raises:
        RequestAbandoned: that model request has ended; nothing is to be sent for it.
    """
    sends = _http_sends.get()
    if sends is not None:
        if sends.ended:
            raise RequestAbandoned("the model request this HTTP request was for has ended")
        sends.count += 1


@contextlib.contextmanager
def counting_http_sends() -> Iterator[HttpSends]:
    """Count the HTTP requests sent by the code inside (``.count``; stays 0 for a model
    whose HTTP client is not the package's); once the code inside is left, however, the
    package's clients send nothing more for it (:class:`RequestAbandoned`)."""
    sends = HttpSends()
    token = _http_sends.set(sends)
    try:
        yield sends
    finally:
        sends.ended = True
        _http_sends.reset(token)
