"""The Ray Data adapter on a local Ray cluster, against the local OpenAI-compatible server.

One Ray instance for the module (``num_cpus=2``, no dashboard, no usage stats): the same
rows through Ray and through ``evaluate`` give identical results; with injected faults
and with an actor killed mid-batch, no row is lost or duplicated.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")
pd = pytest.importorskip("pandas")

pytestmark = pytest.mark.slow  # starts a Ray cluster

from support import local_models, write_models_yaml  # noqa: E402

from langchain_answer_metrics import (  # noqa: E402
    FactualCorrectness,
    Faithfulness,
    SemanticSimilarity,
)
from langchain_answer_metrics.config import load_config  # noqa: E402
from langchain_answer_metrics.judging.prompts import REASK  # noqa: E402
from langchain_answer_metrics.ray import ActorShare, evaluate_dataset  # noqa: E402
from langchain_answer_metrics.run.runner import evaluate  # noqa: E402
from langchain_answer_metrics.run.tables import RESULT_SUFFIXES  # noqa: E402
from langchain_answer_metrics.testing.openai_server import (  # noqa: E402
    LocalOpenAIServer,
    random_faults,
)

KEY_ENV = "ANSWER_METRICS_RAY_TEST_KEY"
METRICS = ["factual_correctness", "faithfulness", "semantic_similarity"]
N = 24


def make_row(i: int) -> dict[str, Any]:
    year = 1850 + i
    return {
        "id": f"q{i}",
        "question": f"When was fair number {i} held?",
        "answer": f"Fair number {i} was held in {year}. It had {i % 5 + 2} pavilions.",
        "ground_truth": f"Fair number {i} was held in {year}.",
        "contexts": [f"Fair number {i} took place in {year}.", "Fairs have pavilions."],
    }


ROWS = [make_row(i) for i in range(N)]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A local Ray cluster and the local server, with a models.yaml for it."""
    with pytest.MonkeyPatch.context() as patch, LocalOpenAIServer() as server:
        patch.setenv(KEY_ENV, "sk-ray-test-key")
        patch.setenv("RAY_USAGE_STATS_ENABLED", "0")
        patch.setenv("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        directory = tmp_path_factory.mktemp("ray")
        config = write_models_yaml(directory, local_models(server, KEY_ENV, max_attempts=6))
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
            _temp_dir=str(Path("/tmp") / f"ray-{os.getpid()}"),
        )
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        try:
            yield {"server": server, "config": config, "directory": directory}
        finally:
            ray.shutdown()


def by_id(frame: Any) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in frame.to_dict(orient="records")}


def test_the_same_rows_through_ray_and_evaluate_give_identical_results(
    cluster: dict[str, Any],
) -> None:
    server: LocalOpenAIServer = cluster["server"]
    server.faults = None
    scored = evaluate_dataset(
        ray.data.from_items(ROWS),
        metrics=METRICS,
        config=cluster["config"],
        actors=2,
        batch_size=8,
        max_concurrency=8,
    )
    through_ray = by_id(scored.to_pandas())
    assert sorted(through_ray) == sorted(row["id"] for row in ROWS)

    panel = load_config(cluster["config"])
    local = evaluate(
        pd.DataFrame(ROWS),
        [
            FactualCorrectness(llm=panel.judges),
            Faithfulness(llm=panel.judges),
            SemanticSimilarity(embeddings=panel.embedders),
        ],
    ).to_pandas()
    for record in local.to_dict(orient="records"):
        remote = through_ray[record["id"]]
        for key in METRICS:
            assert remote[f"{key}_error"] is None, remote[f"{key}_error"]
            assert remote[f"{key}_score"] == record[f"{key}_score"]
            assert remote[f"{key}_reason"] == record[f"{key}_reason"]
            ours, theirs = json.loads(remote[f"{key}_result"]), json.loads(record[f"{key}_result"])
            ours.pop("usage"), theirs.pop("usage")  # shared calls are counted where made
            assert ours == theirs
        assert list(remote["contexts"]) == record["contexts"]  # input columns kept


def transient_faults(seed: int) -> Any:
    """About 25% of requests faulted, each a fault the run recovers from within its bounds.

    429s and 500s on a request's first three sends (the client retries up to 6 times); a
    malformed reply only to a first ask, never to a re-ask, so a call meets at most one
    unusable reply. (Malformed replies to re-asks too can, by the seed's luck, give three
    in a row: a sample rightly failed after its two re-asks, not a transient fault.)
    """
    transport = random_faults(0.2, ("429", "500"), seed=seed, max_attempt=2)
    content = random_faults(0.1, ("malformed_json",), seed=seed + 1, max_attempt=0)

    def policy(info: Any) -> Any:
        last = info.messages[-1].get("content") if info.messages else None
        reask = isinstance(last, str) and last.startswith(REASK.split(":")[0])
        return transport(info) or (None if reask else content(info))

    return policy


def test_with_injected_faults_no_row_is_lost(cluster: dict[str, Any]) -> None:
    server: LocalOpenAIServer = cluster["server"]
    # Attempt numbers count from here, whatever ran before in this module.
    server.reset()
    server.faults = transient_faults(seed=7)
    try:
        rows = [*ROWS, {"id": "empty", "answer": "", "ground_truth": "x"}]
        # The run's own limits stay on (breaker, per-judge exclusion): transient faults
        # must not trip them.
        scored = evaluate_dataset(
            ray.data.from_items(rows),
            metrics=METRICS,
            config=cluster["config"],
            actors=2,
            batch_size=5,
            max_concurrency=8,
        ).to_pandas()
    finally:
        server.faults = None
    assert {"429", "500", "malformed_json"} <= set(server.fault_counts), server.fault_counts
    assert sorted(scored["id"]) == sorted(row["id"] for row in rows)
    for key in METRICS:
        # Every row has exactly one of a score or an error.
        assert (scored[f"{key}_score"].isna() == scored[f"{key}_error"].notna()).all()
    errors = scored.set_index("id")
    assert errors.loc["empty", "factual_correctness_error"].startswith("InvalidSampleError")
    found = errors.drop(index="empty")[[f"{k}_error" for k in METRICS]]
    assert found.isna().all().all(), found[found.notna().any(axis=1)].to_dict("index")


def _killing_factory(marker: str) -> Any:
    """A factory whose metric kills its actor's process once (the first time it sees
    sample 5), to check that Ray re-runs the batch and no row is lost or repeated."""

    def factory() -> list[Any]:
        from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

        class Killer(SemanticSimilarity):
            async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
                # A row reaches the metric as the fields found (one reading of rows).
                response = input.get("response") if isinstance(input, dict) else input.response
                if "Fair number 5 was" in str(response) and not Path(marker).exists():
                    Path(marker).write_text("killed")
                    os._exit(1)
                return await super().ainvoke(input, config, **kwargs)

        return [Killer(embeddings=ScriptedEmbeddings())]

    return factory


def test_a_killed_actor_loses_and_duplicates_no_row(cluster: dict[str, Any]) -> None:
    marker = cluster["directory"] / "killed"
    scored = evaluate_dataset(
        ray.data.from_items(ROWS),
        metrics=_killing_factory(str(marker)),
        actors=2,
        batch_size=4,
        max_concurrency=4,
    ).to_pandas()
    assert marker.exists(), "the actor was never killed"
    assert sorted(scored["id"]) == sorted(row["id"] for row in ROWS)
    assert scored["semantic_similarity_error"].isna().all()


def test_a_factory_gets_its_share_of_the_global_limits(cluster: dict[str, Any]) -> None:
    def factory(share: ActorShare) -> list[Any]:
        from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

        return [
            SemanticSimilarity(
                embeddings=ScriptedEmbeddings(),
                name=f"share_{share.actors}_{share.max_concurrency}",
            )
        ]

    scored = evaluate_dataset(
        ray.data.from_items(ROWS[:4]), metrics=factory, actors=2, max_concurrency=7
    ).to_pandas()
    assert {f"share_2_3_{suffix}" for suffix in RESULT_SUFFIXES} <= set(scored.columns)


def test_bad_arguments_are_refused_before_ray_runs(cluster: dict[str, Any]) -> None:
    ds = ray.data.from_items(ROWS[:2])
    with pytest.raises(ValueError, match="raise it to 4"):
        evaluate_dataset(ds, metrics=METRICS, config=cluster["config"], actors=4, max_concurrency=2)
    with pytest.raises(ValueError, match="unknown metric 'faithfulnes'"):
        evaluate_dataset(ds, metrics=["faithfulnes"], config=cluster["config"])
    with pytest.raises(ValueError, match="need config="):
        evaluate_dataset(ds, metrics=METRICS)
    with pytest.raises(ValueError, match="timout"):
        evaluate_dataset(
            ds,
            metrics=METRICS,
            config={
                "providers": {"local": {"base_url": "http://127.0.0.1:1/v1", "timout": 3}},
            },
        )


class MeteredServer(LocalOpenAIServer):
    """Records the peak of requests in flight and when each request arrived."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.lock = threading.Lock()
        self.in_flight = self.peak = 0
        self.arrivals: list[float] = []

    def handle(self, path: str, raw_body: bytes, headers: Mapping[str, str]) -> Any:
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            self.arrivals.append(time.monotonic())
        try:
            return super().handle(path, raw_body, headers)
        finally:
            with self.lock:
                self.in_flight -= 1


def test_the_global_budget_and_rate_limit_are_split_across_actors(
    cluster: dict[str, Any],
) -> None:
    with MeteredServer(latency=0.05) as server:
        config = local_models(server, KEY_ENV)
        config["providers"]["local"]["rate_limit"] = 20  # requests per second, in all
        scored = evaluate_dataset(
            ray.data.from_items(ROWS[:12]),
            metrics=["factual_correctness", "faithfulness"],
            config=config,
            actors=2,
            batch_size=3,
            max_concurrency=4,
        ).to_pandas()
    assert scored["faithfulness_error"].isna().all()
    assert 1 <= server.peak <= 4
    arrivals = sorted(server.arrivals)
    rate = (len(arrivals) - 1) / (arrivals[-1] - arrivals[0])
    assert rate <= 20 * 1.2, rate  # two actors at 10 per second each, not 20 each
