"""Batch mode across the two doors: a run started by ``answer-metrics evaluate --batch
--out F`` and finished by ``evaluate_dataset(..., batch=True, checkpoint=F)``, and the
reverse, including a batch submitted but not collected when the first run stopped.

Through the local server's Files and Batches API over HTTP (the real ``openai`` client:
``ChatOpenAI`` for the library, ``--base-url`` for the command). The first run is
stopped while a batch is out: by ``batch_wait`` / ``--batch-wait`` (the batches held at
the server), or by a kill (a process). The second side must pick that batch up, not send
its requests again: every line the server answered is counted, and no request is in two
batches.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from support import batch_flags, command_env, evaluate_args, evaluate_process, judge_for
from test_cli import cli, out_lines, write_jsonl

from langchain_answer_metrics import Faithfulness, evaluate_dataset
from langchain_answer_metrics.testing.batch_jobs import BatchJob
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

pytestmark = pytest.mark.usefixtures("network_attempts")

ROWS: list[dict[str, Any]] = [
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
    {
        "id": "zh-1",
        "question": "长城有多长？",
        "answer": "长城全长约两万公里。它建于1500年。",
        "contexts": ["长城全长21196.18公里。"],
    },
]
# Faithfulness asks two rounds: each answer's claims, then their verdicts.
STATEMENTS, VERDICTS = len(ROWS), len(ROWS)
POLL_S = 0.02
WAIT_S = 0.3


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "qa.jsonl", ROWS)


def judge(server: LocalOpenAIServer) -> ChatOpenAI:
    """The judge the command builds from ``--base-url`` and ``--model judge-a`` (at
    temperature 0: a batch line is the request itself, so the same settings)."""
    return judge_for(server, "judge-a")  # temperature 0, no client retries


def run_command(
    server: LocalOpenAIServer, data: Path, out: Path, *, wait: float | None = None
) -> tuple[int, str]:
    """``answer-metrics evaluate --batch`` (support's faithfulness-by-judge-a command)."""
    flags = batch_flags(poll_s=POLL_S, wait_s=wait)
    result = cli(*evaluate_args(data, out, server, extra=flags))
    return result.returncode, result.stderr


def run_library(server: LocalOpenAIServer, checkpoint: Path, *, wait: float | None = None) -> Any:
    """The same run from Python: ``evaluate_dataset(..., batch=True, checkpoint=...)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # batch mode's notes (no price for judge-a)
        return evaluate_dataset(
            ROWS,
            [Faithfulness(llm=judge(server))],
            batch=True,
            checkpoint=checkpoint,
            batch_poll_s=POLL_S,
            batch_min_requests=0,
            batch_wait=wait,
        )


def scores(path: Path) -> dict[str, float]:
    """Each sample's last faithfulness score in a records file (batch lines skipped)."""
    return {
        line["id"]: line["metrics"]["faithfulness"]["score"]
        for line in out_lines(path)
        if "id" in line
    }


def kept_batches(path: Path) -> list[dict[str, Any]]:
    return [line for line in out_lines(path) if line.get("kind") == "batch"]


def hold_from_round(server: LocalOpenAIServer, round_number: int) -> None:
    """Let the batches of the rounds before ``round_number`` complete, and hold the rest."""

    def outcome(job: BatchJob) -> None:
        if int((job.metadata or {}).get("answer_metrics_round", 0)) >= round_number - 1:
            server.batch.hold()  # this one runs now; the next round's are held

    if round_number <= 1:
        server.batch.hold()
    else:
        server.batch.outcome = outcome


def assert_sent_once(server: LocalOpenAIServer, path: Path) -> None:
    """Every request went out in one batch only, each answered once, and none live."""
    batches = kept_batches(path)
    ids = [custom_id for batch in batches for custom_id in batch["custom_ids"]]
    assert len(ids) == len(set(ids)) == STATEMENTS + VERDICTS
    assert [batch["batch_id"] for batch in batches] == server.batch.created
    assert server.batch.lines == len(ids)
    assert server.chat_requests == 0


@pytest.fixture(scope="module")
def live_scores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float]:
    """What a live run of the same command gives: batch mode must score the same."""
    directory = tmp_path_factory.mktemp("live")
    out = directory / "live.jsonl"
    with LocalOpenAIServer() as server:
        result = cli(*evaluate_args(write_jsonl(directory / "qa.jsonl", ROWS), out, server))
    assert result.returncode == 0, result.stderr
    return scores(out)


@pytest.mark.parametrize("stopped_in_round", [1, 2])
def test_a_command_stopped_with_a_batch_out_is_finished_by_the_library(
    batch_server: LocalOpenAIServer,
    data: Path,
    tmp_path: Path,
    live_scores: dict[str, float],
    stopped_in_round: int,
) -> None:
    out = tmp_path / "results.jsonl"
    hold_from_round(batch_server, stopped_in_round)
    code, stderr = run_command(batch_server, data, out, wait=WAIT_S)
    assert code == 6, stderr
    assert "rerun the same command" in stderr
    assert len(batch_server.batch.created) == stopped_in_round
    assert [batch["round"] for batch in kept_batches(out)] == list(range(1, stopped_in_round + 1))
    assert scores(out) == {}  # no sample finished: the held batch has their next step
    batch_server.batch.outcome = None
    batch_server.batch.release()

    rows = run_library(batch_server, out)

    assert not any(row.errors or row.not_run for row in rows)
    assert [row.results["faithfulness"].score for row in rows] == pytest.approx(
        [live_scores[row["id"]] for row in ROWS]
    )
    assert len(batch_server.batch.created) == 2  # the held batch picked up, not sent again
    assert_sent_once(batch_server, out)
    assert scores(out) == pytest.approx(live_scores)

    # And the command, run again on its --out, finds everything scored.
    code, stderr = run_command(batch_server, data, out)
    assert code == 0, stderr
    assert f"resuming: {len(ROWS)} samples already scored" in stderr
    assert len(batch_server.batch.created) == 2 and batch_server.chat_requests == 0


@pytest.mark.parametrize("stopped_in_round", [1, 2])
def test_a_library_run_stopped_with_a_batch_out_is_finished_by_the_command(
    batch_server: LocalOpenAIServer,
    data: Path,
    tmp_path: Path,
    live_scores: dict[str, float],
    stopped_in_round: int,
) -> None:
    checkpoint = tmp_path / "run.jsonl"
    hold_from_round(batch_server, stopped_in_round)
    first = run_library(batch_server, checkpoint, wait=WAIT_S)
    assert first.stopped is not None and first.stopped.reason == "batch_wait"
    assert all(row.not_run for row in first)
    assert len(batch_server.batch.created) == stopped_in_round
    batch_server.batch.outcome = None
    batch_server.batch.release()

    code, stderr = run_command(batch_server, data, checkpoint)

    assert code == 0, stderr
    assert scores(checkpoint) == pytest.approx(live_scores)
    assert len(batch_server.batch.created) == 2
    assert_sent_once(batch_server, checkpoint)

    # And the library, run again on the file, finds everything scored.
    again = run_library(batch_server, checkpoint)
    assert [row.results["faithfulness"].score for row in again] == pytest.approx(
        [live_scores[row["id"]] for row in ROWS]
    )
    assert len(batch_server.batch.created) == 2 and batch_server.chat_requests == 0


def test_a_finished_batch_run_resumes_on_the_other_side_live_or_batched_with_no_request(
    batch_server: LocalOpenAIServer, data: Path, tmp_path: Path, live_scores: dict[str, float]
) -> None:
    out = tmp_path / "results.jsonl"
    code, stderr = run_command(batch_server, data, out)
    assert code == 0, stderr
    batch_server.reset()

    batched = run_library(batch_server, out)
    live = evaluate_dataset(ROWS, [Faithfulness(llm=judge(batch_server))], checkpoint=out)

    for rows in (batched, live):
        assert [row.results["faithfulness"].score for row in rows] == pytest.approx(
            [live_scores[row["id"]] for row in ROWS]
        )
    assert batch_server.batch.created == [] and batch_server.chat_requests == 0


def test_a_live_command_stopped_midway_is_finished_in_batches_by_the_library(
    batch_server: LocalOpenAIServer, data: Path, tmp_path: Path, live_scores: dict[str, float]
) -> None:
    out = tmp_path / "results.jsonl"
    result = cli(*evaluate_args(data, out, batch_server, extra=["--max-requests", "2"]))
    assert result.returncode == 5, result.stderr
    done = set(scores(out))
    assert 1 <= len(done) < len(ROWS)
    batch_server.reset()

    rows = run_library(batch_server, out)

    assert [row.results["faithfulness"].score for row in rows] == pytest.approx(
        [live_scores[row["id"]] for row in ROWS]
    )
    (first_round, second_round) = kept_batches(out)
    left = len(ROWS) - len(done)
    assert len(first_round["custom_ids"]) == len(second_round["custom_ids"]) == left
    waiting = {index for ids in first_round["samples"].values() for index in ids}
    assert waiting == {n for n, row in enumerate(ROWS) if row["id"] not in done}
    assert batch_server.chat_requests == 0


@pytest.mark.slow
def test_a_command_killed_while_its_batch_is_out_is_finished_by_the_library(
    batch_server: LocalOpenAIServer, data: Path, tmp_path: Path, live_scores: dict[str, float]
) -> None:
    out = tmp_path / "results.jsonl"
    batch_server.batch.hold()
    process = evaluate_process(data, out, batch_server, extra=batch_flags(poll_s=POLL_S))
    deadline = time.monotonic() + 60
    while not (out.exists() and kept_batches(out)):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no batch was kept"
        time.sleep(0.05)
    process.kill()
    process.communicate(timeout=30)
    (first,) = batch_server.batch.created
    batch_server.batch.release()

    rows = run_library(batch_server, out)

    assert not any(row.errors or row.not_run for row in rows)
    assert batch_server.batch.created[0] == first and len(batch_server.batch.created) == 2
    assert_sent_once(batch_server, out)
    assert scores(out) == pytest.approx(live_scores)
    assert json.loads(out.read_text("utf-8").splitlines()[0])["batch_id"] == first


def test_a_held_batch_a_different_judge_cannot_use_is_named_and_can_be_cancelled(
    batch_server: LocalOpenAIServer, data: Path, tmp_path: Path
) -> None:
    """The command's judge runs at temperature 0; a library judge left at its default
    sends other requests, so the command's held batch answers none of them: the run
    sends its own and says which batch went unused, which --batch-cancel then cancels."""
    out = tmp_path / "results.jsonl"
    batch_server.batch.hold()
    code, stderr = run_command(batch_server, data, out, wait=WAIT_S)
    assert code == 6, stderr
    (held,) = batch_server.batch.created
    batch_server.batch.release()
    batch_server.batch.jobs[held].ready_at = float("inf")  # still running at the provider
    default_judge = ChatOpenAI(
        model="judge-a",
        base_url=batch_server.base_url,
        api_key="sk-test",
        use_responses_api=False,
        max_retries=0,
    )

    with pytest.warns(UserWarning, match=rf"1 batch of an earlier run \({held}: 3 requests\)"):
        rows = evaluate_dataset(
            ROWS,
            [Faithfulness(llm=default_judge)],
            batch=True,
            checkpoint=out,
            batch_poll_s=POLL_S,
            batch_min_requests=0,
        )

    assert not any(row.errors or row.not_run for row in rows)
    assert len(batch_server.batch.created) == 3  # its own two rounds
    assert [batch["batch_id"] for batch in kept_batches(out)] == batch_server.batch.created
    assert batch_server.batch.jobs[held].status == "in_progress"
    result = cli(*evaluate_args(data, out, batch_server, extra=["--batch-cancel"]))
    assert result.returncode == 0, result.stderr
    assert f"{held} cancelled" in result.stderr
    assert batch_server.batch.jobs[held].status == "cancelled"


# The run of run_library, in a process of its own (a user's script).
_LIBRARY_RUN = """
import json, sys
from langchain_openai import ChatOpenAI
from langchain_answer_metrics import Faithfulness, evaluate_dataset
base_url, checkpoint, rows, poll_s = sys.argv[1:]
judge = ChatOpenAI(model="judge-a", temperature=0, base_url=base_url, api_key="sk-test",
                   use_responses_api=False, max_retries=0)
evaluate_dataset(json.loads(rows), [Faithfulness(llm=judge)], batch=True,
                 checkpoint=checkpoint, batch_poll_s=float(poll_s), batch_min_requests=0)
"""


@pytest.mark.slow
def test_a_library_run_killed_while_its_batch_is_out_is_finished_by_the_command(
    batch_server: LocalOpenAIServer, data: Path, tmp_path: Path, live_scores: dict[str, float]
) -> None:
    checkpoint = tmp_path / "run.jsonl"
    batch_server.batch.hold()
    arguments = [batch_server.base_url, str(checkpoint), json.dumps(ROWS), str(POLL_S)]
    process = subprocess.Popen(
        [sys.executable, "-c", _LIBRARY_RUN, *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=command_env(),
    )
    deadline = time.monotonic() + 60
    while not (checkpoint.exists() and kept_batches(checkpoint)):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no batch was kept"
        time.sleep(0.05)
    process.kill()
    process.communicate(timeout=30)
    (first,) = batch_server.batch.created
    batch_server.batch.release()

    code, stderr = run_command(batch_server, data, checkpoint)

    assert code == 0, stderr
    assert batch_server.batch.created[0] == first and len(batch_server.batch.created) == 2
    assert_sent_once(batch_server, checkpoint)
    assert scores(checkpoint) == pytest.approx(live_scores)
