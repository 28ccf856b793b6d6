"""Checkpoints from Python: ``evaluate(..., checkpoint="run.jsonl")`` keeps each finished
sample and a rerun reuses it, in the CLI's ``--out`` records, under the same rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas
import pytest
from support import fact_judge, fact_responder

from langchain_answer_metrics import AspectCritic, FactualCorrectness
from langchain_answer_metrics.checkpoints import read_lines
from langchain_answer_metrics.run.runner import aevaluate, evaluate, stream_evaluate
from langchain_answer_metrics.testing.scripted import ScriptedChatModel


def sample(index: int) -> dict[str, str]:
    return {
        "response": f"Событие {index} было в {1800 + index} году. 事件发生在城市 {index}.",
        "reference": f"Событие {index} было в {1800 + index} году.",
    }


SAMPLES = [sample(index) for index in range(6)]


def scores(rows: Any) -> list[float]:
    return [row.results["factual_correctness"].score for row in rows]


def test_a_rerun_reuses_every_saved_sample(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    first = evaluate(SAMPLES, [FactualCorrectness(llm=fact_judge())], checkpoint=path)
    lines, unreadable = read_lines(path)
    assert (len(lines), unreadable) == (6, 0)

    judge = fact_judge()
    again = evaluate(SAMPLES, [FactualCorrectness(llm=judge)], checkpoint=str(path))

    assert judge.calls == []
    assert scores(again) == scores(first)
    assert [row.index for row in again] == list(range(6))
    assert len(read_lines(path)[0]) == 6  # nothing appended


def test_a_line_cut_inside_a_character_is_redone(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    evaluate(SAMPLES, [FactualCorrectness(llm=fact_judge())], checkpoint=path)
    data = path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    cut = data.index("事".encode(), last_start) + 1  # inside the 3-byte character
    path.write_bytes(data[:cut])

    judge = fact_judge()
    rows = evaluate(SAMPLES, [FactualCorrectness(llm=judge)], checkpoint=path)

    assert not any(row.errors for row in rows)
    prompts = " ".join(str(messages[-1].content) for _, messages in judge.calls)
    assert "1805" in prompts and "1804" not in prompts  # only the torn sample is redone
    lines, unreadable = read_lines(path)
    # The torn fragment was dropped when the rerun appended: the file is JSON Lines again.
    assert unreadable == 0 and sorted(int(line["id"]) for line in lines) == list(range(1, 7))
    assert len(pandas.read_json(path, lines=True)) == 6


def test_changed_text_or_settings_are_scored_again(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    critic = AspectCritic(llm=fact_judge(), name="has_year", criterion="It gives a year.")
    evaluate(SAMPLES, [critic], checkpoint=path)

    judge = fact_judge()
    changed = [*SAMPLES[:5], {**SAMPLES[5], "response": "Changed in 1999."}]
    evaluate(
        changed,
        [AspectCritic(llm=judge, name="has_year", criterion="It gives a year.")],
        checkpoint=path,
    )
    assert len(judge.calls) == 1

    stricter = fact_judge()
    evaluate(
        changed,
        [AspectCritic(llm=stricter, name="has_year", criterion="It gives a year.", strictness=3)],
        checkpoint=path,
    )
    prompts = " ".join(str(messages[-1].content) for _, messages in stricter.calls)
    assert all(f"{1800 + index}" in prompts for index in range(5))  # every sample again


def test_settings_changed_in_python_are_scored_again(tmp_path: Path) -> None:
    # Not only the registry's settings: a mode, a custom prompt or an aggregation change
    # what a saved score means.
    path = tmp_path / "run.jsonl"
    evaluate(SAMPLES, [FactualCorrectness(llm=fact_judge())], checkpoint=path)

    same = fact_judge()
    evaluate(SAMPLES, [FactualCorrectness(llm=same)], checkpoint=path)
    assert same.calls == []

    for changed in (
        {"mode": "precision"},
        {"beta": 2.0},
        {"prompts": {"decompose_claims": "Split the text into atomic claims."}},
    ):
        judge = fact_judge()
        evaluate(SAMPLES, [FactualCorrectness(llm=judge, **changed)], checkpoint=path)
        assert judge.calls, changed
        again = fact_judge()
        evaluate(SAMPLES, [FactualCorrectness(llm=again, **changed)], checkpoint=path)
        assert again.calls == [], changed  # and saved under the new signature


def _flaky_judge(fail: bool) -> ScriptedChatModel:
    good = fact_responder()

    def reply(schema: str, messages: Any) -> Any:
        return ConnectionError("Connection error.") if fail else good(schema, messages)

    return ScriptedChatModel(responder=reply, model="judge-b")


def test_samples_with_an_excluded_judge_are_scored_again_unless_kept(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    degraded = evaluate(
        SAMPLES[:2],
        [FactualCorrectness(llm=[fact_judge(), _flaky_judge(True)])],
        checkpoint=path,
    )
    assert all(row.results["factual_correctness"].excluded for row in degraded)

    kept_judge = fact_judge()
    evaluate(
        SAMPLES[:2],
        [FactualCorrectness(llm=[kept_judge, _flaky_judge(False)])],
        checkpoint=path,
        keep_degraded=True,
    )
    assert kept_judge.calls == []

    judge = fact_judge()
    rows = evaluate(
        SAMPLES[:2], [FactualCorrectness(llm=[judge, _flaky_judge(False)])], checkpoint=path
    )
    assert judge.calls and not any(row.results["factual_correctness"].excluded for row in rows)


def test_errors_are_saved_and_scored_again(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    rows = evaluate(SAMPLES[:2], [FactualCorrectness(llm=_flaky_judge(True))], checkpoint=path)
    assert all(row.errors for row in rows)
    saved = read_lines(path)[0]
    assert all("error" in line["metrics"]["factual_correctness"] for line in saved)

    rows = evaluate(SAMPLES[:2], [FactualCorrectness(llm=fact_judge())], checkpoint=path)
    assert not any(row.errors for row in rows)


async def test_aevaluate_and_stream_evaluate_take_a_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    rows = await aevaluate(SAMPLES, [FactualCorrectness(llm=fact_judge())], checkpoint=path)
    assert len(read_lines(path)[0]) == 6

    judge = fact_judge()
    streamed = list(stream_evaluate(SAMPLES, [FactualCorrectness(llm=judge)], checkpoint=path))
    assert judge.calls == [] and scores(streamed) == scores(rows)


def test_a_checkpoint_line_is_json_with_the_fingerprint_and_signature(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    evaluate(SAMPLES[:1], [FactualCorrectness(llm=fact_judge())], checkpoint=path)
    line = json.loads(path.read_text(encoding="utf-8"))
    # The CLI's --out record (docs/records.md): a sample without an id is numbered from 1.
    assert line["schema_version"] == 2 and line["id"] == "1"
    assert line["response"] == SAMPLES[0]["response"]
    entry = line["metrics"]["factual_correctness"]
    assert entry["signature"] and entry["score"] == entry["result"]["score"] is not None
    assert [claim["verdict"] for claim in entry["claims"]] == ["supported", "neutral", "supported"]
    assert "事件" in path.read_text(encoding="utf-8")  # readable, not \\u-escaped


# A file holding a line that is not a checkpoint's is refused, and left as it is
# (tests/test_out_files.py): only lines of ours cut short are dropped.
@pytest.mark.parametrize("content", [b"", b"\n", b'{"checkpoint": 1, "ind'])
def test_odd_files_are_no_crash(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(content)
    rows = evaluate(SAMPLES[:2], [FactualCorrectness(llm=fact_judge())], checkpoint=path)
    assert not any(row.errors for row in rows)
    assert sorted(line["id"] for line in read_lines(path)[0] if "id" in line) == ["1", "2"]
