"""One reading of rows everywhere (issue 30 §1): the same rows score the same whether the
CLI reads them from a CSV, JSONL or Parquet file, or the runner gets a list of dicts, a
DataFrame from ``pd.read_csv`` or ``pd.read_parquet``, Ray Data or LangSmith examples;
a value of the wrong type is named as such; JSON nested 100,000 levels deep is a data
error, never a ``RecursionError``. Through the real HTTP path to the local server's toy
judge."""

from __future__ import annotations

import csv
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from langsmith import Client, evaluate
from langsmith.schemas import Example

from langchain_answer_metrics import ContextPrecision, Faithfulness, InvalidSampleError, evaluators
from langchain_answer_metrics.cli.command import main
from langchain_answer_metrics.core.json_text import JSONTooDeepError, parse_json
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.runner import evaluate_dataset
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

pd = pytest.importorskip("pandas")

QUESTION = "When and where was the Eiffel Tower built?"
ANSWER = "The Eiffel Tower was built in 1889. It stands in Paris."
REFERENCE = "The Eiffel Tower was built in 1889. It stands in Paris."
USEFUL = "The Eiffel Tower was completed in 1889 in Paris."
USELESS = "Lyon has a Roman theatre."
MARKER = "[1] The Eiffel Tower was completed in 1889 in Paris."

# The rows as a CSV holds them: every cell a text; the contexts of "list" a JSON list
# whose useful context comes second (so ContextPrecision is 0.5 read as two contexts,
# 1.0 read as one text holding both), of "marker" a citation marker, not a list.
CELLS: dict[str, str] = {
    "list": json.dumps([USELESS, USEFUL]),
    "marker": MARKER,
    "plain": USEFUL,
}
KEYS = ("context_precision", "faithfulness")
DEEP = "[" * 100_000 + "]" * 100_000


def rows() -> list[dict[str, str]]:
    return [
        {
            "id": key,
            "question": QUESTION,
            "answer": ANSWER,
            "ground_truth": REFERENCE,
            "contexts": cell,
        }
        for key, cell in CELLS.items()
    ]


def write_csv(path: Path, records: list[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    return path


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def judge(server: LocalOpenAIServer) -> ChatOpenAI:
    # A base URL of its own: langchain-openai shares one async client per URL.
    return ChatOpenAI(
        base_url=f"{server.url}/{uuid.uuid4().hex[:12]}/v1",
        api_key="sk-test",
        model="judge-a",
        use_responses_api=False,
    )


def metrics(server: LocalOpenAIServer) -> list[AnswerMetric]:
    return [ContextPrecision(llm=judge(server)), Faithfulness(llm=judge(server))]


Scores = dict[tuple[str, str], tuple[float | None, str]]


def from_runner(ids: list[str], results: Any) -> Scores:
    """Per (row id, metric key): the score and the reason (or the error's message)."""
    scores: Scores = {}
    for row_id, row in zip(ids, results):
        for key, outcome in row.results.items():
            score = getattr(outcome, "score", None)
            scores[row_id, key] = (score, getattr(outcome, "reason", None) or outcome.message)
    return scores


def run_cli(server: LocalOpenAIServer, data: Path, out: Path, *extra: str) -> int:
    return main(
        [
            "evaluate",
            str(data),
            "--metric",
            "context_precision",
            "--metric",
            "faithfulness",
            "--base-url",
            server.base_url,
            "--model",
            "judge-a",
            "--out",
            str(out),
            "--quiet",
            *extra,
        ]
    )


def from_cli(out: Path) -> Scores:
    scores: Scores = {}
    for line in out.read_text("utf-8").splitlines():
        record = json.loads(line)
        for key, outcome in record["metrics"].items():
            if outcome.get("error"):
                scores[record["id"], key] = (None, outcome["error"]["message"])
            else:
                scores[record["id"], key] = (outcome["score"], outcome["reason"])
    return scores


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
        monkeypatch.delenv(name, raising=False)


# --------------------------------------------------------------------------- equal scores


def test_a_csv_contexts_cell_holding_a_json_list_is_two_contexts_however_it_is_read(
    server: LocalOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_csv(tmp_path / "qa.csv", rows())
    ids = list(CELLS)

    assert run_cli(server, data, tmp_path / "csv.jsonl") == 0, capsys.readouterr().err
    through_cli = from_cli(tmp_path / "csv.jsonl")
    # The report: "1 of 2" useful contexts, the useful one second.
    score, reason = through_cli["list", "context_precision"]
    assert score == pytest.approx(0.5)
    assert "1 of 2 contexts useful" in reason

    frame = pd.read_csv(data)  # the contexts column holds the JSON list as text
    assert isinstance(frame["contexts"][0], str)
    with open(data, encoding="utf-8", newline="") as handle:
        dicts = list(csv.DictReader(handle))
    write_jsonl(tmp_path / "qa.jsonl", dicts)
    frame.to_parquet(tmp_path / "text.parquet")  # the cell as text, as read_csv left it
    listed = frame.assign(
        contexts=[
            json.loads(cell) if cell.startswith('["') else [cell] for cell in frame["contexts"]
        ]
    )
    listed.to_parquet(tmp_path / "list.parquet")  # a list column

    readings: dict[str, Scores] = {
        "list of dicts": from_runner(ids, evaluate_dataset(dicts, metrics(server))),
        "pd.read_csv": from_runner(ids, evaluate_dataset(frame, metrics(server))),
        "pd.read_parquet (text)": from_runner(
            ids, evaluate_dataset(pd.read_parquet(tmp_path / "text.parquet"), metrics(server))
        ),
        "pd.read_parquet (list)": from_runner(
            ids, evaluate_dataset(pd.read_parquet(tmp_path / "list.parquet"), metrics(server))
        ),
    }
    for name in ("qa.jsonl", "text.parquet", "list.parquet"):
        out = tmp_path / f"{name}.out.jsonl"
        assert run_cli(server, tmp_path / name, out) == 0, capsys.readouterr().err
        readings[f"CLI {name}"] = from_cli(out)
    for name, scores in readings.items():
        assert scores.keys() == through_cli.keys(), name
        for where, (score, reason) in through_cli.items():
            assert scores[where][0] == pytest.approx(score), (name, where)
            assert scores[where][1] == reason, (name, where)
    assert through_cli["marker", "context_precision"][0] == pytest.approx(1.0)


def test_langsmith_examples_are_read_as_the_cli_reads_the_file(
    server: LocalOpenAIServer,
    tmp_path: Path,
    langsmith_offline: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = write_csv(tmp_path / "qa.csv", rows())
    assert run_cli(server, data, tmp_path / "out.jsonl") == 0, capsys.readouterr().err
    through_cli = from_cli(tmp_path / "out.jsonl")

    # Examples made from the CSV's rows, as an upload of the CSV keeps them: texts.
    examples = [
        Example(
            id=uuid.uuid4(),
            inputs={"question": QUESTION, "row": key},
            outputs={"ground_truth": REFERENCE},
        )
        for key in CELLS
    ]

    def app(inputs: dict[str, Any]) -> dict[str, Any]:
        return {"answer": ANSWER, "contexts": CELLS[inputs["row"]]}

    client = Client(
        api_key="offline",
        api_url="http://127.0.0.1:9",
        auto_batch_tracing=False,
        tracing_sampling_rate=0.0,
    )
    results = evaluate(
        app,
        data=examples,
        evaluators=evaluators(metrics(server)),
        client=client,
        upload_results=False,
    )
    seen = 0
    for row in results:
        key = row["example"].inputs["row"]
        for feedback in row["evaluation_results"]["results"]:
            score, reason = through_cli[key, feedback.key]
            assert feedback.score == pytest.approx(score), (key, feedback.key)
            assert feedback.comment == reason, (key, feedback.key)
            seen += 1
    assert seen == len(CELLS) * len(KEYS)


@pytest.mark.slow  # starts a Ray cluster
def test_ray_reads_rows_as_the_cli_does(
    server: LocalOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ray = pytest.importorskip("ray")
    ray_data = pytest.importorskip("ray.data")
    from support import local_models, write_models_yaml

    from langchain_answer_metrics.ray import evaluate_dataset as ray_evaluate

    number = {**rows()[0], "id": "number", "contexts": 5}
    data = write_csv(tmp_path / "qa.csv", rows())
    out = tmp_path / "out.jsonl"
    assert run_cli(server, write_jsonl(tmp_path / "qa.jsonl", [*rows(), number]), out) == 3
    through_cli = from_cli(out)

    monkeypatch.setenv("ONE_READING_KEY", "sk-test")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    monkeypatch.setenv("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    config = write_models_yaml(tmp_path, local_models(server, "ONE_READING_KEY"))
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        _temp_dir=str(Path("/tmp") / f"ray-one-reading-{uuid.uuid4().hex[:8]}"),
    )
    try:
        ray_data.DataContext.get_current().enable_progress_bars = False
        options: dict[str, Any] = {"metrics": list(KEYS), "config": config, "actors": 1}
        scored = ray_evaluate(ray_data.read_csv(str(data)), **options).to_pandas()
        refused = ray_evaluate(ray_data.from_items([number]), **options).to_pandas()
    finally:
        ray.shutdown()
    through_ray = pd.concat([scored, refused]).to_dict(orient="records")
    for record in through_ray:
        for key in KEYS:
            score, reason = through_cli[record["id"], key]
            if score is None:
                assert record[f"{key}_error"].endswith(reason.split(": ", 1)[1])
                assert "holds a number, expected texts" in record[f"{key}_error"]
            else:
                assert record[f"{key}_score"] == pytest.approx(score), (record["id"], key)
                assert record[f"{key}_reason"] == reason, (record["id"], key)


# --------------------------------------------------------------------------- wrong types


def test_a_field_of_the_wrong_type_says_what_it_holds_everywhere(
    server: LocalOpenAIServer,
    tmp_path: Path,
    langsmith_offline: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    row = {
        "id": "1",
        "question": QUESTION,
        "answer": ANSWER,
        "ground_truth": REFERENCE,
        "contexts": 5,
    }
    expected = "field 'retrieved_contexts' holds a number, expected texts"

    # The CLI said "is required but missing": the number was dropped on reading.
    out = tmp_path / "out.jsonl"
    assert run_cli(server, write_jsonl(tmp_path / "qa.jsonl", [row]), out) == 3
    for key in KEYS:
        message = from_cli(out)["1", key][1]
        assert message.startswith(f"{key}: {expected}"), message
    for name, given in {"list of dicts": [row], "DataFrame": pd.DataFrame([row])}.items():
        results = evaluate_dataset(given, metrics(server))
        for key in KEYS:
            assert results[0].results[key].message.startswith(f"{key}: {expected}"), name
    # A LangSmith run whose contexts are a number: the feedback says so.
    example = Example(
        id=uuid.uuid4(), inputs={"question": QUESTION}, outputs={"ground_truth": REFERENCE}
    )
    client = Client(
        api_key="offline",
        api_url="http://127.0.0.1:9",
        auto_batch_tracing=False,
        tracing_sampling_rate=0.0,
    )
    results = evaluate(
        lambda inputs: {"answer": ANSWER, "contexts": 5},
        data=[example],
        evaluators=evaluators(metrics(server)),
        client=client,
        upload_results=False,
    )
    comments = [f.comment for row in results for f in row["evaluation_results"]["results"]]
    assert len(comments) == 2 and all(expected in (c or "") for c in comments), comments
    # A text field holding a list of numbers, given to invoke.
    with pytest.raises(InvalidSampleError, match="field 'response' holds a list, expected text"):
        Faithfulness(llm=judge(server)).invoke({"response": [1, 2], "retrieved_contexts": ["a"]})
    assert server.chat_requests == 0  # every refusal came before any request


# --------------------------------------------------------------------------- deep JSON


def test_parse_json_refuses_deep_nesting_in_words() -> None:
    with pytest.raises(JSONTooDeepError, match="nested more than 200 levels deep"):
        parse_json(DEEP)
    with pytest.raises(JSONTooDeepError):
        parse_json('{"a": ' * 201 + "1" + "}" * 201)  # deep enough to read, too deep to keep
    assert parse_json("[" * 200 + "]" * 200) == parse_json("[" * 200 + "]" * 200)
    with pytest.raises(json.JSONDecodeError):
        parse_json("[1,")


@pytest.mark.parametrize(
    ("name", "content", "where"),
    [
        ("deep.jsonl", '{"response": "a"}\n{"response": ' + DEEP + "}\n", "line 2"),
        ("deep.json", '[{"response": ' + DEEP + "}]", "deep.json"),
        # 50,000 levels: a CSV cell is at most 131,072 characters long.
        ("deep.csv", f'id,response,contexts\n1,a,b\n2,a,"{DEEP[50_000:-50_000]}"\n', "line 3"),
    ],
    ids=["jsonl", "json", "csv"],
)
def test_a_deeply_nested_line_is_a_data_error_naming_the_line(
    name: str, content: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    code = main(
        [
            "evaluate",
            str(path),
            "--metric",
            "faithfulness",
            "--model",
            "judge-a",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ]
    )
    error = capsys.readouterr().err
    assert code == 2, error  # a data error, not an internal error (4)
    lines = [line for line in error.splitlines() if line.strip()]
    assert len(lines) == 1, error
    assert where in lines[0] and "nested more than 200 levels deep" in lines[0], lines[0]
    assert "RecursionError" not in error


def test_a_deep_cell_in_a_dataframe_or_langsmith_run_is_named_before_any_request(
    server: LocalOpenAIServer, langsmith_offline: None
) -> None:
    frame = pd.DataFrame([{**rows()[2], "contexts": USEFUL}, {**rows()[2], "contexts": DEEP}])
    with pytest.raises(InvalidSampleError, match="row 2: field 'retrieved_contexts' holds JSON"):
        evaluate_dataset(frame, metrics(server))
    evaluator = evaluators([Faithfulness(llm=judge(server))])[0]
    with pytest.raises(InvalidSampleError, match="faithfulness: field 'retrieved_contexts'"):
        evaluator.sample_from({"outputs": {"answer": ANSWER, "contexts": DEEP}})
    assert server.chat_requests == 0


def test_a_results_file_with_a_deep_line_is_not_an_internal_error(
    server: LocalOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_csv(tmp_path / "qa.csv", rows())
    out = tmp_path / "out.jsonl"
    assert run_cli(server, data, out) == 0
    first = out.read_text("utf-8").splitlines()[0]
    out.write_text(first + "\n" + '{"id": ' + DEEP + "}\n", encoding="utf-8")
    code = run_cli(server, data, out)
    error = capsys.readouterr().err
    assert code != 4 and "RecursionError" not in error, error
