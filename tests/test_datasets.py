"""Dataset files: JSONL, JSON and CSV load into samples; bad files fail with a one-line fix."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from langchain_answer_metrics.cli.datasets import ColumnMapping, DatasetError, demo_path, load_rows
from langchain_answer_metrics.cli.options import LOADER_FLAGS

ROWS = [
    {
        "id": "q1",
        "question": "Where is the Eiffel Tower?",
        "answer": "It is in Paris.",
        "ground_truth": "The Eiffel Tower is in Paris.",
        "contexts": ["The Eiffel Tower stands in Paris.", "It was built in 1889."],
    },
    {
        "id": "q2",
        "question": "Столица России?",
        "answer": "Москва.",
        "ground_truth": "Москва — столица России.",
        "contexts": ["Москва — столица России."],
    },
]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def one_line(error: pytest.ExceptionInfo[DatasetError]) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


def test_jsonl_json_and_csv_give_the_same_samples(tmp_path: Path) -> None:
    jsonl = write(tmp_path / "d.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in ROWS))
    as_json = write(tmp_path / "d.json", json.dumps(ROWS, ensure_ascii=False))
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(ROWS[0].keys())
    for row in ROWS:
        writer.writerow(
            json.dumps(v, ensure_ascii=False) if isinstance(v, list) else v for v in row.values()
        )
    as_csv = write(tmp_path / "d.csv", buffer.getvalue())

    loaded = [load_rows(path) for path in (jsonl, as_json, as_csv)]
    samples = [[row.sample for row in rows] for rows in loaded]
    assert samples[0] == samples[1] == samples[2]
    first = loaded[0][0]
    assert first.id == "q1"
    assert first.sample.response == "It is in Paris."
    assert first.sample.reference == "The Eiffel Tower is in Paris."
    assert first.sample.user_input == "Where is the Eiffel Tower?"
    assert first.sample.retrieved_contexts == ROWS[0]["contexts"]


def test_csv_contexts_may_be_plain_text(tmp_path: Path) -> None:
    path = write(tmp_path / "d.csv", "response,contexts\nParis.,Paris is in France.\n")
    (row,) = load_rows(path)
    assert row.sample.retrieved_contexts == ["Paris is in France."]
    assert row.id == "1"  # no id column: the row number


def test_column_flags_override_the_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path / "d.jsonl",
        json.dumps({"key": "a", "q": "Q?", "model_out": "A.", "gold": "G.", "docs": ["D."]}),
    )
    mapping = ColumnMapping(
        user_input="q", response="model_out", reference="gold", retrieved_contexts="docs", id="key"
    )
    (row,) = load_rows(path, mapping)
    assert (row.id, row.sample.user_input, row.sample.response) == ("a", "Q?", "A.")
    assert (row.sample.reference, row.sample.retrieved_contexts) == ("G.", ["D."])


def test_fingerprint_changes_with_the_text(tmp_path: Path) -> None:
    first = load_rows(write(tmp_path / "a.jsonl", '{"response": "A."}'))[0]
    same = load_rows(write(tmp_path / "b.jsonl", '{"response": "A."}'))[0]
    other = load_rows(write(tmp_path / "c.jsonl", '{"response": "B."}'))[0]
    assert first.fingerprint == same.fingerprint != other.fingerprint


def test_malformed_jsonl_line_is_named(tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl", '{"response": "ok"}\n\n{"response": "broken",\n')
    with pytest.raises(DatasetError) as error:
        load_rows(path)
    message = one_line(error)
    assert "d.jsonl line 3: invalid JSON" in message
    assert "fix or remove that line" in message


def test_jsonl_line_that_is_not_an_object(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as error:
        load_rows(write(tmp_path / "d.jsonl", '{"response": "ok"}\n["a list"]\n'))
    assert "line 2: expected a JSON object" in one_line(error)


def test_csv_contexts_cell_that_is_not_json_is_one_context(tmp_path: Path) -> None:
    # A citation marker, or a list cut short: text that starts with "[" but is not JSON is
    # read as the one context it says (never a failure of the whole file).
    path = write(
        tmp_path / "d.csv",
        'response,contexts\nok,"[1] Paris is the capital."\nok,"[""a"", ""b"""\nok,"[""a""]"\n',
    )
    rows = load_rows(path)
    assert [row.sample.retrieved_contexts for row in rows] == [
        ["[1] Paris is the capital."],
        ['["a", "b"'],
        ["a"],
    ]
    assert [row.unreadable for row in rows] == [None, None, None]


def test_csv_contexts_list_of_non_strings_is_that_rows_problem(tmp_path: Path) -> None:
    rows = load_rows(write(tmp_path / "d.csv", 'response,contexts\nok,"[1, ""b""]"\nok,x\n'))
    assert rows[0].sample.retrieved_contexts is None
    assert rows[0].input == {"response": "ok", "retrieved_contexts": [1, "b"]}
    assert rows[1].input == rows[1].sample


def test_csv_row_with_too_many_cells(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as error:
        load_rows(write(tmp_path / "d.csv", "id,response\n1,Paris, France\n"))
    assert "line 2: 3 cells but the header has 2; quote cells" in one_line(error)


def test_json_must_be_a_list(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as error:
        load_rows(write(tmp_path / "d.json", '{"response": "x"}'))
    assert "expected a JSON list of objects, got an object" in one_line(error)


def test_jsonl_saved_as_json_gets_a_hint(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as error:
        load_rows(
            write(tmp_path / "d.json", '{"response": "a"}\n{"response": "b"}\n'),
            flags=LOADER_FLAGS,
        )
    assert "--format jsonl" in one_line(error)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("missing.jsonl", None, "no such file; check the path"),
        ("d.txt", "x", "use .jsonl, .json, .csv or .parquet, or pass --format"),
        ("empty.jsonl", "\n\n", "no samples found"),
        ("latin1.csv", b"response\ncaf\xe9\n", "not UTF-8 text"),
        (
            "dup.jsonl",
            '{"id": 1, "response": "a"}\n{"id": 1, "response": "b"}',
            "ids must be unique",
        ),
    ],
)
def test_unreadable_files(
    tmp_path: Path, name: str, content: str | bytes | None, expected: str
) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError) as error:
        load_rows(path, flags=LOADER_FLAGS)
    assert expected in one_line(error)


def test_missing_required_column_names_the_flag(tmp_path: Path) -> None:
    path = write(tmp_path / "d.csv", "id,question,model_answer\n1,Q?,A.\n")
    with pytest.raises(DatasetError) as error:
        load_rows(path, required=("response", "reference"), flags=LOADER_FLAGS)
    message = one_line(error)
    assert "no row has a response field (looked for response / answer / output" in message
    assert "--response-col NAME" in message
    assert "columns: id, question, model_answer" in message


def test_mapped_column_that_does_not_exist(tmp_path: Path) -> None:
    path = write(tmp_path / "d.csv", "id,answer\n1,A.\n")
    with pytest.raises(DatasetError) as error:
        load_rows(path, ColumnMapping(response="reply"), flags=LOADER_FLAGS)
    assert "no column 'reply' for --response-col (columns: id, answer)" in one_line(error)


def test_without_flags_the_messages_name_the_keywords(tmp_path: Path) -> None:
    # The loader knows no command's flags: a caller that passes none reads the keywords.
    path = write(tmp_path / "d.csv", "id,question,model_answer\n1,Q?,A.\n")
    with pytest.raises(DatasetError) as error:
        load_rows(path, required=("response",))
    assert "map it with ColumnMapping(response=NAME)" in one_line(error)
    with pytest.raises(DatasetError) as error:
        load_rows(path, ColumnMapping(response="reply"))
    assert "no column 'reply' for ColumnMapping(response=...)" in one_line(error)
    with pytest.raises(DatasetError) as error:
        load_rows(write(tmp_path / "d.txt", "x"))
    message = one_line(error)
    assert "or pass format=jsonl|json|csv|parquet" in message and "--" not in message


def test_one_row_missing_a_field_is_kept(tmp_path: Path) -> None:
    # The metric reports it as that sample's error; the rest of the file is still scored.
    path = write(tmp_path / "d.jsonl", '{"response": "a", "reference": "b"}\n{"response": "c"}\n')
    rows = load_rows(path, required=("response", "reference"))
    assert [row.sample.reference for row in rows] == ["b", None]


def test_bundled_demo_dataset_is_multilingual_and_complete() -> None:
    rows = load_rows(demo_path(), required=("user_input", "response", "reference"))
    assert {row.id.split("-")[0] for row in rows} == {"en", "ru", "zh"}
    for row in rows:
        sample = row.sample
        assert sample.user_input and sample.response and sample.reference
        assert sample.retrieved_contexts
