"""Scripted models for tests, notebooks and demos: no network, deterministic replies.

:class:`ScriptedChatModel` runs LangChain's real structured-output path: its
``bind_tools`` works, and each reply is a tool call decided from the prompt content
(never from call order, so replies are stable under batching)::

    def reply(schema: str, messages: list[BaseMessage]) -> dict:
        if schema == "ClaimList":
            return {"claims": prompt_section(messages, "text").split(". ")}
        ...

    judge = ScriptedChatModel(responder=reply, model="judge-a")
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

from langchain_answer_metrics.judging.prompts import DATA_TAGS, unescape_data

Reply = dict[str, Any] | str | BaseException
Responder = Callable[[str, list[BaseMessage]], Reply]


def prompt_section(messages: Sequence[BaseMessage], name: str) -> str:
    """The text inside ``<name>…</name>`` of the last message holding it, unescaped."""
    assert name in DATA_TAGS, name
    content = str(messages[-1].content)
    for message in reversed(messages):
        if f"<{name}>" in str(message.content):
            content = str(message.content)
            break
    start = content.find(f"<{name}>")
    end = content.rfind(f"</{name}>")
    if start < 0 or end < 0:
        return ""
    return unescape_data(content[start + len(name) + 2 : end].strip("\n"))


def numbered_claims(messages: Sequence[BaseMessage]) -> list[str]:
    """The claims of a verify_claims prompt, in order."""
    lines = prompt_section(messages, "claims").splitlines()
    return [line.split(". ", 1)[1] if ". " in line else line for line in lines if line.strip()]


class InFlight:
    """Requests in flight now, and the most there ever were at once (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = 0
        self.peak = 0

    @contextlib.contextmanager
    def request(self) -> Iterator[None]:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            yield
        finally:
            with self._lock:
                self.now -= 1


class ScriptedChatModel(BaseChatModel):
    """A chat model whose tool-call replies come from ``responder(schema_name, messages)``.

    A reply is the tool arguments (dict), raw text that is not valid JSON (str, to
    simulate malformed output), or an exception to raise. ``latency`` makes each
    request wait (sync and async), so concurrency can be observed in ``max_in_flight``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    responder: Responder
    model: str = "scripted-judge"
    temperature: float | None = None
    latency: float = 0.0
    tokens_per_reply: int = Field(default=10, ge=0)

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _calls: list[tuple[str, list[BaseMessage]]] = PrivateAttr(default_factory=list)
    _in_flight: InFlight = PrivateAttr(default_factory=lambda: InFlight())
    _ids: Any = PrivateAttr(default_factory=itertools.count)

    @property
    def _llm_type(self) -> str:
        return "scripted-chat"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": self.model, "temperature": self.temperature}

    @property
    def calls(self) -> list[tuple[str, list[BaseMessage]]]:
        """Every request received: (schema name, messages)."""
        return list(self._calls)

    @property
    def max_in_flight(self) -> int:
        return self._in_flight.peak

    def calls_for(self, schema: str) -> int:
        return sum(name == schema for name, _ in self._calls)

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    def _reply(self, messages: list[BaseMessage], **kwargs: Any) -> ChatResult:
        tools = kwargs.get("tools") or []
        schema = tools[0]["function"]["name"] if tools else ""
        with self._lock:
            self._calls.append((schema, messages))
            call_id = next(self._ids)
        reply = self.responder(schema, messages)
        if isinstance(reply, BaseException):
            raise reply
        prompt_tokens = sum(len(str(message.content)) for message in messages) // 4
        usage: UsageMetadata = {
            "input_tokens": prompt_tokens,
            "output_tokens": self.tokens_per_reply,
            "total_tokens": prompt_tokens + self.tokens_per_reply,
        }
        if isinstance(reply, str):
            message = AIMessage(
                content="",
                invalid_tool_calls=[
                    {
                        "name": schema,
                        "args": reply,
                        "id": f"call_{call_id}",
                        "error": "malformed JSON",
                        "type": "invalid_tool_call",
                    }
                ],
                usage_metadata=usage,
            )
        else:
            message = AIMessage(
                content="",
                tool_calls=[{"name": schema, "args": reply, "id": f"call_{call_id}"}],
                usage_metadata=usage,
            )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._in_flight.request():
            if self.latency:
                time.sleep(self.latency)
            return self._reply(messages, **kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._in_flight.request():
            if self.latency:
                await asyncio.sleep(self.latency)
            return self._reply(messages, **kwargs)


def hashed_vector(text: str, size: int = 16) -> list[float]:
    """A stable pseudo-random unit vector for ``text``."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vector = np.random.default_rng(seed).normal(size=size)
    return list(vector / np.linalg.norm(vector))


class ScriptedEmbeddings(Embeddings):
    """Embeddings with chosen vectors per text (``vectors``), else a stable hashed vector.

    Records every request in ``requests`` and the peak concurrency in ``max_in_flight``.
    """

    def __init__(
        self,
        vectors: dict[str, Sequence[float]] | None = None,
        *,
        size: int = 16,
        model: str = "scripted-embeddings",
        latency: float = 0.0,
        fail_with: BaseException | None = None,
    ) -> None:
        self.vectors = dict(vectors or {})
        self.size = size
        self.model = model
        self.latency = latency
        self.fail_with = fail_with
        self.requests: list[list[str]] = []
        self._in_flight = InFlight()
        self._lock = threading.Lock()

    @property
    def max_in_flight(self) -> int:
        return self._in_flight.peak

    def _vector(self, text: str) -> list[float]:
        if text in self.vectors:
            return [float(value) for value in self.vectors[text]]
        return hashed_vector(text, self.size)

    def _answer(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            self.requests.append(list(texts))
        if self.fail_with is not None:
            raise self.fail_with
        return [self._vector(text) for text in texts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._in_flight.request():
            if self.latency:
                time.sleep(self.latency)
            return self._answer(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._in_flight.request():
            if self.latency:
                await asyncio.sleep(self.latency)
            return self._answer(texts)
