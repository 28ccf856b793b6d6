"""A plain (non-batch) resume reuses a saved score only from the same judge: the same
model id and sampling settings (temperature, max_tokens ...), not only the same label.

Through the local OpenAI-compatible server over HTTP: the CLI's ``--model judge-a``
(temperature 0) and library ``ChatOpenAI`` judges; the requests the server received are
counted. What differs is scored again (with a notice before any request saying so, and
how to keep the saved scores); what is the same judge (an equivalent judge, another
endpoint or key for the same model) resumes with no request; lines written before the
judges' settings were signed (tests/data/resume/) still resume with no request.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from support import evaluate_args
from test_cli import cli, out_lines, write_jsonl

from langchain_answer_metrics import Faithfulness, Judge, aevaluate_dataset, evaluate_dataset
from langchain_answer_metrics.checkpoints import metric_signature
from langchain_answer_metrics.checkpoints.judge_settings import judge_settings
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

OLD = Path(__file__).parent / "data" / "resume"

ROWS: list[dict[str, Any]] = [
    {
        "id": "en-1",
        "question": "When was the Eiffel Tower built?",
        "answer": "The Eiffel Tower was built in 1889. It is in Paris.",
        "contexts": ["The Eiffel Tower was built in 1889 in Paris."],
    },
    {
        "id": "ru-1",
        "question": "Когда Аполлон-11 сел на Луну?",
        "answer": "Аполлон-11 сел на Луну в 1969 году.",
        "contexts": ["Аполлон-11 высадился на Луну 20 июля 1969 года."],
    },
]


def chat(server: LocalOpenAIServer, **settings: Any) -> ChatOpenAI:
    """A library judge ``judge-a`` on ``server`` with ``settings`` (model, temperature ...)."""
    given: dict[str, Any] = {"model": "judge-a", "api_key": "sk-test", **settings}
    return ChatOpenAI(base_url=server.base_url, use_responses_api=False, max_retries=0, **given)


def cli_out(server: LocalOpenAIServer, tmp_path: Path) -> Path:
    """``results.jsonl`` written by the command's ``--model judge-a`` (temperature 0)."""
    data = write_jsonl(tmp_path / "qa.jsonl", ROWS)
    out = tmp_path / "results.jsonl"
    result = cli(*evaluate_args(data, out, server))
    assert result.returncode == 0, result.stderr
    assert server.chat_requests > 0
    server.reset()
    return out


def test_a_cli_file_resumed_by_a_judge_at_another_temperature_is_scored_again(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    out = cli_out(server, tmp_path)

    # ChatOpenAI's default temperature (not sent: the provider's) is not the command's 0.
    with pytest.warns(UserWarning, match="faithfulness: saved scores came from judges") as said:
        rows = evaluate_dataset(ROWS, [Faithfulness(llm=chat(server))], checkpoint=out)

    assert server.chat_requests > 0 and not any(row.errors for row in rows)
    sent = [request.body for request in server.requests if "messages" in request.body]
    assert sent and all("temperature" not in body for body in sent)  # this run's judge
    notice = str(said[0].message)
    # What differs, saved → now: the command's temperature 0, this judge's default.
    assert "(judge-a: temperature 0 → not set): scored again" in notice
    assert "sk-test" not in notice
    # Every row was re-scored, each once: the next run with this judge sends nothing.
    server.reset()
    evaluate_dataset(ROWS, [Faithfulness(llm=chat(server))], checkpoint=out)
    assert server.chat_requests == 0


@pytest.mark.parametrize(
    "equivalent",
    [
        {"temperature": 0},
        {"temperature": 0.0, "api_key": "sk-another-key"},  # a key is not the judge
    ],
    ids=["temperature=0", "another key"],
)
def test_an_equivalent_library_judge_resumes_a_cli_file_with_no_request(
    server: LocalOpenAIServer, tmp_path: Path, equivalent: dict[str, Any]
) -> None:
    out = cli_out(server, tmp_path)
    rows = evaluate_dataset(ROWS, [Faithfulness(llm=chat(server, **equivalent))], checkpoint=out)
    assert server.chat_requests == 0 and not any(row.errors for row in rows)
    # And bound instead of set: the same request, the same judge.
    bound = chat(server).bind(temperature=0)
    evaluate_dataset(ROWS, [Faithfulness(llm=bound)], checkpoint=out)
    assert server.chat_requests == 0


def test_a_checkpoint_from_a_default_temperature_judge_is_scored_again_by_the_cli(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", ROWS)
    checkpoint = tmp_path / "run.jsonl"
    evaluate_dataset(ROWS, [Faithfulness(llm=chat(server))], checkpoint=checkpoint)
    server.reset()

    # The estimate sends nothing, and already says what will be scored again and why.
    estimate = cli(*evaluate_args(data, checkpoint, server, extra=["--estimate"]))
    assert estimate.returncode == 0, estimate.stderr
    assert server.chat_requests == 0
    assert (
        "faithfulness: 2 saved scores came from judges with other model ids or settings "
        "(judge-a: temperature not set → 0): scored again" in estimate.stderr
    )

    result = cli(*evaluate_args(data, checkpoint, server))
    assert result.returncode == 0, result.stderr
    assert server.chat_requests > 0
    assert "resuming" not in result.stderr and "scored again" in result.stderr
    server.reset()
    again = cli(*evaluate_args(data, checkpoint, server))
    assert again.returncode == 0 and server.chat_requests == 0
    assert "scored again" not in again.stderr


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ({"temperature": 0.7}, {"temperature": 0}),
        ({"temperature": 0, "max_tokens": 400}, {"temperature": 0, "max_tokens": 2000}),
        ({"temperature": 0}, {"temperature": 0, "top_p": 0.5}),
        ({"temperature": 0}, {"temperature": 0, "seed": 7}),
        pytest.param(
            {"temperature": 0},
            {"temperature": 0, "model_kwargs": {"frequency_penalty": 0.5}},
            marks=pytest.mark.filterwarnings("ignore:Parameters .* should be specified"),
        ),
        ({"temperature": 0}, {"temperature": 0, "extra_body": {"top_k": 5}}),
    ],
    ids=["temperature", "max_tokens", "top_p", "seed", "model_kwargs", "extra_body"],
)
def test_a_sampling_setting_changed_is_scored_again(
    server: LocalOpenAIServer, tmp_path: Path, first: dict[str, Any], then: dict[str, Any]
) -> None:
    checkpoint = tmp_path / "run.jsonl"
    evaluate_dataset(ROWS, [Faithfulness(llm=chat(server, **first))], checkpoint=checkpoint)
    server.reset()
    evaluate_dataset(ROWS, [Faithfulness(llm=chat(server, **first))], checkpoint=checkpoint)
    assert server.chat_requests == 0  # the same judge: nothing sent
    with pytest.warns(UserWarning, match="scored again"):
        evaluate_dataset(ROWS, [Faithfulness(llm=chat(server, **then))], checkpoint=checkpoint)
    assert server.chat_requests > 0


async def test_a_model_behind_the_same_label_is_another_judge(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "run.jsonl"
    named = Judge(model=chat(server, temperature=0), label="judge")
    await aevaluate_dataset(ROWS, [Faithfulness(llm=named)], checkpoint=checkpoint)
    server.reset()
    other = Judge(model=chat(server, model="judge-b", temperature=0), label="judge")
    with pytest.warns(UserWarning, match="judge: model judge-a → judge-b, model_name judge-a"):
        await aevaluate_dataset(ROWS, [Faithfulness(llm=other)], checkpoint=checkpoint)
    assert server.chat_requests > 0


def test_a_panel_member_whose_settings_changed_rescores_the_panel(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "run.jsonl"
    panel = [chat(server, temperature=0), chat(server, model="judge-b", temperature=0)]
    evaluate_dataset(ROWS, [Faithfulness(llm=panel)], checkpoint=checkpoint)
    server.reset()
    changed = [chat(server, temperature=0), chat(server, model="judge-b", temperature=1)]
    with pytest.warns(UserWarning, match="scored again"):
        evaluate_dataset(ROWS, [Faithfulness(llm=changed)], checkpoint=checkpoint)
    assert server.chat_requests > 0


def test_the_same_model_on_another_endpoint_is_the_same_judge(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    out = cli_out(server, tmp_path)
    with LocalOpenAIServer() as moved:  # the same model served elsewhere (a proxy, a port)
        rows = evaluate_dataset(
            ROWS, [Faithfulness(llm=chat(moved, temperature=0))], checkpoint=out
        )
        assert moved.chat_requests == 0 and not any(row.errors for row in rows)


def test_no_secret_is_signed_or_recorded(server: LocalOpenAIServer, tmp_path: Path) -> None:
    key = "sk-secret-judge-key-0123456789"
    model = chat(
        server,
        api_key=key,
        temperature=0,
        default_headers={"Authorization": f"Bearer {key}", "X-Team": "eval"},
        model_kwargs={"user_token": key},
        extra_body={"api_key": key, "top_k": 5},
    )
    metric = Faithfulness(llm=model)
    settings = judge_settings(metric)
    assert settings == {
        "judge-a": {
            "extra_body": {"top_k": 5.0},
            "model": "judge-a",
            "model_name": "judge-a",
            "temperature": 0.0,
        }
    }
    assert key not in metric_signature(metric)
    checkpoint = tmp_path / "run.jsonl"
    evaluate_dataset(ROWS, [metric], checkpoint=checkpoint)
    text = checkpoint.read_text("utf-8")
    assert key not in text and "X-Team" not in text and "Bearer" not in text


def test_an_old_out_file_resumes_from_python_with_no_request(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    # Written by the command before the judges' settings were signed (commit 0151843).
    out = tmp_path / "out_v2.jsonl"
    shutil.copyfile(OLD / "out_v2.jsonl", out)
    rows = [json.loads(line) for line in (OLD / "qa.jsonl").read_text("utf-8").splitlines()]
    before = {line["id"]: line for line in out_lines(out)}

    results = evaluate_dataset(
        rows, [Faithfulness(llm=chat(server, temperature=0))], checkpoint=out
    )

    assert server.chat_requests == 0 and not any(row.errors for row in results)
    for row, source in zip(results, rows, strict=True):
        saved = before[source["id"]]["metrics"]["faithfulness"]["score"]
        assert row.results["faithfulness"].score == pytest.approx(saved)
    # Such a line cannot say what its judge was: it resumes as it did before, whatever
    # the judge's settings now (docs/records.md says how to score it again).
    evaluate_dataset(rows, [Faithfulness(llm=chat(server, temperature=1))], checkpoint=out)
    assert server.chat_requests == 0


def test_lines_written_now_carry_the_judges_part(server: LocalOpenAIServer, tmp_path: Path) -> None:
    out = cli_out(server, tmp_path)
    signature = out_lines(out)[0]["metrics"]["faithfulness"]["signature"]
    base, dot, judges = signature.partition(".")
    assert dot and len(base) == len(judges) == 16
    assert signature == metric_signature(Faithfulness(llm=chat(server, temperature=0)))
    judges = out_lines(out)[0]["metrics"]["faithfulness"]["judges"]
    assert judges == {"judge-a": {"model": "judge-a", "model_name": "judge-a", "temperature": 0.0}}


def test_a_line_that_signed_its_judges_without_keeping_them_names_this_runs(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    # Lines of the first release that signed the judges kept no "judges" field.
    out = cli_out(server, tmp_path)
    lines = out_lines(out)
    for line in lines:
        del line["metrics"]["faithfulness"]["judges"]
    out.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    evaluate_dataset(ROWS, [Faithfulness(llm=chat(server, temperature=0))], checkpoint=out)
    assert server.chat_requests == 0
    with pytest.warns(UserWarning, match=r"this run's: judge-a: .*temperature=0\.5"):
        evaluate_dataset(ROWS, [Faithfulness(llm=chat(server, temperature=0.5))], checkpoint=out)
    assert server.chat_requests > 0


@pytest.fixture
def batch_server(server: LocalOpenAIServer) -> Iterator[LocalOpenAIServer]:
    yield server
    batch = server.batch
    batch.enabled, batch.delay, batch.line_faults, batch.outcome = True, 0.0, None, None
    batch.release()


@pytest.mark.parametrize("bound", [False, True], ids=["set", "bound"])
def test_scores_from_a_batch_run_resume_a_plain_run_of_the_same_judge(
    batch_server: LocalOpenAIServer, tmp_path: Path, bound: bool
) -> None:
    # A batch run's judges are stand-ins for the real ones: signed as the real ones.
    def judge() -> Any:
        return (
            chat(batch_server).bind(temperature=0) if bound else chat(batch_server, temperature=0)
        )

    checkpoint = tmp_path / "run.jsonl"
    batch = {"batch": True, "batch_poll_s": 0.02, "batch_min_requests": 0}
    rows = evaluate_dataset(ROWS, [Faithfulness(llm=judge())], checkpoint=checkpoint, **batch)
    assert not any(row.errors or row.not_run for row in rows)
    assert batch_server.batch.created and batch_server.chat_requests == 0

    evaluate_dataset(ROWS, [Faithfulness(llm=judge())], checkpoint=checkpoint)
    assert batch_server.chat_requests == 0
    with pytest.warns(UserWarning, match="scored again"):
        evaluate_dataset(ROWS, [Faithfulness(llm=chat(batch_server))], checkpoint=checkpoint)
    assert batch_server.chat_requests > 0


def test_a_config_judge_whose_options_changed_is_scored_again_by_the_cli(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "qa.jsonl", ROWS)
    config = tmp_path / "models.yaml"
    out = tmp_path / "results.jsonl"

    def run(options: str) -> str:
        config.write_text(
            f"providers:\n  local:\n    base_url: {server.base_url}\n"
            "chat_models:\n  list:\n    - id: judge-a\n"
            f"    - id: judge-b\n      name: second\n      options: {{{options}}}\n",
            "utf-8",
        )
        args = ["evaluate", data, "--metric", "faithfulness", "--config", config]
        result = cli(*args, "--out", out, "--quiet")
        assert result.returncode == 0, result.stderr
        return result.stderr

    run("temperature: 0, max_tokens: 800")
    server.reset()
    stderr = run("temperature: 0, max_tokens: 800")
    assert server.chat_requests == 0 and "scored again" not in stderr

    stderr = run("temperature: 0.5, max_tokens: 800")
    assert server.chat_requests > 0
    assert "(second: temperature 0 → 0.5): scored again" in stderr


def test_calibrate_says_which_saved_scores_it_scores_again(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    labelled = [{**row, "label": number % 2} for number, row in enumerate(ROWS)]
    data = write_jsonl(tmp_path / "labelled.jsonl", labelled)
    config = tmp_path / "models.yaml"
    out = tmp_path / "scores.jsonl"

    def run(temperature: float) -> str:
        config.write_text(
            f"providers:\n  local:\n    base_url: {server.base_url}\n"
            "chat_models:\n  list:\n"
            f"    - id: judge-a\n      options: {{temperature: {temperature}}}\n",
            "utf-8",
        )
        args = ["calibrate", data, "--metric", "faithfulness", "--config", config]
        result = cli(*args, "--out", out, "--quiet", "--allow-errors")
        assert result.returncode == 0, result.stderr
        return result.stderr

    run(0)
    server.reset()
    stderr = run(0)
    assert server.chat_requests == 0
    assert f"resuming: 2 samples already scored in {out}" in stderr
    assert "scored again" not in stderr

    stderr = run(0.5)
    assert server.chat_requests > 0
    assert "faithfulness: 2 saved scores came from judges with other model ids" in stderr
    assert "(judge-a: temperature 0 → 0.5): scored again" in stderr
