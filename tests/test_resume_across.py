"""One file, two doors: the CLI's ``--out`` resumed by ``evaluate_dataset(checkpoint=)``,
and a checkpoint resumed by ``answer-metrics evaluate --out``, sending nothing twice.

Both sides identify a row the same way (``run/records/identity.py``): its ``id`` field
(else its number from 1) and a hash of the fields it has. Through the local
OpenAI-compatible server over HTTP (``ChatOpenAI`` for the library, ``--base-url`` for the
CLI); the requests the server received are counted, and the rows re-scored named by the
texts they sent.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from langchain_openai import ChatOpenAI
from support import evaluate_args
from test_cli import cli, out_lines, write_jsonl

from langchain_answer_metrics import (
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    aevaluate_dataset,
    evaluate_dataset,
)
from langchain_answer_metrics.cli.datasets import load_rows
from langchain_answer_metrics.run.records.identity import sample_fingerprint
from langchain_answer_metrics.run.tables import run_inputs, samples_from_records
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

ROWS: list[dict[str, Any]] = [
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
        # No question: a field that is absent must hash the same on both sides.
        "id": "ru-1",
        "answer": "Аполлон-11 сел на Луну в 1969 году.",
        "ground_truth": "Аполлон-11 высадился на Луну 20 июля 1969 года.",
        "contexts": ["Аполлон-11 высадился на Луну 20 июля 1969 года."],
    },
    {
        "id": "zh-1",
        "question": "长城有多长？",
        "answer": "长城全长约两万公里。它建于1500年。",
        "ground_truth": "长城全长约21196公里。",
        "contexts": ["长城全长21196.18公里。"],
    },
]
CRITERION = "It gives a year."
CLI_METRICS = ["--metric", "faithfulness,factual_correctness,aspect_critic"]
CLI_METRICS += ["--criterion", CRITERION]


def judge(server: LocalOpenAIServer) -> ChatOpenAI:
    """The CLI's ``--model judge-a`` as a library judge: the same model at temperature 0
    (a judge with other sampling settings is another judge, scored again)."""
    return ChatOpenAI(
        model="judge-a",
        temperature=0,
        base_url=server.base_url,
        api_key="sk-test",
        use_responses_api=False,
        max_retries=0,
    )


def metrics(server: LocalOpenAIServer) -> list[Any]:
    """The library's metrics that the CLI's ``CLI_METRICS`` builds."""
    llm = judge(server)
    return [
        Faithfulness(llm=llm),
        FactualCorrectness(llm=llm),
        AspectCritic(llm=llm, criterion=CRITERION),
    ]


def run_cli(server: LocalOpenAIServer, data: Path, out: Path, *extra: str, code: int = 0) -> str:
    result = cli(
        "evaluate",
        data,
        *CLI_METRICS,
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--out",
        out,
        "--quiet",
        *extra,
    )
    assert result.returncode == code, result.stderr
    return result.stderr


def records(out: Path) -> dict[str, dict[str, Any]]:
    """The last record of each id."""
    return {line["id"]: line for line in out_lines(out) if "id" in line}


def scores(out: Path) -> dict[str, dict[str, float | None]]:
    return {
        sample_id: {key: entry["score"] for key, entry in line["metrics"].items()}
        for sample_id, line in records(out).items()
    }


def rows_scored(server: LocalOpenAIServer, rows: list[dict[str, Any]]) -> list[str]:
    """The ids of the rows whose answer the server was sent (in a request's messages)."""
    sent = " ".join(json.dumps(request.body, ensure_ascii=False) for request in server.requests)
    return [row["id"] for row in rows if row["answer"].split(".")[0].split("。")[0] in sent]


def library_scores(rows: Any) -> list[dict[str, float | None]]:
    return [{key: outcome.score for key, outcome in row.results.items()} for row in rows]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "qa.jsonl", ROWS)


def test_a_cli_out_file_resumes_as_a_checkpoint_with_no_request(
    server: LocalOpenAIServer, data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    run_cli(server, data, out)
    assert server.chat_requests > 0
    written = scores(out)
    server.reset()

    rows = evaluate_dataset(ROWS, metrics(server), checkpoint=out)

    assert server.chat_requests == 0
    assert not any(row.errors for row in rows)
    for row, source in zip(library_scores(rows), ROWS, strict=True):
        assert row == pytest.approx(written[source["id"]])
    assert len(out_lines(out)) == len(ROWS)  # nothing was scored, so nothing appended


def test_a_checkpoint_resumes_in_the_cli_with_no_request(
    server: LocalOpenAIServer, data: Path, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "run.jsonl"
    rows = asyncio.run(aevaluate_dataset(ROWS, metrics(server), checkpoint=checkpoint))
    assert server.chat_requests > 0 and not any(row.errors for row in rows)
    server.reset()

    stderr = run_cli(server, data, checkpoint)

    assert server.chat_requests == 0
    assert f"resuming: {len(ROWS)} samples already scored" in stderr
    written = scores(checkpoint)
    for row, source in zip(library_scores(rows), ROWS, strict=True):
        assert written[source["id"]] == pytest.approx(row)


def _keep_records(path: Path, ids: set[str], *, torn: bool) -> None:
    """``path`` as an interrupted run leaves it: the records of ``ids`` only, and, with
    ``torn``, the next record cut short mid-line (a kill while it was written)."""
    lines = path.read_text("utf-8").splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line).get("id") in ids]
    cut = next(line for line in lines if json.loads(line).get("id") not in ids)
    path.write_text("".join(kept) + (cut[: len(cut) // 2] if torn else ""), "utf-8")


def test_an_interrupted_cli_run_is_finished_by_the_library(
    server: LocalOpenAIServer, data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    run_cli(server, data, out)
    full = scores(out)
    _keep_records(out, {"en-1", "ru-1"}, torn=True)
    server.reset()

    rows = evaluate_dataset(ROWS, metrics(server), checkpoint=out)

    assert rows_scored(server, ROWS) == ["en-2", "zh-1"]  # only the rows missing
    assert not any(row.errors for row in rows)
    assert scores(out) == full  # the same judge's verdicts: the same scores
    server.reset()
    evaluate_dataset(ROWS, metrics(server), checkpoint=out)
    assert server.chat_requests == 0


def test_an_interrupted_library_run_is_finished_by_the_cli(
    server: LocalOpenAIServer, data: Path, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "run.jsonl"
    rows = evaluate_dataset(ROWS, metrics(server), checkpoint=checkpoint)
    _keep_records(checkpoint, {"en-2"}, torn=False)
    server.reset()

    stderr = run_cli(server, data, checkpoint)

    assert "resuming: 1 sample already scored" in stderr
    assert rows_scored(server, ROWS) == ["en-1", "ru-1", "zh-1"]
    written = scores(checkpoint)
    for row, source in zip(library_scores(rows), ROWS, strict=True):
        assert written[source["id"]] == pytest.approx(row)


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    columns = list(dict.fromkeys(key for row in rows for key in row))
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            cells = {
                key: json.dumps(value, ensure_ascii=False) if isinstance(value, list) else value
                for key, value in row.items()
            }
            writer.writerow(cells)
    return path


@pytest.mark.parametrize("with_ids", [True, False], ids=["id column", "numbered"])
def test_a_dataframe_read_from_csv_and_the_cli_on_that_csv_share_one_file(
    server: LocalOpenAIServer, tmp_path: Path, with_ids: bool
) -> None:
    rows = ROWS if with_ids else [{k: v for k, v in row.items() if k != "id"} for row in ROWS]
    table = _write_csv(tmp_path / "qa.csv", rows)
    out = tmp_path / "results.jsonl"
    run_cli(server, table, out)
    expected_ids = [row["id"] for row in ROWS] if with_ids else ["1", "2", "3", "4"]
    assert list(records(out)) == expected_ids
    server.reset()

    frame = pd.read_csv(table)
    results = evaluate_dataset(frame, metrics(server), checkpoint=out)

    assert server.chat_requests == 0
    assert not any(row.errors for row in results)
    assert results.to_pandas()["faithfulness_score"].tolist() == pytest.approx(
        [scores(out)[sample_id]["faithfulness"] for sample_id in expected_ids]
    )

    # And back: a row changed in the frame is scored again by the CLI, and only that row.
    frame.loc[1, "answer"] = "Lyon is the capital of France."
    evaluate_dataset(frame, metrics(server), checkpoint=out)
    assert rows_scored(server, [{"id": "x", "answer": "Lyon is the capital"}]) == ["x"]
    server.reset()
    changed = tmp_path / "changed.csv"
    frame.to_csv(changed, index=False)
    run_cli(server, changed, out)
    assert server.chat_requests == 0


def test_what_differs_is_scored_again_and_only_that(
    server: LocalOpenAIServer, data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    cli_result = cli(*evaluate_args(data, out, server))
    assert cli_result.returncode == 0, cli_result.stderr
    server.reset()

    # A metric added: only it is scored (as many requests as a run of it alone).
    evaluate_dataset(
        ROWS,
        [Faithfulness(llm=judge(server)), FactualCorrectness(llm=judge(server))],
        checkpoint=out,
    )
    added = server.chat_requests
    with LocalOpenAIServer() as alone:
        evaluate_dataset(ROWS, [FactualCorrectness(llm=judge(alone))])
        assert added == alone.chat_requests > 0

    # A row whose text changed: that row only.
    changed = [*ROWS[:3], {**ROWS[3], "answer": "长城全长约一万公里。"}]
    server.reset()
    evaluate_dataset(changed, [Faithfulness(llm=judge(server))], checkpoint=out)
    assert server.chat_requests > 0 and rows_scored(server, changed) == ["zh-1"]

    # Another judge: every row again (its scores are not the first judge's).
    server.reset()
    other = ChatOpenAI(
        model="judge-b",
        base_url=server.base_url,
        api_key="sk-test",
        use_responses_api=False,
        max_retries=0,
    )
    evaluate_dataset(ROWS, [Faithfulness(llm=other)], checkpoint=out)
    assert rows_scored(server, ROWS) == [row["id"] for row in ROWS]


def test_the_same_id_twice_is_refused_before_any_request(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    twice = [ROWS[0], {**ROWS[1], "id": "en-1"}]
    with pytest.raises(ValueError, match=r"index 0 and 1 have the same id 'en-1'.*id_key="):
        evaluate_dataset(twice, [Faithfulness(llm=judge(server))], checkpoint=tmp_path / "r.jsonl")
    assert server.chat_requests == 0
    # Past the read-ahead window too: a list is checked whole before the run starts.
    late = [*ROWS, {**ROWS[1], "answer": "Paris."}]
    with pytest.raises(ValueError, match=r"index 1 and 4 have the same id 'en-2'"):
        evaluate_dataset(
            late, [Faithfulness(llm=judge(server))], checkpoint=tmp_path / "r.jsonl", window=1
        )
    assert server.chat_requests == 0 and not (tmp_path / "r.jsonl").exists()

    # id_key=None numbers the samples; id_key= names another key, as the CLI's --id-col.
    rows = evaluate_dataset(
        twice, [Faithfulness(llm=judge(server))], checkpoint=tmp_path / "n.jsonl", id_key=None
    )
    assert not any(row.errors for row in rows)
    assert list(records(tmp_path / "n.jsonl")) == ["1", "2"]
    keyed = [{**row, "qid": f"q{number}"} for number, row in enumerate(twice)]
    evaluate_dataset(
        keyed, [Faithfulness(llm=judge(server))], checkpoint=tmp_path / "q.jsonl", id_key="qid"
    )
    assert list(records(tmp_path / "q.jsonl")) == ["q0", "q1"]


def _earlier_fingerprint(row: dict[str, Any]) -> str:
    """What the CLI wrote before this version: every Sample field named, a missing one
    null (the formula of cli/datasets.py at 0151843)."""
    fields = {
        "user_input": row.get("question"),
        "response": row["answer"],
        "reference": row.get("ground_truth"),
        "retrieved_contexts": row.get("contexts"),
    }
    payload = json.dumps(fields, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def test_an_earlier_versions_fingerprints_still_resume_on_both_sides(
    server: LocalOpenAIServer, data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    run_cli(server, data, out)
    lines = out_lines(out)
    by_id = {row["id"]: row for row in ROWS}
    for line in lines:
        line["fingerprint"] = _earlier_fingerprint(by_id[line["id"]])
    # The row without a question is the one whose fingerprint this version changed.
    assert lines[2]["fingerprint"] != records(out)["ru-1"]["fingerprint"]
    out.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    server.reset()

    run_cli(server, data, out)
    assert server.chat_requests == 0
    evaluate_dataset(ROWS, metrics(server), checkpoint=out)
    assert server.chat_requests == 0


AGENT_MESSAGES = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    {"role": "assistant", "content": "It is sunny."},
]


@pytest.mark.parametrize(
    "row",
    [
        ROWS[0],
        ROWS[2],  # no question
        {"answer": "Only an answer."},
        {"id": 7, "answer": 42, "contexts": '["a JSON list", "in a cell"]'},  # read as text
        {"id": "bad", "answer": "A.", "contexts": 5},  # a value no metric can read
        {
            "id": "agent",
            "messages": AGENT_MESSAGES,
            "reference_tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}],
        },
    ],
    ids=["whole", "no question", "answer only", "numbers", "unreadable", "agent"],
)
def test_the_cli_and_the_runner_identify_a_row_alike(tmp_path: Path, row: dict[str, Any]) -> None:
    (cli_row,) = load_rows(write_jsonl(tmp_path / "one.jsonl", [row]))
    (sample,) = run_inputs([json.loads(json.dumps(row))])

    assert cli_row.fingerprint == sample_fingerprint(sample)
    assert cli_row.id == (getattr(sample, "row_id", None) or "1")


@pytest.mark.parametrize("row", [ROWS[0], ROWS[2], {"answer": "Only an answer."}])
def test_a_sample_hashes_as_the_same_row_as_a_dict(tmp_path: Path, row: dict[str, Any]) -> None:
    (cli_row,) = load_rows(write_jsonl(tmp_path / "one.jsonl", [row]))
    (sample,) = samples_from_records([row])
    assert sample_fingerprint(sample) == cli_row.fingerprint


def test_a_config_panel_is_the_same_judges_on_both_sides(
    server: LocalOpenAIServer, data: Path, tmp_path: Path
) -> None:
    from langchain_answer_metrics.config import load_config

    config = tmp_path / "models.yaml"
    config.write_text(
        "providers:\n"
        f"  local:\n    base_url: {server.base_url}\n"
        "chat_models:\n  list:\n    - id: judge-a\n    - id: judge-b\n      name: second\n",
        "utf-8",
    )
    out = tmp_path / "results.jsonl"
    result = cli(
        "evaluate", data, "--metric", "faithfulness", "--config", config, "--out", out, "--quiet"
    )
    assert result.returncode == 0, result.stderr
    assert set(records(out)["en-1"]["metrics"]["faithfulness"]["per_model"]) == {
        "judge-a",
        "second",
    }
    server.reset()

    panel = load_config(config)
    rows = evaluate_dataset(ROWS, [Faithfulness(llm=panel.judges)], checkpoint=out)

    assert server.chat_requests == 0 and not any(row.errors for row in rows)


def test_a_run_stopped_by_its_request_limit_is_finished_on_the_other_side(
    server: LocalOpenAIServer, data: Path, tmp_path: Path
) -> None:
    # The CLI stops at its limit (exit 5) with the first rows saved; Python finishes it.
    out = tmp_path / "results.jsonl"
    run_cli(server, data, out, "--max-requests", "12", code=5)
    saved = list(records(out))
    assert 1 <= len(saved) < len(ROWS)
    server.reset()
    evaluate_dataset(ROWS, metrics(server), checkpoint=out)
    assert rows_scored(server, ROWS) == [row["id"] for row in ROWS if row["id"] not in saved]

    # Python stops at its limit; the CLI finishes it.
    checkpoint = tmp_path / "run.jsonl"
    server.reset()
    first = evaluate_dataset(ROWS, metrics(server), checkpoint=checkpoint, max_requests=12)
    assert first.stopped is not None and first.stopped.reason == "max_requests"
    kept = list(records(checkpoint))
    assert 1 <= len(kept) < len(ROWS)
    server.reset()
    run_cli(server, data, checkpoint)
    assert rows_scored(server, ROWS) == [row["id"] for row in ROWS if row["id"] not in kept]
    assert list(records(checkpoint)) == [row["id"] for row in ROWS]
