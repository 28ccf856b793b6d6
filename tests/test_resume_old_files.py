"""Files an earlier version left on disk still resume, sending nothing twice.

The files in ``tests/data/resume/`` were written by commit 0151843, before the one
records format (``make_old_files.py`` there says how): a library checkpoint
(``{"checkpoint": 1, ...}`` lines), a CLI ``--out`` file (records of version 2), and the
batch side files (``<checkpoint>.batches``, ``OUT.batches``) of runs stopped while their
first round ran. Each is copied to a temporary folder and resumed with the same command:
no judge request for what was scored, and no second batch for what was sent.

A change of the default prompts (``PROMPT_VERSION``) or of the request a step builds
rightly makes these runs score again; then the files are written again with that
version's code, and the old ones kept for the format they show.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from langchain_openai import ChatOpenAI
from support import evaluate_args, fact_judge
from test_cli import cli, out_lines

from langchain_answer_metrics import AspectCritic, FactualCorrectness, evaluate_dataset
from langchain_answer_metrics.judging.batch.lines import Group, line_key
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

OLD = Path(__file__).parent / "data" / "resume"

SAMPLES = [
    {
        "response": f"Событие {index} было в {1800 + index} году. 事件发生在城市 {index}.",
        "reference": f"Событие {index} было в {1800 + index} году.",
    }
    for index in range(6)
]


@pytest.fixture
def batch_server(server: LocalOpenAIServer) -> Iterator[LocalOpenAIServer]:
    yield server
    batch = server.batch
    batch.enabled, batch.delay, batch.line_faults, batch.outcome = True, 0.0, None, None
    batch.release()


def old_file(name: str, folder: Path) -> Path:
    copy = folder / name
    shutil.copyfile(OLD / name, copy)
    return copy


def test_an_old_checkpoint_resumes_with_no_request(tmp_path: Path) -> None:
    path = old_file("checkpoint_v1.jsonl", tmp_path)
    judge, critic = fact_judge(), fact_judge()
    metrics = [
        FactualCorrectness(llm=judge),
        AspectCritic(llm=critic, name="has_year", criterion="It gives a year."),
    ]
    rows = evaluate_dataset(SAMPLES, metrics, checkpoint=path)

    assert judge.calls == [] and critic.calls == []
    old = [
        json.loads(line) for line in (OLD / "checkpoint_v1.jsonl").read_text("utf-8").splitlines()
    ]
    for row, line in zip(rows, old, strict=True):
        for key in ("factual_correctness", "has_year"):
            saved = line["metrics"][key]["result"]
            assert row.results[key].score == pytest.approx(saved["score"])
            assert row.results[key].reason == saved["reason"]
    # Details come back whole: the claims and their verdicts, not only the score.
    claims = rows[0].results["factual_correctness"].details.models["judge-a"].response_claims
    assert [claim.verdict for claim in claims] == ["supported", "neutral"]

    # A sample whose text changed is scored again, and only that one.
    changed = [*SAMPLES[:5], {**SAMPLES[5], "response": "Changed in 1999."}]
    again = fact_judge()
    evaluate_dataset(changed, [FactualCorrectness(llm=again)], checkpoint=path)
    prompts = " ".join(str(messages[-1].content) for _, messages in again.calls)
    assert "1999" in prompts and "1804" not in prompts


def test_an_old_checkpoint_resumes_rows_that_have_ids_now(tmp_path: Path) -> None:
    # The old checkpoint kept positions from 0 (read as numbers from 1); rows given an
    # id since are found by their number, their text being the same.
    path = old_file("checkpoint_v1.jsonl", tmp_path)
    judge = fact_judge()
    with_ids = [{"id": f"s{index}", **sample} for index, sample in enumerate(SAMPLES)]
    evaluate_dataset(with_ids, [FactualCorrectness(llm=judge)], checkpoint=path)
    assert judge.calls == []


def test_an_old_out_file_resumes_with_no_request(server: LocalOpenAIServer, tmp_path: Path) -> None:
    data = old_file("qa.jsonl", tmp_path)
    out = old_file("out_v2.jsonl", tmp_path)
    before = out_lines(out)

    result = cli(*evaluate_args(data, out, server, extra=["--metric", "factual_correctness"]))

    assert result.returncode == 0, result.stderr
    assert server.chat_requests == 0
    assert "resuming: 3 samples already scored" in result.stderr
    after = {line["id"]: line for line in out_lines(out) if "id" in line}
    for line in before:
        for key in ("faithfulness", "factual_correctness"):
            assert after[line["id"]]["metrics"][key]["score"] == line["metrics"][key]["score"]


def _judge(server: LocalOpenAIServer) -> ChatOpenAI:
    return ChatOpenAI(
        model="judge-a",
        base_url=server.base_url,
        api_key="sk-test",
        use_responses_api=False,
        max_retries=0,
    )


def _recreate_round_one(server: LocalOpenAIServer, side_file: Path, requests: str) -> str:
    """The old run's first batch, created again on this server from the requests it was
    sent, and the side file pointed at it. A line's ``custom_id`` is a digest of its
    endpoint (this server's port) and body, so the old ids are mapped to this server's."""
    lines = [json.loads(line) for line in side_file.read_text("utf-8").splitlines()]
    (saved,) = [line for line in lines if line["kind"] == "batch"]
    port = server.base_url.split(":")[-1].split("/")[0]
    old_port = saved["base_url"].split(":")[-1].split("/")[0]
    group = Group(
        label=saved["label"],
        model=saved["model"],
        base_url=saved["base_url"].replace(f":{old_port}/", f":{port}/"),
        endpoint=saved["endpoint"],
    )
    sent = [json.loads(line) for line in (OLD / requests).read_text("utf-8").splitlines()]
    renamed = {line["custom_id"]: line_key(group, line["body"]) for line in sent}
    assert set(renamed) == set(saved["custom_ids"])
    requests_now = "".join(
        json.dumps({**line, "custom_id": renamed[line["custom_id"]]}) + "\n" for line in sent
    )
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    uploaded = client.files.create(
        file=("round-1.jsonl", requests_now.encode("utf-8")), purpose="batch"
    )
    batch = client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    saved.update(
        batch_id=batch.id,
        input_file_id=uploaded.id,
        base_url=group.base_url,
        custom_ids=[renamed[key] for key in saved["custom_ids"]],
        samples={renamed[key]: samples for key, samples in saved["samples"].items()},
    )
    side_file.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    return batch.id


def test_an_old_checkpoints_batch_side_file_is_picked_up(
    batch_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    checkpoint = old_file("batch_checkpoint.jsonl", tmp_path)
    side = old_file("batch_checkpoint.jsonl.batches", tmp_path)
    first = _recreate_round_one(batch_server, side, "batch_round1_input.jsonl")

    rows = evaluate_dataset(
        SAMPLES[:3],
        [FactualCorrectness(llm=_judge(batch_server))],
        batch=True,
        checkpoint=checkpoint,
        batch_poll_s=0.02,
        batch_min_requests=0,
    )

    assert all(not row.errors and not row.not_run for row in rows)
    created = batch_server.batch.created
    assert created[0] == first and len(created) == 2  # round 1 polled, only round 2 sent
    assert batch_server.chat_requests == 0


def test_an_old_out_files_batch_side_file_is_picked_up(
    batch_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = old_file("qa.jsonl", tmp_path)
    out = tmp_path / "batch_out.jsonl"
    side = old_file("batch_out.jsonl.batches", tmp_path)
    first = _recreate_round_one(batch_server, side, "batch_out_round1_input.jsonl")

    batch = ["--batch", "--batch-poll", "0.05", "--batch-min-requests", "0"]
    result = cli(*evaluate_args(data, out, batch_server, extra=batch))

    assert result.returncode == 0, result.stderr
    created = batch_server.batch.created
    assert created[0] == first and len(created) == 2
    assert batch_server.chat_requests == 0
    assert {line["id"] for line in out_lines(out) if "id" in line} == {"en-1", "en-2", "ru-1"}
