"""DataFrames and Parquet in and out: ``evaluate`` takes a pandas DataFrame, its results
come back as one (``to_pandas()``), and the CLI reads ``.parquet`` files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import (
    EINSTEIN_CLAIMS,
    EINSTEIN_REFERENCE,
    EINSTEIN_RESPONSE,
    answer_metrics,
    fact_judge,
)

from langchain_answer_metrics import FactualCorrectness, Faithfulness
from langchain_answer_metrics.cli.datasets import DatasetError, load_rows
from langchain_answer_metrics.run.runner import EvaluationResults, aevaluate, evaluate
from langchain_answer_metrics.run.tables import (
    RESULT_SUFFIXES,
    plain,
    samples_from_dataframe,
)
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

pd = pytest.importorskip("pandas")

ROWS: list[dict[str, Any]] = [
    {
        "id": "einstein",
        "question": "Where was Einstein born?",
        "answer": EINSTEIN_RESPONSE,
        "ground_truth": EINSTEIN_REFERENCE,
        "contexts": [EINSTEIN_REFERENCE],
    },
    {
        "id": "paris",
        "question": "What is the capital of France?",
        "answer": "Paris is the capital of France.",
        "ground_truth": "Paris is the capital of France.",
        "contexts": ["Paris is the capital of France."],
    },
    {  # no answer: an error in that row, not the run's
        "id": "missing",
        "question": "Anything?",
        "answer": None,
        "ground_truth": "Something.",
        "contexts": ["Something."],
    },
]


def metrics() -> list[Any]:
    judge = fact_judge(claims=EINSTEIN_CLAIMS)
    return [FactualCorrectness(llm=judge, threshold=0.7), Faithfulness(llm=judge)]


def test_evaluate_takes_a_dataframe_and_gives_one_back() -> None:
    frame = pd.DataFrame(ROWS)
    rows = evaluate(frame, metrics())
    assert isinstance(rows, EvaluationResults) and isinstance(rows, list)
    expected = evaluate([samples_from_dataframe(frame)[i] for i in range(3)], metrics())
    assert [row.model_dump() for row in rows] == [row.model_dump() for row in expected]

    out = rows.to_pandas()
    assert list(out.columns[: len(frame.columns)]) == list(frame.columns)  # inputs first
    for key in ("factual_correctness", "faithfulness"):
        assert [f"{key}_{s}" for s in RESULT_SUFFIXES] == [
            c for c in out.columns if c.startswith(f"{key}_")
        ]
    einstein, paris, missing = out.to_dict(orient="records")
    assert einstein["factual_correctness_score"] == pytest.approx(0.5)
    assert einstein["factual_correctness_passed"] is False
    assert paris["factual_correctness_passed"] is True
    assert pd.isna(einstein["factual_correctness_error"])
    result = json.loads(einstein["factual_correctness_result"])
    assert result["score"] == pytest.approx(0.5) and result["details"]["kind"]
    assert pd.isna(missing["faithfulness_score"]) and pd.isna(missing["faithfulness_passed"])
    assert missing["faithfulness_error"].startswith("InvalidSampleError: faithfulness:")
    assert pd.isna(missing["faithfulness_result"])
    assert str(out["factual_correctness_score"].dtype) == "Float64"
    assert str(out["factual_correctness_passed"].dtype) == "boolean"


async def test_aevaluate_takes_a_dataframe_too() -> None:
    rows = await aevaluate(pd.DataFrame(ROWS[:2]), metrics())
    assert rows.to_pandas()["id"].tolist() == ["einstein", "paris"]


def test_results_of_plain_samples_as_a_dataframe() -> None:
    samples = [{"response": "Paris is in France.", "reference": "Paris is in France."}]
    rows = evaluate(samples, metrics()[:1])
    assert rows.to_pandas().columns[0] == "index"
    joined = rows.to_pandas(inputs=samples)
    assert joined.loc[0, "response"] == "Paris is in France."
    assert joined.loc[0, "factual_correctness_score"] == 1.0


def test_cells_are_made_plain() -> None:
    np = pytest.importorskip("numpy")
    assert plain(float("nan")) is None
    assert plain(pd.NA) is None
    assert plain(np.array(["a", "b"], dtype=object)) == ["a", "b"]
    assert plain(np.float64(0.5)) == 0.5


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    pytest.importorskip("pyarrow")
    pd.DataFrame(rows).to_parquet(path)
    return path


def test_a_parquet_file_is_read_with_list_columns_and_nulls(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "qa.parquet", ROWS)
    rows = load_rows(path, required=("response",))
    assert [row.id for row in rows] == ["einstein", "paris", "missing"]
    assert rows[0].sample.retrieved_contexts == [EINSTEIN_REFERENCE]
    assert rows[0].sample.response == EINSTEIN_RESPONSE
    assert rows[2].sample.response is None
    assert rows[0].location == "row 1"


def test_a_bad_parquet_file_is_one_line_to_fix(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet", encoding="utf-8")
    with pytest.raises(DatasetError, match="not a readable Parquet file"):
        load_rows(bad)
    with pytest.raises(DatasetError, match="no such file"):
        load_rows(tmp_path / "absent.parquet")


def test_the_cli_scores_a_parquet_file(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "qa.parquet", ROWS[:2])
    out = tmp_path / "out.jsonl"
    with LocalOpenAIServer() as server:
        done = answer_metrics(
            "evaluate",
            path,
            "--metric",
            "faithfulness",
            "--base-url",
            server.base_url,
            "--model",
            "judge-a",
            "--out",
            out,
            "--quiet",
        )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [record["id"] for record in records] == ["einstein", "paris"]
    assert records[0]["retrieved_contexts"] == [EINSTEIN_REFERENCE]
    assert all(record["metrics"]["faithfulness"]["error"] is None for record in records)
