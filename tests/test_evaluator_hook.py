"""The metric layer reaches the LangSmith adapter only inside the methods that return it.

Each fresh-interpreter check runs where nothing has imported the adapter yet.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from langchain_answer_metrics import SemanticSimilarity
from langchain_answer_metrics.adapters.langsmith import evaluators as langsmith_evaluators
from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

ROOT = Path(__file__).resolve().parents[1]

LOADED_INTEGRATIONS = (
    "sorted(m for m in sys.modules if m.startswith('langchain_answer_metrics.adapters'))"
)


def run_fresh(code: str) -> Any:
    """Run ``code`` in a new interpreter and return the JSON it printed last."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow  # a fresh interpreter
def test_importing_the_metrics_does_not_import_the_integrations() -> None:
    loaded = run_fresh(
        "import json, sys\n"
        "import langchain_answer_metrics.metrics\n"
        "from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings\n"
        "langchain_answer_metrics.metrics.SemanticSimilarity(embeddings=ScriptedEmbeddings())\n"
        f"print(json.dumps({LOADED_INTEGRATIONS}))\n"
    )
    assert loaded == []


@pytest.mark.slow  # a fresh interpreter
def test_the_evaluator_methods_work_without_importing_the_adapter_first() -> None:
    found = run_fresh(
        "import json, sys\n"
        "from langsmith.evaluation.evaluator import RunEvaluator\n"
        "from langchain_answer_metrics import SemanticSimilarity\n"
        "from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings\n"
        "metric = SemanticSimilarity(embeddings=ScriptedEmbeddings())\n"
        f"before = {LOADED_INTEGRATIONS}\n"
        "evaluator = metric.as_evaluator(response='text')\n"
        "summary = metric.as_summary_evaluator()\n"
        "function = metric.as_function_evaluator()\n"
        "result = function(outputs={'answer': 'Paris.'}, reference_outputs={'answer': 'Paris.'})\n"
        "print(json.dumps({\n"
        "    'before': before,\n"
        "    'evaluator': [type(evaluator).__name__, isinstance(evaluator, RunEvaluator)],\n"
        "    'mapped': evaluator.sample_from({'outputs': {'text': 'Paris.'},\n"
        "        'reference_outputs': {'answer': 'Paris.'}}).response,\n"
        "    'summary': summary.__name__,\n"
        "    'function': function.__name__,\n"
        "    'result': [result['key'], result['score']],\n"
        "}))\n"
    )
    assert found["before"] == []
    assert found["evaluator"] == ["MetricEvaluator", True]
    assert found["mapped"] == "Paris."
    assert found["summary"] == "semantic_similarity_summary"
    assert found["function"] == "semantic_similarity"
    assert found["result"] == ["semantic_similarity", 1.0]


def test_the_evaluator_methods_return_the_adapters_objects() -> None:
    metric = SemanticSimilarity(embeddings=ScriptedEmbeddings())
    evaluator = metric.as_evaluator(response="text")
    assert isinstance(evaluator, langsmith_evaluators.MetricEvaluator)
    assert evaluator.metric is metric
    function = metric.as_function_evaluator()
    assert (
        function(outputs={"answer": "Paris."}, reference_outputs={"answer": "Paris."})["score"]
        == 1.0
    )
