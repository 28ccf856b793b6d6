"""The limits every model request has: its deadline, and the errors a limit raises.

Kept apart from :mod:`.request` so that :mod:`.endpoints` (which names the failures) and
:mod:`langchain_answer_metrics.config.http_limits` (which raises them at the HTTP level)
can read them without importing the request path.
"""

from __future__ import annotations

__all__ = ["DEFAULT_REQUEST_TIMEOUT", "RequestDeadlineError", "RequestLimitError"]

DEFAULT_REQUEST_TIMEOUT = 120.0
"""Seconds one request (one attempt) may take, first byte sent to last byte received,
unless a judge's or embedder's ``timeout`` (a config's ``timeout:``) says otherwise.

A judge's reply takes seconds, a long verification with a slow model about a minute:
twice that is room enough, and a silent endpoint is found out in two minutes instead of
never. A slow local model (a large one on CPU) needs a ``timeout:`` of its own.
"""


class RequestLimitError(Exception):
    """A request failed on one of the package's limits (its deadline, the size of its
    reply): the message says which. The openai SDK wraps the HTTP client's such errors
    (as their ``__cause__``); :func:`~.endpoints.error_text` shows them."""


class RequestDeadlineError(TimeoutError, RequestLimitError):
    """A request was still out at its deadline (a silent or trickling endpoint)."""
