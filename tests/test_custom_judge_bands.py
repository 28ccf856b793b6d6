"""A CustomJudge's own band names (``bands={"concise": 0.8, ..., "wordy": 0.0}``): refused
at construction when malformed (naming the metric), on results through the real HTTP path
(ChatOpenAI -> the local OpenAI-compatible server), under ``higher_is_better=False``,
through JSON and the LangSmith feedback, and declared in the config file's ``metrics:``
section through the CLI into ``--out`` records and the report."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from test_custom_judge_config import KEY_ENV, ROWS, panel_yaml, run, scores

from langchain_answer_metrics import CustomJudge, Scale
from langchain_answer_metrics.cli.declared import metric_entries
from langchain_answer_metrics.core.result import MetricResult, band_for
from langchain_answer_metrics.metrics.bands import band_named, checked_bands
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.requests import RequestInfo

LEVELS = {1: "rambling", 2: "long", 3: "fair", 4: "short", 5: "one sentence"}
BANDS = {"concise": 0.75, "acceptable": 0.5, "wordy": 0.0}


def local(server: LocalOpenAIServer, model: str = "judge-a") -> ChatOpenAI:
    return ChatOpenAI(
        model=model,
        base_url=server.base_url,
        api_key="sk-test",
        use_responses_api=False,
        max_retries=0,
    )


@pytest.fixture
def scripted_server() -> Iterator[LocalOpenAIServer]:
    with LocalOpenAIServer() as server:
        yield server


def levels(server: LocalOpenAIServer, by_model: dict[str, int]) -> None:
    """Each model answers with its level (reason first)."""

    def respond(info: RequestInfo) -> dict[str, Any]:
        return {"reason": f"level {by_model[info.model]}", "verdict": by_model[info.model]}

    server.responder = respond


# --------------------------------------------------------------------------- refusals

BAD = [
    ({"concise": 0.8, "acceptable": 0.5}, "no band starts at 0.0"),
    ({"concise": 0.8, "  ": 0.0}, "a band's name is empty"),
    ({"Concise": 0.8, "concise ": 0.5, "wordy": 0.0}, "'Concise' and 'concise ' differ only"),
    ({"concise": 0.5, "fine": 0.5, "wordy": 0.0}, "'concise' and 'fine' both start at 0.5"),
    ({"concise": 1.5, "wordy": 0.0}, "'concise' starts at 1.5, not in [0, 1]"),
    ({"concise": float("nan"), "wordy": 0.0}, "'concise' starts at nan, not in [0, 1]"),
    ({"concise": "high", "wordy": 0.0}, "'concise': its lowest score is not a number"),
    ({"concise": True, "wordy": 0.0}, "'concise': its lowest score is not a number"),
    ({}, "bands must be a mapping of band name -> lowest score"),
    (["concise", "wordy"], "bands must be a mapping of band name -> lowest score"),
]


@pytest.mark.parametrize(("bands", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_bands_are_refused_at_construction_naming_the_metric(
    scripted_server: LocalOpenAIServer, bands: Any, message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        CustomJudge(
            llm=local(scripted_server),
            name="conciseness",
            criterion="Brief.",
            output=Scale(levels=LEVELS),
            bands=bands,
        )
    assert "CustomJudge('conciseness'): bands" in str(caught.value)
    assert message in str(caught.value)
    assert scripted_server.requests == []


def test_bands_are_kept_highest_first_and_read_with_the_thresholds_comparison() -> None:
    bands = checked_bands("CustomJudge('x')", {"wordy": 0, "concise": 0.75, "acceptable": 0.5})
    assert bands == {"concise": 0.75, "acceptable": 0.5, "wordy": 0.0}
    assert list(bands) == ["concise", "acceptable", "wordy"]
    assert [band_named(BANDS, s) for s in (1.0, 0.75, 0.7499, 0.5, 0.0)] == [
        "concise",
        "concise",
        "acceptable",
        "acceptable",
        "wordy",
    ]
    assert checked_bands("CustomJudge('x')", None) is None
    # Whatever order the mapping is in, a score takes the highest band it reaches.
    assert band_named({"wordy": 0.0, "concise": 0.75}, 0.8) == "concise"


# --------------------------------------------------------------------------- results


@pytest.mark.parametrize(
    ("level", "score", "band"),
    [
        (5, 1.0, "concise"),
        (4, 0.75, "concise"),
        (3, 0.5, "acceptable"),
        (2, 0.25, "wordy"),
        (1, 0.0, "wordy"),
    ],
)
def test_results_carry_the_band_names_through_the_real_http_path(
    scripted_server: LocalOpenAIServer, level: int, score: float, band: str
) -> None:
    levels(scripted_server, {"judge-a": level})
    metric = CustomJudge(
        llm=local(scripted_server),
        name="conciseness",
        criterion="Brief.",
        output=Scale(levels=LEVELS),
        threshold=0.75,
        bands=BANDS,
    )
    result = metric.invoke({"response": "Paris."})
    assert scripted_server.chat_requests == 1
    assert result.score == pytest.approx(score)
    assert result.band == band
    # A band starting at the threshold agrees with passed.
    assert result.passed is (band == "concise")


def test_a_panels_mean_between_levels_takes_the_band_it_reaches(
    scripted_server: LocalOpenAIServer,
) -> None:
    levels(scripted_server, {"judge-a": 4, "judge-b": 3})
    metric = CustomJudge(
        llm=[local(scripted_server, "judge-a"), local(scripted_server, "judge-b")],
        name="conciseness",
        criterion="Brief.",
        output=Scale(levels=LEVELS),
        bands=BANDS,
    )
    result = metric.invoke({"response": "Paris."})
    assert result.per_model == pytest.approx({"judge-a": 0.75, "judge-b": 0.5})
    assert result.score == pytest.approx(0.625)
    assert result.band == "acceptable"


def test_without_bands_the_built_in_names_stay(scripted_server: LocalOpenAIServer) -> None:
    levels(scripted_server, {"judge-a": 4})
    metric = CustomJudge(
        llm=local(scripted_server),
        name="conciseness",
        criterion="Brief.",
        output=Scale(levels=LEVELS),
    )
    result = metric.invoke({"response": "Paris."})
    assert result.score == pytest.approx(0.75)
    assert result.band == "good" == band_for(0.75)


@pytest.mark.parametrize(
    ("level", "score", "band"), [(1, 1.0, "safe"), (3, 0.5, "risky"), (5, 0.0, "harmful")]
)
def test_with_higher_is_better_false_bands_read_the_reported_score(
    scripted_server: LocalOpenAIServer, level: int, score: float, band: str
) -> None:
    levels(scripted_server, {"judge-a": level})
    harm = {1: "harmless", 2: "mostly harmless", 3: "risky", 4: "dangerous", 5: "harmful"}
    metric = CustomJudge(
        llm=local(scripted_server),
        name="harm",
        criterion="How harmful is the answer?",
        output=Scale(levels=harm),
        higher_is_better=False,
        bands={"safe": 0.8, "risky": 0.4, "harmful": 0.0},
    )
    result = metric.invoke({"response": "r"})
    assert result.score == pytest.approx(score)  # 1 - the judged score: 1.0 is best
    assert result.band == band
    assert result.details.models["judge-a"].level == level  # type: ignore[union-attr]


def test_a_band_name_round_trips_through_json_and_reaches_the_feedback(
    scripted_server: LocalOpenAIServer,
) -> None:
    levels(scripted_server, {"judge-a": 5})
    metric = CustomJudge(
        llm=local(scripted_server),
        name="conciseness",
        criterion="Brief.",
        output=Scale(levels=LEVELS),
        bands=BANDS,
    )
    result = metric.invoke({"response": "Paris."})
    loaded = MetricResult.model_validate_json(result.model_dump_json())
    assert loaded == result and loaded.band == "concise"
    assert json.loads(result.model_dump_json())["band"] == "concise"
    # A built-in band name still reads back as itself.
    plain = result.model_copy(update={"band": "excellent"})
    assert MetricResult.model_validate_json(plain.model_dump_json()).band == "excellent"
    scored = metric.as_function_evaluator()(outputs={"answer": "Paris."})
    assert scored["score"] == 1.0 and scored["metadata"]["band"] == "concise"


# --------------------------------------------------------------------------- the config file

CONCISE = {
    "criterion": "The answer is brief and to the point.",
    "output": {"scale": {1: "rambling", 2: "long", 3: "ok", 4: "brief", 5: "one sentence"}},
    "bands": {"concise": 0.75, "acceptable": 0.5, "wordy": 0},
}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), "utf-8")
    return path


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, "sk-test-custom-judge")


def test_declared_bands_reach_the_out_records_and_the_report(
    data: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = panel_yaml(tmp_path, server, {"conciseness": CONCISE})
    out, report = tmp_path / "out.jsonl", tmp_path / "r.html"
    code = run(
        "evaluate",
        data,
        "--config",
        config,
        "--metric",
        "conciseness",
        "--out",
        out,
        "--report",
        report,
        "--quiet",
    )
    assert code == 0, capsys.readouterr().err
    records = scores(out, "conciseness")
    bands = {"concise": 0.75, "acceptable": 0.5, "wordy": 0.0}
    for record in records.values():
        assert record["error"] is None
        assert record["band"] == band_named(bands, record["score"])
    assert records["short"]["band"] == "concise"
    assert records["short"]["score"] > records["long"]["score"]
    page = report.read_text("utf-8")
    for record in records.values():
        assert record["band"] in page
        # The colour is the built-in band of the score, whatever the name.
        assert f"band-{band_for(record['score'])}" in page


def test_the_declared_signature_holds_the_bands_so_a_resume_names_them_again(
    data: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out.jsonl"

    def evaluate(declared: dict[str, Any]) -> int:
        before = server.chat_requests
        config = panel_yaml(tmp_path, server, {"conciseness": declared})
        code = run(
            "evaluate", data, "--config", config, "--metric", "conciseness", "--out", out, "--quiet"
        )
        assert code == 0, capsys.readouterr().err
        return server.chat_requests - before

    assert evaluate(CONCISE) == len(ROWS) * 2
    assert evaluate(CONCISE) == 0  # resumed
    renamed = {**CONCISE, "bands": {"brief": 0.75, "fair": 0.5, "wordy": 0}}
    assert evaluate(renamed) == len(ROWS) * 2
    assert scores(out, "conciseness")["short"]["band"] == "brief"
    config = panel_yaml(tmp_path, server, {"conciseness": renamed})
    entry = metric_entries(Path(config))["conciseness"]
    assert entry.declaration is not None  # type: ignore[attr-defined]
    assert entry.declaration.options()["bands"] == {  # type: ignore[attr-defined]
        "brief": 0.75,
        "fair": 0.5,
        "wordy": 0.0,
    }


@pytest.mark.parametrize(
    ("bands", "expected"),
    [
        (
            {"concise": 0.75, "acceptable": 0.5},
            "metrics.conciseness.bands (line {bands}): CustomJudge('conciseness'): bands: "
            "no band starts at 0.0",
        ),
        (
            ["concise", "wordy"],
            "metrics.conciseness.bands (line {bands}): must be a mapping of band name: lowest",
        ),
        (
            {True: 0.5, "no": 0.0},
            "metrics.conciseness.bands (line {bands}): the band name True is not a text (quote",
        ),
    ],
)
def test_bad_declared_bands_stop_the_run_before_any_request(
    data: Path,
    tmp_path: Path,
    server: LocalOpenAIServer,
    env: None,
    capsys: pytest.CaptureFixture[str],
    bands: Any,
    expected: str,
) -> None:
    config = panel_yaml(tmp_path, server, {"conciseness": {**CONCISE, "bands": bands}})
    assert run("evaluate", data, "--config", config, "--metric", "conciseness") == 2
    err = capsys.readouterr().err
    lines = config.read_text("utf-8").splitlines()
    at = {
        line.strip().split(":")[0]: number
        for number, line in enumerate(lines, 1)
        if line.startswith("  ") and lines.index("metrics:") < number
    }
    assert f"answer-metrics: error: {config}: {expected.format(**at)}" in err, err
    assert server.requests == []
