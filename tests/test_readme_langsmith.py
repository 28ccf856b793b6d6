"""The README's "LangSmith experiments" and "In chains and agents" code runs as written.

Every python block of those README sections runs in order in one namespace. The one
block marked ``<!-- readme-test: setup ... -->`` (the models) is swapped for scripted
models answering with the heuristic judge; the offline LangSmith client runs as written.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage

README = Path(__file__).resolve().parent.parent / "README.md"
SECTIONS = re.compile(
    r"<!-- langsmith sections: .*?-->\n(?P<text>.*?)<!-- end of langsmith sections -->", re.S
)
SETUP_MARK = "<!-- readme-test: setup"
BLOCK = re.compile(r"(?P<mark><!-- readme-test: setup[^>]*-->\n)?```python\n(?P<code>.*?)```", re.S)

SCRIPTED_SETUP = """
from langchain_core.messages import convert_to_openai_messages

from langchain_answer_metrics.testing.heuristic_judge import respond
from langchain_answer_metrics.testing.scripted import ScriptedChatModel, ScriptedEmbeddings

def heuristic(schema, messages):
    return respond(schema, convert_to_openai_messages(messages))

judge = ScriptedChatModel(responder=heuristic, model="gpt-4o-mini")
backup_judge = ScriptedChatModel(responder=heuristic, model="gpt-4.1-mini")
embeddings = ScriptedEmbeddings()
"""


def _sections() -> str:
    match = SECTIONS.search(README.read_text())
    assert match, "README.md lost its LangSmith sections markers"
    return match.group("text")


def blocks() -> list[tuple[bool, str]]:
    """(is the setup block, code) for every python block of the doc, in order."""
    return [(bool(m.group("mark")), m.group("code")) for m in BLOCK.finditer(_sections())]


def test_the_doc_has_both_sections_and_one_setup_block() -> None:
    text = _sections()
    assert "## LangSmith experiments" in text and "## In chains and agents" in text
    found = blocks()
    assert [is_setup for is_setup, _ in found].count(True) == 1
    assert found[0][0], "the setup block comes first"
    assert "ChatOpenAI" in found[0][1]
    # The client is not swapped: the README's own offline recipe runs as written.
    assert 'Client(api_key="offline", api_url="http://127.0.0.1:9"' in found[1][1]
    assert "tracing_sampling_rate=0.0" in found[1][1] and "auto_batch_tracing=False" in found[1][1]


@pytest.mark.usefixtures("langsmith_offline")  # see conftest.py
def test_readme_code_runs_as_written() -> None:
    namespace: dict[str, Any] = {"__name__": "readme"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for is_setup, code in blocks():
            exec(compile(SCRIPTED_SETUP if is_setup else code, str(README), "exec"), namespace)
        namespace["test_answers_are_grounded"]()  # the pytest example, run directly
    output = printed.getvalue()

    # LangSmith experiment: feedback per row and metric, and the summaries.
    assert (
        "faithfulness 0.5 1 of 2 response claims are supported by the retrieved contexts; "
        "unsupported: “It is the tallest tower in the world.” (neutral)"
    ) in output
    rows = list(namespace["results"])
    assert len(rows) == 2
    for row in rows:
        keys = {result.key for result in row["evaluation_results"]["results"]}
        assert keys == {"faithfulness", "answer_correctness", "has_date"}
    # LangSmith keeps the summary evaluators' output privately for local runs.
    summary = {r.key: r.score for r in namespace["results"]._summary_results["results"]}
    assert summary["faithfulness_mean"] == 0.5
    assert summary["faithfulness_pass_rate"] == 0.0
    assert summary["faithfulness_error_count"] == 0
    assert summary["has_date_mean"] == 1.0
    assert (
        "faithfulness: mean 0.500 (95% CI 0.500–0.500), pass rate 0% at >= 0.80, 2 scored\n"
        in output
    )

    # Mapping override and function-style evaluator.
    agent_faithfulness = namespace["agent_faithfulness"]
    assert agent_faithfulness.feedback_keys == ["faithfulness"]
    sample = agent_faithfulness.sample_from({
        "inputs": {"question": "Q?"},
        "outputs": {"messages": [AIMessage("The answer.")], "documents": [Document("doc")]},
        "reference_outputs": {},
    })
    assert (sample.response, sample.retrieved_contexts) == ("The answer.", ["doc"])
    assert namespace["feedback"]["score"] == 0.5
    assert "faithfulness 0.5" in output

    # Chains and agents.
    assert (namespace["result"].score, namespace["result"].passed) == (0.5, False)
    assert namespace["scores"] == {"faithfulness": 0.5, "has_date": 1.0, "concise": 1.0}
    guarded = namespace["guarded_agent"].invoke({"question": "When was the Eiffel Tower built?"})
    assert guarded == {"answer": "The Eiffel Tower was built in 1889.", "flagged": False}
    assert "0.5 False" in output
    # FactualCorrectness in (b), then the guarded answer, then (d)'s three runnables.
    assert output.endswith(
        "1.0\n{'answer': 'The Eiffel Tower was built in 1889.', 'flagged': False}\n"
        "1.0\n1.0\n1.0\n"
    )
