"""``import langchain_answer_metrics`` does not load langchain_openai or openai.

Checked in a fresh interpreter, since this test session has long imported both. Scoring
with models the user built (here scripted ones) must not load them either: only building
a default OpenAI model may.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # a fresh interpreter per check

HEAVY = ("openai", "langchain_openai")


def loaded_after(code: str, modules: tuple[str, ...] = HEAVY) -> dict[str, bool]:
    """Run ``code`` in a fresh interpreter; which of ``modules`` it loaded."""
    report = f"print(json.dumps({{m: m in sys.modules for m in {modules!r}}}))"
    probe = f"import json, sys\n{code}\n{report}"
    done = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, timeout=120
    )
    loaded: dict[str, bool] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_importing_the_package_loads_no_openai() -> None:
    assert loaded_after("import langchain_answer_metrics") == dict.fromkeys(HEAVY, False)


def test_importing_the_package_reads_no_registry() -> None:
    # The root reads the registry's metrics on first use of one, not on import.
    registry = "langchain_answer_metrics.metrics.registry"
    assert loaded_after("import langchain_answer_metrics", (registry,)) == {registry: False}


def test_importing_every_public_name_loads_no_openai() -> None:
    code = (
        "import langchain_answer_metrics as lam\n"
        "for name in lam.__all__:\n"
        "    getattr(lam, name)\n"
        "import langchain_answer_metrics.run.runner"
    )
    assert loaded_after(code) == dict.fromkeys(HEAVY, False)


def test_scoring_with_given_models_loads_no_openai() -> None:
    code = """
from langchain_answer_metrics import (
    AnswerCorrectness, AspectCritic, FactualCorrectness, Faithfulness, SemanticSimilarity,
    evaluate,
)
from langchain_answer_metrics.testing.heuristic_judge import respond
from langchain_answer_metrics.testing.scripted import ScriptedChatModel, ScriptedEmbeddings

def reply(schema, messages):
    return respond(schema, [{"role": "user", "content": str(m.content)} for m in messages])

llm, embeddings = ScriptedChatModel(responder=reply), ScriptedEmbeddings()
metrics = [
    FactualCorrectness(llm=llm), AnswerCorrectness(llm=llm, embeddings=embeddings),
    Faithfulness(llm=llm), SemanticSimilarity(embeddings=embeddings),
    AspectCritic(llm=llm, name="has_year", criterion="It gives a year."),
]
sample = {"user_input": "When?", "response": "It opened in 1889.",
          "reference": "It opened in 1889.", "retrieved_contexts": ["Opened in 1889."]}
rows = evaluate([sample], metrics)
assert not rows[0].errors, rows[0].errors
"""
    assert loaded_after(code) == dict.fromkeys(HEAVY, False)


OPTIONAL = ("ray", "pandas", "pyarrow")


def test_the_package_and_its_runner_load_neither_ray_nor_pandas() -> None:
    code = (
        "import langchain_answer_metrics as lam\n"
        "for name in lam.__all__:\n"
        "    getattr(lam, name)\n"
        "import langchain_answer_metrics.run.runner\n"
        "import langchain_answer_metrics.cli.datasets\n"
        "import langchain_answer_metrics.run.tables\n"
        "import langchain_answer_metrics.ray\n"
        "rows = lam.evaluate([], [])\n"
    )
    assert loaded_after(code, OPTIONAL) == dict.fromkeys(OPTIONAL, False)
