"""The one mechanism for asking a judge model for structured output.

It binds the schema with ``with_structured_output``, re-asks a bounded number of times
when the reply is malformed or fails a check, records token usage, and shares identical
calls made within one run (see :class:`~langchain_answer_metrics.judging.scope.RunScope`).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.output_parsers.openai_tools import PydanticToolsParser
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableConfig, RunnableLambda, RunnableWithFallbacks
from langchain_core.runnables.base import RunnableBindingBase
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

from langchain_answer_metrics.judging.errors import StructuredOutputError
from langchain_answer_metrics.judging.judges import Judge, model_label
from langchain_answer_metrics.judging.prompts import REASK
from langchain_answer_metrics.judging.scope import request_slot, shared_call
from langchain_answer_metrics.judging.sync import call_model
from langchain_answer_metrics.result import TokenUsage

# isort: off
# metrics/base.py still imports these from here (not this module's job: they live in
# judging.scope). Drop this once its import line names judging.scope.
from langchain_answer_metrics.judging.scope import (
    RunScope as RunScope,
    current_scope as current_scope,
    run_scope as run_scope,
)
# isort: on

SchemaT = TypeVar("SchemaT", bound=BaseModel)
ParsedT = TypeVar("ParsedT")


@dataclass
class StructuredReply(Generic[ParsedT]):
    parsed: ParsedT
    usage: TokenUsage


def usage_of(message: Any) -> TokenUsage:
    """One reply's usage: a request and its tokens, or a cache hit that cost nothing."""
    metadata = getattr(message, "usage_metadata", None) or {}
    if served_from_cache(metadata):
        return TokenUsage(cached=1)
    return TokenUsage(
        input_tokens=int(metadata.get("input_tokens", 0) or 0),
        output_tokens=int(metadata.get("output_tokens", 0) or 0),
        total_tokens=int(metadata.get("total_tokens", 0) or 0),
        requests=1,
    )


def served_from_cache(usage_metadata: Any) -> bool:
    """Whether LangChain served this reply from its LLM cache.

    A cached reply keeps the usage it had when it was sent; LangChain marks a cache hit by
    setting ``total_cost`` to 0 in it (``BaseChatModel._convert_cached_generations``),
    which a provider's own reply does not carry. tests/test_cache.py pins this.
    """
    return isinstance(usage_metadata, dict) and usage_metadata.get("total_cost") == 0


def _model_identity(model: Any) -> Any:
    """What decides a model's replies: its parameters, and a wrapper's bindings and fallbacks."""
    if isinstance(model, RunnableWithFallbacks):
        return ["fallbacks", *(_model_identity(m) for m in [model.runnable, *model.fallbacks])]
    if isinstance(model, RunnableBindingBase):
        return ["bound", model.kwargs, _model_identity(model.bound)]
    try:
        return model._get_llm_string()
    except Exception:  # a model whose params do not serialise is named by class and label
        return f"{type(model).__qualname__}:{model_label(model)}"


def call_key(judge: Judge, schema: type[BaseModel], messages: Sequence[BaseMessage]) -> str:
    """Identity of a structured call: model and parameters, method, schema and prompt.

    A digest of those, so that the thousands of calls a run remembers cost bytes each,
    not the length of their prompts.
    """
    digest = hashlib.blake2b(digest_size=20)
    parts: list[Any] = [
        _model_identity(judge.model),
        judge.structured_method or "",
        f"{schema.__module__}.{schema.__qualname__}",
    ]
    for message in messages:
        parts += [message.type, message.content]
    for part in parts:
        text = part if isinstance(part, str) else json.dumps(part, ensure_ascii=False, default=str)
        data = text.encode("utf-8", "surrogatepass")
        # Length-prefixed, so no two different sequences of parts hash the same bytes.
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


Check = Callable[[SchemaT], "str | None"]


async def _ask_with_reasks(
    judge: Judge,
    schema: type[SchemaT],
    messages: list[BaseMessage],
    check: Check[SchemaT] | None,
    config: RunnableConfig | None,
) -> StructuredReply[SchemaT]:
    runnable = judge.structured_runnable(schema)
    usage = TokenUsage()
    attempt_messages = messages
    problem = ""
    for _ in range(judge.max_reasks + 1):
        parsed: Any = None
        try:
            async with request_slot():
                reply = await call_model(
                    functools.partial(runnable.invoke, attempt_messages, config),
                    functools.partial(runnable.ainvoke, attempt_messages, config),
                )
        except (ValidationError, OutputParserException, json.JSONDecodeError) as error:
            # json_schema mode raises inside the model call on malformed output.
            problem = f"it did not match the schema ({type(error).__name__}: {error})."
            usage = usage.add(TokenUsage(requests=1))
        else:
            raw: AIMessage | None = reply.get("raw")
            usage = usage.add(usage_of(raw))
            parsed = reply.get("parsed")
            parsing_error = reply.get("parsing_error")
            if parsed is None:
                # function_calling returns None when the tool call is malformed or absent.
                detail = f" ({parsing_error})" if parsing_error else ""
                problem = f"no valid {schema.__name__} tool call or JSON was found{detail}."
            else:
                problem = (check(parsed) if check else None) or ""
                if not problem:
                    return StructuredReply(parsed=parsed, usage=usage)
        attempt_messages = [*messages, HumanMessage(REASK.format(problem=problem))]
    raise StructuredOutputError(
        f"{judge.label} gave no usable {schema.__name__} after "
        f"{judge.max_reasks + 1} attempts; last problem: {problem}"
    )


async def _shared_reply(
    key: str, compute: Callable[[], Awaitable[StructuredReply[ParsedT]]]
) -> StructuredReply[ParsedT]:
    """The reply for ``key``, sent once per scope; a sharer's usage is zero (nothing spent)."""
    reply, sent_here = await shared_call(key, compute)
    if sent_here:
        return reply
    return StructuredReply(parsed=reply.parsed, usage=TokenUsage())


async def ask_structured(
    judge: Judge,
    *,
    schema: type[SchemaT],
    messages: list[BaseMessage],
    check: Check[SchemaT] | None = None,
    config: RunnableConfig | None = None,
) -> StructuredReply[SchemaT]:
    """Ask ``judge`` for a ``schema`` object, re-asking on malformed or failed-check replies.

    ``check`` returns a problem description (sent back to the model) or None when the
    reply is acceptable. Identical calls within a :func:`run_scope` are sent once; a
    shared reply reports zero requests in its usage, since nothing more was spent.
    """
    return await _shared_reply(
        call_key(judge, schema, messages),
        lambda: _ask_with_reasks(judge, schema, messages, check, config),
    )


@functools.lru_cache(maxsize=64)
def _tool_for(schema: type[BaseModel]) -> dict[str, Any]:
    # Converting a schema to a tool definition takes ~0.5 ms: once per schema, not per call.
    return convert_to_openai_tool(schema)


def _tool_call_kwargs(schema: type[BaseModel]) -> dict[str, Any]:
    tool = _tool_for(schema)
    name = tool["function"]["name"]
    return {
        "tools": [tool],
        "tool_choice": {"type": "function", "function": {"name": name}},
        "parallel_tool_calls": False,
        "stream": False,  # parsed whole; see judges.RawAndParsed
    }


async def _ask_choices_with_reasks(
    judge: Judge,
    schema: type[SchemaT],
    messages: list[BaseMessage],
    n: int,
    config: RunnableConfig | None,
) -> StructuredReply[list[SchemaT]]:
    parser = PydanticToolsParser(tools=[schema], first_tool_only=True)
    request_kwargs = _tool_call_kwargs(schema)
    callbacks = (config or {}).get("callbacks")
    usage = TokenUsage()
    choices: list[SchemaT] = []
    attempt_messages = messages
    problem = ""

    model = judge.chat_model

    async def request(wanted: int) -> LLMResult:
        sent = [attempt_messages]
        async with request_slot():
            return await call_model(
                lambda: model.generate(sent, callbacks=callbacks, n=wanted, **request_kwargs),
                lambda: model.agenerate(sent, callbacks=callbacks, n=wanted, **request_kwargs),
            )

    send: Callable[[int], Awaitable[LLMResult]] = request
    if judge.retry is not None:
        send = judge.retry.wrap(RunnableLambda(request)).ainvoke
    requests = 0
    reasks_left = judge.max_reasks
    while True:
        wanted = n - len(choices)
        result = await send(wanted)
        requests += 1
        generations = result.generations[0][:wanted]
        if generations:
            usage = usage.add(usage_of(getattr(generations[0], "message", None)))
        failed = 0
        for generation in generations:
            try:
                parsed = parser.parse_result([generation])
            except (ValidationError, OutputParserException, json.JSONDecodeError) as error:
                problem = f"a reply did not match the schema ({type(error).__name__})."
                failed += 1
                continue
            if parsed is None:
                problem = f"a reply had no valid {schema.__name__} tool call."
                failed += 1
                continue
            choices.append(parsed)
        if len(choices) >= n:
            return StructuredReply(parsed=choices[:n], usage=usage)
        if generations and not failed:
            # Fewer choices than asked, all valid: many gateways ignore `n`. Ask for the
            # rest; that is not a re-ask, and each round adds a choice, so it ends.
            continue
        if not generations:
            problem = "the reply had no choices."
        if reasks_left == 0:
            break
        reasks_left -= 1
        attempt_messages = [*messages, HumanMessage(REASK.format(problem=problem))]
    raise StructuredOutputError(
        f"{judge.label} gave {len(choices)} usable {schema.__name__} of {n} after "
        f"{requests} requests; last problem: {problem}"
    )


async def ask_structured_choices(
    judge: Judge,
    *,
    schema: type[SchemaT],
    messages: list[BaseMessage],
    n: int,
    config: RunnableConfig | None = None,
) -> StructuredReply[list[SchemaT]]:
    """``n`` independent replies in one request, for models that sample ``n`` choices.

    Uses tool calling; choices that fail to parse are asked for again (bounded).
    """
    return await _shared_reply(
        call_key(judge, schema, messages) + f"|n={n}",
        lambda: _ask_choices_with_reasks(judge, schema, messages, n, config),
    )
