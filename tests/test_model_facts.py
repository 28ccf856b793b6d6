"""Reading a model's facts (its label, the model a wrapper calls, its tokenizer) costs no
exception per request, and reads exactly what ``getattr(model, name, None)`` reads.

A pydantic model (every LangChain model is one) answers a name it lacks from a Python-level
``__getattr__`` that raises an ``AttributeError``; the request path used to ask for absent
names about sixty times per sample (issue 32's client CPU). ``optional_attribute`` answers
those from where pydantic itself looks, and must never answer differently from
``getattr``: checked here on LangChain's own models and wrappers, on pydantic models with
private, extra and computed attributes, on a model answering names of its own, and on plain
objects.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest
from langchain.chat_models import init_chat_model
from langchain_core.embeddings import Embeddings
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from pydantic import BaseModel, ConfigDict, PrivateAttr

import langchain_answer_metrics
from langchain_answer_metrics import (
    AspectCritic,
    Embedder,
    FactualCorrectness,
    Judge,
    SemanticSimilarity,
    evaluate_dataset,
)
from langchain_answer_metrics.judging.model_facts import (
    model_label,
    optional_attribute,
    wrapped_model,
)
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

PACKAGE = str(Path(langchain_answer_metrics.__file__).parent)

NAMES = (
    "model_name",
    "model",
    "model_id",
    "deployment_name",
    "_default_config",
    "underlying_embeddings",
    "count_tokens",
    "structured_request",
    "bound",
    "label",
    "_secret",
    "note",
    "shown",
    "failing",
    "proxied_name",
    "no_such_name",
    "__dict__",
)


class WithPrivate(BaseModel):
    model: str = "private-model"
    _secret: str = PrivateAttr(default="kept")


class WithExtras(BaseModel):
    model_config = ConfigDict(extra="allow")


class WithProperties(BaseModel):
    @property
    def shown(self) -> str:
        return "shown"

    @property
    def failing(self) -> str:
        raise AttributeError("computed on demand, absent here")


class AnswersItsOwnNames(BaseModel):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("proxied"):
            return f"answered {name}"
        return super().__getattr__(name)  # type: ignore[misc]


class PlainWrapper(Embeddings):
    """An embeddings wrapper that is not a pydantic model (like CacheBackedEmbeddings)."""

    def __init__(self, underlying_embeddings: Embeddings) -> None:
        self.underlying_embeddings = underlying_embeddings

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.underlying_embeddings.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.underlying_embeddings.embed_query(text)


class PydanticWrapper(BaseModel, Embeddings):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    underlying_embeddings: Any

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.underlying_embeddings.embed_documents(texts)  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self.underlying_embeddings.embed_query(text)  # type: ignore[no-any-return]


def objects() -> Iterator[Any]:
    chat = ChatOpenAI(model="judge-a", api_key="sk-facts", base_url="http://127.0.0.1:9/v1")
    embeddings = OpenAIEmbeddings(
        model="embed-a", api_key="sk-facts", base_url="http://127.0.0.1:9/v1"
    )  # type: ignore[call-arg]
    yield chat
    yield embeddings
    yield chat.with_retry()
    yield chat.bind(temperature=0)
    yield chat.with_fallbacks([chat])
    yield init_chat_model(
        "judge-a",
        model_provider="openai",
        configurable_fields=("model",),
        api_key="sk-facts",
        base_url="http://127.0.0.1:9/v1",
    )
    yield Judge(model=chat, label="judge-x")
    yield Embedder(model=embeddings)
    yield PlainWrapper(embeddings)
    yield PydanticWrapper(underlying_embeddings=embeddings)
    yield WithPrivate()
    extras = WithExtras(note="an extra", model="extra-model")  # type: ignore[call-arg]
    yield extras
    yield WithProperties()
    yield AnswersItsOwnNames()
    yield object()
    yield None


@pytest.mark.parametrize("value", list(objects()), ids=lambda value: type(value).__name__)
def test_optional_attribute_reads_what_getattr_reads(value: Any) -> None:
    for name in NAMES:
        expected = getattr(value, name, None)
        found = optional_attribute(value, name)
        assert found == expected or (found is expected), (type(value).__name__, name)
        assert type(found) is type(expected), (type(value).__name__, name)


@pytest.mark.parametrize("wrapper", [PlainWrapper, PydanticWrapper])
def test_an_embeddings_wrapper_is_looked_through(wrapper: type[Any]) -> None:
    embeddings = OpenAIEmbeddings(
        model="embed-a", api_key="sk-facts", base_url="http://127.0.0.1:9/v1"
    )  # type: ignore[call-arg]
    wrapped = (
        wrapper(embeddings)
        if wrapper is PlainWrapper
        else wrapper(underlying_embeddings=embeddings)
    )

    assert wrapped_model(wrapped) is embeddings
    assert model_label(wrapped) == "embed-a"
    assert Embedder(model=wrapped).label == "embed-a"


@pytest.fixture
def misses_from_the_package(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every absent name the package asks a pydantic model for, as (class, name)."""
    import sys

    misses: list[tuple[str, str]] = []
    original = pydantic.BaseModel.__getattr__  # type: ignore[attr-defined]

    @functools.wraps(original)
    def counting(self: BaseModel, name: str) -> Any:
        try:
            return original(self, name)
        except AttributeError:
            caller = sys._getframe(1).f_code.co_filename
            if caller.startswith(PACKAGE):
                misses.append((type(self).__name__, name))
            raise

    monkeypatch.setattr(pydantic.BaseModel, "__getattr__", counting)
    return misses


def test_scoring_asks_no_model_for_a_name_it_lacks(
    server: LocalOpenAIServer, misses_from_the_package: list[tuple[str, str]]
) -> None:
    chat = ChatOpenAI(model="judge-a", api_key="sk-facts", base_url=server.base_url)
    embeddings = OpenAIEmbeddings(
        model="embed-a",
        api_key="sk-facts",
        base_url=server.base_url,
        check_embedding_ctx_length=False,
    )  # type: ignore[call-arg]
    metrics = [
        FactualCorrectness(llm=chat),
        SemanticSimilarity(embeddings=embeddings),
        AspectCritic(llm=chat, name="dated", criterion="Does it give a date?", strictness=3),
    ]
    samples = [
        {
            "user_input": f"When was town {index} founded?",
            "response": f"Town {index} was founded in {1800 + index}.",
            "reference": f"Town {index} was founded in {1800 + index} by settlers.",
        }
        for index in range(6)
    ]
    evaluate_dataset(samples[:2], metrics)  # the run's one-off checks (spend, endpoints)
    misses_from_the_package.clear()

    rows = evaluate_dataset(samples[2:], metrics)

    assert all(not row.errors for row in rows), [row.errors for row in rows]
    assert server.chat_requests > 0
    assert misses_from_the_package == []
