"""Every example in the README and on the documentation site runs, as a reader would run it.

Per page (README.md, then every docs/**/*.md), in page order, in a fresh working
directory:

- a ```python block is executed in the page's one namespace (a reader's session);
- a ```bash / ```console / ```sh block is run through ``bash -e`` in a subprocess
  (``$ `` prompts and output lines of a console block are not commands); its
  ``answer-metrics`` is forked from one interpreter that has imported the command
  (:func:`warm_shell_bin`), with the block's arguments, streams, directory and
  environment;
- a block right after ``<!-- file: NAME -->`` is written to NAME (the files a page tells
  the reader to save: a dataset, a models.yaml);
- a python or command-line block right after ``<!-- not-run: REASON -->`` is not run, and
  REASON must say why. Any other block (text, yaml, json, output) is data, not code.

The judge is the toy judge the getting-started page documents: the local OpenAI-compatible
server, reached through ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` exactly as a reader sets
them, so the examples run unchanged and offline. The pages name its documented address,
``http://127.0.0.1:8011`` (``answer-metrics toy-judge --port 8011``); the tests serve it on
a free port instead, so that address is replaced by the server's in every block, and
nowhere else is a block changed. LangSmith stays offline. Each page starts with the HTTP
clients a new session has (see :func:`fresh_openai_clients`).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PYTHON = {"python", "py", "pycon"}
SHELL = {"bash", "console", "sh", "shell"}
FENCE = re.compile(
    r"(?P<marks>(?:<!-- (?:not-run|file): [^\n]*-->\n)*)"
    r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]*)[^\n]*\n(?P<code>.*?)^(?P=indent)```[ \t]*$",
    re.S | re.M,
)
MARK = re.compile(r"<!-- (?P<kind>not-run|file): (?P<value>.*?) ?-->")
TOY_JUDGE_URL = "http://127.0.0.1:8011"  # where docs/getting-started.md serves the toy judge
COMMAND_TIMEOUT = 120

# What some pages must print (the toy judge's verdicts are deterministic): the comments
# these pages show next to their code, checked so they stay true.
EXPECTED: dict[str, list[str]] = {
    "README.md": [
        "0.5 False\n1 of 2 response claims are supported by the retrieved contexts; "
        "unsupported: “It is the tallest tower in the world.” (neutral)\n0.0\n",
        "faithfulness 0.5 1 of 2 response claims",
        "has_date 1.0 PASS:",
        "faithfulness by model: gpt-4o-mini",
    ],
    "docs/getting-started.md": [
        "0.5 moderate\n1 of 2 response claims are supported by the retrieved contexts; "
        "unsupported: “It is the tallest tower in the world.” (neutral)\n",
        "semantic_similarity by model: multilingual-e5-small",
    ],
    "docs/langsmith.md": [
        "faithfulness 0.5 1 of 2 response claims are supported by the retrieved contexts; "
        "unsupported: “It is the tallest tower in the world.” (neutral)\n",
        "has_date 1.0 PASS:",
        "faithfulness: mean 0.500 (95% CI 0.500–0.500), pass rate 0% at >= 0.80, 2 scored\n",
        "\nfaithfulness 0.5\n",
    ],
    "docs/chains-and-agents.md": [
        "0.5 False\n{'faithfulness': 0.5, 'has_date': 1.0, 'concise': 1.0}\n1.0\n"
        "{'answer': 'The Eiffel Tower was built in 1889.', 'flagged': False}\n1.0\n1.0\n1.0\n",
    ],
    "docs/batch.md": ["0.5 0.0\n", "$0.000"],
    "docs/agents.md": [
        "agent_goal_accuracy: field 'messages[1].tool_calls[0].function.name' must be",
        "4 It is sunny and 24 °C in Paris.\n1.0\n0.6666666666666666\n1.0 PASS: Step 4:",
        "0.0 FAIL: Step 4: the final answer reports",
        "PASS (3 PASS / 0 FAIL): ",
        "0.0 FAIL: Step 4 repeats the call of step 2: get_weather with the same arguments.\n"
        "4\n0.75\n1.0\n402 200 200 (39, 364)\nTrue\n"
        "40\nassistant: The cheapest flight is AF 12 at 90 EUR.\n1.0\n4\n"
        "{'trajectory_match': 1.0, 'agent_goal_accuracy': 1.0, 'trajectory_judge': 1.0}\n"
        "{'trajectory_match': 0.0, 'agent_goal_accuracy': 1.0, 'trajectory_judge': 0.0}\n",
        "agent_goal_accuracy  0.500  0.000-1.000",
        "trajectory_match  1.000  -       -          0       1\n"
        "tool_call_f1      1.000  -       -          0       1\n"
        "metric            mean   95% CI  pass rate  errors  scored\n"
        "----------------  -----  ------  ---------  ------  ------\n"
        "trajectory_match  0.000  -       -          0       1\n"
        "tool_call_f1      0.000  -       -          0       1\n",
    ],
    "docs/inside-your-app.md": ["1.0\n1.0 0.0 [1.0, 0.0]\n{'primary': 1.0, 'gpt-4.1-mini': 1.0}\n"],
    "docs/metrics/index.md": [
        "faithfulness 1.0 True\nfaithfulness: field 'retrieved_contexts' is an empty list\n"
    ],
    "docs/metrics/faithfulness.md": ["0.5 False\n1 of 2 response claims"],
    "docs/metrics/trajectory-match.md": [
        "1.0 the agent made the 2 expected calls, in order\n0.0\ncall 1: expected "
        "`get_weather(city='Paris')`, the agent called `get_weather(city='Lyon')` (strict "
        "mode, arguments exact)\n1.0\n0.0\n1.0\n"
        "get_weather(city='Paris') -> get_weather(city='Paris') False\n"
        "get_weather(city='Lyon') -> get_weather(city='Lyon') True\n"
    ],
    "docs/metrics/tool-call-f1.md": [
        "0.5 0.5 0.5\n1 of 2 calls made matched 2 expected: precision 0.50, recall 0.50, "
        "F1 0.50; first difference: expected call 2 `book_hotel(hotel='Hôtel Lutetia')` was "
        "not made\n[\"search(query='hotels in Paris')\"]\n"
    ],
    "docs/metrics/aspect-critic.md": [
        "has_date 1.0\nPASS (3 PASS / 0 FAIL)",
        "['PASS', 'PASS', 'PASS']",
    ],
    "docs/datasets.md": [
        "2 faithfulness error: InvalidSampleError faithfulness: field "
        "'retrieved_contexts' is required but missing"
    ],
    "docs/failures.md": ["APIConnectionError at http://127.0.0.1:9", "exit code: 0"],
    "docs/records.md": ["0 [1.0, 0.0]\n2 [['q1', 1.0, 1.0], ['q2', 0.0, 0.0]]\n"],
    "docs/calibrate-compare.md": [
        "resuming: 6 samples already scored in scores.jsonl\n",
        "--fail-on-regression faithfulness: diff +0.500 vs -0.050: ok",
    ],
    "docs/cost.md": ["\nNone\n[]\n", "total              10 "],  # not stopped; 10 estimated
    "docs/config.md": ["providers.local.timout: unknown key (did you mean timeout?)"],
    "docs/conversations.md": [
        "0.0\n0 of 1 turns keep what the user said earlier; lapses: turn 2:",
        "1.0 1.0 1.0\nfaithfulness_per_turn 0.5\n[(1, 1.0), (2, 0.5)]\n[10, 11, 12] [1, 2, 3]\n",
        "['goal_reached', 'goal_reached']\n4 0\n[1.0, 1.0]\n0 4\n0 0\n",
    ],
}  # seconds; a hung command fails its page instead of the whole run


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    line: int
    not_run: str | None = None
    file: str | None = None

    @property
    def runs(self) -> bool:
        return self.file is None and self.not_run is None and self.lang in PYTHON | SHELL


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.parts)]


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        marks = {m["kind"]: m["value"].strip() for m in MARK.finditer(match["marks"])}
        indent = match["indent"]
        code = "".join(
            line[len(indent) :] if line.startswith(indent) else line
            for line in match["code"].splitlines(keepends=True)
        )
        found.append(
            Block(
                lang=match["lang"].lower(),
                code=code,
                line=text.count("\n", 0, match.start("indent")) + 1,
                not_run=marks.get("not-run"),
                file=marks.get("file"),
            )
        )
    return found


def shell_commands(code: str, lang: str) -> str:
    """The commands of a block: a console block's ``$ `` lines, any other block whole."""
    if lang != "console":
        return code
    return "".join(line[2:] for line in code.splitlines(True) if line.startswith("$ "))


@pytest.fixture(scope="module")
def toy_judge() -> Iterator[LocalOpenAIServer]:
    """The toy judge of docs/getting-started.md (``answer-metrics toy-judge``), in process."""
    with LocalOpenAIServer(log_bodies=False) as server:
        yield server


@pytest.fixture
def reader_env(
    toy_judge: LocalOpenAIServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> dict[str, str]:
    """What a reader who followed the getting-started page has: the variables, a fresh dir."""
    for name in list(os.environ):
        if name.startswith(("LANGSMITH_", "LANGCHAIN_", "OPENAI_", "ANSWER_METRICS_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("OPENAI_BASE_URL", toy_judge.base_url)  # as the page's export does
    monkeypatch.setenv("OPENAI_API_KEY", "toy")
    monkeypatch.setenv("LANGSMITH_TEST_TRACKING", "false")
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.chdir(tmp_path)
    env = dict(os.environ)
    # The reader's shell finds the installed command; here, the one of this interpreter.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.fixture(scope="module")
def warm_shell_bin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder whose ``answer-metrics``, first on a page's PATH, runs the command by fork
    from one interpreter that imported it (tests/warm_command.py), in the block's shell,
    with its arguments, streams, directory and environment. A page's commands would
    otherwise each import LangChain in a new interpreter: 2 to 3 CPU seconds, 31 times."""
    from warm_command import WarmCommand

    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("LANGSMITH_", "LANGCHAIN_", "OPENAI_", "ANSWER_METRICS_"))
    }
    env.update(LANGSMITH_TEST_TRACKING="false", LANGSMITH_TRACING="false")
    folder = tmp_path_factory.mktemp("bin")
    with WarmCommand(env, shell_bin=folder):
        yield folder


def fresh_openai_clients() -> None:
    """Forget the HTTP clients langchain-openai shares across a process, as a reader's new
    session starts without them.

    It keeps one async client per base URL for the whole process; a page that ran
    ``asyncio.run`` leaves that client's connections bound to a closed loop, and the next
    page that awaits a model gets "Event loop is closed" (docs/inside-your-app.md says so),
    unless the server has closed the idle connections meanwhile (as it did while slower
    pages ran between them). The caches are private to langchain-openai: where they are
    gone, nothing is cleared.
    """
    from langchain_openai.chat_models import _client_utils

    for name in ("_cached_sync_httpx_client", "_cached_async_httpx_client"):
        cached = getattr(_client_utils, name, None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()


def run_page(path: Path, env: dict[str, str], workdir: Path) -> str:
    """Run every block of one page in order; returns what the page printed."""
    toy_url = env["OPENAI_BASE_URL"].removesuffix("/v1")
    namespace: dict[str, Any] = {"__name__": "__main__"}
    printed = io.StringIO()
    for block in blocks(path):
        where = f"{path.relative_to(ROOT)}:{block.line}"
        code = block.code.replace(TOY_JUDGE_URL, toy_url)
        if block.file is not None:
            (workdir / block.file).write_text(code, encoding="utf-8")
            continue
        if not block.runs:
            continue
        if block.lang in PYTHON:
            try:
                with contextlib.redirect_stdout(printed):
                    exec(compile(code, where, "exec"), namespace)
            except Exception as error:
                raise AssertionError(f"{where}: the python block failed: {error!r}") from error
            continue
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", shell_commands(code, block.lang)],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        printed.write(done.stdout)
        assert done.returncode == 0, (
            f"{where}: the command block exited {done.returncode}\n{code}\n"
            f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
        )
    return printed.getvalue()


# --------------------------------------------------------------------------- the checks


def test_the_runner_reads_marks_and_blocks(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Intro\n\n```python\nx = 1\n```\n\n<!-- not-run: needs a real key -->\n```bash\n"
        "curl https://example.com\n```\n\n<!-- file: data.jsonl -->\n```json\n{}\n```\n\n"
        "- item\n\n  ```python\n  y = x + 1\n  ```\n\n```text\noutput\n```\n",
        encoding="utf-8",
    )
    found = blocks(page)
    assert [(b.lang, b.runs) for b in found] == [
        ("python", True),
        ("bash", False),
        ("json", False),
        ("python", True),
        ("text", False),
    ]
    assert found[1].not_run == "needs a real key" and found[2].file == "data.jsonl"
    assert found[3].code == "y = x + 1\n" and found[3].line == 19


def test_every_page_is_found_and_has_examples() -> None:
    names = {str(p.relative_to(ROOT)) for p in pages()}
    assert {"README.md", "docs/getting-started.md", "docs/metrics/faithfulness.md"} <= names
    runnable = sum(block.runs for page in pages() for block in blocks(page))
    assert runnable > 40


def starts_processes(path: Path) -> bool:
    """Whether the page runs command-line blocks: each command starts an interpreter that
    imports LangChain (2 to 3 CPU seconds), so such pages run in the whole suite only."""
    return any(block.runs and block.lang in SHELL for block in blocks(path))


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(page, marks=pytest.mark.slow) if starts_processes(page) else page
        for page in pages()
    ],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_page_runs_as_written(
    path: Path,
    reader_env: dict[str, str],
    tmp_path: Path,
    toy_judge: LocalOpenAIServer,
    request: pytest.FixtureRequest,
) -> None:
    found = blocks(path)
    for block in found:
        if block.not_run is not None:
            assert len(block.not_run) >= 10, f"{path}:{block.line}: say why it is not run"
        if block.lang in PYTHON | SHELL and block.not_run is None and block.file is None:
            assert block.code.strip(), f"{path}:{block.line}: an empty code block"
    if starts_processes(path):
        shell_bin = request.getfixturevalue("warm_shell_bin")
        reader_env["PATH"] = f"{shell_bin}{os.pathsep}{reader_env['PATH']}"
    toy_judge.reset()
    fresh_openai_clients()
    with warnings.catch_warnings(record=True) as shown:  # what a reader's session shows
        warnings.simplefilter("always")
        printed = run_page(path, reader_env, tmp_path)
    # An offline LangSmith run is documented with its beta notice silenced (issue 30 §6).
    beta = [w for w in shown if type(w.message).__name__ == "LangSmithBetaWarning"]
    assert not beta, f"{path.name} shows {[str(w.message) for w in beta]}"
    for expected in EXPECTED.get(str(path.relative_to(ROOT)), []):
        assert expected in printed, f"{path.name} did not print {expected!r}:\n{printed}"


def test_the_readme_is_a_short_front_door() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count("\n") <= 300
    assert "**Contents:**" in text
    for heading in re.findall(r"^## (.+)$", text, re.M):  # the contents list every section
        anchor = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        assert f"(#{anchor})" in text, heading
    # Both commands the README gives: the main job, and the tests.
    assert 'pip install -e ".[local]" && answer-metrics demo' in text
    assert 'pip install -e ".[test,local,ray,pandas,docs]" && python -m pytest -q' in text
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert '-e ".[test,local,ray,pandas,docs]"' in ci
    # The README's test command, with the slowest tests listed (and the built site reused).
    [tests] = [line for line in ci.splitlines() if "python -m pytest" in line]
    assert tests.endswith("python -m pytest -q --durations=25"), tests


def test_every_expectation_names_a_page() -> None:
    assert set(EXPECTED) <= {str(p.relative_to(ROOT)) for p in pages()}


@pytest.mark.slow  # starts the command in a process
def test_the_toy_judge_command_serves_and_says_it_is_a_toy() -> None:
    """``answer-metrics toy-judge``, as getting-started.md starts it (on a free port here)."""
    import json
    import urllib.request

    process = subprocess.Popen(
        [sys.executable, "-m", "langchain_answer_metrics.cli", "toy-judge", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        base_url = process.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", base_url), base_url
        warning = process.stderr.readline()
        assert "NOT real judgments" in warning
        request = urllib.request.Request(
            f"{base_url}/embeddings",
            method="POST",
            data=json.dumps({"model": "m", "input": ["a text"]}).encode(),
            headers={"Content-Type": "application/json", "Authorization": "Bearer toy"},
        )
        with urllib.request.urlopen(request, timeout=30) as reply:
            assert len(json.load(reply)["data"][0]["embedding"]) > 0
    finally:
        process.terminate()
        process.wait(timeout=30)
