"""Faults the local OpenAI-compatible server can inject, and policies that choose them.

Fault kinds (:data:`FAULT_KINDS`):

- ``"429"``: HTTP 429 with ``retry-after`` (and ``retry-after-ms``) = ``Fault.retry_after``.
- ``"500"``: HTTP ``Fault.status`` (default 500); with ``Fault(echo_key=True)`` the error
  message quotes the request's API key, as some providers do on a 401. A status of 400,
  401, 403 or 404 gets that error's usual body (404: code ``model_not_found``, as for a
  wrong model name).
- ``"slow"``: stall ``Fault.delay`` seconds, then answer normally.
- ``"malformed_json"``, ``"wrong_shape"``, ``"truncated"``, ``"short_verdicts"``: content
  faults (chat requests only; ``short_verdicts`` only for ClaimVerdicts).

Content faults break a reply; quirks (:mod:`.quirks`, the realistic judge mode) only change
how it is written and keep its meaning.

A policy is ``fn(info) -> Fault | kind | None``; :func:`random_faults` is deterministic per
(seed, request body, attempt), so reruns fault the same requests however they interleave.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import get_args

from langchain_answer_metrics.testing.requests import FaultKind, RequestInfo

FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)
_TRANSPORT_FAULTS = frozenset({"429", "500", "slow"})


@dataclass(frozen=True)
class Fault:
    """A fault to inject into one request; see the module docstring for the kinds."""

    kind: FaultKind
    retry_after: float = 0.0
    """``"429"``: seconds sent in ``retry-after`` (0 makes the client use its own backoff)."""
    delay: float = 2.0
    """``"slow"``: seconds to stall before answering."""
    status: int = 500
    """``"500"``: the HTTP status to send."""
    echo_key: bool = False
    """``"500"``: quote the request's API key (its bearer token) in the error message."""

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {FAULT_KINDS}")


FaultLike = Fault | FaultKind
FaultPolicy = Callable[[RequestInfo], FaultLike | None]
FaultSpec = FaultPolicy | Sequence[FaultLike | None] | FaultLike | None


def as_fault(value: FaultLike | None) -> Fault | None:
    """Normalise a kind string to a :class:`Fault` with default settings."""
    if value is None or isinstance(value, Fault):
        return value
    return Fault(kind=value)


def fault_applies(fault: Fault, info: RequestInfo) -> bool:
    """Whether ``fault`` can be applied to this request (see the module docstring)."""
    if fault.kind in _TRANSPORT_FAULTS:
        return True
    if info.mode == "embeddings":
        return False
    if fault.kind == "short_verdicts":
        return info.schema_name == "ClaimVerdicts"
    return True


class FaultQueue:
    """A fault policy that hands out a list of faults one per request, then none."""

    def __init__(self, items: Sequence[FaultLike | None]) -> None:
        self._items = [as_fault(item) for item in items]
        self._next = 0
        self._lock = threading.Lock()

    def __call__(self, info: RequestInfo) -> Fault | None:
        with self._lock:
            if self._next >= len(self._items):
                return None
            self._next += 1
            return self._items[self._next - 1]

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._items) - self._next


def on_attempts(fault: FaultLike, attempts: Sequence[int] = (0,)) -> FaultPolicy:
    """A policy applying ``fault`` to the given attempt numbers only.

    ``on_attempts("429")`` rate-limits every first attempt, so one client retry succeeds.
    """
    chosen = as_fault(fault)
    wanted = frozenset(attempts)
    return lambda info: chosen if info.attempt in wanted else None


def random_faults(
    rate: float = 0.2,
    kinds: Sequence[FaultKind] = FAULT_KINDS,
    seed: int = 0,
    *,
    retry_after: float = 0.0,
    delay: float = 2.0,
    max_attempt: int | None = None,
) -> FaultPolicy:
    """A seeded policy faulting about ``rate`` of requests with a kind from ``kinds``.

    Deterministic per (seed, request body, attempt), see the module docstring. Only kinds
    that apply to a request are drawn from, so ``short_verdicts`` hits ClaimVerdicts
    requests only. With ``max_attempt=k``, attempts after ``k`` are never faulted, which
    guarantees a client with more than ``k`` retries eventually succeeds.
    """
    if not 0.0 <= rate <= 1.0:
        raise ValueError("rate must be between 0 and 1")
    faults = [Fault(kind=kind, retry_after=retry_after, delay=delay) for kind in kinds]

    def policy(info: RequestInfo) -> Fault | None:
        if max_attempt is not None and info.attempt > max_attempt:
            return None
        digest = hashlib.blake2b(
            f"{seed}|{info.body_hash}|{info.attempt}".encode(), digest_size=16
        ).digest()
        if int.from_bytes(digest[:8], "big") / 2.0**64 >= rate:
            return None
        candidates = [fault for fault in faults if fault_applies(fault, info)]
        if not candidates:
            return None
        return candidates[int.from_bytes(digest[8:], "big") % len(candidates)]

    return policy


def as_policy(spec: FaultSpec) -> FaultPolicy | None:
    if spec is None:
        return None
    if isinstance(spec, (Fault, str)):
        always = as_fault(spec)
        return lambda info: always
    if callable(spec):
        return spec
    return FaultQueue(spec)
