"""A run as one object (issue 22, §1): :class:`RunOptions` validated once, the :class:`Run`
that executes them, and each of its collaborators on its own: admission under the limits
(with the dry-run estimate before any sample has finished), the checkpoint keeper, the
halt, progress. Models are scripted or the local OpenAI-compatible server.
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

import pytest
from support import fact_judge, priced_models_yaml
from test_budget import PRICES, SAMPLES
from test_cli import clean_env, cli, out_lines, write_jsonl

from langchain_answer_metrics import Faithfulness
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.core.strict_options import UnknownOptionError
from langchain_answer_metrics.judging.scope import RunScope
from langchain_answer_metrics.run import Run, RunOptions
from langchain_answer_metrics.run.halting import Halting
from langchain_answer_metrics.run.keeping import Keeper
from langchain_answer_metrics.run.limits import Admission, Decision, RunLimits
from langchain_answer_metrics.run.progress import ProgressReport
from langchain_answer_metrics.run.results import Progress, RunStop, SampleResults
from langchain_answer_metrics.run.runner import (
    aevaluate,
    astream_evaluate,
    evaluate,
    stream_evaluate,
)
from langchain_answer_metrics.run.spend import Pricing
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

# ------------------------------------------------------------------------- options


def test_options_are_validated_once_and_frozen() -> None:
    options = RunOptions(max_concurrency=4, budget=1.5, max_requests=10)
    assert (options.max_concurrency, options.budget, options.max_requests) == (4, 1.5, 10)
    with pytest.raises(AttributeError):  # a frozen dataclass
        options.budget = 2.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("max_concurrency", 0, "max_concurrency"),
        ("budget", float("nan"), "budget"),
        ("budget", -1.0, "budget"),
        ("max_requests", -1, "max_requests"),
    ],
)
def test_bad_options_are_refused_naming_the_option(field: str, value: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        RunOptions(**{field: value})


def test_an_unknown_option_is_refused() -> None:
    with pytest.raises(ValueError, match="max_request"):
        RunOptions(max_request=3)  # type: ignore[call-arg]


PUBLIC = [evaluate, aevaluate, stream_evaluate, astream_evaluate]


@pytest.mark.parametrize("function", PUBLIC, ids=lambda f: f.__name__)
def test_the_public_functions_take_the_options_as_declared_once(function: Any) -> None:
    declared = inspect.signature(RunOptions).parameters
    parameters = inspect.signature(function).parameters
    assert list(parameters) == ["samples", "metrics", *declared]
    for name, option in declared.items():
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert (parameters[name].default, parameters[name].annotation) == (
            option.default,
            option.annotation,
        )
    assert parameters["max_concurrency"].default == RunOptions().max_concurrency == 16


def test_a_misspelt_or_bad_option_is_refused_before_any_request() -> None:
    judge = fact_judge()
    metrics = [Faithfulness(llm=judge)]
    with pytest.raises(UnknownOptionError, match=r"max_concurency.*did you mean max_concurrency\?"):
        evaluate(SAMPLES[:1], metrics, max_concurency=2)
    with pytest.raises(UnknownOptionError, match="budgt"):
        asyncio.run(aevaluate(SAMPLES[:1], metrics, budgt=1.0))
    with pytest.raises(UnknownOptionError, match="windw"):
        stream_evaluate(SAMPLES[:1], metrics, windw=3)
    with pytest.raises(ValueError, match="max_concurrency must be at least 1"):
        evaluate(SAMPLES[:1], metrics, max_concurrency=0)
    assert judge.calls == []


def test_every_option_reaches_the_run(tmp_path: Path) -> None:
    judge = fact_judge()
    seen: list[Progress] = []
    path = tmp_path / "run.jsonl"
    rows = list(
        stream_evaluate(
            SAMPLES[:3],
            [Faithfulness(llm=judge)],
            max_concurrency=2,
            window=1,
            on_progress=seen.append,
            checkpoint=path,
            max_requests=1000,
        )
    )
    assert [row.index for row in rows] == [0, 1, 2] and not any(row.errors for row in rows)
    assert len(path.read_text("utf-8").splitlines()) == 3 and seen[-1].done == 3


# ------------------------------------------------------------------------- admission


def _admission(budget: float | None = None, max_requests: int | None = None) -> Admission:
    metrics = [Faithfulness(llm=fact_judge())]
    return Admission(
        budget=budget, max_requests=max_requests, pricing=Pricing.of(metrics, prices=PRICES)
    )


def test_before_any_sample_finished_the_dry_run_estimate_decides() -> None:
    admission = _admission(budget=0.5)
    assert admission.wants_estimate()
    admission.expect(1.66, 4)
    assert admission.decide(100, 0) is Decision.STOP
    stop = admission.stop(0)
    assert stop.reason == "budget"
    assert "$1.6600" in stop.message and "no sample started" in stop.message


def test_a_budget_above_the_estimate_admits_the_first_sample_alone() -> None:
    admission = _admission(budget=2.0)
    admission.expect(1.66, 4)
    assert admission.decide(100, 0) is Decision.ADMIT
    admission.started(0, 100)
    assert not admission.wants_estimate()  # one in flight: the next waits for it
    assert admission.decide(100, 0) is Decision.WAIT


def test_max_requests_below_the_estimated_requests_starts_nothing() -> None:
    admission = _admission(max_requests=3)
    admission.expect(None, 4)
    assert admission.decide(100, 0) is Decision.STOP
    assert admission.stop(0).reason == "max_requests"
    assert "estimated 4 requests" in admission.stop(0).message


def test_without_limits_no_estimate_is_wanted() -> None:
    assert not _admission().wants_estimate()


# ------------------------------------------------------------------------- the run


def test_a_run_with_a_budget_below_one_samples_estimate_starts_nothing() -> None:
    judge = fact_judge()
    estimated: list[Any] = []

    async def estimate_first(sample: Any, todo: Any) -> tuple[float | None, int]:
        estimated.append(sample)
        return 1.66, 4

    run = Run(
        SAMPLES[:5],
        [Faithfulness(llm=judge)],
        RunOptions(budget=0.5, prices=PRICES),
        estimate_first=estimate_first,
    )
    rows = asyncio.run(run.results())
    assert judge.calls == [] and len(estimated) == 1
    assert all(row.not_run for row in rows) and [row.index for row in rows] == list(range(5))
    assert rows.stopped is not None and rows.stopped.reason == "budget"
    assert "no sample started" in rows.stopped.message
    assert isinstance(rows.pricing, Pricing)  # given when built


def test_the_public_functions_use_the_dry_run_estimate() -> None:
    judge = fact_judge()
    one = evaluate(SAMPLES[:1], [Faithfulness(llm=fact_judge())], prices=PRICES)
    cost = one.spend().total.cost
    assert cost is not None and cost > 0
    # Below one sample's real cost (so below its estimate too): nothing is sent.
    rows = evaluate(SAMPLES[:4], [Faithfulness(llm=judge)], prices=PRICES, budget=cost / 2)
    assert judge.calls == []
    assert rows.stopped is not None and "no sample started" in rows.stopped.message


def test_a_budget_for_a_few_samples_still_runs_them() -> None:
    one = evaluate(SAMPLES[:1], [Faithfulness(llm=fact_judge())], prices=PRICES)
    cost = one.spend().total.cost
    assert cost is not None
    rows = evaluate(SAMPLES, [Faithfulness(llm=fact_judge())], prices=PRICES, budget=cost * 6)
    ran = [row for row in rows if not row.not_run]
    assert 1 <= len(ran) < len(SAMPLES)
    assert rows.spend().total.cost is not None and rows.spend().total.cost <= cost * 6


def test_aevaluate_gives_pricing_when_built() -> None:
    rows = asyncio.run(aevaluate(SAMPLES[:2], [Faithfulness(llm=fact_judge())], prices=PRICES))
    assert isinstance(rows.pricing, Pricing) and rows.stopped is None
    assert rows.spend().total.cost is not None


# ------------------------------------------------------------------------- collaborators


def test_progress_counts_rows_and_reports_each() -> None:
    seen: list[Progress] = []
    report = ProgressReport(on_progress=seen.append, total=3, requests=lambda: (5, 2))
    report.row(errors=False)
    report.row(errors=True)
    report.skipped()
    report.report()
    assert [state.done for state in seen] == [1, 2, 2]
    assert seen[-1].errors == 1 and seen[-1].not_run == 1 and report.given_back == 3
    assert (seen[-1].requests_done, seen[-1].requests_in_flight) == (5, 2)


def test_progress_without_a_callback_never_waits_on_a_timer() -> None:
    report = ProgressReport(on_progress=None, total=None, requests=lambda: (0, 0))
    assert report.timeout is None
    report.row(errors=False)
    report.quiet()
    assert report.done == 1


def _two_metrics() -> list[Faithfulness]:
    return [Faithfulness(llm=fact_judge(), name="a"), Faithfulness(llm=fact_judge(), name="b")]


def test_the_keeper_merges_saved_results_in_metric_order() -> None:
    metrics = _two_metrics()
    scored = evaluate(SAMPLES[:1], metrics)[0].results
    keeper = Keeper(None, metrics, keep_degraded=False)
    assert keeper.reusable(0, SAMPLES[0]) == ({}, "")
    row = SampleResults(index=0, results={"b": scored["b"]})
    merged = keeper.merged(row, {"a": scored["a"].model_dump()})
    assert list(merged.results) == ["a", "b"]
    assert isinstance(merged.results["a"], MetricResult)
    assert merged.results["a"].score == scored["a"].score


def test_the_keeper_keeps_rows_a_rerun_reuses(tmp_path: Path) -> None:
    metrics = _two_metrics()
    row = evaluate(SAMPLES[:1], metrics)[0]
    path = tmp_path / "run.jsonl"
    keeper = Keeper(path, metrics, keep_degraded=False)
    saved, fingerprint = keeper.reusable(0, SAMPLES[0])
    assert saved == {} and fingerprint
    keeper.keep(row, fingerprint)
    keeper.close()
    again = Keeper(path, metrics, keep_degraded=False)
    assert set(again.reusable(0, SAMPLES[0])[0]) == {"a", "b"}
    assert again.reusable(1, SAMPLES[1])[0] == {}  # another sample: scored again
    again.close()


def test_halting_stops_without_aborting_and_reports_the_rest() -> None:
    async def go() -> list[SampleResults]:
        halting = Halting(RunScope(max_concurrency=2), keys=["faithfulness"])
        assert not halting.halted
        halting.stop(RunStop(reason="budget", message="budget $1.0000 reached"))
        assert halting.halted and not halting.aborted
        await asyncio.sleep(0)
        assert halting.waiting() == []  # the halt happened: not waited for again
        rows = list(halting.rest(["x", "y"], first=7))
        halting.close()
        return rows

    rows = asyncio.run(go())
    assert [row.index for row in rows] == [7, 8] and all(row.not_run for row in rows)
    assert "budget $1.0000 reached" in rows[0].results["faithfulness"].message  # type: ignore[union-attr]


# ------------------------------------------------------------------------- CLI


def test_cli_max_cost_below_one_sample_starts_nothing_and_says_so(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    data = write_jsonl(
        tmp_path / "qa.jsonl",
        [
            {
                "id": f"s{i}",
                "question": s["user_input"],
                "answer": s["response"],
                "ground_truth": s["reference"],
            }
            for i, s in enumerate(SAMPLES[:3])
        ],
    )
    out = tmp_path / "out.jsonl"
    stopped = cli(
        "evaluate",
        data,
        "--metric",
        "factual_correctness",
        "--config",
        priced_models_yaml(tmp_path, server),  # on localhost: no built-in price
        "--out",
        out,
        "--quiet",
        "--max-cost",
        "0.0001",
        env=clean_env(),
    )
    assert stopped.returncode == 5, stopped.stderr
    assert "no sample started" in stopped.stderr and "3 samples not run" in stopped.stderr
    assert server.requests == [] and (not out.exists() or out_lines(out) == [])


# ------------------------------------------------------------------------- limits across runs


def test_run_limits_carry_what_is_left_from_run_to_run() -> None:
    metrics = [Faithfulness(llm=fact_judge())]
    pricing = Pricing.of(metrics, prices=PRICES)
    one = evaluate(SAMPLES[:1], [Faithfulness(llm=fact_judge())], prices=PRICES)
    cost = one.spend().total.cost
    assert cost is not None
    limits = RunLimits(max_cost=cost * 10, max_requests=1000, pricing=pricing, prices=PRICES)
    for row in evaluate(SAMPLES[:2], metrics, **limits.left()):
        limits.count(row)
    left = limits.left()
    assert left["budget"] == pytest.approx(cost * 10 - limits.spent)
    assert limits.spent > 0 and left["max_requests"] == 1000 - limits.requests
    assert limits.stop is None and limits.not_run == 0
    # What is left is an option set the runner takes as it is.
    assert RunOptions(max_concurrency=2, **left).budget == left["budget"]


def test_a_ray_actor_carries_its_share_of_the_limits_across_batches() -> None:
    pa = pytest.importorskip("pyarrow")
    from langchain_answer_metrics.adapters.ray import ActorShare, _Scorer

    one = evaluate(SAMPLES[:1], [Faithfulness(llm=fact_judge())], prices=PRICES)
    cost = one.spend().total.cost
    assert cost is not None
    judge = fact_judge()
    scorer = _Scorer(
        None,
        None,
        lambda: [Faithfulness(llm=judge)],
        ActorShare(actors=1, max_concurrency=4),
        {},
        RunLimits(max_cost=cost * 3, prices=dict(PRICES)),
    )

    def batch(rows: list[dict[str, Any]]) -> Any:
        records = [
            {
                "question": r["user_input"],
                "answer": r["response"],
                "contexts": r["retrieved_contexts"],
            }
            for r in rows
        ]
        return pa.Table.from_pylist(records)

    first = scorer(batch(SAMPLES[:2]))
    assert first.column("faithfulness_error").null_count == 2  # both scored
    later = [scorer(batch(SAMPLES[2 + 3 * i : 5 + 3 * i])) for i in range(3)]
    errors = [e for table in later for e in table.column("faithfulness_error").to_pylist()]
    assert any(error and "not run" in error for error in errors)
    assert scorer.limits.spent <= cost * 3 + 1e-12
    assert scorer.limits.stop is not None and scorer.limits.stop.reason == "budget"


def test_the_read_ahead_window_starts_at_most_its_size_and_holds_back_under_a_limit() -> None:
    import contextvars

    from langchain_answer_metrics.judging.scope import enter_scope
    from langchain_answer_metrics.run.reading import ReadAhead

    async def go(admission: Admission) -> tuple[int, bool, int]:
        scope = RunScope(max_concurrency=2)
        context = contextvars.copy_context()
        context.run(enter_scope, scope)
        metrics = [Faithfulness(llm=fact_judge())]
        halting = Halting(scope, keys=["faithfulness"])
        window = ReadAhead(
            iter(SAMPLES[:10]),
            metrics,
            ahead=4,
            admission=admission,
            keeper=Keeper(None, metrics, keep_degraded=False),
            halting=halting,
            context=context,
            config=None,
            requests_sent=lambda: 0,
        )
        await window.fill(given_back=0)
        started = len(window.pending)
        await asyncio.gather(*(item.task for item in window.pending))
        window.cancel_all()
        halting.close()
        return started, window.exhausted, len(window.held)

    assert asyncio.run(go(_admission())) == (4, False, 0)
    # Under a limit with nothing finished and no estimate: one sample at a time, the
    # next read and held until the first finishes.
    assert asyncio.run(go(_admission(max_requests=100))) == (1, False, 1)
