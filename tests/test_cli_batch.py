"""``answer-metrics evaluate --batch``: the run through the local server's Batch API, its
endings and their exit codes, a kill while waiting and the resume, ``--batch-cancel``."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support import local_models, priced_models_yaml, write_models_yaml
from test_cli import clean_env, cli, out_lines, write_jsonl

from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

SAMPLES = [
    {
        "id": "en-1",
        "question": "Who was Albert Einstein?",
        "answer": "Einstein was a physicist. He was born in Germany in 1879.",
        "contexts": ["Albert Einstein, born 1879 in Ulm, Germany, was a theoretical physicist."],
    },
    {
        "id": "en-2",
        "question": "What is the capital of France?",
        "answer": "Paris is the capital of France. It lies on the Seine.",
        "contexts": ["Paris, on the Seine, is the capital and largest city of France."],
    },
]


def arguments(server: LocalOpenAIServer, data: Path, out: Path, *extra: str) -> list[Any]:
    return [
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--out",
        out,
        "--batch",
        "--batch-poll",
        "0.05",
        "--batch-min-requests",
        "0",
        *extra,
    ]


def scores(out: Path) -> dict[str, float]:
    """The score of each sample's record (a batch's line, kept in --out too, has no id)."""
    return {
        line["id"]: line["metrics"]["faithfulness"]["score"]
        for line in out_lines(out)
        if "id" in line
    }


def test_a_batch_run_scores_as_live_with_no_live_request(
    batch_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    live_out = tmp_path / "live.jsonl"
    live = cli(*arguments(batch_server, data, live_out)[:-5])
    assert live.returncode == 0, live.stderr
    batch_server.reset()
    out = tmp_path / "batch.jsonl"
    result = cli(*arguments(batch_server, data, out))
    assert result.returncode == 0, result.stderr
    assert scores(out) == scores(live_out)
    assert batch_server.chat_requests == 0 and len(batch_server.batch.created) == 2
    assert "batch round 2: 1 completed" in result.stderr
    # The batches are kept in --out itself, between the records, as soon as created.
    assert not (tmp_path / "batch.jsonl.batches").exists()
    kept = [line for line in out_lines(out) if line.get("kind") == "batch"]
    assert [line["batch_id"] for line in kept] == batch_server.batch.created


def test_batch_wait_exceeded_exits_6_then_the_same_command_resumes(
    batch_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    out = tmp_path / "out.jsonl"
    batch_server.batch.hold()
    stopped = cli(*arguments(batch_server, data, out, "--batch-wait", "1s", "--quiet"))
    assert stopped.returncode == 6, stopped.stderr
    assert "batch wait of 1 s exceeded" in stopped.stderr
    assert "rerun the same command" in stopped.stderr
    assert len(batch_server.batch.created) == 1
    batch_server.batch.release()
    resumed = cli(*arguments(batch_server, data, out, "--quiet"))
    assert resumed.returncode == 0, resumed.stderr
    assert len(batch_server.batch.created) == 2  # round 1 picked up, not sent again
    assert set(scores(out)) == {"en-1", "en-2"}


def test_a_failed_batch_exits_7_with_the_providers_reason(
    batch_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    batch_server.batch.outcome = lambda job: "failed"
    result = cli(*arguments(batch_server, data, tmp_path / "out.jsonl", "--quiet"))
    assert result.returncode == 7, result.stderr
    assert "failed at the provider: batch_failed: The batch failed (injected)." in result.stderr


def test_an_endpoint_without_the_batch_api_is_refused_before_any_request(
    batch_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    batch_server.batch.enabled = False
    result = cli(*arguments(batch_server, data, tmp_path / "out.jsonl", "--quiet"))
    assert result.returncode == 2, result.stderr
    assert "judge judge-a" in result.stderr and "404" in result.stderr
    assert batch_server.chat_requests == 0


def _start(server: LocalOpenAIServer, data: Path, out: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "langchain_answer_metrics.cli"]
    return subprocess.Popen(
        [*command, *map(str, arguments(server, data, out, "--quiet"))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )


def _wait_for_a_batch(server: LocalOpenAIServer, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not server.batch.created:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no batch was created"
        time.sleep(0.05)
    time.sleep(0.3)  # polling it


@pytest.mark.slow
def test_a_kill_while_waiting_then_a_resume_sends_nothing_twice(
    batch_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    out = tmp_path / "out.jsonl"
    batch_server.batch.hold()
    process = _start(batch_server, data, out)
    _wait_for_a_batch(batch_server, process)
    process.kill()
    process.communicate(timeout=30)
    first = batch_server.batch.created[0]
    batch_server.batch.release()
    resumed = cli(*arguments(batch_server, data, out, "--quiet"))
    assert resumed.returncode == 0, resumed.stderr
    assert batch_server.batch.created[0] == first and len(batch_server.batch.created) == 2
    assert batch_server.chat_requests == 0
    assert set(scores(out)) == {"en-1", "en-2"}


@pytest.mark.slow
def test_ctrl_c_while_waiting_keeps_the_batches_and_batch_cancel_cancels_them(
    batch_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    out = tmp_path / "out.jsonl"
    batch_server.batch.hold()
    process = _start(batch_server, data, out)
    _wait_for_a_batch(batch_server, process)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "the batches keep running at the provider" in stderr and "--batch-cancel" in stderr
    (batch_id,) = batch_server.batch.created
    assert batch_server.batch.jobs[batch_id].status == "in_progress"
    cancelled = cli(*arguments(batch_server, data, out, "--batch-cancel"))
    assert cancelled.returncode == 0, cancelled.stderr
    assert f"{batch_id} cancelled" in cancelled.stderr
    assert batch_server.batch.jobs[batch_id].status == "cancelled"


def test_the_estimate_shows_the_live_and_the_batch_cost_side_by_side(
    batch_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    result = cli(
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--config",
        priced_models_yaml(tmp_path, batch_server),  # on localhost: no built-in price
        "--estimate",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].split()[-2:] == ["--batch", "(USD)"] or "with --batch" in lines[1]
    total = next(line for line in lines if line.startswith("total"))
    live, batch = [
        [float(amount) for amount in cell.replace("$", "").split("-")]
        for cell in total.split()[-2:]
    ]
    assert batch == pytest.approx([amount / 2 for amount in live], abs=1e-4)
    assert batch_server.chat_requests == 0 and batch_server.batch.created == []


def test_below_batch_min_requests_the_cli_runs_live_at_the_live_price(
    batch_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    base = [
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        batch_server.base_url,
        "--model",
        "gpt-4o-mini",
    ]
    live = cli(*base, "--out", tmp_path / "live.jsonl")
    assert live.returncode == 0, live.stderr
    batch_server.reset()
    small = cli(*base, "--out", tmp_path / "small.jsonl", "--batch")
    assert small.returncode == 0, small.stderr
    assert "fewer than --batch-min-requests 100: running live" in small.stderr
    assert batch_server.chat_requests > 0 and batch_server.batch.created == []

    def spend(stderr: str) -> str:
        return next(line for line in stderr.splitlines() if line.startswith("spend"))

    assert spend(small.stderr) == spend(live.stderr)  # priced as it ran: live


def _similarity(server: LocalOpenAIServer, data: Path, out: Path, *extra: str) -> list[Any]:
    return [
        "evaluate",
        data,
        "--metric",
        "semantic_similarity",
        "--base-url",
        server.base_url,
        "--embedding-model",
        "text-embedding-3-small",
        "--out",
        out,
        "--quiet",
        *extra,
    ]


def _cost(stderr: str, model: str) -> float:
    line = next(line for line in stderr.splitlines() if line.strip().startswith(model))
    return float(next(cell for cell in line.split() if cell.startswith("$"))[1:])


def test_embeddings_go_through_batches_and_no_batch_embeddings_sends_them_live(
    batch_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    rows = [{**sample, "ground_truth": sample["answer"] + " Indeed."} for sample in SAMPLES]
    data = write_jsonl(tmp_path / "qa.jsonl", rows)
    live_out = tmp_path / "live.jsonl"
    live = cli(*_similarity(batch_server, data, live_out)[:-1])
    assert live.returncode == 0, live.stderr
    live_requests = batch_server.embedding_requests
    batch_server.reset()
    out = tmp_path / "batch.jsonl"
    batched = cli(
        *_similarity(batch_server, data, out, "--batch", "--batch-poll", "0.05"),
        "--batch-min-requests",
        "0",
    )
    assert batched.returncode == 0, batched.stderr
    assert batch_server.embedding_requests == 0 and batch_server.batch.lines == live_requests

    def similarity(path: Path) -> dict[str, float]:
        # The samples' records (a batch's line, kept in --out too, has no id).
        records = [line for line in out_lines(path) if "id" in line]
        return {r["id"]: r["metrics"]["semantic_similarity"]["score"] for r in records}

    assert similarity(out) == similarity(live_out)
    batch_server.reset()
    kept_live = cli(
        *_similarity(
            batch_server, data, tmp_path / "kept.jsonl", "--batch", "--no-batch-embeddings"
        ),
        "--batch-min-requests",
        "0",
    )
    # Nothing left to batch: refused before any request, naming the flag.
    assert kept_live.returncode == 2, kept_live.stderr
    assert "batch_embeddings=False" in kept_live.stderr
    assert batch_server.embedding_requests == 0


def test_the_estimates_batch_column_halves_the_embeddings_unless_kept_live(
    batch_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    rows = [{**sample, "ground_truth": sample["answer"]} for sample in SAMPLES]
    data = write_jsonl(tmp_path / "qa.jsonl", rows)
    config = local_models(batch_server, "ANSWER_METRICS_TEST_BATCH_KEY")
    config["embedding_models"]["list"][0]["price"] = {"input_per_million": 1000.0}
    models = write_models_yaml(tmp_path, config)
    env = clean_env(ANSWER_METRICS_TEST_BATCH_KEY="sk-test")

    def ratio(*extra: str) -> float:
        result = cli(
            "evaluate",
            data,
            "--metric",
            "semantic_similarity",
            "--config",
            models,
            "--estimate",
            *extra,
            env=env,
        )
        assert result.returncode == 0, result.stderr
        total = next(line for line in result.stdout.splitlines() if line.startswith("total"))
        live, batch = (float(cell.replace("$", "").split("-")[-1]) for cell in total.split()[-2:])
        assert live > 0
        return batch / live

    assert ratio() == pytest.approx(0.5, abs=1e-3)
    assert ratio("--no-batch-embeddings") == pytest.approx(1.0)
    assert batch_server.embedding_requests == 0


def test_embeddings_refused_by_the_endpoint_go_live_and_are_priced_live(
    batch_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    rows = [{**sample, "ground_truth": sample["answer"]} for sample in SAMPLES]
    data = write_jsonl(tmp_path / "qa.jsonl", rows)
    config = local_models(batch_server, "ANSWER_METRICS_TEST_BATCH_KEY")
    config["chat_models"]["list"][0]["price"] = {
        "input_per_million": 100.0,
        "output_per_million": 100.0,
    }
    config["embedding_models"]["list"][0]["price"] = {"input_per_million": 1000.0}
    models = write_models_yaml(tmp_path, config)
    env = clean_env(ANSWER_METRICS_TEST_BATCH_KEY="sk-test")
    base = ["evaluate", data, "--metric", "faithfulness,semantic_similarity", "--config", models]

    def cost(stderr: str, label: str) -> float:
        line = next(line for line in stderr.splitlines() if line.startswith(f"  {label}:"))
        return float(line.rsplit("$", 1)[1])

    live = cli(*base, "--out", tmp_path / "live.jsonl", env=env)
    assert live.returncode == 0, live.stderr
    batch_server.reset()
    batch_server.batch.endpoints = ("chat/completions",)
    batched = cli(
        *base,
        "--out",
        tmp_path / "batch.jsonl",
        "--batch",
        "--batch-poll",
        "0.05",
        "--batch-min-requests",
        "0",
        env=env,
    )
    assert batched.returncode == 0, batched.stderr
    assert "refused an embeddings batch of embed-a" in batched.stderr
    assert batch_server.chat_requests == 0 and batch_server.embedding_requests > 0
    assert cost(batched.stderr, "embed-a") == pytest.approx(cost(live.stderr, "embed-a"))
    assert cost(batched.stderr, "judge-a") == pytest.approx(
        cost(live.stderr, "judge-a") / 2, rel=1e-3
    )
