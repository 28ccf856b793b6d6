"""``align`` keeps what its fit needs of each labelled row (its sample, label and
explanation, then the metric's result), never the file's rows: they are read a line at a
time, as ``align`` takes them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import answer_metrics, local_models, write_models_yaml
from test_align import (
    CRITERION,
    capital_rows,
    critic,
    judge,
    responder,
    shared_server,  # noqa: F401 (the module's server: test_align's)
)
from test_cli_streaming import Alive

import langchain_answer_metrics.cli.datasets as cli_datasets
from langchain_answer_metrics.analysis.aligned_metric import AlignedMetric
from langchain_answer_metrics.analysis.alignment import align
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer


@pytest.mark.slow  # an alignment end to end
def test_align_reads_the_rows_a_line_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alive, read_rows = Alive(), cli_datasets.iter_rows

    def counting_rows(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for row in read_rows(*args, **kwargs):
            yield alive.add(row)

    monkeypatch.setattr(cli_datasets, "iter_rows", counting_rows)
    monkeypatch.setenv("ALIGN_TEST_KEY", "sk-test")
    rows = capital_rows()
    for number, row in enumerate(list(rows)):  # rows without a label are read and left out
        rows.append({**{k: v for k, v in row.items() if k != "human"}, "id": f"more-{number}"})
    data = tmp_path / "labelled.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "aligned.yaml"
    with LocalOpenAIServer(responder=responder) as server:
        config = write_models_yaml(tmp_path, local_models(server, "ALIGN_TEST_KEY"))
        result = answer_metrics(
            "align",
            data,
            "--label-col",
            "human",
            "--metric",
            "aspect_critic",
            "--criterion",
            CRITERION,
            "--config",
            config,
            "--folds",
            "4",
            "--quiet",
            "--out",
            out,
        )
        sent = server.chat_requests

    assert result.returncode == 0, result.stderr
    assert "improved" in result.stdout
    assert sent == 96  # the 48 labelled rows scored before, and each once held out
    # Every row was read (to check the file, then as align took them), a few at once
    # (before: every row of the file held, and a dict of each labelled one beside it).
    assert alive.seen >= 2 * len(rows), alive.seen
    assert alive.peak <= 2, alive.peak
    assert AlignedMetric.read(out).fitted_on.rows == 48


@pytest.mark.slow  # three alignments
def test_an_alignment_with_a_checkpoint_resumes_sending_only_what_is_missing(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "align.jsonl"

    first = align(critic(judge(server)), capital_rows(), folds=4, seed=0, checkpoint=checkpoint)

    assert server.chat_requests == 96  # 48 rows before, each once more held out
    lines = checkpoint.read_text("utf-8").splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert sorted(ids) == sorted(
        [row["id"] for row in capital_rows()] + [f"{row['id']}#held-out" for row in capital_rows()]
    )
    # A run killed part-way kept its first 30 scores (some before, none after), and the
    # start of a 31st line.
    checkpoint.write_text("".join(line + "\n" for line in lines[:30]) + lines[30][:40], "utf-8")
    server.reset()

    resumed = align(critic(judge(server)), capital_rows(), folds=4, seed=0, checkpoint=checkpoint)

    assert server.chat_requests == 96 - 30
    assert resumed.spent["requests"] == 96 - 30  # what this run sent, not what it read back
    # The scores read back (details included) made the same fits and the same gain.
    assert resumed.gain.summary() == first.gain.summary()
    assert resumed.aligned.model_dump() == first.aligned.model_dump()
    server.reset()

    again = align(critic(judge(server)), capital_rows(), folds=4, seed=0, checkpoint=checkpoint)

    assert server.chat_requests == 0 and again.spent["requests"] == 0
    assert again.aligned.model_dump() == first.aligned.model_dump()


@pytest.mark.slow  # two alignments end to end
def test_the_command_keeps_its_scores_and_resumes_from_them(
    server: LocalOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALIGN_TEST_KEY", "sk-test")
    config = write_models_yaml(tmp_path, local_models(server, "ALIGN_TEST_KEY"))
    data = tmp_path / "labelled.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in capital_rows()), "utf-8")
    scores, out = tmp_path / "scores.jsonl", tmp_path / "aligned.yaml"
    args = ["align", data, "--metric", "aspect_critic", "--criterion", CRITERION]
    args += ["--config", config, "--folds", "4", "--quiet", "--out", out, "--scores", scores]

    first = answer_metrics(*args)

    assert first.returncode == 0, first.stderr
    assert server.chat_requests == 96
    assert len(scores.read_text("utf-8").splitlines()) == 96
    aligned = out.read_text("utf-8")
    server.reset()

    again = answer_metrics(*args)

    assert again.returncode == 0, again.stderr
    assert server.chat_requests == 0  # every score read back from --scores
    spent = "cost: estimated 96 requests, no price; spent {} requests, no price"
    assert spent.format(96) in first.stdout and spent.format(0) in again.stdout
    assert again.stdout == first.stdout.replace(spent.format(96), spent.format(0))
    assert out.read_text("utf-8") == aligned


def test_a_scores_file_that_is_not_ours_is_refused_naming_the_option(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = tmp_path / "labelled.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in capital_rows()), "utf-8")
    theirs = tmp_path / "notes.jsonl"
    theirs.write_text('{"note": "not a run of ours"}\n', "utf-8")
    args = ["align", data, "--metric", "aspect_critic", "--criterion", CRITERION]
    args += ["--base-url", server.base_url, "--model", "judge-a"]

    result = answer_metrics(*args, "--out", tmp_path / "aligned.yaml", "--scores", theirs)

    assert result.returncode == 2, result.stderr
    assert f"--scores {theirs}: line 1 is not a checkpoint line" in result.stderr
    assert "checkpoint " + str(theirs) not in result.stderr
    assert server.chat_requests == 0
    assert theirs.read_text("utf-8") == '{"note": "not a run of ours"}\n'
