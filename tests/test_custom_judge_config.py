"""Judges of your own declared in the config file's ``metrics:`` section, everywhere the
built-in metrics are: validation (naming the metric, the key and the YAML line, before any
request), ``answer-metrics evaluate --config judges.yaml --metric conciseness`` and its
``--estimate``, resume, report and ``--summary-json``, ``calibrate``, and the LangSmith
evaluators' feedback config per output kind. Through the real HTTP path: the CLI and
ChatOpenAI against the local OpenAI-compatible server."""

from __future__ import annotations

import json
import re
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_openai import ChatOpenAI
from langsmith import Client, evaluate
from langsmith.schemas import Example
from support import local_models
from test_cli import clean_env, cli

from langchain_answer_metrics import CustomJudge
from langchain_answer_metrics.adapters.langsmith.feedback import (
    FEEDBACK_CONFIG,
    feedback_config,
)
from langchain_answer_metrics.cli.command import build_parser, main
from langchain_answer_metrics.cli.declared import build_declared, metric_entries
from langchain_answer_metrics.config import ConfigError, load_config
from langchain_answer_metrics.config.declared import declared_metrics
from langchain_answer_metrics.metrics.registry import METRICS
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

KEY_ENV = "ANSWER_METRICS_TEST_CUSTOM_JUDGE_KEY"
ENV = {KEY_ENV: "sk-test-custom-judge"}

JUDGES = {
    "conciseness": {
        "criterion": "The answer is brief and to the point.",
        "output": {"scale": {1: "rambling", 2: "long", 3: "ok", 4: "brief", 5: "one sentence"}},
        "strictness": 3,
    },
    "tone": {
        "prompt": "Rate the tone of {response} to {user_input}.",
        "output": {"categories": {"polite": 1.0, "neutral": 0.5, "rude": 0.0}},
    },
    "harm": {
        "criterion": "The answer helps someone cause harm.",
        "output": "pass_fail",
        "higher_is_better": False,
    },
    "relevance": {"criterion": "The answer addresses the question.", "output": "continuous"},
}


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "judges.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def judges_yaml(tmp_path: Path, server: LocalOpenAIServer, **judges: Any) -> Path:
    config = local_models(server, KEY_ENV)
    config["metrics"] = judges or JUDGES
    path = tmp_path / "judges.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the section


def test_the_section_declares_each_kind(tmp_path: Path, server: LocalOpenAIServer) -> None:
    declared = declared_metrics(judges_yaml(tmp_path, server))
    assert list(declared) == ["conciseness", "tone", "harm", "relevance"]
    assert declared["conciseness"].output.kind == "scale"
    assert declared["conciseness"].output.levels[5] == "one sentence"
    assert declared["conciseness"].strictness == 3
    assert declared["tone"].output.scores == {"polite": 1.0, "neutral": 0.5, "rude": 0.0}
    assert declared["harm"].output.kind == "pass_fail"
    assert declared["harm"].higher_is_better is False
    assert declared["relevance"].output.kind == "continuous"
    panel = load_config(judges_yaml(tmp_path, server), env=ENV)
    assert list(panel.metrics) == list(declared)
    assert "metrics" not in panel.model_dump()  # the panel's description: models only


def test_a_config_without_the_section_declares_nothing(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump(local_models(server, KEY_ENV)), encoding="utf-8")
    assert declared_metrics(path) == {}
    assert load_config(path, env=ENV).metrics == {}


BAD = [
    (
        """
        metrics:
          conciseness:
            critrion: brief
        """,
        "metrics.conciseness.critrion (line 3): unknown key (did you mean criterion?)",
    ),
    (
        """
        metrics:
          tone:
            prompt: "Rate {response}."
            output:
              categories: {polite: 1.0, rude: }
        """,
        "metrics.tone.output (line 4): categories: 'rude' has no score",
    ),
    (
        """
        metrics:
          tone:
            criterion: polite
            output: {categories: {polite: 1.0, rude: 2}}
        """,
        "metrics.tone.output (line 4): categories: 'rude''s score 2 is not in [0, 1]",
    ),
    (
        """
        metrics:
          conciseness:
            criterion: brief
            output: scale
        """,
        "metrics.conciseness.output (line 4): a scale needs its levels",
    ),
    (
        """
        metrics:
          conciseness:
            criterion: brief
            output: {scale: {one: short, two: long}}
        """,
        "metrics.conciseness.output (line 4): scale: level 'one' is not a whole number",
    ),
    (
        """
        metrics:
          conciseness:
            criterion: brief
            output: {likert: {1: a}}
        """,
        "metrics.conciseness.output (line 4): unknown output kind 'likert'",
    ),
    (
        """
        metrics:
          blank:
            criterion: "  "
        """,
        "metrics.blank (line 2): criterion is empty",
    ),
    (
        """
        metrics:
          relevance:
            criterion: on topic
            output: {continuous: {low: off topic, middle: partly}}
        """,
        "metrics.relevance.output (line 4): continuous takes low: and high:",
    ),
    (
        """
        metrics:
          neither:
            output: pass_fail
            threshold: 0.5
        """,
        "metrics.neither (line 2): needs a criterion",
    ),
    (
        """
        metrics:
          votes:
            criterion: brief
            strictness: 9
        """,
        "metrics.votes.strictness (line 4): must be less than or equal to 5",
    ),
    (
        """
        metrics:
          votes:
            criterion: brief
            aggregation: average
        """,
        "metrics.votes.aggregation (line 4): must be one of mean, median, min, max or consensus",
    ),
    (
        """
        metrics:
          Bad-Name:
            criterion: brief
        """,
        "metrics.Bad-Name (line 2): a metric's name is lower-case letters",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD, ids=[e.split(":")[0] for _, e in BAD])
def test_a_bad_declaration_names_the_metric_the_key_and_the_line(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        declared_metrics(path)
    assert str(caught.value).startswith(f"{path}: {expected}"), str(caught.value)
    # load_config says the same, with the line, and reads no key before it does.
    with pytest.raises(ConfigError) as again:
        load_config(path, env={})
    assert expected in str(again.value)


def test_several_problems_are_listed_at_once(tmp_path: Path) -> None:
    path = write_config(
        tmp_path,
        """
        metrics:
          a:
            criterion: x
            strictness: 0
          b:
            prompt: y
            threshold: 2
        """,
    )
    with pytest.raises(ConfigError) as caught:
        declared_metrics(path)
    assert [p for p, _ in caught.value.problems] == [
        "metrics.a.strictness (line 4)",
        "metrics.b.threshold (line 7)",
    ]


# --------------------------------------------------------------------------- the CLI

ROWS = [
    {
        "id": "short",
        "user_input": "What is the capital of France?",
        "response": "Paris.",
        "reference": "Paris",
        "label": True,
    },
    {
        "id": "long",
        "user_input": "Who wrote Hamlet?",
        "response": "Hamlet was written by William Shakespeare, the English playwright and poet, "
        "around 1600; it is his longest play, and many of its lines are still quoted today.",
        "reference": "William Shakespeare",
        "label": False,
    },
    {
        "id": "plain",
        "user_input": "How many legs does a spider have?",
        "response": "A spider has eight legs.",
        "reference": "Eight",
        "label": True,
    },
]
ALL = ["--metric", "conciseness,tone", "--metric", "harm", "--metric", "relevance"]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), "utf-8")
    return path


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, ENV[KEY_ENV])


def panel_yaml(tmp_path: Path, server: LocalOpenAIServer, judges: dict[str, Any]) -> Path:
    """Two judges at temperature 0.7 (votes), and ``judges`` under ``metrics:``."""
    config = local_models(server, KEY_ENV, judges=("judge-a", "judge-b"), temperature=0.7)
    config["metrics"] = judges
    path = tmp_path / "judges.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def run(*args: str | Path) -> int:
    return main([str(arg) for arg in args])


def scores(out: Path, key: str) -> dict[str, Any]:
    lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    return {line["id"]: line["metrics"][key] for line in lines}


def test_evaluate_runs_declared_judges_into_out_report_and_summary_json(
    data: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = panel_yaml(tmp_path, server, JUDGES)
    out, report, summary = tmp_path / "out.jsonl", tmp_path / "r.html", tmp_path / "s.json"
    code = run(
        "evaluate",
        data,
        "--config",
        config,
        *ALL,
        "--out",
        out,
        "--report",
        report,
        "--summary-json",
        summary,
        "--threshold",
        "conciseness=0.6",
        "--quiet",
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "metrics: conciseness, tone, harm, relevance" in printed.err
    # One request per judge, metric and row; conciseness's 3 votes are its n=3 choices.
    assert server.chat_requests == len(ROWS) * 2 * 4
    voted = [request for request in server.requests if (request.body or {}).get("n") == 3]
    assert len(voted) == len(ROWS) * 2
    for key in ("conciseness", "tone", "harm", "relevance"):
        for record in scores(out, key).values():
            assert record["kind"] == "custom_judge" and record["error"] is None
            assert set(record["per_model"]) == {"judge-a", "judge-b"}
            assert 0.0 <= record["score"] <= 1.0
            assert record["score"] == pytest.approx(sum(record["per_model"].values()) / 2)
    concise = scores(out, "conciseness")
    assert concise["short"]["score"] > concise["long"]["score"]  # the rubric reached the judge
    # Each judge's three votes (scale levels) and their reasons are in the record and report.
    for record in concise.values():
        assert {vote["model"] for vote in record["votes"]} == {"judge-a", "judge-b"}
        for vote in record["votes"]:
            assert len(vote["votes"]) == len(vote["reasons"]) == 3
            assert all(isinstance(level, int) and 1 <= level <= 5 for level in vote["votes"])
            assert vote["verdict"] in vote["votes"]
    tone = {record["score"] for record in scores(out, "tone").values()}
    assert tone <= {1.0, 0.75, 0.5, 0.25, 0.0}  # means of two of the category scores
    page = report.read_text("utf-8")
    assert all(key in page for key in ("conciseness", "tone", "harm", "relevance"))
    payload = json.loads(summary.read_text("utf-8"))
    assert payload["exit_code"] == 0 and payload["scored"] == len(ROWS)
    assert list(payload["metrics"]) == ["conciseness", "tone", "harm", "relevance"]
    summarised = payload["metrics"]["conciseness"]
    mean = sum(record["score"] for record in concise.values()) / len(ROWS)
    assert summarised["mean"] == pytest.approx(mean) and summarised["threshold"] == 0.6
    assert summarised["passed"] == sum(record["score"] >= 0.6 for record in concise.values())
    assert payload["spend"]["metrics"]["conciseness"]["total"]["requests"] == len(ROWS) * 2
    assert "conciseness" not in METRICS  # offered to that run only


def test_the_estimate_counts_the_votes_and_sends_nothing(
    data: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = panel_yaml(tmp_path, server, JUDGES)
    path = tmp_path / "estimate.json"
    code = run(
        "evaluate",
        data,
        "--config",
        config,
        "--metric",
        "conciseness",
        "--estimate",
        "--json",
        path,
    )
    assert code == 0, capsys.readouterr().err
    assert server.requests == []
    estimated = json.loads(path.read_text("utf-8"))
    # the 3 votes are one request's n=3 choices
    assert estimated["judge-a"]["requests"] == estimated["judge-b"]["requests"] == len(ROWS)


def test_resume_reuses_scores_and_scores_again_what_the_declaration_changed(
    data: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out.jsonl"
    one_vote = {name: {**judge, "strictness": 1} for name, judge in JUDGES.items()}

    def sent_for(judges: dict[str, Any]) -> int:
        before = server.chat_requests
        config = panel_yaml(tmp_path, server, judges)
        assert run("evaluate", data, "--config", config, *ALL, "--out", out, "--quiet") == 0, (
            capsys.readouterr().err
        )
        return server.chat_requests - before

    per_metric = len(ROWS) * 2  # one vote per judge per row
    assert sent_for(one_vote) == 4 * per_metric
    assert sent_for(one_vote) == 0  # resumed: nothing scored twice
    changed = {**one_vote, "conciseness": {**one_vote["conciseness"], "criterion": "Short."}}
    assert sent_for(changed) == per_metric  # the criterion: conciseness only, again
    level = {**changed["conciseness"]["output"]["scale"], 3: "acceptable"}
    described = {**changed, "conciseness": {**changed["conciseness"], "output": {"scale": level}}}
    assert sent_for(described) == per_metric  # a level's description
    scored = {
        **described,
        "tone": {
            **described["tone"],
            "output": {"categories": {"polite": 1.0, "neutral": 0.6, "rude": 0.0}},
        },
    }
    assert sent_for(scored) == per_metric  # a category's score
    flipped = {**scored, "harm": {**scored["harm"], "higher_is_better": True}}
    assert sent_for(flipped) == per_metric  # higher_is_better
    voted = {**flipped, "relevance": {**flipped["relevance"], "strictness": 2}}
    assert sent_for(voted) == per_metric  # strictness: two votes (n=2) each
    assert sent_for(voted) == 0


def test_calibrate_a_declared_judge_against_labels(
    data: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = panel_yaml(tmp_path, server, JUDGES)
    path, out = tmp_path / "cal.json", tmp_path / "scores.jsonl"
    command = (
        "calibrate",
        data,
        "--config",
        config,
        "--metric",
        "conciseness",
        "--threshold",
        "0.6",
        "--json",
        path,
        "--out",
        out,
        "--quiet",
    )
    first = cli(*command, env=clean_env(**ENV))
    assert first.returncode == 0, first.stderr
    assert "conciseness" in first.stdout and "accuracy" in first.stdout
    entry = json.loads(path.read_text("utf-8"))["conciseness"]
    assert entry["aggregate"]["n"]["value"] == len(ROWS)
    assert set(entry["judges"]) == {"judge-a", "judge-b"}
    requests = server.chat_requests
    assert requests == len(ROWS) * 2
    again = cli(*command, env=clean_env(**ENV))
    assert again.returncode == 0, again.stderr
    assert server.chat_requests == requests  # resumed from --out
    assert f"resuming: {len(ROWS)} samples already scored" in again.stderr


@pytest.mark.parametrize(
    ("judges", "expected"),
    [
        (
            {"faithfulness": {"criterion": "x"}},
            "metrics.faithfulness (line {faithfulness}): 'faithfulness' is a built-in metric",
        ),
        (
            {"conciseness": {"criterion": "x", "output": {"scale": {1: "a", 2: "b", 4: "d"}}}},
            "metrics.conciseness.output (line {output}): Scale: the levels must be contiguous "
            "integers; level 3 is missing",
        ),
        (
            {"conciseness": {"prompt": "Is {answer} brief?"}},
            "metrics.conciseness.prompt (line {prompt}): CustomJudge('conciseness'): the prompt "
            "names {{answer}}, which is not a sample field",
        ),
    ],
)
def test_a_declaration_the_judge_refuses_stops_the_run_before_any_request(
    data: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    env: None,
    capsys: pytest.CaptureFixture[str],
    judges: dict[str, Any],
    expected: str,
) -> None:
    config = panel_yaml(tmp_path, server, judges)
    name = next(iter(judges))
    assert run("evaluate", data, "--config", config, "--metric", name) == 2
    err = capsys.readouterr().err
    lines = config.read_text("utf-8").splitlines()
    at = {
        line.strip().split(":")[0]: number
        for number, line in enumerate(lines, 1)
        if line.startswith("  ") and lines.index("metrics:") < number
    }
    assert f"answer-metrics: error: {config}: {expected.format(**at)}" in err, err
    assert server.requests == []


def test_an_unknown_metric_offers_the_declared_ones(
    data: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = panel_yaml(tmp_path, server, JUDGES)
    assert run("evaluate", data, "--config", config, "--metric", "concisenes") == 2
    err = capsys.readouterr().err
    assert "unknown metric 'concisenes' (did you mean conciseness?)" in err
    assert err.rstrip().endswith("conciseness, tone, harm, relevance")
    # without the config, the name is unknown
    assert run("evaluate", data, "--metric", "conciseness") == 2
    assert "unknown metric 'conciseness'" in capsys.readouterr().err
    help_text = build_parser()._subparsers._group_actions[0].choices["evaluate"].format_help()
    assert "a judge declared under metrics: in --config" in " ".join(help_text.split())


# --------------------------------------------------------------------------- LangSmith

QUESTIONS = {row["user_input"]: row for row in ROWS}


def offline_client() -> Client:
    """The offline recipe of tests/test_langsmith_evaluators.py: no connection at all."""
    return Client(
        api_key="offline",
        api_url="http://127.0.0.1:9",
        auto_batch_tracing=False,
        tracing_sampling_rate=0.0,
    )


def chat(server: LocalOpenAIServer, model: str = "judge-a") -> ChatOpenAI:
    return ChatOpenAI(
        base_url=server.base_url, api_key="sk-test", model=model, use_responses_api=False
    )


def test_langsmith_feedback_config_per_output_kind(
    tmp_path: Path, server: LocalOpenAIServer, network_attempts: list[Any]
) -> None:
    path = judges_yaml(
        tmp_path,
        server,
        **JUDGES,
        kind_tone={
            "criterion": "The answer is kind.",
            "higher_is_better": False,
            "output": {"categories": {"kind": 1.0, "curt": 0.3}},
        },
    )
    declared = declared_metrics(path)
    one = [
        build_declared(name, item, judges=[chat(server)], source=path)
        for name, item in declared.items()
    ]
    panel = build_declared(
        "tone", declared["tone"], source=path, judges=[chat(server), chat(server, "judge-b")]
    )
    evaluator_of = {metric.key: metric.as_evaluator() for metric in one}
    assert feedback_config(panel) == FEEDBACK_CONFIG  # a panel's mean is no category

    results = evaluate(
        lambda inputs: {"answer": QUESTIONS[inputs["question"]]["response"]},
        data=[
            Example(
                id=uuid.uuid4(),
                inputs={"question": row["user_input"]},
                outputs={"answer": row["reference"]},
            )
            for row in ROWS
        ],
        evaluators=list(evaluator_of.values()),
        client=offline_client(),
        upload_results=False,
    )
    rows = list(results)
    assert len(rows) == len(ROWS)  # the fixture fails any connection off this machine
    continuous = {"type": "continuous", "min": 0, "max": 1}
    for row in rows:
        got = {result.key: result for result in row["evaluation_results"]["results"]}
        assert set(got) == {*JUDGES, "kind_tone"}
        for key in ("conciseness", "harm", "relevance"):
            assert got[key].feedback_config == continuous, key
            assert 0.0 <= got[key].score <= 1.0
        level = got["conciseness"].extra["details"]["models"]["judge-a"]["level"]
        assert got["conciseness"].score == pytest.approx((level - 1) / 4)  # raw level kept
        assert got["tone"].feedback_config == {
            "type": "categorical",
            "categories": [
                {"value": 1.0, "label": "polite"},
                {"value": 0.5, "label": "neutral"},
                {"value": 0.0, "label": "rude"},
            ],
        }
        assert got["tone"].score in {1.0, 0.5, 0.0}
        # lower is better: the values are the reported scores, 1 - the judge's
        flipped = got["kind_tone"].feedback_config
        assert flipped["type"] == "categorical"
        assert {c["label"]: c["value"] for c in flipped["categories"]} == pytest.approx(
            {"curt": 0.7, "kind": 0.0}
        )
        assert any(
            got["kind_tone"].score == pytest.approx(c["value"]) for c in flipped["categories"]
        )


def test_categories_sharing_a_score_stay_continuous(server: LocalOpenAIServer) -> None:
    shared = CustomJudge(
        llm=chat(server),
        name="tone",
        criterion="Polite.",
        output={"kind": "categories", "scores": {"polite": 1.0, "warm": 1.0, "rude": 0.0}},
    )
    assert feedback_config(shared) == FEEDBACK_CONFIG
    assert feedback_config(CustomJudge(llm=chat(server), name="ok", criterion="Fine.")) == (
        FEEDBACK_CONFIG
    )


def test_a_declared_threshold_is_the_summary_s_pass_mark(
    data: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    judges = {"conciseness": {**JUDGES["conciseness"], "threshold": 0.9}}
    config, summary = panel_yaml(tmp_path, server, judges), tmp_path / "s.json"
    out = tmp_path / "out.jsonl"
    assert (
        run(
            "evaluate",
            data,
            "--config",
            config,
            "--metric",
            "conciseness",
            "--out",
            out,
            "--summary-json",
            summary,
            "--quiet",
        )
        == 0
    ), capsys.readouterr().err
    got = json.loads(summary.read_text("utf-8"))["metrics"]["conciseness"]
    scored = [record["score"] for record in scores(out, "conciseness").values()]
    assert got["threshold"] == 0.9 and got["passed"] == sum(s >= 0.9 for s in scored)
    assert (
        run(
            "evaluate",
            data,
            "--config",
            config,
            "--metric",
            "conciseness",
            "--out",
            out,
            "--summary-json",
            summary,
            "--threshold",
            "0.1",
            "--quiet",
        )
        == 0
    )
    assert json.loads(summary.read_text("utf-8"))["metrics"]["conciseness"]["threshold"] == 0.1
    mean = sum(scored) / len(scored)
    assert mean < 1.0  # a gate above the mean fails the run (exit 1), one below passes it
    gate = ("evaluate", data, "--config", config, "--metric", "conciseness", "--out", out)
    assert run(*gate, "--fail-under", f"conciseness={(mean + 1) / 2:.3f}", "--quiet") == 1
    assert run(*gate, "--fail-under", f"conciseness={mean / 2:.3f}", "--quiet") == 0


def test_a_declaration_is_the_judge_s_keyword_arguments(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    panel = load_config(judges_yaml(tmp_path, server), env=ENV)
    for name, declared in panel.metrics.items():
        judge = CustomJudge(llm=panel.judges, name=name, **declared.options())
        assert judge.key == name and judge.output.kind == declared.output.kind
        assert judge.strictness == declared.strictness
        assert judge.higher_is_better is declared.higher_is_better
        entry = metric_entries(tmp_path / "judges.yaml")[name]
        assert entry.key == name and entry.needs_judge and not entry.needs_embeddings
        assert entry.required_fields == judge.required_fields  # checked before it is built
    strict = declared_metrics(
        judges_yaml(tmp_path, server, harm={**JUDGES["harm"], "aggregation": "min"})
    )["harm"]
    assert CustomJudge(llm=panel.judges, name="harm", **strict.options()).aggregation == "min"
    tone = CustomJudge(llm=panel.judges, name="tone", **panel.metrics["tone"].options())
    assert tone.required_fields == ("user_input", "response")
    assert tone.output.scores == {"polite": 1.0, "neutral": 0.5, "rude": 0.0}


def test_the_docs_example_prints_what_the_page_shows(
    tmp_path: Path, server: LocalOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "config.md").read_text("utf-8")

    def saved(name: str) -> str:
        found = re.search(rf"<!-- file: {re.escape(name)} -->\n```\w*\n(.*?)```", page, re.S)
        assert found is not None, name
        return found.group(1)

    (tmp_path / "judges.yaml").write_text(
        saved("judges.yaml").replace("http://127.0.0.1:8011", server.base_url.removesuffix("/v1")),
        "utf-8",
    )
    (tmp_path / "qa.jsonl").write_text(saved("qa.jsonl"), "utf-8")
    summary = tmp_path / "s.json"
    assert (
        run(
            "evaluate",
            tmp_path / "qa.jsonl",
            "--config",
            tmp_path / "judges.yaml",
            "--metric",
            "conciseness,tone,harm",
            "--summary-json",
            summary,
            "--quiet",
        )
        == 0
    ), capsys.readouterr().err
    shown = re.search(r"```text\nmetric .*\n-[- ]*\n((?:\w+ .*\n)+)```", page)
    assert shown is not None
    assert [line.split()[0] for line in shown.group(1).splitlines()] == [
        "conciseness",
        "tone",
        "harm",
    ]
    for line in shown.group(1).splitlines():
        key, mean, _, *rest = line.split()
        got = json.loads(summary.read_text("utf-8"))["metrics"][key]
        assert f"{got['mean']:.3f}" == mean, key
        if rest[0] != "-":
            assert rest[0] == f"{got['pass_rate']:.0%}", key


def test_a_failing_judge_is_left_out_and_the_resume_scores_it_again(
    data: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config, out = panel_yaml(tmp_path, server, JUDGES), tmp_path / "out.jsonl"
    server.faults = lambda info: "500" if info.model == "judge-b" else None
    command = ("evaluate", data, "--config", config, "--metric", "tone", "--out", out, "--quiet")
    assert run(*command) == 0, capsys.readouterr().err
    for record in scores(out, "tone").values():
        assert set(record["per_model"]) == {"judge-a"}
        assert [failure["model"] for failure in record["excluded"]] == ["judge-b"]
    server.faults = None
    before = server.chat_requests
    assert run(*command) == 0, capsys.readouterr().err  # degraded scores are redone
    assert server.chat_requests - before == len(ROWS) * 2
    assert all(set(r["per_model"]) == {"judge-a", "judge-b"} for r in scores(out, "tone").values())


def test_a_file_of_judges_alone_takes_its_models_from_base_url(
    data: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "judges.yaml"
    path.write_text(yaml.safe_dump({"metrics": JUDGES}, sort_keys=False), "utf-8")
    out = tmp_path / "out.jsonl"
    assert (
        run(
            "evaluate",
            data,
            "--config",
            path,
            "--metric",
            "conciseness,tone",
            "--base-url",
            server.base_url,
            "--model",
            "judge-x",
            "--out",
            out,
            "--quiet",
        )
        == 0
    ), capsys.readouterr().err
    assert set(server.model_counts) == {"judge-x"}
    assert all(set(r["per_model"]) == {"judge-x"} for r in scores(out, "tone").values())
    # without an endpoint, it says how to configure one
    assert run("evaluate", data, "--config", path, "--metric", "conciseness") == 2
    assert "conciseness need(s) a judge model and none is configured" in capsys.readouterr().err
    # a file that lists models keeps refusing a second source of models
    listed = panel_yaml(tmp_path, server, JUDGES)
    assert (
        run(
            "evaluate",
            data,
            "--config",
            listed,
            "--metric",
            "conciseness",
            "--base-url",
            server.base_url,
            "--model",
            "judge-x",
        )
        == 2
    )
    assert "--config already lists the models" in capsys.readouterr().err


def test_declared_examples_reach_the_judge_and_a_bad_one_is_named(
    data: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    example = {
        "input": {"response": "Zebras sleep standing up, mostly."},
        "output": {"reason": "One short sentence.", "verdict": 5},
    }
    judges = {"conciseness": {**JUDGES["conciseness"], "strictness": 1, "examples": [example]}}
    config = panel_yaml(tmp_path, server, judges)
    assert run("evaluate", data, "--config", config, "--metric", "conciseness", "--quiet") == 0, (
        capsys.readouterr().err
    )
    bodies = [json.dumps(request.body) for request in server.requests]
    assert bodies and all("Zebras sleep standing up" in body for body in bodies)
    capsys.readouterr()
    wrong = {
        "conciseness": {
            **judges["conciseness"],
            "examples": [{**example, "output": {"reason": "r", "verdict": 9}}],
        }
    }
    server.reset()
    assert (
        run(
            "evaluate",
            data,
            "--config",
            panel_yaml(tmp_path, server, wrong),
            "--metric",
            "conciseness",
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "metrics.conciseness.examples (line " in err and "Input should be 1, 2, 3, 4 or 5" in err
    assert len(err.strip().splitlines()) == 1 and "errors.pydantic.dev" not in err
    assert server.requests == []
