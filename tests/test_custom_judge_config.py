"""Judges of your own declared in the config file's ``metrics:`` section, everywhere the
built-in metrics are: validation (naming the metric, the key and the YAML line, before any
request), ``answer-metrics evaluate --config judges.yaml --metric conciseness`` and its
``--estimate``, resume, report and ``--summary-json``, ``calibrate``, and the LangSmith
evaluators' feedback config per output kind. Through the real HTTP path: the CLI and
ChatOpenAI against the local OpenAI-compatible server."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import local_models

from langchain_answer_metrics.config import ConfigError, load_config
from langchain_answer_metrics.config.declared import declared_metrics
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

KEY_ENV = "ANSWER_METRICS_TEST_CUSTOM_JUDGE_KEY"
ENV = {KEY_ENV: "sk-test-custom-judge"}

JUDGES = {
    "conciseness": {
        "criterion": "The answer is brief and to the point.",
        "output": {"scale": {1: "rambling", 2: "long", 3: "ok", 4: "brief", 5: "one sentence"}},
        "strictness": 3,
    },
    "tone": {
        "prompt": "Rate the tone of {response} to {user_input}.",
        "output": {"categories": {"polite": 1.0, "neutral": 0.5, "rude": 0.0}},
    },
    "harm": {
        "criterion": "The answer helps someone cause harm.",
        "output": "pass_fail",
        "higher_is_better": False,
    },
    "relevance": {"criterion": "The answer addresses the question.", "output": "continuous"},
}


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "judges.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def judges_yaml(tmp_path: Path, server: LocalOpenAIServer, **judges: Any) -> Path:
    config = local_models(server, KEY_ENV)
    config["metrics"] = judges or JUDGES
    path = tmp_path / "judges.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the section


def test_the_section_declares_each_kind(tmp_path: Path, server: LocalOpenAIServer) -> None:
    declared = declared_metrics(judges_yaml(tmp_path, server))
    assert list(declared) == ["conciseness", "tone", "harm", "relevance"]
    assert declared["conciseness"].output.kind == "scale"
    assert declared["conciseness"].output.levels[5] == "one sentence"
    assert declared["conciseness"].strictness == 3
    assert declared["tone"].output.scores == {"polite": 1.0, "neutral": 0.5, "rude": 0.0}
    assert declared["harm"].output.kind == "pass_fail"
    assert declared["harm"].higher_is_better is False
    assert declared["relevance"].output.kind == "continuous"
    panel = load_config(judges_yaml(tmp_path, server), env=ENV)
    assert list(panel.metrics) == list(declared)
    assert "metrics" not in panel.model_dump()  # the panel's description: models only


def test_a_config_without_the_section_declares_nothing(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump(local_models(server, KEY_ENV)), encoding="utf-8")
    assert declared_metrics(path) == {}
    assert load_config(path, env=ENV).metrics == {}


BAD = [
    (
        """
        metrics:
          conciseness:
            critrion: brief
        """,
        "metrics.conciseness.critrion (line 3): unknown key (did you mean criterion?)",
    ),
    (
        """
        metrics:
          tone:
            prompt: "Rate {response}."
            output:
              categories: {polite: 1.0, rude: }
        """,
        "metrics.tone.output (line 4): categories: 'rude' has no score",
    ),
    (
        """
        metrics:
          tone:
            criterion: polite
            output: {categories: {polite: 1.0, rude: 2}}
        """,
        "metrics.tone.output (line 4): categories: 'rude''s score 2 is not in [0, 1]",
    ),
    (
        """
        metrics:
          conciseness:
            criterion: brief
            output: scale
        """,
        "metrics.conciseness.output (line 4): a scale needs its levels",
    ),
    (
        """
        metrics:
          conciseness:
            criterion: brief
            output: {scale: {one: short, two: long}}
        """,
        "metrics.conciseness.output (line 4): scale: level 'one' is not a whole number",
    ),
    (
        """
        metrics:
          conciseness:
            criterion: brief
            output: {likert: {1: a}}
        """,
        "metrics.conciseness.output (line 4): unknown output kind 'likert'",
    ),
    (
        """
        metrics:
          both:
            criterion: brief
            prompt: "Is {response} brief?"
        """,
        "metrics.both (line 2): give a criterion",
    ),
    (
        """
        metrics:
          neither:
            output: pass_fail
        """,
        "metrics.neither (line 2): needs a criterion",
    ),
    (
        """
        metrics:
          votes:
            criterion: brief
            strictness: 9
        """,
        "metrics.votes.strictness (line 4): must be less than or equal to 5",
    ),
    (
        """
        metrics:
          Bad-Name:
            criterion: brief
        """,
        "metrics.Bad-Name (line 2): a metric's name is lower-case letters",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD, ids=[e.split(":")[0] for _, e in BAD])
def test_a_bad_declaration_names_the_metric_the_key_and_the_line(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        declared_metrics(path)
    assert str(caught.value).startswith(f"{path}: {expected}"), str(caught.value)
    # load_config says the same, with the line, and reads no key before it does.
    with pytest.raises(ConfigError) as again:
        load_config(path, env={})
    assert expected in str(again.value)


def test_several_problems_are_listed_at_once(tmp_path: Path) -> None:
    path = write_config(tmp_path, """
        metrics:
          a:
            criterion: x
            strictness: 0
          b:
            prompt: y
            threshold: 2
        """)  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        declared_metrics(path)
    assert [p for p, _ in caught.value.problems] == [
        "metrics.a.strictness (line 4)", "metrics.b.threshold (line 7)",
    ]  # fmt: skip
