"""Where Sample fields are found: LangSmith defaults, row defaults, overrides, errors."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableLambda

from langchain_answer_metrics import InvalidSampleError, MissingFieldError, Sample, SampleMapping
from langchain_answer_metrics.mapping import as_contexts, as_text

ALL = ("user_input", "response", "reference", "retrieved_contexts")


def langsmith(
    inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **overrides: Any
) -> Sample:
    return SampleMapping.for_langsmith(**overrides).resolve(
        {"inputs": inputs, "outputs": outputs, "reference_outputs": reference_outputs}
    )


@pytest.mark.parametrize("key", ["output", "answer", "response"])
def test_response_default_keys(key: str) -> None:
    assert langsmith(outputs={key: "A.", "other": 1}).response == "A."


def test_response_key_order_and_single_value() -> None:
    assert langsmith(outputs={"response": "r", "answer": "a", "output": "o"}).response == "o"
    assert langsmith(outputs={"text": "only value"}).response == "only value"
    assert langsmith(outputs={"a": "1", "b": "2"}).response is None


@pytest.mark.parametrize("key", ["answer", "reference", "expected", "ground_truth"])
def test_reference_default_keys(key: str) -> None:
    assert langsmith(reference_outputs={key: "R."}).reference == "R."


def test_reference_has_no_single_value_fallback() -> None:
    # The issue lists keys only: an unknown single key must be mapped explicitly.
    assert langsmith(reference_outputs={"output": "R."}).reference is None
    assert langsmith(reference_outputs={"output": "R."}, reference="output").reference == "R."


@pytest.mark.parametrize("key", ["question", "input", "query", "user_input"])
def test_user_input_default_keys(key: str) -> None:
    assert langsmith(inputs={key: "Q?", "lang": "en"}).user_input == "Q?"


def test_user_input_single_value_and_messages() -> None:
    assert langsmith(inputs={"prompt": "Q?"}).user_input == "Q?"
    messages = [HumanMessage("hi"), HumanMessage("What is the capital?")]
    assert langsmith(inputs={"messages": messages}).user_input == "What is the capital?"


@pytest.mark.parametrize("key", ["contexts", "retrieved_contexts", "documents", "context"])
def test_contexts_default_keys(key: str) -> None:
    assert langsmith(outputs={"answer": "A", key: ["c1", "c2"]}).retrieved_contexts == [
        "c1",
        "c2",
    ]


def test_contexts_accept_documents_and_their_serialised_form() -> None:
    documents = [Document(page_content="one", metadata={"source": "x"}), "two"]
    assert langsmith(outputs={"documents": documents}).retrieved_contexts == ["one", "two"]
    serialised = [{"page_content": "one", "metadata": {}, "type": "Document"}]
    assert langsmith(outputs={"documents": serialised}).retrieved_contexts == ["one"]
    assert langsmith(outputs={"context": "a single string"}).retrieved_contexts == [
        "a single string"
    ]
    assert langsmith(outputs={"context": Document(page_content="d")}).retrieved_contexts == ["d"]


def test_text_values_are_coerced() -> None:
    assert as_text(1889) == "1889"
    assert as_text(AIMessage("final answer")) == "final answer"
    assert as_text([HumanMessage("q"), AIMessage("a")]) == "a"
    assert as_text(Document(page_content="doc")) == "doc"
    with pytest.raises(TypeError):
        as_text({"no": "text"})
    with pytest.raises(TypeError):
        as_contexts([1, 2])


def test_override_by_key_plain_qualified_and_nested() -> None:
    sample = langsmith(
        inputs={"topic": "towers"},
        outputs={"result": {"text": "A."}, "docs": ["c"]},
        reference_outputs={"gold": "R."},
        user_input="topic",
        response="result.text",
        retrieved_contexts="outputs.docs",
        reference="gold",
    )
    assert sample == Sample(
        user_input="towers", response="A.", reference="R.", retrieved_contexts=["c"]
    )
    # A key with a dot in it wins over the nested path.
    assert langsmith(outputs={"a.b": "flat", "a": {"b": "nested"}}, response="a.b").response == (
        "flat"
    )
    # Dotted paths index lists too.
    listed = {"documents": ["first", "second"], "turns": ["q", "a"]}
    assert langsmith(outputs=listed, response="turns.-1").response == "a"
    assert langsmith(outputs=listed, retrieved_contexts="documents.1").retrieved_contexts == [
        "second"
    ]
    with pytest.raises(MissingFieldError, match=r"key 'documents\.5' in outputs"):
        SampleMapping.for_langsmith(response="documents.5").resolve(
            {"outputs": listed}, required=("response",)
        )
    # A source-qualified key reaches any source: contexts stored on the example.
    sample = langsmith(
        reference_outputs={"contexts": ["gold context"]},
        retrieved_contexts="reference_outputs.contexts",
    )
    assert sample.retrieved_contexts == ["gold context"]


def test_override_by_callable() -> None:
    messages = {"messages": [HumanMessage("q"), AIMessage("the answer")]}
    # A parameter named after a source receives it ...
    assert langsmith(outputs=messages, response=lambda outputs: outputs["messages"][-1].content)
    # ... several sources can be asked for ...
    sample = langsmith(
        inputs={"q": "Q"},
        outputs={"a": "A"},
        reference=lambda inputs, outputs: f"{inputs['q']}->{outputs['a']}",
    )
    assert sample.reference == "Q->A"
    # ... and any other single parameter gets the field's default source.
    assert langsmith(outputs={"x": {"y": "deep"}}, response=lambda o: o["x"]["y"]).response == (
        "deep"
    )


def test_callables_can_read_extras() -> None:
    mapping = SampleMapping.for_langsmith(response=lambda run: run["answer"])
    sample = mapping.resolve(
        {"inputs": {}, "outputs": {}, "reference_outputs": {}}, extras={"run": {"answer": "A"}}
    )
    assert sample.response == "A"


def test_missing_required_field_lists_the_keys_seen() -> None:
    mapping = SampleMapping.for_langsmith()
    with pytest.raises(MissingFieldError) as caught:
        mapping.resolve(
            {
                "inputs": {"question": "Q"},
                "outputs": {"answer": "A", "docs": []},
                "reference_outputs": None,
            },
            required=("response", "retrieved_contexts"),
            metric="faithfulness",
        )
    error = caught.value
    assert isinstance(error, InvalidSampleError) and isinstance(error, ValueError)
    assert (error.metric, error.field) == ("faithfulness", "retrieved_contexts")
    assert error.seen == {
        "inputs": ["question"],
        "outputs": ["answer", "docs"],
        "reference_outputs": [],
    }
    message = str(error)
    assert message.startswith("faithfulness: field 'retrieved_contexts' was not found")
    assert "'contexts' or 'retrieved_contexts' or 'documents' or 'context' in outputs" in message
    assert "outputs: ['answer', 'docs']" in message
    assert "Pass retrieved_contexts=<key or callable>" in message


def test_missing_override_key_and_failing_callable_are_missing_fields() -> None:
    mapping = SampleMapping.for_langsmith(
        response="final", reference=lambda reference_outputs: reference_outputs["gold"]
    )
    sources = {"inputs": {}, "outputs": {"answer": "A"}, "reference_outputs": {}}
    with pytest.raises(MissingFieldError, match=r"key 'final' in outputs"):
        mapping.resolve(sources, required=("response",))
    with pytest.raises(MissingFieldError, match=r"the callable, which raised KeyError\('gold'\)"):
        mapping.resolve(sources, required=("reference",))
    # Not required: simply left empty.
    assert mapping.resolve(sources) == Sample()


def test_required_field_of_the_wrong_kind_or_none() -> None:
    mapping = SampleMapping.for_langsmith()
    with pytest.raises(InvalidSampleError, match="holds a dict, expected text"):
        mapping.resolve({"outputs": {"answer": {"nested": 1}}}, required=("response",))
    with pytest.raises(InvalidSampleError, match="its value is None"):
        mapping.resolve({"outputs": {"answer": None}}, required=("response",))
    # An optional field of an unusable kind never fails the row.
    sample = mapping.resolve(
        {"inputs": {"question": {"structured": True}}, "outputs": {"answer": "A"}},
        required=("response",),
    )
    assert sample == Sample(response="A")


def test_bad_overrides_are_rejected_up_front() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'answer'"):
        SampleMapping.for_langsmith(answer="x")
    with pytest.raises(ValueError, match="key name or a callable"):
        SampleMapping.for_langsmith(response=3)


def test_row_mapping_for_chains_and_dataset_files() -> None:
    rows = SampleMapping.for_rows()
    # In one flat row "answer" is the model's answer, never the reference.
    sample = rows.from_row(
        {"question": "Q", "answer": "A", "ground_truth": "R", "contexts": ["c"], "id": 7}
    )
    assert sample == Sample(user_input="Q", response="A", reference="R", retrieved_contexts=["c"])
    assert rows.from_row({"answer": "A"}).reference is None
    # A chain that returns a bare string or message gives the response.
    assert rows.from_row("just text") == Sample(response="just text")
    assert rows.from_row(AIMessage("msg")) == Sample(response="msg")
    # Column mapping, as a CLI would pass it.
    columns = SampleMapping.for_rows(response="model_output", reference="gold")
    assert columns.from_row({"model_output": "A", "gold": "R"}) == Sample(
        response="A", reference="R"
    )
    with pytest.raises(MissingFieldError, match=r"row: \['model_output'\]"):
        SampleMapping.for_rows(reference="gold").from_row(
            {"model_output": "A"}, required=("reference",), metric="factual_correctness"
        )


def test_as_runnable_maps_chain_output() -> None:
    chain = RunnableLambda(lambda q: {"question": q, "answer": "A", "documents": ["d"]})
    to_sample = SampleMapping.for_rows().as_runnable()
    assert (chain | to_sample).invoke("Q") == Sample(
        user_input="Q", response="A", retrieved_contexts=["d"]
    )
    assert to_sample.invoke(Sample(response="kept")) == Sample(response="kept")
    assert to_sample.name == "to_sample"


def test_all_fields_resolved_together() -> None:
    sample = SampleMapping.for_langsmith().resolve(
        {
            "inputs": {"question": "Q"},
            "outputs": {"answer": "A", "documents": [Document(page_content="c")]},
            "reference_outputs": {"ground_truth": "R"},
        },
        required=ALL,
    )
    assert sample == Sample(user_input="Q", response="A", reference="R", retrieved_contexts=["c"])
