"""The README's "Whole datasets" code runs as written (scripted models stand in for the
quickstart's judge and embeddings), and leaves LangSmith's ``evaluate`` name alone."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import convert_to_openai_messages

from langchain_answer_metrics.testing.heuristic_judge import respond
from langchain_answer_metrics.testing.scripted import ScriptedChatModel, ScriptedEmbeddings

README = Path(__file__).resolve().parent.parent / "README.md"


def section_code() -> list[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Whole datasets")
    end = text.index("\n### ", start)
    return re.findall(r"```python\n(.*?)```", text[start:end], re.S)


def test_whole_datasets_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the checkpoint example writes run.jsonl here

    def heuristic(schema: str, messages: Any) -> Any:
        return respond(schema, convert_to_openai_messages(messages))

    namespace: dict[str, Any] = {
        "__name__": "readme",
        "judge": ScriptedChatModel(responder=heuristic, model="gpt-4o-mini"),
        "embeddings": ScriptedEmbeddings(),
    }
    blocks = section_code()
    assert len(blocks) == 2
    with contextlib.redirect_stdout(io.StringIO()):
        for code in blocks:
            exec(compile(code, str(README), "exec"), namespace)

    assert "evaluate" not in namespace  # LangSmith's evaluate is not shadowed
    rows = namespace["rows"]
    assert len(rows) == 2 and not any(row.errors for row in rows)
    assert (tmp_path / "run.jsonl").read_text(encoding="utf-8").count("\n") == 2
