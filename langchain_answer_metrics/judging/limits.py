"""The package's default limits, in one home. Every face (the runner and its
``RunOptions``, the command line, Ray, the estimate, ``calibrate`` and ``align``) and every
layer below takes its default from here, so a default changes in one line:

- model requests in flight at once (``max_concurrency``), and simulated conversations;
- attempts at one request and their backoff (``RetryPolicy``, a config's ``retry:``, the
  openai client's own retries, a batch line's attempts);
- re-asks after an unusable reply (``Judge.max_reasks``);
- failed attempts in a row at one endpoint that stop a run (the circuit breaker);
- the deadline of one request (a judge's or embedder's ``timeout``).

Spending limits (``budget``, ``max_requests``) have no default: nothing is capped unless
asked. They are fields of :class:`~langchain_answer_metrics.run.options.RunOptions`, and
``RunLimits`` (the run's limits module) counts a run against them.

    >>> DEFAULT_MAX_CONCURRENCY, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_REASKS
    (16, 4, 2)
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_BACKOFF_MULTIPLIER",
    "DEFAULT_CLIENT_RETRIES",
    "DEFAULT_INITIAL_DELAY",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_MAX_CONSECUTIVE_FAILURES",
    "DEFAULT_MAX_DELAY",
    "DEFAULT_MAX_REASKS",
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_SCENARIOS_AT_ONCE",
]

DEFAULT_MAX_CONCURRENCY = 16
"""Model requests in flight at once: the runner's ``max_concurrency``, the sync surface's
thread pool when no budget is given, the estimate's, Ray's, calibrate's and align's."""

DEFAULT_SCENARIOS_AT_ONCE = 4
"""Simulated conversations run at once (``simulate``): each drives the user's own app,
which may not bear the model requests' concurrency."""

DEFAULT_MAX_ATTEMPTS = 4
"""Attempts at one request, the first included, under a retry policy."""

DEFAULT_INITIAL_DELAY = 2.0
"""Seconds before the first retry; each next waits ``DEFAULT_BACKOFF_MULTIPLIER`` times
longer, up to ``DEFAULT_MAX_DELAY``."""

DEFAULT_MAX_DELAY = 30.0

DEFAULT_BACKOFF_MULTIPLIER = 2.0

DEFAULT_CLIENT_RETRIES = 2
"""The openai client's own retries when a model says nothing (its documented default):
a batch line's attempts are these plus one, unless the judge has a retry policy."""

DEFAULT_MAX_REASKS = 2
"""Times a judge is asked again after a reply that cannot be used (not the schema, a
verdict missing)."""

DEFAULT_MAX_CONSECUTIVE_FAILURES = 20
"""Failed attempts in a row at one endpoint (retries count) that stop a run, unless told
otherwise."""

DEFAULT_REQUEST_TIMEOUT = 120.0
"""Seconds one request (one attempt) may take, first byte sent to last byte received,
unless a judge's or embedder's ``timeout`` (a config's ``timeout:``) says otherwise.

A judge's reply takes seconds, a long verification with a slow model about a minute:
twice that is room enough, and a silent endpoint is found out in two minutes instead of
never. A slow local model (a large one on CPU) needs a ``timeout:`` of its own.
"""
