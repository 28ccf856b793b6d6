"""Per-context verdicts in ``--out`` records and the HTML report: ContextPrecision's and
ContextRelevance's rank, verdict and reason per judge, escaped in the report, kept by a
resume, and older records (without ``contexts``) still read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from support import local_models, write_models_yaml
from test_cli import clean_env, cli, out_lines, write_jsonl

from langchain_answer_metrics.cli.output.html_report import render_html
from langchain_answer_metrics.cli.records import (
    as_record,
    overview,
    read_records,
    record_line,
)
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

XSS = "<script>alert(1)</script>"
USELESS = f"Lyon has a Roman theatre. {XSS}"
USEFUL = "The Eiffel Tower was completed in 1889."
ROWS = [
    {
        "id": "a",
        "question": "When was the Eiffel Tower built?",
        "answer": "It was built in 1889.",
        "ground_truth": "The Eiffel Tower was built in 1889.",
        "contexts": [USELESS, USEFUL],
    },
    {
        "id": "b",
        "question": "Какая столица России?",
        "answer": "Москва.",
        "ground_truth": "Москва — столица России.",
        "contexts": ["Москва — столица России.", "Байкал — самое глубокое озеро мира."],
    },
]
# The toy judge's reasons (langchain_answer_metrics/testing/toy_rag.py), in the row's language.
NOT_USEFUL_EN = "The context does not state the reference answer's facts."
USEFUL_EN = "The context states facts of the reference answer."
RELEVANT_EN = "The context is about what the question asks."
NOT_RELEVANT_EN = "The context is not about what the question asks."
METRICS = ("--metric", "context_precision", "--metric", "context_relevance")


def contexts_by_id(out: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Per sample id (the last line wins), per metric: its ``contexts``."""
    latest = {line["id"]: line for line in out_lines(out)}
    return {
        sample_id: {key: entry["contexts"] for key, entry in line["metrics"].items()}
        for sample_id, line in latest.items()
    }


def context_items(html: str) -> list[str]:
    return re.findall(r'<li class="context [^"]*">.*?</li>', html)


def test_out_records_and_report_carry_each_contexts_verdict_and_resume_keeps_them(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    data = write_jsonl(tmp_path / "rag.jsonl", ROWS)
    out, report = tmp_path / "out.jsonl", tmp_path / "report.html"
    args = [
        "evaluate",
        data,
        *METRICS,
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--out",
        out,
        "--report",
        report,
        "--quiet",
    ]
    first = cli(*args)
    assert first.returncode == 0, first.stderr

    contexts = contexts_by_id(out)
    assert contexts["a"]["context_precision"] == [
        {"model": "judge-a", "rank": 1, "verdict": "not_useful", "reason": NOT_USEFUL_EN},
        {"model": "judge-a", "rank": 2, "verdict": "useful", "reason": USEFUL_EN},
    ]
    assert contexts["a"]["context_relevance"] == [
        {"model": "judge-a", "rank": 1, "verdict": "not_relevant", "reason": NOT_RELEVANT_EN},
        {"model": "judge-a", "rank": 2, "verdict": "relevant", "reason": RELEVANT_EN},
    ]
    # The Russian row: reasons in Russian, verdicts in rank order.
    russian = contexts["b"]["context_precision"]
    assert [(c["rank"], c["verdict"]) for c in russian] == [(1, "useful"), (2, "not_useful")]
    assert all(re.search("[а-я]", c["reason"]) for c in russian)
    scores = {line["id"]: line["metrics"]["context_precision"]["score"] for line in out_lines(out)}
    assert scores == {"a": 0.5, "b": 1.0}  # the verdicts are those scored

    page = report.read_text("utf-8")
    assert XSS not in page and "<script" not in page
    items = context_items(page)
    assert len(items) == 2 * 2 * 2  # 2 samples x 2 metrics x 2 contexts, one judge
    assert (
        '<li class="context v-contradicted"><span class="verdict">not_useful</span>#1 '
        "Lyon has a Roman theatre. &lt;script&gt;alert(1)&lt;/script&gt;"
        f'<div class="why">{NOT_USEFUL_EN.replace(chr(39), "&#x27;")}</div></li>'
    ) in items
    assert any(
        item.startswith(
            f'<li class="context v-supported"><span class="verdict">relevant</span>#2 {USEFUL}'
        )
        for item in items
    )

    requests = server.chat_requests
    second = cli(*args)
    assert second.returncode == 0, second.stderr
    assert "resuming: 2 samples already scored" in second.stderr
    assert server.chat_requests == requests  # nothing scored again
    assert contexts_by_id(out) == contexts
    records, unreadable = read_records(out)
    assert unreadable == 0
    assert [c.model_dump() for c in records["a"].metrics["context_precision"].contexts] == (
        contexts["a"]["context_precision"]
    )
    # The report rebuilt from the resumed records shows the same verdicts.
    assert context_items(report.read_text("utf-8")) == items


def test_each_judge_of_a_panel_has_its_own_verdicts(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    key_env = "CONTEXT_RECORDS_KEY"
    models = write_models_yaml(
        tmp_path, local_models(server, key_env, judges=("judge-a", "judge-b"))
    )
    data = write_jsonl(tmp_path / "rag.jsonl", ROWS[:1])
    out = tmp_path / "out.jsonl"
    result = cli(
        "evaluate",
        data,
        "--metric",
        "context_precision",
        "--config",
        models,
        "--out",
        out,
        "--quiet",
        env=clean_env(**{key_env: "sk-test-context"}),
    )
    assert result.returncode == 0, result.stderr
    judged = contexts_by_id(out)["a"]["context_precision"]
    assert [(c["model"], c["rank"], c["verdict"]) for c in judged] == [
        ("judge-a", 1, "not_useful"),
        ("judge-a", 2, "useful"),
        ("judge-b", 1, "not_useful"),
        ("judge-b", 2, "useful"),
    ]
    assert all(c["reason"] for c in judged)


def test_older_lines_without_contexts_still_read_and_new_lines_round_trip() -> None:
    metric = {
        "kind": "context_precision",
        "score": 0.5,
        "reason": "r",
        "per_model": {},
        "claims": [],
        "votes": [],
    }
    version_1 = {
        "id": "a",
        "user_input": "q",
        "metrics": {"context_precision": metric},
        "version": 1,
    }
    version_2 = {"schema_version": 2, "id": "b", "metrics": {"context_precision": metric}}
    for line in (version_1, version_2):
        record = as_record(json.loads(json.dumps(line)))
        assert record is not None
        assert record.metrics["context_precision"].contexts == []
        assert record.metrics["context_precision"].score == 0.5

    judged = [
        {
            "model": "judge-a",
            "rank": 1,
            "verdict": "not_useful",
            "reason": f"off {XSS}",
            "taken_in_order": True,
        },
        {"model": "judge-a", "rank": 2, "verdict": "useful", "reason": "on topic"},
    ]
    line = {
        "schema_version": 2,
        "id": "c",
        "retrieved_contexts": [USELESS, USEFUL],
        "metrics": {"context_precision": dict(metric, contexts=judged)},
    }
    record = as_record(line)
    assert record is not None
    written = json.loads(record_line(record))
    # taken_in_order is written only when the judge's numbering was wrong.
    assert written["metrics"]["context_precision"]["contexts"] == judged
    assert as_record(written) == record

    page = render_html([record], overview([record], ["context_precision"]), source="x")
    assert XSS not in page
    assert "off &lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert len(context_items(page)) == 2
