"""A metric is one module plus one registry line; the built-in aspects are named ``aspect``."""

from __future__ import annotations

import warnings

import pytest
from support import fact_judge

from langchain_answer_metrics.cli.command import build_parser
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.plans import build_metrics, result_keys
from langchain_answer_metrics.judging.judges import as_judges
from langchain_answer_metrics.metrics import ASPECTS, AspectCritic
from langchain_answer_metrics.metrics.registry import METRICS, MetricModels

BASE = ["evaluate", "d.jsonl", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]


# --------------------------------------------------------------------------- aspect=


def test_a_built_in_aspect_is_named_by_aspect() -> None:
    entry = METRICS["aspect_critic"]
    models = MetricModels(judges=as_judges(fact_judge()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecation on the new spelling
        metric = entry.build(models, {"aspect": "coherence"})
        own = entry.build(models, {"criterion": "The answer cites a year."})
    assert isinstance(metric, AspectCritic)
    assert (metric.key, metric.criterion) == ("coherence", ASPECTS["coherence"])
    assert (own.key, own.criterion) == ("aspect_critic", "The answer cites a year.")


def test_criterion_naming_an_aspect_still_works_but_is_deprecated() -> None:
    entry = METRICS["aspect_critic"]
    models = MetricModels(judges=as_judges(fact_judge()))
    with pytest.warns(DeprecationWarning, match=r"use aspect='coherence'"):
        metric = entry.build(models, {"criterion": "coherence"})
    assert (metric.key, metric.criterion) == ("coherence", ASPECTS["coherence"])


def test_the_cli_takes_aspect_and_refuses_both_or_neither() -> None:
    parse = build_parser().parse_args
    named = parse([*BASE, "--aspect", "harmlessness"])
    assert result_keys(named, ["aspect_critic"]) == ["harmlessness"]
    (plan,) = build_metrics(named, ["aspect_critic"])
    assert plan.metric.criterion == ASPECTS["harmlessness"]
    # The fingerprint depends on the criterion text, however it was named.
    with pytest.warns(DeprecationWarning):
        (old,) = build_metrics(parse([*BASE, "--criterion", "harmlessness"]), ["aspect_critic"])
    assert old.signature == plan.signature
    with pytest.raises(UsageError, match=r"built-in aspect \('harmlessness'\) or a criterion"):
        build_metrics(parse([*BASE, "--aspect", "harmlessness", "--criterion", "X"]),
                      ["aspect_critic"])  # fmt: skip
    with pytest.raises(UsageError, match=r"^aspect_critic needs --criterion TEXT .* --aspect "):
        build_metrics(parse(BASE), ["aspect_critic"])
    with pytest.raises(SystemExit):
        parse([*BASE, "--aspect", "politeness"])  # not a built-in aspect
