"""Runs nobody records are not made, and nothing else changes.

With no callback handler (and tracing off), a metric's run and its child runs are
skipped (:func:`~langchain_answer_metrics.judging.tracing.untraced`): the model calls
still get the caller's tags and metadata and the steps' own (``side:response``), and
the same result comes back. With a handler, every run is recorded as before.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from support import year_judge

from langchain_answer_metrics import FactualCorrectness

SAMPLE = {"response": "Paris is in France.", "reference": "Paris is in France."}


class Seen(AsyncCallbackHandler):
    def __init__(self) -> None:
        self.chains: list[str] = []
        self.model_calls: list[tuple[list[str], dict[str, Any]]] = []

    async def on_chain_start(
        self, serialized: Any, inputs: Any, *, run_id: UUID, **kwargs: Any
    ) -> None:
        self.chains.append(str(kwargs.get("name")))

    async def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.model_calls.append(
            (list(kwargs.get("tags") or []), dict(kwargs.get("metadata") or {}))
        )


async def test_without_a_handler_model_calls_keep_tags_and_metadata() -> None:
    on_model = Seen()
    judge = year_judge()
    judge.callbacks = [on_model]  # the model's own handler: not one of the run's
    metric = FactualCorrectness(llm=judge, mode="precision")

    result = await metric.ainvoke(SAMPLE, {"tags": ["mine"], "metadata": {"batch": "7"}})

    assert result.score == 1.0
    assert on_model.chains == []  # no run of ours reached the model's handler
    assert on_model.model_calls
    for tags, metadata in on_model.model_calls:
        assert {"mine", "side:response"} <= set(tags)
        assert metadata.get("batch") == "7" and metadata.get("side") == "response"


async def test_with_a_handler_every_run_is_recorded() -> None:
    seen = Seen()
    metric = FactualCorrectness(llm=year_judge(), mode="precision")

    traced = await metric.ainvoke(SAMPLE, {"callbacks": [seen]})
    plain = await metric.ainvoke(SAMPLE)

    assert traced.score == plain.score == 1.0
    assert seen.chains[0] == "factual_correctness"
    assert {"judge-a", "decompose_claims", "verify_claims"} <= set(seen.chains)
    assert len(seen.model_calls) == 2  # decompose, then verify
