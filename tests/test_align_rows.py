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
from test_align import CRITERION, capital_rows, responder
from test_cli_streaming import Alive

import langchain_answer_metrics.cli.datasets as cli_datasets
from langchain_answer_metrics.analysis.aligned_metric import AlignedMetric
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
