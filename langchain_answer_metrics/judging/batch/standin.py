"""The stand-ins batch mode puts in place of an OpenAI chat model: the real model builds
each request and reads each reply; only the sending is a batch line.

:class:`BatchChatModel` wraps a real ``ChatOpenAI`` (or a subclass). Asked for a schema or
tools, it has the real model build the binding (:func:`~..structured_chain.swap_model`);
asked for a reply, it has the real model build the payload (``_get_request_payload``,
the same request body the live path sends: prompt, schema, structured-output options,
``n``, ``service_tier``), hands that body to :class:`~.lines.BatchLines`, and reads the
line's response body with the real model's ``_create_chat_result``. So the reply reaches
the package's tolerant reader (:mod:`~..reply_reading`) exactly as a live reply would.

:class:`BatchJudge` is the judge around it: its requests are sent on the async surface
only (a line waits minutes to hours: it must hold no thread and no place in the request
budget, and no request deadline applies; ``batch_wait`` bounds the wait instead).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult, LLMResult
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel, ConfigDict

from langchain_answer_metrics.judging.batch.lines import BatchLines, BatchRefusedError, Group
from langchain_answer_metrics.judging.judges import ChoicesCall, Embedder, Judge
from langchain_answer_metrics.judging.limits import DEFAULT_CLIENT_RETRIES
from langchain_answer_metrics.judging.scope import current_position
from langchain_answer_metrics.judging.structured_chain import structured_chat, swap_model

__all__ = [
    "BatchChatModel",
    "BatchEmbedder",
    "BatchJudge",
    "LineEmbeddingsClient",
    "is_openai_chat_model",
    "is_openai_embeddings",
    "request_body",
]

# Options of the openai client, not of the request body.
_CLIENT_OPTIONS = ("extra_headers", "extra_query", "timeout", "stream")


def is_openai_chat_model(model: Any) -> bool:
    """Whether ``model`` builds OpenAI chat-completions requests with an openai client
    (``ChatOpenAI``, ``AzureChatOpenAI`` and their subclasses, for any base URL)."""
    return (
        all(
            callable(getattr(model, name, None))
            for name in ("_get_request_payload", "_create_chat_result", "_use_responses_api")
        )
        and getattr(model, "root_client", None) is not None
    )


def request_body(
    real: Any, messages: list[BaseMessage], stop: list[str] | None, options: dict[str, Any]
) -> dict[str, Any]:
    """The chat-completions body ``real`` would send live for ``messages`` and ``options``.

    Raises:
        ValueError: the model would call the Responses API (not a chat completion), or
            the payload does not serialise as JSON.
    """
    payload = dict(real._get_request_payload(messages, stop=stop, **options))
    if real._use_responses_api(payload):
        raise ValueError(
            "batch mode sends chat completions; this model uses the Responses API "
            "(build it with use_responses_api=False)"
        )
    extra = payload.pop("extra_body", None) or {}
    for name in _CLIENT_OPTIONS:
        payload.pop(name, None)
    payload.update(extra)
    try:
        body: dict[str, Any] = json.loads(json.dumps(payload, ensure_ascii=False))
    except TypeError as error:
        raise ValueError(f"the request does not serialise as JSON: {error}") from None
    return body


class BatchChatModel(BaseChatModel):
    """A real OpenAI chat model whose requests go out as batch lines (see the module doc)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    real: Any
    group: Group
    lines: Any  # BatchLines (a plain class: not validated)
    max_attempts: int = DEFAULT_CLIENT_RETRIES + 1

    @property
    def _llm_type(self) -> str:
        return "answer-metrics-batch"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return dict(self.real._identifying_params)

    def _get_llm_string(self, stop: list[str] | None = None, **kwargs: Any) -> str:
        # The real model's identity: calls are shared, and cached, as the live run's.
        return str(self.real._get_llm_string(stop=stop, **kwargs))

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, Any]:
        return swap_model(self.real.bind_tools(tools, **kwargs), self.real, self)

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Runnable[Any, Any]:
        return swap_model(self.real.with_structured_output(schema, **kwargs), self.real, self)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise TypeError("a batch line is awaited: call the model with ainvoke / agenerate")

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        body = request_body(self.real, messages, stop, kwargs)
        if self.group.deployment:  # Azure: a batch line names its deployment
            body["model"] = self.group.deployment
        lines: BatchLines = self.lines
        position = current_position()
        sample = None if position == float("inf") else int(position)
        reply = await lines.submit(self.group, body, sample=sample, max_attempts=self.max_attempts)
        result: ChatResult = self.real._create_chat_result(reply)
        return result


class _AsyncOnly(Runnable[Any, Any]):
    """A request sent with ``ainvoke`` on either surface, holding no place and no thread."""

    def __init__(self, call: Any, name: str) -> None:
        self.call = call
        self.name = name

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        raise TypeError("a batch request is sent with ainvoke")

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await self.call(input, config)


class BatchJudge(Judge):
    """A judge whose model is a :class:`BatchChatModel` (see the module doc)."""

    def structured_request(self, schema: type[BaseModel]) -> Runnable[Any, dict[str, Any]]:
        request = self._requests.get(schema)
        if request is None:
            method = self.structured_method
            chain = structured_chat(
                self.model, schema, {} if method is None else {"method": method}
            )
            request = _AsyncOnly(lambda messages, config: chain.ainvoke(messages, config), "batch")
            self._requests[schema] = request
        return request

    def choices_request(self) -> Runnable[ChoicesCall, LLMResult]:
        request = self._requests.get("choices")
        if request is None:
            model = self.chat_model

            async def generate(call: ChoicesCall, config: RunnableConfig | None) -> LLMResult:
                callbacks = (config or {}).get("callbacks")
                return await model.agenerate([call[0]], callbacks=callbacks, **call[1])

            request = _AsyncOnly(generate, "batch-generate")
            self._requests["choices"] = request
        return request


# --------------------------------------------------------------------------- embeddings


def is_openai_embeddings(model: Any) -> bool:
    """Whether ``model`` sends OpenAI embeddings requests with an openai client
    (``OpenAIEmbeddings``, ``AzureOpenAIEmbeddings`` and their subclasses, any base URL):
    its async client creates embeddings, and its sync client's root has the Batch API."""
    root = getattr(getattr(model, "client", None), "_client", None)
    return (
        callable(getattr(getattr(model, "async_client", None), "create", None))
        and callable(getattr(getattr(root, "batches", None), "create", None))
        and hasattr(type(model), "_invocation_params")
    )


def _embedding_body(input: Any, params: dict[str, Any]) -> dict[str, Any]:
    """The body the openai client sends for ``embeddings.create(input=..., **params)``:
    its options left out, ``extra_body`` merged, and base64 vectors unless a format was
    asked for (the client's own default, decoded as it decodes them)."""
    options = {k: v for k, v in params.items() if k not in _CLIENT_OPTIONS and v is not None}
    extra = options.pop("extra_body", None) or {}
    body = {"model": options.pop("model", None), "input": input, **options, **extra}
    body.setdefault("encoding_format", "base64")
    return dict(json.loads(json.dumps(body, ensure_ascii=False)))


def _decoded(reply: dict[str, Any], asked_format: bool) -> dict[str, Any]:
    """The reply as the openai client gives it: base64 vectors decoded to floats (as the
    client does, float32), unless the caller asked for a format itself."""
    if asked_format:
        return reply
    data = []
    for item in reply.get("data") or []:
        vector = item.get("embedding")
        if isinstance(vector, str):
            item = {
                **item,
                "embedding": np.frombuffer(base64.b64decode(vector), "float32").tolist(),
            }
        data.append(item)
    return {**reply, "data": data}


class LineEmbeddingsClient:
    """Stands for an OpenAI embeddings model's async client (``async_client``): each
    ``create`` becomes a batch line; once the endpoint has refused embeddings batches
    (:class:`~.lines.BatchRefusedError`), it goes live through the model's own sync
    client in a worker thread (no async client bound to the package's loop)."""

    def __init__(self, real: Any, group: Group, lines: BatchLines, max_attempts: int) -> None:
        self.real = real
        self.group = group
        self.lines = lines
        self.max_attempts = max_attempts

    async def create(self, *, input: Any, **params: Any) -> dict[str, Any]:
        if self.group not in self.lines.refused:
            body = _embedding_body(input, params)
            if self.group.deployment:  # Azure: a batch line names its deployment
                body["model"] = self.group.deployment
            position = current_position()
            sample = None if position == float("inf") else int(position)
            try:
                reply = await self.lines.submit(
                    self.group, body, sample=sample, max_attempts=self.max_attempts
                )
                return _decoded(reply, "encoding_format" in params)
            except BatchRefusedError:
                pass  # the endpoint has no embeddings batches: live, as the user was told
        live = await asyncio.to_thread(self.real.client.create, input=input, **params)
        return dict(live.model_dump())


class BatchEmbedder(Embedder):
    """An embedder whose model sends its requests as batch lines: sent with
    ``aembed_documents`` on either surface, holding no place in the request budget and
    with no request deadline (a line waits minutes to hours; ``batch_wait`` bounds it)."""

    def request(self) -> Runnable[list[str], list[list[float]]]:
        if self._request is None:
            model = self.model
            self._request = _AsyncOnly(
                lambda texts, config: model.aembed_documents(texts), "batch-embed"
            )
        return self._request
