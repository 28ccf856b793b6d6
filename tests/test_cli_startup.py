"""``answer-metrics --help`` and the command's one-line errors load none of the run's
machinery: no LangChain Runnable, tracer or prompt, no LangSmith schema, no metric.

Checked in a fresh interpreter per command (this session has long imported all of it);
the CPU time it saves is measured by benchmarks/cli_startup.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a fresh interpreter per command

HEAVY = (
    "langchain_core.tracers",
    "langchain_core.prompts",
    "langchain_core.runnables",
    "langsmith.schemas",
    "langchain_answer_metrics.metrics.base",
    "langchain_openai",
)


def _loaded(args: list[str], cwd: Path) -> tuple[int, str, dict[str, bool]]:
    """Run ``answer-metrics ARGS`` in a fresh interpreter: its exit code, stderr, and which
    of HEAVY it had loaded when it returned."""
    probe = (
        "import json, sys\n"
        "from langchain_answer_metrics.cli.command import main\n"
        f"code = main({args!r})\n"
        f"loaded = {{m: m in sys.modules for m in {HEAVY!r}}}\n"
        "print(json.dumps({'code': code, 'loaded': loaded}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"},
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["code"], done.stderr, report["loaded"]


def test_help_loads_no_tracer_prompt_runnable_or_metric(tmp_path: Path) -> None:
    probe = (
        "import json, sys\n"
        "from langchain_answer_metrics.cli.command import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert "usage: answer-metrics" in done.stdout
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == dict.fromkeys(HEAVY, False)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    (tmp_path / "qa.jsonl").write_text(
        '{"user_input": "Where?", "response": "Paris.", "reference": "Paris.",'
        ' "retrieved_contexts": ["Paris is the capital."]}\n'
        '{"user_input": "When?", "response": "1889."}\n',
        encoding="utf-8",
    )
    return tmp_path


ERRORS = [
    (["evaluate", "missing.jsonl", "--metric", "semantic_similarity"], "no such file"),
    (["evaluate", "qa.jsonl", "--metric", "faithfulnes"], "did you mean faithfulness"),
    (
        ["evaluate", "qa.jsonl", "--metric", "factual_correctness", "--reference-col", "gold"],
        "gold",
    ),
    (["evaluate", "qa.jsonl", "--metric", "aspect_critic"], "--criterion"),
    (["evaluate", "qa.jsonl", "--metric", "semantic_similarity", "--out", "no/x.jsonl"], "no"),
    (
        [
            "evaluate",
            "qa.jsonl",
            "--threshold",
            "faithfulness=0.5",
            "--metric",
            "aspect_critic",
            "--criterion",
            "Polite.",
        ],
        "not a chosen metric",
    ),
    (["demo", "--model", "judge-a", "--metric", "faithfulness"], "none is configured"),
]


@pytest.mark.parametrize(("args", "says"), ERRORS)
def test_a_data_or_argument_error_loads_none_of_the_run(
    data: Path, args: list[str], says: str
) -> None:
    code, stderr, loaded = _loaded(args, data)
    assert code == 2, stderr
    assert says in stderr
    assert loaded == dict.fromkeys(HEAVY, False), stderr


def test_an_argparse_error_loads_none_of_the_run(data: Path) -> None:
    probe = (
        "import json, sys\n"
        "from langchain_answer_metrics.cli.command import main\n"
        "try:\n"
        "    main(['evaluate', 'qa.jsonl', '--threshold', '2'])\n"
        "except SystemExit as stop:\n"
        "    code = stop.code\n"
        f"print(json.dumps([code, {{m: m in sys.modules for m in {HEAVY!r}}}]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=data
    )
    code, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert code == 2 and "between 0 and 1" in done.stderr
    assert loaded == dict.fromkeys(HEAVY, False)
