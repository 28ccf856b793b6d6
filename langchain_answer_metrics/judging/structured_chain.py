"""A chat model asked for a schema, as one runnable: ``{raw, parsed, parsing_error}``.

What ``with_structured_output(schema, include_raw=True)`` returns, built through wrappers
(fallbacks, bindings) and, for a plain chat model, without the runnables that wrapper
adds around every call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel, BaseLanguageModel
from langchain_core.messages import BaseMessage
from langchain_core.output_parsers import BaseOutputParser
from langchain_core.outputs import ChatGeneration
from langchain_core.runnables import (
    Runnable,
    RunnableBinding,
    RunnableConfig,
    RunnableSequence,
    RunnableWithFallbacks,
)
from langchain_core.runnables.base import RunnableBindingBase
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel


class RawAndParsed(Runnable[Any, dict[str, Any]]):
    """The bound model, then its parser, called directly: ``{raw, parsed, parsing_error}``.

    This is what ``with_structured_output(include_raw=True)`` returns, without the five
    runnables that wrapper adds around every call (three of them run in a thread pool):
    the model call stays a child run of the step, at a fraction of the CPU.
    """

    def __init__(self, model: Runnable[Any, Any], parser: Sequence[Runnable[Any, Any]]) -> None:
        self.model = model
        self.parser = list(parser)

    @classmethod
    def split(cls, structured: Runnable[Any, Any]) -> RawAndParsed | None:
        """From ``model.with_structured_output(schema)``: the bound model and parser steps."""
        if not isinstance(structured, RunnableSequence):
            return None
        first = structured.first
        model = first.bound if isinstance(first, RunnableBinding) else first
        if not isinstance(model, BaseLanguageModel):
            return None  # not the usual "bound model | parser" chain: keep include_raw
        parser = structured.steps[1:]
        if isinstance(first, RunnableBinding):
            first = _schema_converted_once(first)
            as_dict = _response_format_as_dict(first)
            if as_dict is not None:
                # Nothing parses it here: the caller reads the reply (reply_reading).
                first, parser = as_dict, []
        # A structured reply is parsed whole, and some OpenAI-compatible servers reject
        # stream=true, which LangChain would otherwise send under astream_events.
        return cls(first.bind(stream=False), parser)

    def _parse(self, raw: Any) -> dict[str, Any]:
        if not self.parser:
            return {"raw": raw, "parsed": None, "parsing_error": None}
        try:
            value = raw
            for step in self.parser:
                if isinstance(step, BaseOutputParser) and isinstance(value, BaseMessage):
                    value = step.parse_result([ChatGeneration(message=value)])
                else:
                    value = step.invoke(value)
        except Exception as error:  # as include_raw=True: a parse failure is reported
            return {"raw": raw, "parsed": None, "parsing_error": error}
        return {"raw": raw, "parsed": value, "parsing_error": None}

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return self._parse(self.model.invoke(input, config, **kwargs))

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return self._parse(await self.model.ainvoke(input, config, **kwargs))


def _schema_converted_once(bound: RunnableBinding[Any, Any]) -> Runnable[Any, Any]:
    """The binding with its tracing schema given as a tool dict rather than a class.

    Chat models convert ``ls_structured_output_format["schema"]`` to JSON schema on every
    call for the trace metadata: ~0.5 ms for a Pydantic class, ~1 µs for the equivalent
    tool dict, with the same result.
    """
    traced = bound.kwargs.get("ls_structured_output_format")
    if not isinstance(traced, dict) or isinstance(traced.get("schema"), dict):
        return bound
    try:
        schema = convert_to_openai_tool(traced["schema"])
    except Exception:  # unconvertible: leave it to the model, which skips it the same way
        return bound
    return bound.bind(ls_structured_output_format={**traced, "schema": schema})


def _response_format_as_dict(bound: Runnable[Any, Any]) -> Runnable[Any, Any] | None:
    """``json_schema`` through OpenAI's ``response_format``: the same request, as a dict.

    Given the Pydantic class, the openai client validates the reply inside the call and
    raises on anything but bare JSON (fences, a reasoning block, prose), losing the
    message and its usage. Given the dict it would send for that class (strict, every
    field required: ``openai.pydantic_function_tool``'s schema), it returns the message.
    Decided by the binding (a class as ``response_format`` is langchain-openai's way),
    not the model's class, so a stand-in for the model (the dry run) binds it alike.
    None for any other binding.
    """
    if not isinstance(bound, RunnableBinding):
        return None
    schema = bound.kwargs.get("response_format")
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return None
    import openai  # a dependency of langchain-openai, which bound the class

    function = openai.pydantic_function_tool(schema)["function"]
    response_format = {
        "type": "json_schema",
        "json_schema": {"schema": function["parameters"], "name": function["name"], "strict": True},
    }
    return bound.bind(response_format=response_format)


def structured_chat(
    runnable: Runnable[Any, Any], schema: type[BaseModel], options: dict[str, Any]
) -> Runnable[Any, dict[str, Any]]:
    """``runnable`` asked for ``schema``: a runnable returning ``{raw, parsed, parsing_error}``.

    The schema is bound through wrappers, so every fallback of ``with_fallbacks`` gets it
    in its own model's format, and ``bind`` / ``with_config`` / ``with_retry`` keep
    applying around it. Chat models are called without streaming (see :class:`RawAndParsed`).
    """
    if isinstance(runnable, BaseChatModel):
        split = RawAndParsed.split(runnable.with_structured_output(schema, **options))
        if split is not None:
            return split
        with_raw: Runnable[Any, Any] = runnable.with_structured_output(
            schema, include_raw=True, **options
        )
        return with_raw
    if isinstance(runnable, RunnableWithFallbacks):
        return runnable.model_copy(
            update={
                "runnable": structured_chat(runnable.runnable, schema, options),
                "fallbacks": [
                    structured_chat(fallback, schema, options) for fallback in runnable.fallbacks
                ],
            }
        )
    if isinstance(runnable, RunnableBindingBase):
        return runnable.model_copy(
            update={"bound": structured_chat(runnable.bound, schema, options)}
        )
    # A model built per call (init_chat_model with configurable fields) queues this.
    structured: Runnable[Any, dict[str, Any]] = runnable.with_structured_output(  # type: ignore[attr-defined]
        schema, include_raw=True, **options
    )
    return structured


def swap_model(runnable: Any, real: Any, stand_in: Any) -> Any:
    """``runnable`` (a binding or sequence around ``real``, e.g. what ``real`` built for
    ``with_structured_output``) with ``stand_in`` in its place: the real model still
    builds the request; the stand-in sends it (the dry run, batch mode)."""
    if runnable is real:
        return stand_in
    if isinstance(runnable, RunnableSequence):
        steps = [swap_model(step, real, stand_in) for step in runnable.steps]
        return RunnableSequence(*steps, name=runnable.name)
    if isinstance(runnable, RunnableBinding):
        return runnable.model_copy(update={"bound": swap_model(runnable.bound, real, stand_in)})
    return runnable
