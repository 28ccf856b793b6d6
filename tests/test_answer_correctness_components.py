"""AnswerCorrectness builds its two component metrics once and validates a sample once.

The components are rebuilt only when a setting they are built from changes (assignment,
``model_copy(update=...)``), so a changed metric never scores with stale components.
"""

from __future__ import annotations

from typing import Any

import pytest
from support import EINSTEIN_CLAIMS, EINSTEIN_REFERENCE, EINSTEIN_RESPONSE, fact_judge

import langchain_answer_metrics.metrics.answer_correctness as answer_correctness_module
import langchain_answer_metrics.metrics.base as base_module
from langchain_answer_metrics import AnswerCorrectness, InvalidSampleError
from langchain_answer_metrics.core.strict_options import UnknownOptionError
from langchain_answer_metrics.judging.judges import as_judges
from langchain_answer_metrics.metrics.factual_correctness import FactualCorrectness
from langchain_answer_metrics.metrics.semantic_similarity import SemanticSimilarity
from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

EINSTEIN = {"response": EINSTEIN_RESPONSE, "reference": EINSTEIN_REFERENCE}


def metric(**options: Any) -> AnswerCorrectness:
    options.setdefault("embeddings", ScriptedEmbeddings())
    return AnswerCorrectness(llm=fact_judge(claims=EINSTEIN_CLAIMS), **options)


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The components AnswerCorrectness constructs, in order ("factual", "semantic")."""
    made: list[str] = []

    def counting(cls: type, label: str) -> Any:
        def make(**options: Any) -> Any:
            made.append(label)
            return cls(**options)

        return make

    monkeypatch.setattr(
        answer_correctness_module, "FactualCorrectness", counting(FactualCorrectness, "factual")
    )
    monkeypatch.setattr(
        answer_correctness_module, "SemanticSimilarity", counting(SemanticSimilarity, "semantic")
    )
    return made


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The metric key of every sample validation (``to_sample`` call)."""
    seen: list[str] = []
    real = base_module.to_sample

    def spy(metric: str, value: Any, **options: Any) -> Any:
        seen.append(metric)
        return real(metric, value, **options)

    monkeypatch.setattr(base_module, "to_sample", spy)
    return seen


async def test_components_are_built_once_across_calls(built: list[str]) -> None:
    answer = metric()
    factual, semantic = answer.factual, answer.semantic
    first = await answer.ainvoke(EINSTEIN)
    second = answer.invoke(EINSTEIN)
    answer.batch([EINSTEIN, EINSTEIN])
    assert built == ["factual", "semantic"]
    assert answer.factual is factual and answer.semantic is semantic
    assert first.score == second.score
    assert first.details["factual_correctness"]["score"] == 0.5


@pytest.mark.parametrize("surface", ["invoke", "ainvoke"])
async def test_a_sample_is_validated_once_per_call(validations: list[str], surface: str) -> None:
    answer = metric()
    answer.factual, answer.semantic  # noqa: B018 - built before counting
    if surface == "invoke":
        answer.invoke(EINSTEIN)
    else:
        await answer.ainvoke(EINSTEIN)
    assert validations == ["answer_correctness"]


async def test_the_components_score_under_their_own_runs() -> None:
    # Skipping the second validation keeps each component's own child run and key.
    result = await metric().ainvoke(EINSTEIN)
    assert set(result.per_model) == {
        "factual_correctness/judge-a",
        "semantic_similarity/scripted-embeddings",
    }


def test_the_one_validation_keeps_every_check() -> None:
    # This metric's own limits apply (the components' defaults used to apply as well) ...
    roomy = metric(max_input_chars=600_000)
    long_text = "Paris. " * 80_000
    assert roomy.check_sample({"response": long_text, "reference": "Paris."}).response
    with pytest.raises(InvalidSampleError, match="max_input_chars"):
        metric(max_input_chars=10).check_sample(EINSTEIN)

    # ... and so does the semantic component's fail-fast length check (by a tokenizer).
    class Tokenized(ScriptedEmbeddings):
        def count_tokens(self, text: str) -> int:
            return len(text.split())

    strict = metric(long_text="fail_fast", max_tokens=3, embeddings=Tokenized())
    with pytest.raises(InvalidSampleError, match="semantic_similarity: field 'response'"):
        strict.check_sample(EINSTEIN)


def test_a_changed_setting_rebuilds_the_components(built: list[str]) -> None:
    answer = metric()
    factual, semantic = answer.factual, answer.semantic
    answer.beta = 2.0
    assert answer.factual.beta == 2.0 and answer.factual is not factual
    assert answer.semantic is not semantic  # built together
    answer.rescale_baseline = 0.5
    assert answer.semantic.rescale_baseline == 0.5
    other = as_judges(fact_judge("judge-b"))
    answer.llm = other
    assert [judge.label for judge in answer.factual.llm] == ["judge-b"]
    answer.llm.append(as_judges(fact_judge("judge-c"))[0])  # changed in place
    assert [judge.label for judge in answer.factual.llm] == ["judge-b", "judge-c"]
    answer.threshold = 0.9  # not a component setting: nothing rebuilt
    count = len(built)
    answer.factual, answer.semantic  # noqa: B018
    assert len(built) == count


def test_copies_never_serve_stale_components() -> None:
    answer = metric()
    original = answer.factual
    changed = answer.model_copy(update={"beta": 0.5, "aggregation": "min"})
    assert (changed.factual.beta, changed.factual.aggregation) == (0.5, "min")
    assert changed.semantic.aggregation == "min"
    assert answer.factual is original and answer.factual.beta == 1.0
    same = answer.model_copy()
    assert same.factual is original  # same settings: nothing to rebuild


def test_built_components_do_not_change_equality() -> None:
    answer, twin = metric(), metric()
    twin.llm, twin.embeddings = answer.llm, answer.embeddings
    assert answer == twin
    answer.factual  # noqa: B018
    assert answer == twin and answer == answer.model_copy()


def test_with_config_and_presets_use_the_same_components() -> None:
    answer = AnswerCorrectness.factual_focused(
        llm=fact_judge(claims=EINSTEIN_CLAIMS), embeddings=ScriptedEmbeddings()
    )
    factual = answer.factual
    result = answer.with_config(run_name="ac").invoke(EINSTEIN)
    assert answer.factual is factual
    assert result.details["weights"] == {"factual": 0.9, "semantic": 0.1}


def test_unknown_options_are_still_refused() -> None:
    with pytest.raises(UnknownOptionError, match="did you mean beta"):
        metric(betta=2.0)
    with pytest.raises(UnknownOptionError, match="did you mean threshold"):
        AnswerCorrectness.default(llm=fact_judge(), embeddings=ScriptedEmbeddings(), treshold=0.5)
