"""The one mechanism for asking a judge model for structured output.

It binds the schema with ``with_structured_output``, reads a reply LangChain's parser
could not (:mod:`.reply_reading`: fences, prose, reasoning blocks, JSON content instead
of a forced tool call, invalid tool-call arguments), re-asks a bounded number of times
when the reply is still unusable or fails a check, records token usage, and shares
identical calls made within one run (see :class:`~langchain_answer_metrics.judging.scope.RunScope`).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.output_parsers.openai_tools import PydanticToolsParser
from langchain_core.runnables import RunnableConfig, RunnableWithFallbacks
from langchain_core.runnables.base import RunnableBindingBase
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.judging import judge_health
from langchain_answer_metrics.judging.errors import unusable_reply
from langchain_answer_metrics.judging.judges import Judge, model_label
from langchain_answer_metrics.judging.ledger import record, usage_of
from langchain_answer_metrics.judging.prompts import JSON_MODE_INSTRUCTIONS, REASK, tag
from langchain_answer_metrics.judging.reply_reading import (
    JudgedInput,
    excerpt,
    judged_input,
    read_reply,
)
from langchain_answer_metrics.judging.scope import shared_call

SchemaT = TypeVar("SchemaT", bound=BaseModel)
ParsedT = TypeVar("ParsedT")


@dataclass
class StructuredReply(Generic[ParsedT]):
    parsed: ParsedT
    usage: TokenUsage


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
_MALFORMED = (ValidationError, OutputParserException, json.JSONDecodeError)


@dataclass
class _Replies(Generic[SchemaT]):
    """What one request brought back: its parsed replies, a problem per unusable one."""

    parsed: list[SchemaT]
    problems: list[str]
    usage: TokenUsage
    excerpt: str = ""  # the start of the last unusable reply, redacted


# Sends one request for ``wanted`` replies to ``messages``.
Send = Callable[[list[BaseMessage], int], Awaitable[_Replies[SchemaT]]]


async def _ask_with_reasks(
    judge: Judge,
    schema: type[SchemaT],
    messages: list[BaseMessage],
    n: int,
    send: Send[SchemaT],
    check: Check[SchemaT] | None = None,
) -> StructuredReply[list[SchemaT]]:
    """Ask until ``n`` usable replies came back, with at most ``judge.max_reasks`` re-asks.

    An unusable reply (malformed, or failing ``check``) is asked for again, the model told
    the last problem. Fewer replies than asked, all usable (many gateways ignore ``n``),
    are followed by a request for the rest: not a re-ask, and each round adds a reply.
    """
    usage = TokenUsage()
    usable: list[SchemaT] = []
    attempt_messages = messages
    problem = ""
    last_reply = ""
    attempts = 0
    reasks_left = judge.max_reasks
    while True:
        attempts += 1
        try:
            replies = await send(attempt_messages, n - len(usable))
        except _MALFORMED as error:
            replies = _replies_in_error(error, schema, judged_input(messages))
        usage = usage.add(replies.usage)
        record(replies.usage)  # paid for, even if this ask ends in an error
        problems = list(replies.problems)
        last_reply = replies.excerpt or last_reply
        for parsed in replies.parsed:
            failed_check = check(parsed) if check else None
            if failed_check:
                problems.append(failed_check)
                last_reply = excerpt(parsed.model_dump_json())
            else:
                usable.append(parsed)
        if len(usable) >= n:
            judge_health.answered(judge.label)
            return StructuredReply(parsed=usable[:n], usage=usage)
        if replies.parsed and not problems:
            continue
        problem = problems[-1] if problems else "the reply had no choices."
        if reasks_left == 0:
            break
        reasks_left -= 1
        # The problem may quote the judge's own output: only inside a tag, escaped.
        reask = REASK.format(problem=tag("problem", problem))
        attempt_messages = [*messages, HumanMessage(reask)]
    gave = "no" if not usable and n == 1 else f"{len(usable)} of {n}"
    unusable = unusable_reply(
        judge.label,
        f"{gave} usable {schema.__name__}",
        attempts,
        problem,
        last_reply,
        judge.structured_method,
    )
    judge_health.refused(judge.label, str(unusable))
    raise unusable


def _replies_in_error(
    error: Exception, schema: type[SchemaT], judged: JudgedInput
) -> _Replies[SchemaT]:
    """A reply the model call itself rejected, read from the error where it is quoted.

    Some calls parse the reply inside the model (the openai client, given ``json_schema``
    as a Pydantic class, as for a model ``init_chat_model`` builds per call) and raise on
    anything but bare JSON, losing the message and its token usage; Pydantic's error
    quotes the text, which is read like any reply.
    """
    usage = TokenUsage(requests=1)  # sent and paid for; its tokens are not known
    quoted = [
        item["input"]
        for item in (error.errors() if isinstance(error, ValidationError) else [])
        if item.get("type") == "json_invalid" and isinstance(item.get("input"), str)
    ]
    if not quoted:
        failed = f"it did not match the schema ({type(error).__name__}: {error})."
        return _Replies(parsed=[], problems=[failed], usage=usage)
    reading = read_reply(AIMessage(content=quoted[0]), schema, judged=judged)
    if reading.parsed is not None:
        return _Replies(parsed=[reading.parsed], problems=[], usage=usage)
    return _Replies(parsed=[], problems=[reading.problem], usage=usage, excerpt=reading.excerpt)


async def _shared_reply(
    key: str, compute: Callable[[], Awaitable[StructuredReply[ParsedT]]]
) -> StructuredReply[ParsedT]:
    """The reply for ``key``, sent once per scope; a sharer's usage is zero (nothing spent)."""
    reply, sent_here = await shared_call(key, compute)
    if sent_here:
        return reply
    return StructuredReply(parsed=reply.parsed, usage=TokenUsage())


def _structured_send(
    judge: Judge, schema: type[SchemaT], config: RunnableConfig | None
) -> Send[SchemaT]:
    """One reply per request, through the model's ``with_structured_output``."""
    request = judge.structured_request(schema)
    forced_tool = judge.structured_method == "function_calling"
    judged: JudgedInput | None = None

    async def send(messages: list[BaseMessage], wanted: int) -> _Replies[SchemaT]:
        nonlocal judged
        reply = await request.ainvoke(messages, config)
        raw = reply.get("raw")
        usage = usage_of(raw)
        parsed = reply.get("parsed")
        if isinstance(parsed, schema) and (raw is None or getattr(raw, "tool_calls", None)):
            return _Replies(parsed=[parsed], problems=[], usage=usage)
        # A verdict is taken from a tool call as LangChain parsed it; from the message's
        # text only as we read it: LangChain's json-mode parser takes the first fenced
        # block it finds, which may be the judged response repeated by the judge.
        # LangChain's parser may also have found nothing (a tool call absent or
        # malformed, JSON wrapped in prose, fences or reasoning), or a dict.
        judged = judged if judged is not None else judged_input(messages)
        reading = read_reply(raw, schema, tool=forced_tool, judged=judged)
        if reading.parsed is not None:
            return _Replies(parsed=[reading.parsed], problems=[], usage=usage)
        return _Replies(parsed=[], problems=[reading.problem], usage=usage, excerpt=reading.excerpt)

    return send


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

    messages = with_schema_for_json_mode(judge, schema, messages)

    async def ask() -> StructuredReply[SchemaT]:
        send = _structured_send(judge, schema, config)
        reply = await _ask_with_reasks(judge, schema, messages, 1, send, check)
        return StructuredReply(parsed=reply.parsed[0], usage=reply.usage)

    return await _shared_reply(call_key(judge, schema, messages), ask)


def with_schema_for_json_mode(
    judge: Judge, schema: type[BaseModel], messages: list[BaseMessage]
) -> list[BaseMessage]:
    """In ``json_mode`` the request carries no schema: say it, and "JSON", in the prompt.

    Appended to the first system message (else added as one), so it stays out of the
    data and ahead of any example.
    """
    if judge.structured_method != "json_mode":
        return messages
    schema_json = json.dumps(_tool_for(schema)["function"]["parameters"], ensure_ascii=False)
    instructions = JSON_MODE_INSTRUCTIONS.format(schema=schema_json)
    for position, message in enumerate(messages):
        if isinstance(message, SystemMessage) and isinstance(message.content, str):
            updated = message.model_copy(update={"content": f"{message.content}\n\n{instructions}"})
            return [*messages[:position], updated, *messages[position + 1 :]]
    return [SystemMessage(instructions), *messages]


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
        "stream": False,  # parsed whole; see structured_chain.RawAndParsed
    }


def _choices_send(
    judge: Judge, schema: type[SchemaT], config: RunnableConfig | None
) -> Send[SchemaT]:
    """Several replies per request (OpenAI's ``n``), through tool calling."""
    request = judge.choices_request()
    parser = PydanticToolsParser(tools=[schema], first_tool_only=True)
    options = _tool_call_kwargs(schema)

    judged: JudgedInput | None = None

    async def send(messages: list[BaseMessage], wanted: int) -> _Replies[SchemaT]:
        nonlocal judged
        judged = judged if judged is not None else judged_input(messages)
        result = await request.ainvoke((messages, {**options, "n": wanted}), config)
        generations = result.generations[0][:wanted]
        # One request: its usage is on each choice's message, so counted once.
        usage = (
            usage_of(getattr(generations[0], "message", None))
            if generations
            else TokenUsage(requests=1)
        )
        replies: _Replies[SchemaT] = _Replies(parsed=[], problems=[], usage=usage)
        for generation in generations:
            try:
                parsed = parser.parse_result([generation])
            except _MALFORMED:
                parsed = None
            if parsed is None:  # read the message ourselves, as for one reply
                message = getattr(generation, "message", None)
                reading = read_reply(message, schema, tool=True, judged=judged)
                parsed = reading.parsed
                if parsed is None:
                    replies.problems.append(reading.problem)
                    replies.excerpt = reading.excerpt
                    continue
            replies.parsed.append(parsed)
        return replies

    return send


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
        lambda: _ask_with_reasks(judge, schema, messages, n, _choices_send(judge, schema, config)),
    )
