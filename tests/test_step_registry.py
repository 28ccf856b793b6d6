"""A judge step of one's own is declared once (``register_step``) and is then a step like
the built-in ones: custom prompts and examples are checked against it, it has default
examples, its default prompt is signed by its own version, the cost estimate's dry run
answers it, and the toy judge (taught with ``register_toy_step``) answers it over HTTP.

The step here, ``judge_tone``, lives in this file only, as a new metric's step would live
in its module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import pytest
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableConfig
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from langchain_answer_metrics.checkpoints import prompt_settings
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.core.sample import Sample, SampleField
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.prompt_set import (
    DEFAULT_STEP_PROMPTS,
    STEP_SCHEMAS,
    PromptError,
    StepSpec,
    register_step,
)
from langchain_answer_metrics.judging.prompts import (
    DATA_RULE,
    PROMPT_VERSION,
    STEP_VARIABLES,
    StepVariables,
)
from langchain_answer_metrics.judging.steps.intent import StepIntent, asking
from langchain_answer_metrics.judging.structured import ask_structured
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.run.estimate.estimator import estimate
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.prompt_reading import ToyStep, register_toy_step


class ToneVerdict(BaseModel):
    reason: str
    tone: Literal["polite", "rude"]


TONE_STEP = register_step(
    StepSpec(
        name="judge_tone",
        schema=ToneVerdict,
        system=f"You judge the tone of a response. {DATA_RULE}",
        user="{style_guide}\n\n{response}",
        variables=StepVariables(required=("response",), optional=("style_guide",)),
        examples=(
            {"input": {"response": "Thanks!"}, "output": {"reason": "thanks", "tone": "polite"}},
        ),
        version=3,
        dry_reply=lambda intent: {"reason": "dry run", "tone": "polite"},
    )
)


def toy_tone(sections: Mapping[str, str]) -> dict[str, Any]:
    rude = "idiot" in sections.get("response", "").lower()
    return {"reason": "word check", "tone": "rude" if rude else "polite"}


register_toy_step(ToyStep("ToneVerdict", frozenset({"response", "style_guide"}), toy_tone))


class Tone(JudgedMetric):
    metric_key: ClassVar[str] = "tone"
    required_fields: ClassVar[tuple[SampleField, ...]] = ("response",)
    prompt_steps: ClassVar[tuple[str, ...]] = ("judge_tone",)

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        assert sample.response is not None
        messages = self._step_prompts()["judge_tone"].messages(
            "judge_tone", {"response": sample.response, "style_guide": "Be kind."}
        )
        intent = StepIntent(step="judge_tone", response=sample.response)
        with asking(intent):
            reply = await ask_structured(
                judge, schema=ToneVerdict, messages=messages, config=config
            )
        score = 1.0 if reply.parsed.tone == "polite" else 0.0
        return ModelOutcome(score=score, details={}, reason=reply.parsed.reason, usage=reply.usage)


def local_judge(server: LocalOpenAIServer, **options: Any) -> ChatOpenAI:
    return ChatOpenAI(
        model="judge-a",
        base_url=server.base_url,
        api_key="sk-test",  # type: ignore[arg-type]
        use_responses_api=False,
        max_retries=0,
        **options,
    )


def test_registering_the_same_spec_twice_is_a_no_op_and_a_taken_name_is_refused() -> None:
    assert register_step(TONE_STEP) is TONE_STEP
    with pytest.raises(PromptError, match="already a step 'judge_tone'"):
        register_step(
            StepSpec("judge_tone", ToneVerdict, "other", "{response}", TONE_STEP.variables)
        )
    with pytest.raises(PromptError, match="already a step 'verify_claims'"):
        register_step(
            StepSpec("verify_claims", ToneVerdict, "s", "{response}", TONE_STEP.variables)
        )


def test_a_spec_whose_template_does_not_fit_its_variables_is_refused_and_not_kept() -> None:
    bad = StepSpec("judge_bad", ToneVerdict, "s", "{answer}", StepVariables(required=("response",)))
    with pytest.raises(PromptError, match=r"lacks the required variable \{response\}"):
        register_step(bad)
    assert "judge_bad" not in DEFAULT_STEP_PROMPTS and "judge_bad" not in STEP_VARIABLES
    assert "judge_bad" not in STEP_SCHEMAS


def test_custom_prompts_and_examples_are_checked_against_the_registered_step() -> None:
    model = ChatOpenAI(model="judge-a", api_key="sk-x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown variable \{reference\}"):
        Tone(
            llm=model,
            prompts={
                "judge_tone": ChatPromptTemplate.from_messages(
                    [("human", "{response} {reference}")]
                )
            },
        )
    with pytest.raises(ValueError, match="not a ToneVerdict"):
        Tone(
            llm=model,
            examples={
                "judge_tone": [
                    {"input": {"response": "x"}, "output": {"reason": "r", "tone": "angry"}}
                ]
            },
        )
    metric = Tone(llm=model, prompts={"judge_tone": "Judge the tone strictly."})
    system = metric._step_prompts()["judge_tone"].template.messages[0]
    assert "Judge the tone strictly." in str(system.content)  # type: ignore[union-attr]
    # A user's prompt for the step drops the default examples, as for built-in steps.
    assert metric._step_prompts()["judge_tone"].examples == ()
    assert len(DEFAULT_STEP_PROMPTS["judge_tone"].examples) == 1


def test_its_default_prompt_is_signed_by_its_own_version() -> None:
    model = ChatOpenAI(model="judge-a", api_key="sk-x")  # type: ignore[arg-type]
    assert prompt_settings(Tone(llm=model)) == {
        "prompt_version": PROMPT_VERSION,
        "step_versions": {"judge_tone": 3},
    }
    custom = prompt_settings(Tone(llm=model, prompts={"judge_tone": "Be strict."}))
    assert "judge_tone" in custom["prompts"]


@pytest.mark.parametrize("method", ["function_calling", "json_mode", "json_schema"])
def test_the_toy_judge_answers_it_over_http(server: LocalOpenAIServer, method: str) -> None:
    metric = Tone(llm=Judge(model=local_judge(server), method=method))  # type: ignore[arg-type]
    polite = metric.invoke({"response": "Thank you for asking."})
    rude = metric.invoke({"response": "Only an idiot asks that."})
    assert isinstance(polite, MetricResult) and isinstance(rude, MetricResult)
    assert polite.score == pytest.approx(1.0) and rude.score == pytest.approx(0.0)
    sent = [entry for entry in server.requests if entry.path.endswith("/chat/completions")]
    assert len(sent) == 2
    # The default example went between the instructions and the data.
    assert "Example input:" in str(sent[0].body["messages"])


def test_the_estimate_answers_it_without_a_request(server: LocalOpenAIServer) -> None:
    metric = Tone(llm=local_judge(server))
    plan = estimate([{"response": "Thanks."}, {"response": "Go away."}], [metric])
    assert plan.dry_run_errors == 0
    assert plan.total.requests == 2
    assert server.requests == []


def test_json_mode_requests_go_to_the_step_whose_marks_fit_best(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A registered step marked by a tag a built-in step also has never takes the
    built-in step's requests: the step with the most matching marks wins."""
    from langchain_answer_metrics.testing import prompt_reading

    monkeypatch.setitem(
        prompt_reading.TOY_STEPS,
        "LooseVerdict",
        ToyStep("LooseVerdict", frozenset({"response"}), lambda sections: {}),
    )

    def prompt(**sections: str) -> list[dict[str, str]]:
        text = "\n".join(f"<{name}>\n{value}\n</{name}>" for name, value in sections.items())
        return [{"role": "user", "content": text}]

    guess = prompt_reading.guess_schema
    assert guess(prompt(criterion="Brief.", response="Yes.")) == "AspectVerdict"
    # Only registered steps are marked by <response> alone (the first registered wins a tie).
    assert guess(prompt(response="Yes.")) in prompt_reading.TOY_STEPS
    assert guess(prompt(response="Yes.", style_guide="Be kind.")) == "ToneVerdict"
    assert guess(prompt(claims="1. a", source="a")) == "ClaimVerdicts"
    assert guess(prompt(text="Paris is in France.")) == "ClaimList"
