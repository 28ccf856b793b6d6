"""Writes the files of this folder: what a run of an earlier version left on disk.

Run once, at commit 0151843 (before the one records format, issue 32), from the
repository's root:

    PYTHONPATH=$PWD:$PWD/tests python tests/data/resume/make_old_files.py

Kept for the record of how the files were made; run on a later version it would write
that version's files, which is not what tests/test_resume_old_files.py needs. Nothing
here holds a key: the judges are scripted or the local server's (key ``sk-test``).

- ``checkpoint_v1.jsonl``: ``evaluate_dataset(..., checkpoint=)`` of 6 samples, two
  metrics, the scripted fact judge (tests/support.py);
- ``qa.jsonl`` and ``out_v2.jsonl``: ``answer-metrics evaluate qa.jsonl --metric
  faithfulness --metric factual_correctness --out out_v2.jsonl`` against the local
  server (model ``judge-a``);
- ``batch_checkpoint.jsonl`` and its side file ``batch_checkpoint.jsonl.batches``: a
  batch run with ``checkpoint=`` stopped by ``batch_wait`` while its first round ran (the
  checkpoint is empty: no sample finished), with ``batch_round1_input.jsonl``, the
  requests the provider was sent, to create the batch again on a new server;
- ``batch_out.jsonl.batches``: the same through the CLI (``--batch --batch-wait 1s``,
  exit 6), with ``batch_out_round1_input.jsonl``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from langchain_openai import ChatOpenAI
from support import fact_judge

from langchain_answer_metrics import AspectCritic, FactualCorrectness, evaluate_dataset
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

HERE = Path(__file__).parent

SAMPLES = [
    {
        "response": f"Событие {index} было в {1800 + index} году. 事件发生在城市 {index}.",
        "reference": f"Событие {index} было в {1800 + index} году.",
    }
    for index in range(6)
]

QA = [
    {
        "id": "en-1",
        "question": "Who was Albert Einstein?",
        "answer": "Einstein was a physicist. He was born in Germany in 1879.",
        "ground_truth": "Albert Einstein was a German-born theoretical physicist, born in 1879.",
        "contexts": ["Albert Einstein, born 1879 in Ulm, Germany, was a theoretical physicist."],
    },
    {
        "id": "en-2",
        "question": "What is the capital of France?",
        "answer": "Paris is the capital of France. It lies on the Seine.",
        "ground_truth": "Paris is the capital of France.",
        "contexts": ["Paris, on the Seine, is the capital and largest city of France."],
    },
    {
        "id": "ru-1",
        "question": "Когда человек впервые высадился на Луну?",
        "answer": "Аполлон-11 сел на Луну в 1969 году.",
        "ground_truth": "Аполлон-11 высадился на Луну 20 июля 1969 года.",
        "contexts": ["Аполлон-11 высадился на Луну 20 июля 1969 года."],
    },
]


def library_checkpoint() -> None:
    path = HERE / "checkpoint_v1.jsonl"
    path.unlink(missing_ok=True)
    metrics = [
        FactualCorrectness(llm=fact_judge()),
        AspectCritic(llm=fact_judge(), name="has_year", criterion="It gives a year."),
    ]
    rows = evaluate_dataset(SAMPLES, metrics, checkpoint=path)
    assert not any(row.errors for row in rows)


def judge(server: LocalOpenAIServer) -> ChatOpenAI:
    return ChatOpenAI(
        model="judge-a",
        base_url=server.base_url,
        api_key="sk-test",
        use_responses_api=False,
        max_retries=0,
    )


def round_input(server: LocalOpenAIServer) -> bytes:
    (stored,) = [file for file in server.batch.files.values() if file.purpose == "batch"]
    return stored.data


def library_batch(server: LocalOpenAIServer) -> None:
    path = HERE / "batch_checkpoint.jsonl"
    for old in (path, Path(f"{path}.batches")):
        old.unlink(missing_ok=True)
    server.reset()
    server.batch.hold()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = evaluate_dataset(
            SAMPLES[:3],
            [FactualCorrectness(llm=judge(server))],
            batch=True,
            checkpoint=path,
            batch_wait=0.5,
            batch_poll_s=0.05,
            batch_min_requests=0,
        )
    assert rows.stopped is not None and rows.stopped.reason == "batch_wait"
    assert len(server.batch.created) == 1
    path.touch()  # no sample finished: the checkpoint is empty (or absent)
    (HERE / "batch_round1_input.jsonl").write_bytes(round_input(server))
    server.batch.release()


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "langchain_answer_metrics.cli", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def cli_options(server: LocalOpenAIServer, out: Path) -> list[str | Path]:
    """The options of every command here (the tests run the same)."""
    return [
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--out",
        out,
        "--quiet",
    ]


def cli_out(server: LocalOpenAIServer) -> None:
    data = HERE / "qa.jsonl"
    data.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in QA), "utf-8")
    out = HERE / "out_v2.jsonl"
    out.unlink(missing_ok=True)
    server.reset()
    result = cli("evaluate", data, *cli_options(server, out), "--metric", "factual_correctness")
    assert result.returncode == 0, result.stderr


def cli_batch(server: LocalOpenAIServer) -> None:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "batch_out.jsonl"
        server.reset()
        server.batch.hold()
        batch = ["--batch", "--batch-poll", "0.05", "--batch-min-requests", "0"]
        result = cli(
            "evaluate", HERE / "qa.jsonl", *cli_options(server, out), *batch, "--batch-wait", "1s"
        )
        assert result.returncode == 6, result.stderr
        assert not out.exists() or not out.read_text().strip()
        shutil.copy(f"{out}.batches", HERE / "batch_out.jsonl.batches")
        (HERE / "batch_out_round1_input.jsonl").write_bytes(round_input(server))
        server.batch.release()


if __name__ == "__main__":
    library_checkpoint()
    with LocalOpenAIServer() as local:
        library_batch(local)
        cli_out(local)
        cli_batch(local)
