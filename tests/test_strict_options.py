"""An unknown keyword option is refused by name, with the closest known one suggested.

Every metric, AnswerCorrectness preset, SampleMapping factory, evaluator override and
runner function raises :class:`UnknownOptionError` (a ``TypeError``) before it reads a
sample or calls a model; valid keywords keep working as before.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.runnables import RunnableBinding, RunnableLambda
from support import EINSTEIN_REFERENCE, EINSTEIN_RESPONSE, fact_judge

from langchain_answer_metrics import (
    AnswerCorrectness,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    MetricResult,
    SemanticSimilarity,
)
from langchain_answer_metrics.core.strict_options import (
    UnknownOptionError,
    check_options,
    closest_name,
    rejects_unknown_keywords,
    unknown_option_error,
)
from langchain_answer_metrics.judging.judges import Embedder, Judge
from langchain_answer_metrics.mapping import SampleMapping
from langchain_answer_metrics.run.runner import (
    aevaluate,
    astream_evaluate,
    evaluate,
    stream_evaluate,
)
from langchain_answer_metrics.testing.scripted import ScriptedChatModel

SAMPLE = {
    "user_input": "Where was Einstein born?",
    "response": EINSTEIN_RESPONSE,
    "reference": EINSTEIN_REFERENCE,
    "retrieved_contexts": [EINSTEIN_REFERENCE],
}


def embeddings() -> DeterministicFakeEmbedding:
    return DeterministicFakeEmbedding(size=16)


def assert_refused(
    error: pytest.ExceptionInfo[UnknownOptionError], owner: str, key: str, meant: str
) -> None:
    assert isinstance(error.value, TypeError)
    message = str(error.value)
    assert f"{owner}()" in message
    assert repr(key) in message
    assert f"did you mean {meant}?" in message
    assert (error.value.owner, error.value.key, error.value.suggestion) == (owner, key, meant)


# ------------------------------------------------------------------------- metrics

METRIC_TYPOS: list[tuple[str, Callable[[ScriptedChatModel], Any], str, str]] = [
    (
        "SemanticSimilarity",
        lambda judge: SemanticSimilarity(embeddings=embeddings(), treshold=0.8),
        "treshold",
        "threshold",
    ),
    (
        "FactualCorrectness",
        lambda judge: FactualCorrectness(llm=judge, mod="precision"),
        "mod",
        "mode",
    ),
    (
        "AnswerCorrectness",
        lambda judge: AnswerCorrectness(llm=judge, embeddings=embeddings(), factual_wieght=1),
        "factual_wieght",
        "factual_weight",
    ),
    (
        "AspectCritic",
        lambda judge: AspectCritic(llm=judge, name="dated", criterion="Has a year.", strictnes=3),
        "strictnes",
        "strictness",
    ),
    (
        "Faithfulness",
        lambda judge: Faithfulness(llm=judge, treshold=0.7),
        "treshold",
        "threshold",
    ),
    (
        # A misspelt model option is caught too, not reported as the missing llm=.
        "Faithfulness",
        lambda judge: Faithfulness(lm=judge),
        "lm",
        "llm",
    ),
    (
        "AnswerCorrectness",
        lambda judge: AnswerCorrectness(llm=judge, embedding=embeddings()),
        "embedding",
        "embeddings",
    ),
]


@pytest.mark.parametrize(
    ("owner", "build", "key", "meant"), METRIC_TYPOS, ids=[typo[2] for typo in METRIC_TYPOS]
)
def test_each_metric_refuses_a_misspelt_option(
    owner: str, build: Callable[[ScriptedChatModel], Any], key: str, meant: str
) -> None:
    judge = fact_judge()
    with pytest.raises(UnknownOptionError) as error:
        build(judge)
    assert_refused(error, owner, key, meant)
    assert judge.calls == []


def test_an_option_far_from_every_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownOptionError) as error:
        Faithfulness(llm=fact_judge(), zzz=1)
    assert error.value.suggestion is None
    assert "known options:" in str(error.value)
    assert "threshold" in str(error.value)


def test_a_dict_given_to_model_validate_is_checked_too() -> None:
    with pytest.raises(UnknownOptionError, match="did you mean threshold"):
        Faithfulness.model_validate({"llm": fact_judge(), "treshold": 0.5})


@pytest.mark.parametrize(
    "preset", ["default", "equal_weights", "factual_focused", "semantic_focused"]
)
def test_each_answer_correctness_preset_refuses_a_misspelt_option(preset: str) -> None:
    judge = fact_judge()
    build = getattr(AnswerCorrectness, preset)
    with pytest.raises(UnknownOptionError) as error:
        build(llm=judge, embeddings=embeddings(), treshold=0.5)
    assert_refused(error, f"AnswerCorrectness.{preset}", "treshold", "threshold")
    assert judge.calls == []

    metric = build(llm=judge, embeddings=embeddings(), threshold=0.5)
    assert metric.threshold == 0.5


def test_valid_options_keep_working() -> None:
    judge = fact_judge()
    metric = Faithfulness(llm=judge, threshold=0.5, aggregation="median", name="grounded")
    assert (metric.name, metric.key, metric.threshold) == ("grounded", "grounded", 0.5)

    critic = AspectCritic(llm=judge, name="dated", criterion="Has a year.")
    assert critic.key == "dated"
    assert AspectCritic.from_aspect("conciseness", llm=judge).key == "conciseness"

    configured = metric.with_config(run_name="grounded-run")
    assert isinstance(configured, RunnableBinding)
    assert isinstance(configured.invoke(SAMPLE), MetricResult)

    chain = metric | RunnableLambda(lambda result: result.score)
    assert 0.0 <= chain.invoke(SAMPLE) <= 1.0

    copied = metric.model_copy(update={"threshold": 0.9})
    assert copied.threshold == 0.9 and copied.key == "grounded"

    similarity = SemanticSimilarity(embeddings=embeddings(), rescale_baseline=0.5)
    assert similarity.invoke(SAMPLE).key == "semantic_similarity"


# -------------------------------------------------------------------- sample mapping


def test_sample_mapping_refuses_a_misspelt_constructor_option() -> None:
    with pytest.raises(UnknownOptionError) as error:
        SampleMapping(override={"response": "answer"})
    assert_refused(error, "SampleMapping", "override", "overrides")


@pytest.mark.parametrize("factory", ["for_langsmith", "for_rows"])
def test_sample_mapping_factories_refuse_a_misspelt_field(factory: str) -> None:
    with pytest.raises(UnknownOptionError) as error:
        getattr(SampleMapping, factory)(referense="gold")
    assert_refused(error, f"SampleMapping.{factory}", "referense", "reference")

    mapping = getattr(SampleMapping, factory)(reference="gold")
    assert mapping.overrides == {"reference": "gold"}


def test_a_misspelt_field_in_an_overrides_dict_is_suggested_too() -> None:
    with pytest.raises(ValueError, match="did you mean retrieved_contexts"):
        SampleMapping(overrides={"retrieved_context": "docs"})


@pytest.mark.parametrize("method", ["as_evaluator", "as_function_evaluator"])
def test_evaluator_overrides_refuse_a_misspelt_field(method: str) -> None:
    judge = fact_judge()
    metric = Faithfulness(llm=judge)
    with pytest.raises(UnknownOptionError) as error:
        getattr(metric, method)(retrieved_context="outputs.docs")
    assert_refused(error, f"Faithfulness.{method}", "retrieved_context", "retrieved_contexts")
    assert judge.calls == []

    assert getattr(metric, method)(retrieved_contexts="outputs.docs") is not None
    assert getattr(metric, method)(mapping=SampleMapping.for_langsmith()) is not None


# --------------------------------------------------------------------------- runner


class Source:
    """Samples that record whether any was read."""

    def __init__(self) -> None:
        self.pulled = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self.pulled += 1
        yield SAMPLE


def test_evaluate_refuses_a_misspelt_option_before_reading_samples() -> None:
    judge, source = fact_judge(), Source()
    with pytest.raises(UnknownOptionError) as error:
        evaluate(source, [Faithfulness(llm=judge)], max_concurency=4)  # type: ignore[call-arg]
    assert_refused(error, "evaluate_dataset", "max_concurency", "max_concurrency")
    assert (source.pulled, judge.calls) == (0, [])

    rows = evaluate([SAMPLE], [Faithfulness(llm=judge)], max_concurrency=4)
    assert isinstance(rows[0].results["faithfulness"], MetricResult)


async def test_aevaluate_refuses_a_misspelt_option_before_reading_samples() -> None:
    judge, source = fact_judge(), Source()
    with pytest.raises(UnknownOptionError) as error:
        await aevaluate(source, [Faithfulness(llm=judge)], on_progres=print)  # type: ignore[call-arg]
    assert_refused(error, "aevaluate_dataset", "on_progres", "on_progress")
    assert (source.pulled, judge.calls) == (0, [])


def test_stream_evaluate_refuses_a_misspelt_option_when_called() -> None:
    judge, source = fact_judge(), Source()
    # Raised by the call itself, not on the first row: **options are checked up front.
    with pytest.raises(UnknownOptionError) as error:
        stream_evaluate(source, [Faithfulness(llm=judge)], windows=8)
    assert_refused(error, "stream_evaluate", "windows", "window")
    assert (source.pulled, judge.calls) == (0, [])

    rows = list(stream_evaluate([SAMPLE], [Faithfulness(llm=judge)], window=8))
    assert [row.index for row in rows] == [0]


async def test_astream_evaluate_refuses_a_misspelt_option_when_called() -> None:
    judge, source = fact_judge(), Source()
    with pytest.raises(UnknownOptionError) as error:
        astream_evaluate(source, [Faithfulness(llm=judge)], confg={})  # type: ignore[call-arg]
    assert_refused(error, "astream_evaluate", "confg", "config")
    assert (source.pulled, judge.calls) == (0, [])

    rows = [row async for row in astream_evaluate([SAMPLE], [Faithfulness(llm=judge)])]
    assert len(rows) == 1


def test_runner_functions_keep_their_signatures() -> None:
    assert list(inspect.signature(evaluate).parameters) == [
        "samples",
        "metrics",
        "max_concurrency",
        "window",
        "on_progress",
        "config",
        "checkpoint",
        "keep_degraded",
        # which field names a row in the checkpoint (issue 32: one id for --out and here)
        "id_key",
        "budget",
        "max_requests",
        "prices",
        "max_consecutive_failures",
        # batch mode (issue 31): the Batch API's options, after the live run's
        "batch",
        "batch_embeddings",
        "batch_poll_s",
        "batch_wait",
        "batch_min_requests",
        "batch_max_requests",
        "batch_max_bytes",
        "batch_keep_files",
        "batch_state",
        "on_batch_status",
    ]
    assert inspect.iscoroutinefunction(aevaluate)


# ------------------------------------------------------------------ the shared logic


def test_closest_name_reads_dashes_as_underscores() -> None:
    assert closest_name("max-tokens", ["max_tokens", "threshold"]) == "max_tokens"
    assert closest_name("zzz", ["max_tokens", "threshold"]) is None


def test_check_options_names_the_first_unknown_key() -> None:
    check_options("f", ["a", "b"], ["a", "b", "c"])
    with pytest.raises(UnknownOptionError, match=r"f\(\) got an unexpected keyword argument 'bb'"):
        check_options("f", ["a", "bb"], ["a", "b", "c"])
    error = unknown_option_error("Judge", "max_reask", ["model", "max_reasks"])
    assert str(error) == (
        "Judge() got an unexpected keyword argument 'max_reask' (did you mean max_reasks?)"
    )


def test_a_function_passing_on_its_options_must_say_where() -> None:
    def forwards(**options: Any) -> None:
        pass

    with pytest.raises(ValueError, match="forwards_to"):
        rejects_unknown_keywords()(forwards)


@pytest.mark.parametrize(
    ("build", "typo", "meant"),
    [
        (lambda **kw: Judge(model=fact_judge(), **kw), "max_reask", "max_reasks"),
        (lambda **kw: Judge(model=fact_judge(), **kw), "lable", "label"),
        (
            lambda **kw: Embedder(model=DeterministicFakeEmbedding(size=4), **kw),
            "batchsize",
            "batch_size",
        ),
    ],
)
def test_judges_and_embedders_refuse_a_misspelt_option(
    build: Callable[..., Any], typo: str, meant: str
) -> None:
    with pytest.raises(UnknownOptionError) as raised:
        build(**{typo: 1})
    assert raised.value.key == typo
    assert f"did you mean {meant}?" in str(raised.value)


def test_a_judge_takes_its_label_as_label_or_name() -> None:
    assert Judge(model=fact_judge(), label="primary").label == "primary"
    assert Judge(model=fact_judge(), name="primary").label == "primary"
    assert Judge(model=fact_judge("judge-x")).label == "judge-x"
