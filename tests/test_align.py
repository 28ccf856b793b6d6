"""align: examples, weights and a threshold fitted on labelled rows, the gain measured on
held-out rows; through the real HTTP path (ChatOpenAI -> the local server).

The test-server judge has a systematic error that examples can fix: it FAILs a correct
answer written as a paraphrase ("Paris is where France's government sits.") and calls a
paraphrased claim "neutral", unless the prompt carries an example of a paraphrase judged
PASS / "supported". "judge-inv" answers the opposite of what it would.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_openai import ChatOpenAI

from langchain_answer_metrics import (
    AspectCritic,
    Continuous,
    CustomJudge,
    FactualCorrectness,
    Faithfulness,
    Scale,
)
from langchain_answer_metrics.analysis.aligned_metric import AlignedMetric, load_aligned
from langchain_answer_metrics.analysis.alignment import AlignmentStopped, align
from langchain_answer_metrics.analysis.alignment_run import AlignmentBudget
from langchain_answer_metrics.checkpoints import metric_signature

# At import, as the other CLI tests do: cli.printing binds sys.stderr as a default then.
from langchain_answer_metrics.cli.command import main
from langchain_answer_metrics.core.prices import Price
from langchain_answer_metrics.judging.panel import aggregate, check_weights
from langchain_answer_metrics.judging.prompt_set import EXAMPLE_INPUT
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer, RequestInfo
from langchain_answer_metrics.testing.prompt_reading import message_text, parse_sections

CAPITALS = {
    "France": "Paris",
    "Japan": "Tokyo",
    "Italy": "Rome",
    "Spain": "Madrid",
    "Egypt": "Cairo",
    "Kenya": "Nairobi",
    "Peru": "Lima",
    "Chile": "Santiago",
    "Norway": "Oslo",
    "Greece": "Athens",
    "Poland": "Warsaw",
    "Austria": "Vienna",
    "Cuba": "Havana",
    "Ireland": "Dublin",
    "Portugal": "Lisbon",
    "Hungary": "Budapest",
}
PARAPHRASE = re.compile(r"^(\w+) is where (\w+)'s government sits")
CRITERION = "The response names the right capital."


def _examples(messages: Sequence[Mapping[str, Any]]) -> Iterator[tuple[dict[str, str], Any]]:
    """The prompt's few-shot examples: (input sections, expected output)."""
    for message, reply in itertools.pairwise(messages):
        text = message_text(message)
        if message.get("role") == "user" and text.startswith(EXAMPLE_INPUT):
            try:
                yield parse_sections(text), json.loads(message_text(reply))
            except ValueError:
                continue


def _paraphrase_taught(messages: Sequence[Mapping[str, Any]]) -> bool:
    for given, output in _examples(messages):
        if PARAPHRASE.match(given.get("response", "")) and output.get("verdict") == "PASS":
            return True
        claims = given.get("claims", "")
        if "government sits" in claims and any(
            v.get("verdict") == "supported" for v in output.get("verdicts", [])
        ):
            return True
    return False


def responder(info: RequestInfo) -> dict[str, Any]:
    sections, invert = info.sections, info.model == "judge-inv"
    if info.schema_name in ("AspectVerdict", "PassFailVerdict"):
        country = re.search(r"capital of (\w+)", sections.get("question", ""))
        response = sections["response"]
        right = country is not None and CAPITALS[country.group(1)] in response
        if PARAPHRASE.match(response) and not _paraphrase_taught(info.messages):
            right = False
        verdict = "PASS" if right != invert else "FAIL"
        return {"reason": f"judged {verdict}", "verdict": verdict}
    if info.schema_name == "ClaimList":
        return {"claims": [sections["text"]]}
    claims = re.findall(r"^\d+\. (.*)$", sections["claims"], flags=re.MULTILINE)
    source, verdicts = sections["source"], []
    for index, claim in enumerate(claims, 1):
        match = PARAPHRASE.match(claim)
        if match:
            holds = f"capital of {match.group(2)} is {match.group(1)}" in source
            supported = holds and _paraphrase_taught(info.messages)
        else:
            supported = claim.rstrip(".") in source
        verdict = "supported" if supported else "neutral"
        verdicts.append({"index": index, "reason": "r", "evidence": "", "verdict": verdict})
    return {"verdicts": verdicts}


@pytest.fixture(scope="module")
def shared_server() -> Iterator[LocalOpenAIServer]:
    with LocalOpenAIServer(responder=responder) as server:
        yield server


def judge(server: LocalOpenAIServer, model: str = "judge-a") -> ChatOpenAI:
    return ChatOpenAI(
        base_url=server.base_url, api_key="sk-test", model=model, use_responses_api=False
    )


def capital_rows(label: str = "human") -> list[dict[str, Any]]:
    """48 rows: per country a direct answer (pass), a paraphrase (pass), a wrong one (fail)."""
    rows, countries = [], list(CAPITALS)
    for i, country in enumerate(countries):
        capital, wrong = CAPITALS[country], CAPITALS[countries[(i + 1) % len(countries)]]
        question = f"What is the capital of {country}?"
        context = [f"The capital of {country} is {capital}."]
        for kind, response, human in (
            ("direct", f"The capital of {country} is {capital}.", "pass"),
            ("para", f"{capital} is where {country}'s government sits.", "pass"),
            ("wrong", f"The capital of {country} is {wrong}.", "fail"),
        ):
            rows.append(
                {
                    "id": f"{country}-{kind}",
                    "user_input": question,
                    "response": response,
                    "retrieved_contexts": context,
                    label: human,
                }
            )
    return rows


def critic(*judges: ChatOpenAI, **options: Any) -> AspectCritic:
    return AspectCritic(llm=list(judges), name="capital", criterion=CRITERION, **options)


# --------------------------------------------------------------------------- the gain


def test_examples_fix_a_systematic_error_and_the_held_out_gain_excludes_0(server) -> None:
    result = align(critic(judge(server)), capital_rows(), folds=4, seed=0)
    gain = result.gain
    assert gain.n == 48 and gain.finding == "improved"
    kappa, accuracy = gain.statistics["cohen_kappa"], gain.statistics["accuracy"]
    assert kappa.before == pytest.approx(0.4, abs=1e-6)  # every paraphrase FAILed
    assert kappa.after == pytest.approx(1.0, abs=1e-6)
    assert kappa.ci_low is not None and kappa.ci_low > 0
    assert accuracy.difference == pytest.approx(16 / 48, abs=1e-6) and accuracy.ci_low > 0
    # The examples are the paraphrases the judge got wrong, with the humans' verdict.
    chosen = result.fit.examples["judge_aspect"]
    assert 1 <= len(chosen) <= 4
    assert all(PARAPHRASE.match(e["input"]["response"]) for e in chosen)
    assert {e["output"]["verdict"] for e in chosen} == {"PASS"}
    assert all(row.endswith("-para") for row in result.fit.example_rows["judge_aspect"])
    # Before (48) and after (48, each row by the fold that never saw it): 96 requests.
    assert server.chat_requests == 96
    assert result.split == "4-fold" and result.spent["requests"] == 96


def test_random_labels_claim_no_improvement(server) -> None:
    shuffle = random.Random(7)
    rows = [dict(row, human=shuffle.choice(["pass", "fail"])) for row in capital_rows()]
    gain = align(critic(judge(server)), rows, folds=4, seed=0).gain
    assert gain.finding != "improved"
    for name in ("cohen_kappa", "accuracy"):
        statistic = gain.statistics[name]
        assert statistic.ci_low is not None and statistic.ci_high is not None
        assert statistic.ci_low <= 0 <= statistic.ci_high, name


def test_an_inverted_judge_is_dropped_and_held_out_agreement_rises(server) -> None:
    result = align(critic(judge(server), judge(server, "judge-inv")), capital_rows(), folds=4)
    assert result.fit.judges["judge-inv"].weight == 0
    assert result.fit.judges["judge-inv"].agreement < 0 < result.fit.judges["judge-a"].agreement
    assert [j.label for j in result.metric.llm] == ["judge-a"]
    assert result.aligned.dropped_judges == ["judge-inv"]
    kappa = result.gain.statistics["cohen_kappa"]
    assert kappa.after > kappa.before and kappa.ci_low > 0


@pytest.mark.slow  # alignment searches end to end
def test_claim_examples_fix_paraphrased_claims_under_faithfulness(server) -> None:
    metric = Faithfulness(llm=judge(server), threshold=0.5)
    result = align(metric, capital_rows(), folds=3, examples_per_step=2)
    assert result.gain.finding == "improved"
    examples = result.fit.examples["verify_claims"]
    assert examples and all(
        v["verdict"] == "supported" for e in examples for v in e["output"]["verdicts"]
    )
    # The default example is kept before the chosen ones.
    assert len(result.metric.examples["verify_claims"]) == 1 + len(examples)
    assert "decompose_claims" not in result.fit.examples


def test_score_labels_are_measured_by_spearman_mae_and_alpha(server) -> None:
    rows = [dict(row, human={"pass": 1.0, "fail": 0.0}[row["human"]]) for row in capital_rows()]
    gain = align(Faithfulness(llm=judge(server)), rows, folds=4).gain
    assert gain.label_type == "continuous" and gain.primary == "spearman"
    assert set(gain.statistics) == {"spearman", "mae", "krippendorff_alpha"}
    mae = gain.statistics["mae"]
    assert mae.lower_is_better and mae.before == pytest.approx(16 / 48) and mae.after == 0.0
    assert mae.ci_high is not None and mae.ci_high < 0 and mae.finding == "improved"
    assert gain.finding == "improved" and gain.statistics["spearman"].ci_low > 0


@pytest.mark.slow  # alignment searches end to end
def test_factual_correctness_precision_and_claim_labels(server) -> None:
    rows = [dict(row, reference=row["retrieved_contexts"][0]) for row in capital_rows()]
    metric = FactualCorrectness(llm=judge(server), mode="precision", threshold=0.5)
    result = align(metric, rows, folds=3, examples_per_step=2)
    assert result.gain.finding == "improved"
    assert all(
        e["input"]["source"].startswith("The capital of")
        for e in result.fit.examples["verify_claims"]
    )
    # Claim-level labels are used as given, before the corrected claims.
    labelled = dict(
        rows[1],
        claim_labels=[
            {
                "claim": "Paris is where France's government sits.",
                "verdict": "Supported",
                "reason": "A paraphrase.",
            }
        ],
    )
    rows[1] = labelled
    result = align(metric, rows, folds=3, examples_per_step=1)
    first = result.fit.examples["verify_claims"][0]
    assert result.fit.example_rows["verify_claims"] == [labelled["id"]]
    assert first["output"]["verdicts"] == [
        {"index": 1, "reason": "A paraphrase.", "evidence": "", "verdict": "supported"}
    ]
    server.reset()
    rows[1] = dict(labelled, claim_labels=[{"claim": "x", "verdict": "maybe"}])
    with pytest.raises(ValueError, match="row France-para: each claim label"):
        align(metric, rows)
    assert server.chat_requests == 0


def test_a_custom_judge_is_aligned_saved_and_loaded(server, tmp_path: Path) -> None:
    metric = CustomJudge(llm=judge(server), name="capital", criterion=CRITERION)
    result = align(metric, capital_rows(), folds=4)
    assert result.gain.finding == "improved"
    chosen = result.fit.examples["judge_pass_fail"]
    assert chosen and all(e["input"]["user_input"].startswith("What is") for e in chosen)
    assert {e["output"]["verdict"] for e in chosen} == {"PASS"}
    path = result.save(tmp_path / "custom.yaml")
    loaded = load_aligned(path, llm=judge(server))
    assert isinstance(loaded, CustomJudge) and metric_signature(loaded) == metric_signature(
        result.metric
    )
    row = next(row for row in capital_rows() if row["id"] == "Cuba-para")
    sample = {"user_input": row["user_input"], "response": row["response"]}
    assert loaded.invoke(sample).score == 1.0 and metric.invoke(sample).score == 0.0


def test_custom_judge_examples_of_each_output_kind() -> None:
    from langchain_answer_metrics.analysis.alignment_examples import LabelledRow, _custom_example
    from langchain_answer_metrics.core.result import MetricResult
    from langchain_answer_metrics.core.sample import Sample

    sample = Sample(user_input="Q?", response="A.")
    levels = Scale(levels={1: "bad", 2: "weak", 3: "fair", 4: "good"})
    scale = CustomJudge(
        llm=ChatOpenAI(model="m", api_key="sk-test"), name="s", criterion="c", output=levels
    )
    judged_low = MetricResult(key="s", score=0.0, reason="", band="poor")
    row = LabelledRow(id="1", sample=sample, label=True, result=judged_low)
    # A pass at 0.5: the smallest correction from level 1 is level 3 (score 0.667).
    step, example = _custom_example(scale, row, 0.5)
    assert step == "judge_scale" and example["output"]["verdict"] == 3
    assert example["input"] == {"user_input": "Q?", "response": "A."}
    row = LabelledRow(id="2", sample=sample, label=0.3)
    assert _custom_example(scale, row, 0.5)[1]["output"]["verdict"] == 2  # 0.333 nearest
    harm = CustomJudge(
        llm=ChatOpenAI(model="m", api_key="sk-test"),
        name="h",
        criterion="c",
        output=Continuous(),
        higher_is_better=False,
    )
    row = LabelledRow(id="3", sample=sample, label=0.8, explanation="mostly fine")
    assert _custom_example(harm, row, 0.5)[1]["output"] == pytest.approx(
        {"reason": "mostly fine", "score": 0.2}
    )


# --------------------------------------------------------------------------- weights


def test_weighted_mean_in_the_panel() -> None:
    assert aggregate({"a": 1.0, "b": 0.0}, "mean", weights={"a": 3.0, "b": 1.0}) == 0.75
    assert aggregate({"a": 1.0}, "mean", weights={"a": 3.0, "b": 1.0}) == 1.0  # b failed
    with pytest.raises(ValueError, match="aggregation='mean'"):
        check_weights({"a": 1.0}, ["a"], "median")
    with pytest.raises(ValueError, match="missing b"):
        check_weights({"a": 1.0}, ["a", "b"], "mean")
    with pytest.raises(ValueError, match=r"judge_weights\['b'\] must be a number > 0"):
        check_weights({"a": 1.0, "b": 0}, ["a", "b"], "mean")


def test_judge_weights_on_a_metric_over_http(server) -> None:
    rows = capital_rows()
    metric = critic(
        judge(server), judge(server, "judge-inv"), judge_weights={"judge-a": 3.0, "judge-inv": 1.0}
    )
    sample = {"user_input": rows[0]["user_input"], "response": rows[0]["response"]}
    assert metric.invoke(sample).score == pytest.approx(0.75)  # judge-a PASS, judge-inv FAIL
    unweighted = critic(judge(server), judge(server, "judge-inv"))
    assert metric_signature(metric) != metric_signature(unweighted)
    custom = CustomJudge(
        llm=[judge(server), judge(server, "judge-inv")], name="c", criterion=CRITERION
    )
    weighted = CustomJudge(
        llm=[judge(server), judge(server, "judge-inv")],
        name="c",
        criterion=CRITERION,
        judge_weights={"judge-a": 2, "judge-inv": 1},
    )
    assert metric_signature(custom) != metric_signature(weighted)
    with pytest.raises(ValueError, match="unknown judge-b"):
        critic(judge(server), judge_weights={"judge-a": 1.0, "judge-b": 1.0})


# --------------------------------------------------------------------------- the file


# The two formats hold the same fields (one writer, one reader): the fast tier round-trips
# YAML, the whole suite JSON too.
@pytest.mark.parametrize("suffix", [".yaml", pytest.param(".json", marks=pytest.mark.slow)])
def test_save_and_load_round_trip(server, tmp_path: Path, suffix: str) -> None:
    metric = critic(judge(server), judge(server, "judge-inv"))
    result = align(metric, capital_rows(), folds=3)
    path = Path(result.save(tmp_path / f"aligned{suffix}"))
    assert result.path == str(path)
    saved = AlignedMetric.read(path)
    assert saved.fitted_on.rows == 48 and len(saved.fitted_on.fingerprint) == 16
    assert saved.gain["finding"] == result.gain.finding
    loaded = load_aligned(path, llm=[judge(server, "judge-inv"), judge(server)])
    assert [j.label for j in loaded.llm] == ["judge-a"]
    assert loaded.threshold == result.metric.threshold
    assert metric_signature(loaded) == metric_signature(result.metric)
    assert metric_signature(loaded) != metric_signature(metric)
    row = next(row for row in capital_rows() if row["id"] == "Peru-para")
    paraphrase = {"user_input": row["user_input"], "response": row["response"]}
    assert loaded.invoke(paraphrase).score == 1.0  # taught
    assert critic(judge(server)).invoke(paraphrase).score == 0.0  # as it was
    with pytest.raises(ValueError, match="judge-a were kept"):
        load_aligned(path, llm=judge(server, "judge-inv"))


def test_not_an_aligned_file(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump({"judges": []}))
    with pytest.raises(ValueError, match="not an aligned metric file"):
        AlignedMetric.read(path)


# --------------------------------------------------------------------------- limits


PRICES = {"judge-a": Price(input_per_million=1000.0, output_per_million=1000.0)}


def test_max_cost_below_the_estimate_is_refused_before_any_request(server) -> None:
    with pytest.raises(AlignmentStopped, match="no request was made") as stop:
        align(critic(judge(server)), capital_rows(), folds=4, max_cost=0.01, prices=PRICES)
    assert server.chat_requests == 0 and stop.value.spent == 0.0


def test_max_cost_stops_the_runs_before_overspending(server) -> None:
    # The estimate counts the tool schema the local server does not bill, so align's own
    # runs cannot be pushed past a max_cost its estimate allowed; its budget is tested here.
    samples = [
        critic(judge(server)).check_sample(
            {"user_input": row["user_input"], "response": row["response"]}
        )
        for row in capital_rows()
    ]
    full = AlignmentBudget(prices=PRICES)
    full.score(critic(judge(server)), samples[:24])
    per_run = full.spent()["cost"]
    assert per_run is not None and per_run > 0
    server.reset()
    limit = per_run * 1.5  # one run and half of the next
    budget = AlignmentBudget(max_cost=limit, prices=PRICES)
    budget.score(critic(judge(server)), samples[:24])
    with pytest.raises(AlignmentStopped, match="align stopped: budget") as stop:
        budget.score(critic(judge(server), examples=[]), samples[24:])
    assert per_run < stop.value.spent <= limit
    assert 24 < server.chat_requests < 48


def test_bad_rows_are_refused_before_any_request(server) -> None:
    rows = capital_rows()
    rows[3]["human"] = "maybe"
    with pytest.raises(ValueError, match=r"capital.*row Japan-direct: human: label .maybe."):
        align(critic(judge(server)), rows)
    del rows[3]["response"]
    rows[3]["human"] = "pass"
    with pytest.raises(ValueError, match="response"):
        align(critic(judge(server)), rows)
    with pytest.raises(ValueError, match="custom aggregation function cannot be saved"):
        align(critic(judge(server), aggregation=lambda scores: max(scores)), capital_rows())
    with pytest.raises(ValueError, match="holdout must be a fraction"):
        align(critic(judge(server)), capital_rows(), holdout=1.5)
    assert server.chat_requests == 0


# --------------------------------------------------------------------------- the CLI


@pytest.mark.slow  # alignment searches end to end
def test_cli_align_end_to_end(
    server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from support import local_models, write_models_yaml

    monkeypatch.setenv("ALIGN_TEST_KEY", "sk-test")
    config = write_models_yaml(tmp_path, local_models(server, "ALIGN_TEST_KEY"))
    data = tmp_path / "labelled.jsonl"
    rows = capital_rows()
    for row in rows:
        para = "para" in row["id"]
        row["why"] = "A paraphrase that names the right capital passes." if para else ""
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out, report, summary = tmp_path / "aligned.yaml", tmp_path / "align.html", tmp_path / "a.json"
    code = main(
        [
            "align",
            str(data),
            "--label-col",
            "human",
            "--explanation-col",
            "why",
            "--metric",
            "aspect_critic",
            "--criterion",
            CRITERION,
            "--config",
            str(config),
            "--folds",
            "4",
            "--out",
            str(out),
            "--report",
            str(report),
            "--json",
            str(summary),
        ]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    # The estimate comes first, before the runs.
    assert printed.err.index("estimate: 96 requests") < printed.err.index("scoring 48")
    assert "cohen_kappa  0.400   1.000" in printed.out and "improved" in printed.out
    assert f"aligned metric: {out}" in printed.err
    assert "cost: estimated 96 requests, no price; spent 96 requests, no price" in printed.out
    written = json.loads(summary.read_text())
    assert written["finding"] == "improved" and written["aligned_metric"] == str(out)
    saved = AlignedMetric.read(out)
    reasons = {e["output"]["reason"] for e in saved.examples["judge_aspect"]}
    assert reasons == {"A paraphrase that names the right capital passes."}
    page = report.read_text()
    assert "improved" in page and "government sits" in page
    assert str(out) in page
    # Refused up front by --max-cost: exit 5, nothing written, no request.
    server.reset()
    priced = local_models(server, "ALIGN_TEST_KEY")
    priced["chat_models"]["list"][0]["price"] = {
        "input_per_million": 1000.0,
        "output_per_million": 1000.0,
    }
    (tmp_path / "priced").mkdir()
    config = write_models_yaml(tmp_path / "priced", priced)
    other = tmp_path / "other.yaml"
    code = main(
        [
            "align",
            str(data),
            "--metric",
            "aspect_critic",
            "--criterion",
            CRITERION,
            "--config",
            str(config),
            "--max-cost",
            "0.01",
            "--out",
            str(other),
        ]
    )
    assert code == 5 and not other.exists() and server.chat_requests == 0
    assert "no request was made" in capsys.readouterr().err

    # --metric-file: evaluate and calibrate score with the aligned metric.
    config = tmp_path / "models.yaml"
    scores = tmp_path / "scores.jsonl"
    plain = ["--metric", "aspect_critic", "--criterion", CRITERION]
    assert (
        main(
            [
                "evaluate",
                str(data),
                *plain,
                "--config",
                str(config),
                "--out",
                str(scores),
                "--quiet",
            ]
        )
        == 0
    )
    server.reset()
    assert (
        main(
            [
                "evaluate",
                str(data),
                "--metric-file",
                str(out),
                "--config",
                str(config),
                "--out",
                str(scores),
                "--quiet",
                "--no-preflight",
            ]
        )
        == 0
    )
    # A new signature: every row scored again, none resumed from the plain metric's scores.
    assert server.chat_requests == 48
    records = [json.loads(line) for line in scores.read_text().splitlines()]
    paraphrases = [r for r in records if r["id"].endswith("-para")]
    assert paraphrases and all(
        r["metrics"]["aspect_critic"]["score"] == 1.0 for r in paraphrases[-16:]
    )
    capsys.readouterr()
    assert (
        main(
            [
                "calibrate",
                str(data),
                "--label-col",
                "human",
                "--metric-file",
                str(out),
                "--config",
                str(config),
            ]
        )
        == 0
    )
    assert "accuracy" in (shown := capsys.readouterr().out) and "1.00 " in shown
    assert (
        main(
            [
                "evaluate",
                str(data),
                "--metric-file",
                str(out),
                "--base-url",
                server.base_url,
                "--model",
                "judge-b",
            ]
        )
        == 2
    )
    assert "judge-a were kept by the alignment" in capsys.readouterr().err


# --------------------------------------------------------------------------- the notebook


def test_cli_aligns_a_judge_declared_in_the_config(
    server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from support import local_models, write_models_yaml

    monkeypatch.setenv("ALIGN_TEST_KEY", "sk-test")
    models = local_models(server, "ALIGN_TEST_KEY")
    models["metrics"] = {"capital": {"criterion": CRITERION, "output": "pass_fail"}}
    config = write_models_yaml(tmp_path, models)
    data = tmp_path / "labelled.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in capital_rows()), encoding="utf-8")
    out = tmp_path / "aligned.yaml"
    code = main(
        [
            "align",
            str(data),
            "--label-col",
            "human",
            "--metric",
            "capital",
            "--config",
            str(config),
            "--folds",
            "4",
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "improved" in printed.out
    assert AlignedMetric.read(out).examples["judge_pass_fail"]


def _notebook_outputs(notebook: Any) -> str:
    return "\n".join(
        output.get("text", "") or output.get("data", {}).get("text/plain", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )


@pytest.mark.slow  # executes the notebook in a Jupyter kernel
def test_the_align_notebook_executes_offline() -> None:
    from test_notebooks import NOTEBOOKS, execute

    outputs = _notebook_outputs(execute(NOTEBOOKS / "align.ipynb"))
    assert "capital: improved: cohen_kappa 0.400 -> 1.000" in outputs
    assert "no measurable change" in outputs
    assert "'judge-inv': (-0.5, 0.0)" in outputs
    assert "before: 0.0  aligned: 1.0" in outputs


def test_the_align_notebook_is_committed_with_outputs() -> None:
    from test_notebooks import NOTEBOOKS, nbformat

    notebook = nbformat.read(NOTEBOOKS / "align.ipynb", as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(cell.get("execution_count") for cell in code)
    assert not any(out.get("output_type") == "error" for cell in code for out in cell.outputs)
    assert "improved" in _notebook_outputs(notebook)


# --------------------------------------------------------------------------- select="similar"


def embedder(server: LocalOpenAIServer) -> Any:
    from langchain_openai import OpenAIEmbeddings

    return OpenAIEmbeddings(
        model="embed-a",
        base_url=server.base_url,
        api_key="sk-test",
        check_embedding_ctx_length=False,
    )


def _shown_examples(server: LocalOpenAIServer) -> list[list[str]]:
    """Per chat request, the responses of the few-shot examples it carried."""
    shown = []
    for entry in server.requests:
        if entry.path.endswith("/chat/completions"):
            messages = entry.body["messages"]
            shown.append([given.get("response", "") for given, _ in _examples(messages)])
    return shown


def test_select_similar_puts_the_nearest_examples_in_each_prompt(server, tmp_path: Path) -> None:
    from langchain_answer_metrics.metrics.similar_examples import SimilarExamples

    result = align(
        critic(judge(server)),
        capital_rows(),
        folds=4,
        select="similar",
        embeddings=embedder(server),
        examples_per_step=1,
    )
    assert isinstance(result.metric, SimilarExamples) and result.metric.k == 1
    assert result.gain.finding == "improved"
    pool = result.metric.pool["judge_aspect"]
    assert len(pool) == 16  # every paraphrase the judge got wrong, to choose from
    server.reset()
    sample = {
        "user_input": "What is the capital of Peru?",
        "response": "Lima is where Peru's government sits.",
    }
    scored = result.metric.invoke(sample)
    assert scored.score == 1.0
    # One example per request: the pool's nearest one (Peru's own paraphrase).
    assert _shown_examples(server) == [["Lima is where Peru's government sits."]]
    assert scored.usage["embed-a"].requests >= 1  # the sample's embedding is paid for
    path = result.save(tmp_path / "similar.yaml")
    with pytest.raises(ValueError, match="embeddings="):
        load_aligned(path, llm=judge(server))
    loaded = load_aligned(path, llm=judge(server), embeddings=embedder(server))
    assert metric_signature(loaded) == metric_signature(result.metric)
    assert metric_signature(loaded) != metric_signature(critic(judge(server)))
    assert loaded.invoke(sample).score == 1.0
    with pytest.raises(ValueError, match="takes an embedding model"):
        align(critic(judge(server)), capital_rows(), select="similar")


def test_cli_select_similar_and_its_metric_file(
    server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from support import local_models, write_models_yaml

    monkeypatch.setenv("ALIGN_TEST_KEY", "sk-test")
    config = write_models_yaml(tmp_path, local_models(server, "ALIGN_TEST_KEY"))
    data = tmp_path / "labelled.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in capital_rows()), encoding="utf-8")
    out = tmp_path / "aligned.json"
    assert (
        main(
            [
                "align",
                str(data),
                "--metric",
                "aspect_critic",
                "--criterion",
                CRITERION,
                "--config",
                str(config),
                "--select",
                "similar",
                "--examples-per-step",
                "1",
                "--folds",
                "3",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    assert "improved" in capsys.readouterr().out
    saved = AlignedMetric.read(out)
    assert saved.select is not None and saved.select["embedding"] == "embed-a"
    server.reset()
    assert (
        main(["evaluate", str(data), "--metric-file", str(out), "--config", str(config), "--quiet"])
        == 0
    )
    assert server.embedding_requests >= 1 and server.chat_requests == 48
    assert all(len(shown) == 1 for shown in _shown_examples(server))
