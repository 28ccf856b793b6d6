"""``answer-metrics simulate``: conversations with your app, a simulated user on the other
side, written as a JSONL file of threads that ``answer-metrics evaluate`` scores.

    answer-metrics simulate scenarios.yaml --app my_app:graph --out threads.jsonl \\
        --cache simulated.json
    answer-metrics evaluate threads.jsonl --metric conversation_completeness

The user model is configured as the judge is (``--config``, ``--base-url URL --model ID``,
or ``OPENAI_API_KEY``): the panel's first judge plays the user. ``--cache`` keeps its
moves, so a rerun whose app replies as before asks it nothing.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from langchain_answer_metrics.cli.command_options import SimulateOptions
from langchain_answer_metrics.cli.group_options import JudgeOptions
from langchain_answer_metrics.cli.options import UsageError

OUT_KEYS = ("scenario", "messages", "goal")
"""Every row of a simulate ``--out`` file has these keys: how one is recognised."""


def _load_app(spec: str) -> Any:
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise UsageError(f"--app {spec!r}: expected MODULE:ATTRIBUTE (e.g. my_app:graph)")
    sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UsageError(f"--app {spec!r}: cannot import {module_name} ({error})") from None
    finally:
        sys.path.remove(os.getcwd())
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise UsageError(f"--app {spec!r}: {module_name} has no {attribute}") from None


def _user_model(judges: JudgeOptions) -> Any:
    """The first judge of the configured panel: it plays the user."""
    from langchain_answer_metrics.config import load_config, panel_from_base_url

    if judges.config is not None:
        panel = load_config(judges.config)
    elif judges.base_url is not None:
        if judges.model is None:
            raise UsageError("--base-url needs --model ID: the user model's id on that endpoint")
        panel = panel_from_base_url(judges.base_url, model=judges.model, embedding_model=None)
    elif os.environ.get("OPENAI_API_KEY"):
        panel = load_config()
    else:
        raise UsageError(
            "no user model: give --config, --base-url URL --model ID, or set OPENAI_API_KEY"
        )
    if not panel.judges:
        raise UsageError("the models file lists no chat model to play the user")
    return panel.judges[0]


def _check_out(path: Path) -> None:
    """Refuse to overwrite a file that is not a simulate output."""
    if not path.exists():
        return
    try:
        with path.open(encoding="utf-8") as stream:
            rows = [json.loads(line) for line in stream if line.strip()]
    except (OSError, ValueError, UnicodeDecodeError):
        rows = None
    if not rows or not all(isinstance(row, dict) and set(OUT_KEYS) <= set(row) for row in rows):
        raise UsageError(
            f"--out {path}: the file exists and holds no simulated conversations; "
            "it is not overwritten (remove it or choose another path)"
        )


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            for row in rows:
                stream.write(json.dumps(row, ensure_ascii=False) + "\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path.resolve())
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _estimate(options: SimulateOptions, app: Any, scenarios: list[Any]) -> int:
    from langchain_answer_metrics.simulation import estimate_simulation

    estimate = estimate_simulation(
        app,
        scenarios,
        max_turns=options.max_turns,
        seed=options.seed,
        cache=options.cache,
        stop_phrases=list(options.stop_phrase),
    )
    replayed = sum(item.replayed for item in estimate.scenarios)
    low, high = estimate.requests_low, estimate.requests_high
    requests = str(low) if low == high else f"{low}-{high}"
    print(
        f"simulate estimate: {replayed} moves replay from the cache; {requests} requests "
        "to the user model (nothing sent)"
    )
    for item in estimate.scenarios:
        if item.first_asked is not None:
            print(
                f"  {item.scenario}: asks from turn {item.first_asked} "
                f"({item.requests_low}-{item.requests_high} requests)"
            )
    return 0


def run_simulate(options: SimulateOptions) -> int:
    """Simulate every scenario, write ``--out``, and say what was asked and replayed."""
    from langchain_answer_metrics.conversations.sources import openai_messages
    from langchain_answer_metrics.simulation import ScenarioError, load_scenarios, simulate

    if options.max_turns < 1:
        raise UsageError(f"--max-turns must be at least 1, got {options.max_turns}")
    try:
        scenarios = load_scenarios(options.scenarios)
    except (OSError, ScenarioError) as error:
        raise UsageError(str(error)) from None
    app = _load_app(options.app)
    if options.estimate:
        return _estimate(options, app, scenarios)
    if options.out is None:
        raise UsageError("simulate needs --out PATH: where the conversations go")
    _check_out(options.out)
    result = simulate(
        app,
        scenarios,
        user_llm=_user_model(options.judges),
        max_turns=options.max_turns,
        seed=options.seed,
        cache=options.cache,
        stop_phrases=list(options.stop_phrase),
    )
    rows = [
        {
            "id": conversation.scenario,
            "scenario": conversation.scenario,
            "goal": conversation.sample.goal,
            "messages": openai_messages(conversation.sample.messages),
            "stopped": conversation.stopped,
            "user_turns": conversation.user_turns,
        }
        for conversation in result.conversations
    ]
    _write(options.out, rows)
    stopped = [conversation.stopped for conversation in result.conversations]
    counts = ", ".join(
        f"{stopped.count(why)} {why.replace('_', ' ')}" for why in dict.fromkeys(stopped)
    )
    print(
        f"{len(rows)} conversations ({counts}) written to {options.out}; simulated user: "
        f"{result.turns_asked} moves asked, {result.turns_replayed} replayed",
        file=sys.stderr,
    )
    return 0
