"""The cost dry run answers what each step asks (its intent), never the prompt read back.

Each judge step says what it asks while it asks (``judging.steps.intent``); the dry run's
stand-in model answers from that: claims are the clauses of the very text the step
decomposes (escaping, custom prompts and few-shot examples change nothing), and a
verification gets one verdict per claim the step verifies.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from support import fact_judge

from langchain_answer_metrics import AspectCritic, FactualCorrectness, Faithfulness
from langchain_answer_metrics.costs import estimate
from langchain_answer_metrics.judging.steps.intent import StepIntent, asking, current_intent
from langchain_answer_metrics.run import runner
from langchain_answer_metrics.run.estimate.dry_run import Recorder, dry_run_metrics
from langchain_answer_metrics.run.estimate.replies import clauses, dry_reply
from langchain_answer_metrics.run.estimate.tokens import completion_range

COSTS = Path(__file__).resolve().parent.parent / "langchain_answer_metrics" / "costs"

RESPONSE = "AT&T was founded in 1885 <really>. Its seat is in Dallas; 3."
REFERENCE = "AT&T was founded in 1885. It is based in Dallas, Texas."
CONTEXT = "AT&T (1885) is based in Dallas ＜Texas＞."


def dry_requests(metrics: list[Any], samples: list[dict[str, Any]]) -> Recorder:
    recorder = Recorder()
    dry_metrics, _ = dry_run_metrics(metrics, recorder)
    rows = runner.evaluate(samples, dry_metrics)
    assert all(not isinstance(o, runner.MetricError) for r in rows for o in r.results.values())
    return recorder


def test_each_request_carries_its_steps_intent() -> None:
    judge = fact_judge("scripted-judge")
    sample = {
        "user_input": "Where is AT&T?",
        "response": RESPONSE,
        "reference": REFERENCE,
        "retrieved_contexts": [CONTEXT],
    }
    recorder = dry_requests(
        [
            FactualCorrectness(llm=judge),
            Faithfulness(llm=judge),
            AspectCritic(llm=judge, name="dated", criterion="It <has> a year & place."),
        ],
        [sample],
    )
    by_step: dict[str, list[StepIntent]] = {}
    for request in recorder.chat:
        assert request.intent is not None, request.schema
        by_step.setdefault(request.intent.step, []).append(request.intent)
    # The raw texts, as the sample holds them: nothing unescaped back from a prompt.
    assert {i.text for i in by_step["decompose_claims"]} == {RESPONSE, REFERENCE}
    verified = {(i.claims, i.sources) for i in by_step["verify_claims"]}
    assert (tuple(clauses(RESPONSE)), (REFERENCE,)) in verified
    assert (tuple(clauses(REFERENCE)), (RESPONSE,)) in verified
    assert (tuple(clauses(RESPONSE)), (CONTEXT,)) in verified
    assert [(i.criterion, i.response) for i in by_step["judge_aspect"]] == [
        ("It <has> a year & place.", RESPONSE)
    ]
    assert judge.calls == []


def test_custom_prompts_and_examples_change_no_reply() -> None:
    judge = fact_judge("scripted-judge")
    custom = FactualCorrectness(
        llm=judge,
        prompts={"decompose_claims": "You split notes into claims."},
        examples={
            "decompose_claims": [
                {
                    "input": {"text": "Rome is old. It has seven hills.", "question": "Rome?"},
                    "output": {"claims": ["Rome is old.", "Rome has seven hills."]},
                },
            ]
        },
    )
    sample = {"response": RESPONSE, "reference": REFERENCE}
    plain, own = (
        dry_requests([FactualCorrectness(llm=judge)], [sample]),
        dry_requests([custom], [sample]),
    )
    assert [r.intent for r in own.chat] == [r.intent for r in plain.chat]
    assert all("Rome" not in (r.intent.text or "") for r in own.chat if r.intent)
    assert [r.schema for r in own.chat] == [r.schema for r in plain.chat]


def test_replies_follow_the_intent() -> None:
    text = StepIntent(step="decompose_claims", text="A <b> c. D & e.\n3.")
    assert dry_reply("ClaimList", text) == {"claims": ["A <b> c.", "D & e."]}
    verify = StepIntent(step="verify_claims", claims=("One.", "Two\nlines."), sources=("x",))
    verdicts = dry_reply("ClaimVerdicts", verify)["verdicts"]
    assert [v["index"] for v in verdicts] == [1, 2]  # a claim with a newline is one claim
    assert dry_reply("AspectVerdict", None)["verdict"] == "PASS"
    # Outside a step nothing is known of the data: no claims, not a guess from the prompt.
    assert dry_reply("ClaimList", None) == {"claims": []}


def test_completion_range_counts_what_the_step_asks() -> None:
    def count(text: str) -> int:
        return len(text)

    verify = StepIntent(step="verify_claims", claims=("a", "b", "c"))
    assert completion_range("ClaimVerdicts", count, verify, 1) == (6 + 3 * 20, 6 + 3 * 70)
    text = StepIntent(step="decompose_claims", text="x" * 100)
    assert completion_range("ClaimList", count, text, 2) == (2 * (8 + 60), 2 * (8 + 150))


def test_the_intent_is_scoped_to_its_step() -> None:
    assert current_intent() is None
    outer = StepIntent(step="judge_aspect", criterion="c", response="r")
    inner = StepIntent(step="decompose_claims", text="t")

    async def in_task() -> StepIntent | None:
        with asking(inner):
            await asyncio.sleep(0)
            return current_intent()

    async def main() -> tuple[Any, Any]:
        with asking(outer):
            seen = await asyncio.create_task(in_task())
            return seen, current_intent()

    assert asyncio.run(main()) == (inner, outer)
    assert current_intent() is None
    with pytest.raises(ValidationError):  # frozen: a stand-in cannot change what was asked
        inner.text = "other"  # type: ignore[misc]


def test_the_estimate_reads_no_prompt() -> None:
    """costs/ imports no prompt module or parser, and the estimate agrees with a run."""
    ours = "langchain_answer_metrics"
    forbidden = {"html", f"{ours}.judging.prompt_set", f"{ours}.judging.prompts", f"{ours}.testing"}
    for path in COSTS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = {node.module}
            elif isinstance(node, ast.Import):
                names = {alias.name for alias in node.names}
            else:
                continue
            assert not any(n == f or n.startswith(f + ".") for n in names for f in forbidden), (
                path.name,
                names,
            )
    judge = fact_judge("scripted-judge")
    samples = [{"response": RESPONSE, "reference": REFERENCE}]
    plan = estimate(samples, [FactualCorrectness(llm=judge)])
    runner.evaluate(samples, [FactualCorrectness(llm=judge)])
    assert plan.models["scripted-judge"].requests == len(judge.calls) == 4
