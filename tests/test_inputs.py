"""Invalid samples and options are refused with a clear error, before any model call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError
from support import fact_judge

from langchain_answer_metrics import (
    AnswerCorrectness,
    AnswerMetric,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    InvalidSampleError,
    Sample,
    SemanticSimilarity,
)
from langchain_answer_metrics.testing.scripted import ScriptedChatModel, ScriptedEmbeddings

VALID: dict[str, Any] = {
    "user_input": "Where is the Eiffel Tower?",
    "response": "The Eiffel Tower is in Paris.",
    "reference": "The Eiffel Tower is in Paris, France.",
    "retrieved_contexts": ["The Eiffel Tower is a landmark in Paris."],
}

Build = Callable[[ScriptedChatModel, ScriptedEmbeddings], AnswerMetric]

METRICS: dict[str, tuple[Build, tuple[str, ...]]] = {
    "factual_correctness": (
        lambda llm, emb: FactualCorrectness(llm=llm),
        ("response", "reference"),
    ),
    "faithfulness": (lambda llm, emb: Faithfulness(llm=llm), ("response", "retrieved_contexts")),
    "aspect_critic": (
        lambda llm, emb: AspectCritic(llm=llm, criterion="Polite.", strictness=3),
        ("response",),
    ),
    "semantic_similarity": (
        lambda llm, emb: SemanticSimilarity(embeddings=emb),
        ("response", "reference"),
    ),
    "answer_correctness": (
        lambda llm, emb: AnswerCorrectness(llm=llm, embeddings=emb),
        ("response", "reference"),
    ),
}

BAD_TEXTS: dict[str, Any] = {
    "None": None,
    "empty": "",
    "whitespace": " \n\t ",
    "int": 42,
    "list": ["The Eiffel Tower is in Paris."],
}
BAD_CONTEXTS: dict[str, Any] = {
    "None": None,
    "empty list": [],
    "a string": "The Eiffel Tower is a landmark in Paris.",
    "an int": 7,
    "empty item": ["The Eiffel Tower is in Paris.", ""],
    "whitespace item": ["   "],
    "non-string item": ["The Eiffel Tower is in Paris.", 3],
    "None item": [None],
}


def _cases() -> list[Any]:
    cases = []
    for metric, (_, required) in METRICS.items():
        for field in required:
            without = {key: value for key, value in VALID.items() if key != field}
            cases.append(pytest.param(metric, without, field, id=f"{metric}-{field}-missing"))
            bad_values = BAD_CONTEXTS if field == "retrieved_contexts" else BAD_TEXTS
            for name, value in bad_values.items():
                if field == "retrieved_contexts" and name.endswith("item"):
                    expected_field = f"retrieved_contexts[{1 if len(value) > 1 else 0}]"
                else:
                    expected_field = field
                cases.append(
                    pytest.param(
                        metric,
                        {**VALID, field: value},
                        expected_field,
                        id=f"{metric}-{field}-{name}",
                    )
                )
        cases.append(
            pytest.param(metric, {**VALID, "answer": "x"}, "answer", id=f"{metric}-unknown-key")
        )
        cases.append(
            pytest.param(
                metric, {**VALID, "user_input": 5}, "user_input", id=f"{metric}-optional-wrong-type"
            )
        )
        if "retrieved_contexts" not in METRICS[metric][1]:
            for name, value in {"str": "one context", "int": 5}.items():
                cases.append(
                    pytest.param(
                        metric,
                        {**VALID, "retrieved_contexts": value},
                        "retrieved_contexts",
                        id=f"{metric}-optional-contexts-{name}",
                    )
                )
        for name, value in {"str": "Paris", "int": 3, "list": [VALID], "None": None}.items():
            cases.append(pytest.param(metric, value, "sample", id=f"{metric}-not-a-dict-{name}"))
    return cases


@pytest.fixture
def models() -> tuple[ScriptedChatModel, ScriptedEmbeddings]:
    return fact_judge(), ScriptedEmbeddings()


def _assert_refused(
    error: InvalidSampleError, metric: str, field: str, models: tuple[Any, Any]
) -> None:
    assert isinstance(error, ValueError)
    assert error.metric == metric
    assert error.field == field
    assert metric in str(error) and field in str(error)
    llm, embeddings = models
    assert llm.calls == []
    assert embeddings.requests == []


@pytest.mark.parametrize(("metric", "sample", "field"), _cases())
async def test_invalid_sample_is_refused_before_any_call(
    metric: str, sample: Any, field: str, models: tuple[ScriptedChatModel, ScriptedEmbeddings]
) -> None:
    build, _ = METRICS[metric]
    with pytest.raises(InvalidSampleError) as caught:
        await build(*models).ainvoke(sample)
    _assert_refused(caught.value, metric, field, models)


@pytest.mark.parametrize("metric", list(METRICS))
def test_sync_paths_refuse_too(
    metric: str, models: tuple[ScriptedChatModel, ScriptedEmbeddings]
) -> None:
    build, _ = METRICS[metric]
    scorer = build(*models)
    with pytest.raises(InvalidSampleError) as caught:
        scorer.invoke({**VALID, "response": "  "})
    _assert_refused(caught.value, metric, "response", models)
    with pytest.raises(InvalidSampleError) as caught:
        scorer.score(response=None, reference="x", retrieved_contexts=["x"])
    _assert_refused(caught.value, metric, "response", models)
    with pytest.raises(InvalidSampleError):
        scorer.batch([{**VALID, "response": 1}])
    assert models[0].calls == []


async def test_invalid_sample_object_is_refused() -> None:
    llm = fact_judge()
    with pytest.raises(InvalidSampleError) as caught:
        await FactualCorrectness(llm=llm).ainvoke(Sample(response="Paris."))
    assert caught.value.field == "reference"
    assert llm.calls == []


@pytest.mark.parametrize("metric", list(METRICS))
async def test_valid_sample_dict_and_object_are_accepted(
    metric: str, models: tuple[ScriptedChatModel, ScriptedEmbeddings]
) -> None:
    build, required = METRICS[metric]
    scorer = build(*models)
    minimal = {field: VALID[field] for field in required}

    from_dict = await scorer.ainvoke(minimal)
    from_object = await scorer.ainvoke(Sample(**VALID))

    assert from_dict.key == from_object.key == metric
    assert 0.0 <= from_dict.score <= 1.0


def test_invalid_sample_error_is_a_value_error() -> None:
    error = InvalidSampleError("faithfulness", "retrieved_contexts", "is an empty list")
    assert isinstance(error, ValueError)
    assert str(error) == "faithfulness: field 'retrieved_contexts' is an empty list"


# --- constructor options ------------------------------------------------------------------

LLM = fact_judge()
EMB = ScriptedEmbeddings()


@pytest.mark.parametrize(
    ("build", "match"),
    [
        pytest.param(
            lambda: AspectCritic(llm=LLM, criterion="c", strictness=0),
            "strictness",
            id="strictness-0",
        ),
        pytest.param(
            lambda: AspectCritic(llm=LLM, criterion="c", strictness=6),
            "strictness",
            id="strictness-6",
        ),
        pytest.param(
            lambda: AspectCritic(llm=LLM, criterion=""), "criterion", id="empty-criterion"
        ),
        pytest.param(
            lambda: AspectCritic(llm=LLM, criterion="  \n"), "criterion", id="blank-criterion"
        ),
        pytest.param(
            lambda: AnswerCorrectness(llm=LLM, embeddings=EMB, factual_weight=-0.1),
            "factual_weight",
            id="negative-factual-weight",
        ),
        pytest.param(
            lambda: AnswerCorrectness(llm=LLM, embeddings=EMB, semantic_weight=-1),
            "semantic_weight",
            id="negative-semantic-weight",
        ),
        pytest.param(
            lambda: AnswerCorrectness(llm=LLM, embeddings=EMB, factual_weight=0, semantic_weight=0),
            "must be > 0",
            id="zero-weights",
        ),
        pytest.param(
            lambda: FactualCorrectness(llm=LLM, threshold=1.5), "threshold", id="threshold-above-1"
        ),
        pytest.param(
            lambda: SemanticSimilarity(embeddings=EMB, threshold=-0.1),
            "threshold",
            id="threshold-below-0",
        ),
        pytest.param(lambda: FactualCorrectness(llm=LLM, beta=0), "beta", id="beta-0"),
        pytest.param(lambda: FactualCorrectness(llm=LLM, mode="f2"), "mode", id="unknown-mode"),
        pytest.param(lambda: FactualCorrectness(llm=[]), "llm", id="no-judges"),
        pytest.param(lambda: SemanticSimilarity(embeddings=[]), "embeddings", id="no-embeddings"),
        pytest.param(
            lambda: SemanticSimilarity(embeddings=EMB, long_text="split"),
            "long_text",
            id="unknown-long-text-mode",
        ),
        pytest.param(
            lambda: SemanticSimilarity(embeddings=EMB, rescale_baseline=1.0),
            "rescale_baseline",
            id="baseline-1",
        ),
    ],
)
def test_bad_options_are_rejected(build: Callable[[], AnswerMetric], match: str) -> None:
    with pytest.raises(ValueError, match=match) as caught:
        build()
    assert isinstance(caught.value, (ValidationError, ValueError))


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda: FactualCorrectness(llm="gpt-4o-mini"), id="string"),
        pytest.param(lambda: Faithfulness(llm=EMB), id="embeddings-as-llm"),
        pytest.param(lambda: AspectCritic(llm=[LLM, 3], criterion="c"), id="int-in-list"),
        pytest.param(lambda: AnswerCorrectness(llm=object(), embeddings=EMB), id="object"),
    ],
)
def test_llm_of_the_wrong_type_is_rejected(build: Callable[[], AnswerMetric]) -> None:
    with pytest.raises((TypeError, ValueError)):
        build()


@pytest.mark.parametrize("llm", ["gpt-4o-mini", [LLM, 3]], ids=["string", "int-in-list"])
def test_wrong_llm_error_says_what_llm_takes(llm: Any) -> None:
    with pytest.raises(
        TypeError,
        match=r"llm= takes LangChain chat models \(or runnables wrapping one\) or Judge objects",
    ):
        FactualCorrectness(llm=llm)


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda: SemanticSimilarity(embeddings=LLM), id="chat-model"),
        pytest.param(
            lambda: AnswerCorrectness(llm=LLM, embeddings="text-embedding-3"), id="string"
        ),
    ],
)
def test_embeddings_of_the_wrong_type_are_rejected(build: Callable[[], AnswerMetric]) -> None:
    with pytest.raises((TypeError, ValueError), match="embeddings="):
        build()
