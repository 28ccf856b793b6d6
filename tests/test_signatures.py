"""Resume signatures sign a metric's prompts by their text and a prompt version, never by
a repr: the default prompts by PROMPT_VERSION, a caller's own prompt or examples by the
text of their messages."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from langchain_core.prompts import ChatPromptTemplate
from support import fact_judge

from langchain_answer_metrics import (
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    SemanticSimilarity,
    evaluate_dataset,
)
from langchain_answer_metrics.checkpoints import metric_signature, prompt_settings
from langchain_answer_metrics.checkpoints import signatures as checkpoints_module
from langchain_answer_metrics.judging.prompt_set import BUILTIN_STEPS, DEFAULT_STEP_PROMPTS
from langchain_answer_metrics.judging.prompts import DEFAULT_PROMPTS, PROMPT_VERSION
from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

# The default prompts and examples that PROMPT_VERSION stands for. When this fails
# because the default prompts or examples were reworded: bump PROMPT_VERSION in
# judging/prompts.py (saved scores judged under the old wording are then not reused),
# and write the new digest and version here.
PINNED = (1, "f7d06988a9531ddc")

EXAMPLE = {
    "input": {"text": "Rome is old. It has seven hills."},
    "output": {"claims": ["Rome is old.", "Rome has seven hills."]},
}


def default_prompts_digest() -> str:
    signed = {
        step: {
            "messages": checkpoints_module._template_text(prompt.template),
            "examples": checkpoints_module._examples_text(prompt.examples),
        }
        for step, prompt in sorted(DEFAULT_STEP_PROMPTS.items())
        if step in BUILTIN_STEPS  # a registered step has a version of its own
    }
    payload = json.dumps(signed, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def test_the_prompt_version_stands_for_the_default_prompts_text() -> None:
    assert (PROMPT_VERSION, default_prompts_digest()) == PINNED, (
        "the default prompts or examples changed: bump PROMPT_VERSION and update PINNED"
    )


def test_a_default_metric_is_signed_by_the_prompt_version_only() -> None:
    assert prompt_settings(FactualCorrectness(llm=fact_judge())) == {
        "prompt_version": PROMPT_VERSION
    }
    critic = AspectCritic(llm=fact_judge(), name="dated", criterion="It gives a year.")
    assert prompt_settings(critic) == {"prompt_version": PROMPT_VERSION}
    similarity = SemanticSimilarity(embeddings=ScriptedEmbeddings())
    assert prompt_settings(similarity) == {}  # no judge step, no prompt


def test_signatures_do_not_depend_on_a_templates_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    default = FactualCorrectness(llm=fact_judge())
    own = FactualCorrectness(llm=fact_judge(), prompts={"decompose_claims": "Split notes."})
    before = metric_signature(default), metric_signature(own)
    monkeypatch.setattr(ChatPromptTemplate, "__repr__", lambda self: f"at {id(self)}")
    assert (metric_signature(default), metric_signature(own)) == before


def test_a_prompt_or_examples_of_ones_own_are_signed_by_their_text() -> None:
    judge = fact_judge()
    default = metric_signature(FactualCorrectness(llm=judge))
    own = metric_signature(FactualCorrectness(llm=judge, prompts={"decompose_claims": "Split."}))
    assert own != default
    assert own == metric_signature(
        FactualCorrectness(llm=fact_judge(), prompts={"decompose_claims": "Split."})
    )
    other = FactualCorrectness(llm=judge, prompts={"decompose_claims": "Split it."})
    assert metric_signature(other) not in {own, default}
    # The default template given as one's own is the default.
    same = {"decompose_claims": DEFAULT_PROMPTS["decompose_claims"]}
    kept = FactualCorrectness(
        llm=judge,
        prompts=same,
        examples={"decompose_claims": list(DEFAULT_STEP_PROMPTS["decompose_claims"].examples)},
    )
    assert metric_signature(kept) == default
    with_example = FactualCorrectness(llm=judge, examples={"decompose_claims": [EXAMPLE]})
    signed = prompt_settings(with_example)["prompts"]
    assert list(signed) == ["decompose_claims"]
    assert any("Rome has seven hills." in text for text in signed["decompose_claims"]["examples"])
    assert metric_signature(with_example) != default
    text = prompt_settings(FactualCorrectness(llm=judge, prompts={"verify_claims": "Check."}))
    assert text["prompts"]["verify_claims"]["messages"][0].startswith("system: Check.")


def test_bumping_the_prompt_version_signs_judged_metrics_anew(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    judged = Faithfulness(llm=fact_judge())
    similarity = SemanticSimilarity(embeddings=ScriptedEmbeddings())
    before = metric_signature(judged), metric_signature(similarity)
    monkeypatch.setattr(checkpoints_module, "PROMPT_VERSION", PROMPT_VERSION + 1)
    assert metric_signature(judged) != before[0]
    assert metric_signature(similarity) == before[1]


def test_a_checkpoint_reuses_scores_only_under_the_same_prompt_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.jsonl"
    samples = [{"response": "Paris is in France.", "reference": "Paris is in France."}]
    evaluate_dataset(samples, [FactualCorrectness(llm=fact_judge())], checkpoint=path)
    same = fact_judge()
    evaluate_dataset(samples, [FactualCorrectness(llm=same)], checkpoint=path)
    assert same.calls == []
    monkeypatch.setattr(checkpoints_module, "PROMPT_VERSION", PROMPT_VERSION + 1)
    reworded = fact_judge()
    evaluate_dataset(samples, [FactualCorrectness(llm=reworded)], checkpoint=path)
    assert reworded.calls  # judged under other default prompts: scored again


def test_a_custom_judge_built_in_python_is_signed_by_its_output_and_votes() -> None:
    """A checkpoint must not reuse a CustomJudge's scores after its scale, categories or
    votes changed: those settings are models and numbers, not plain strings."""
    from langchain_answer_metrics import Categories, CustomJudge, Scale

    judge = fact_judge()

    def signed(**options: object) -> str:
        return metric_signature(
            CustomJudge(llm=judge, name="brevity", criterion="Brief.", **options)
        )  # type: ignore[arg-type]

    five = Scale(levels={1: "long", 2: "fair", 3: "short"})
    assert signed(output=five) == signed(output=Scale(levels={1: "long", 2: "fair", 3: "short"}))
    different = {
        signed(output=five),
        signed(output=Scale(levels={1: "long", 2: "fair", 3: "very short"})),
        signed(output=Categories(scores={"brief": 1.0, "long": 0.0})),
        signed(output=Categories(scores={"brief": 1.0, "long": 0.2})),
        signed(output=five, strictness=3),
        signed(output=five, higher_is_better=False),
    }
    assert len(different) == 6
