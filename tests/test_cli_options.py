"""The command line's options: each shared option declared once, read by one validator in
every command that takes it, into one typed, frozen options object per command.

In-process: the parser and the typed options load none of the run's machinery, and the
commands run through ``main(argv)`` (tests/support.py ``answer_metrics``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from support import answer_metrics

from langchain_answer_metrics.cli.command_options import (
    AlignOptions,
    CalibrateOptions,
    CompareOptions,
    EvaluateOptions,
    SimulateOptions,
    ToyJudgeOptions,
    options_of,
)
from langchain_answer_metrics.cli.group_options import JudgeOptions, LimitOptions
from langchain_answer_metrics.cli.parser import build_parser
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONCURRENCY

JUDGE = ["--base-url", "http://127.0.0.1:9/v1", "--model", "judge-a"]

# Each command that takes the judges and the limits, with its required arguments.
COMMANDS = {
    "evaluate": ["evaluate", "qa.jsonl"],
    "demo": ["demo"],
    "calibrate": ["calibrate", "qa.jsonl"],
    "compare": ["compare", "a.jsonl", "b.jsonl", "--judge", "pairwise"],
    "align": ["align", "qa.jsonl", "--out", "aligned.yaml"],
}


def parsed(argv: list[str]) -> object:
    return options_of(build_parser().parse_args(argv))


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_reads_the_judges_and_limits_into_the_same_typed_groups(
    command: str,
) -> None:
    options = parsed([*COMMANDS[command], *JUDGE, "--max-concurrency", "3", "--max-cost", "$2"])
    judges, limits = options.judges, options.limits  # type: ignore[attr-defined]
    assert judges == JudgeOptions(base_url="http://127.0.0.1:9/v1", model="judge-a")
    assert (limits.max_concurrency, limits.max_cost) == (3, 2.0)
    assert isinstance(limits, LimitOptions)
    default = parsed(COMMANDS[command])
    assert default.limits.max_concurrency == DEFAULT_MAX_CONCURRENCY  # type: ignore[attr-defined]
    # Frozen: what the entry point built is what every function below reads.
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.max_cost = 5.0  # type: ignore[misc]


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--max-cost", "-1", "'-1' is not an amount of USD >= 0"),
        ("--max-cost", "lots", "could not convert string to float: 'lots'"),
        ("--max-concurrency", "0", "--max-concurrency"),
    ],
)
def test_a_shared_option_is_refused_the_same_way_by_every_command(
    command: str, flag: str, value: str, says: str, tmp_path: Path
) -> None:
    result = answer_metrics(*COMMANDS[command], flag, value, cwd=tmp_path)
    assert result.returncode == 2
    line = result.stderr.strip()
    assert f"argument {flag}: " in line and says in line, line
    assert line.endswith("--help)"), line  # one line, not the usage block


def test_each_command_gets_its_own_typed_options() -> None:
    kinds = {
        "evaluate": EvaluateOptions,
        "demo": EvaluateOptions,
        "calibrate": CalibrateOptions,
        "compare": CompareOptions,
        "align": AlignOptions,
    }
    for command, argv in COMMANDS.items():
        assert type(parsed(argv)) is kinds[command], command
    simulate = parsed(["simulate", "s.yaml", "--app", "m:a", "--stop-phrase", "bye", *JUDGE])
    assert isinstance(simulate, SimulateOptions)
    assert simulate.stop_phrase == ("bye",) and simulate.judges.model == "judge-a"
    assert parsed(["toy-judge", "--port", "0"]) == ToyJudgeOptions(port=0)


def test_the_options_groups_read_what_was_given_and_leave_the_rest_to_their_defaults() -> None:
    options = parsed(
        [
            "evaluate",
            "qa.jsonl",
            "--metric",
            "faithfulness,aspect_critic",
            "--criterion",
            "Polite.",
            "--threshold",
            "faithfulness=0.8",
            "--response-col",
            "answer",
            "--format",
            "csv",
            "--no-preflight",
            "--batch",
            "--batch-wait",
            "2h",
            "--out",
            "out.jsonl",
            "--fail-under",
            "0.5",
        ]
    )
    assert isinstance(options, EvaluateOptions)
    assert options.metrics.metric == ("faithfulness,aspect_critic",)
    assert options.metrics.threshold == (("faithfulness", 0.8),)
    assert options.metrics.settings == {"criterion": "Polite."}  # only what was given
    assert (options.columns.format, options.columns.response) == ("csv", "answer")
    assert options.columns.mapping().id == "id"
    assert options.limits.preflight is False
    assert (options.batch.batch, options.batch.batch_wait) == (True, 7200.0)
    assert options.output.out == Path("out.jsonl")
    assert options.output.fail_under == ((None, 0.5),)
    assert not options.demo and not options.estimate


def test_align_takes_the_threshold_as_evaluate_does(tmp_path: Path) -> None:
    options = parsed([*COMMANDS["align"], "--threshold", "0.7", "--no-weights"])
    assert isinstance(options, AlignOptions)
    assert options.metrics.threshold == ((None, 0.7),)
    assert (options.weights, options.fit_threshold) == (False, True)
    result = answer_metrics(*COMMANDS["align"], "--threshold", "1.5", cwd=tmp_path)
    assert result.returncode == 2 and "argument --threshold" in result.stderr


def test_compare_refuses_a_judge_option_without_judge(tmp_path: Path) -> None:
    for extra, flag in (
        (["--max-cost", "1"], "--max-cost"),
        (["--config", "m.yaml"], "--config"),
        (["--estimate"], "--estimate"),
    ):
        result = answer_metrics("compare", "a.jsonl", "b.jsonl", *extra, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert f"{flag} goes with --judge pairwise" in result.stderr


def test_estimate_json_goes_with_estimate_only(tmp_path: Path) -> None:
    data = tmp_path / "qa.jsonl"
    data.write_text(json.dumps({"response": "Paris.", "reference": "Paris."}) + "\n")
    result = answer_metrics("evaluate", data, "--json", tmp_path / "e.json", cwd=tmp_path)
    assert result.returncode == 2
    assert "--json PATH goes with --estimate" in result.stderr
