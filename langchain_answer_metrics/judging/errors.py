"""The judging layer's own errors, as the panel and the results report them."""

from __future__ import annotations

import re

# What LangChain adds to a parsing error, and what our re-ask tells the model to do:
# neither helps the user reading the error.
_TROUBLESHOOTING = re.compile(r"\s*For troubleshooting, visit: \S+", re.IGNORECASE)
_TOOL_ARGUMENTS = re.compile(
    r"Function \w+ arguments:.*?are not valid JSON\. Received JSONDecodeError ", re.DOTALL
)
_INSTRUCTIONS = re.compile(
    r"\s*(Call the \w+ tool with one JSON object as its arguments\.|"
    r"Reply with only the JSON object, no prose or code fences\.)"
)


class StepError(Exception):
    """A step failed for one model; ``step`` names it for the result's ``excluded`` list."""

    def __init__(self, step: str, error: BaseException) -> None:
        self.step = step
        self.error = error
        super().__init__(f"{step}: {type(error).__name__}: {error}")


class StructuredOutputError(ValueError):
    """The judge's reply stayed unusable after every re-ask.

    The message says what was wrong and quotes the start of the last reply;
    ``reply_excerpt`` holds that quote alone (one line, at most 200 characters, secrets
    redacted), or "" when nothing came back to quote.

    Args:
        message: what was wrong, quoting the start of the last reply.
        reply_excerpt: that quote alone (kept as ``.reply_excerpt``).

    Example:
        >>> try:
        ...     metric.invoke(sample)
        ... except AllModelsFailedError as error:
        ...     print(error.failures[0].error)  # names the StructuredOutputError, with the quote
    """

    def __init__(self, message: str, *, reply_excerpt: str = "") -> None:
        super().__init__(message)
        self.reply_excerpt = reply_excerpt


def for_user(problem: str) -> str:
    """A re-ask's problem as the user reads it: one line, without LangChain's
    troubleshooting link, the reply it quotes (shown apart) or our instructions to the
    model."""
    problem = _TOOL_ARGUMENTS.sub("", _TROUBLESHOOTING.sub("", problem))
    return " ".join(_INSTRUCTIONS.sub("", problem).split()).rstrip(". ")


def what_to_try(method: str | None) -> str:
    """What a user can change when a judge cannot produce the structured output."""
    if method == "function_calling":
        return (
            "the model may not support tool calling: give the judge another method "
            "(structured_output: json_mode or json_schema in --config), or use a model "
            "with tool calling"
        )
    return (
        "give the judge another method (structured_output: function_calling in --config) "
        "or use a model with tool calling"
    )


def unusable_reply(
    judge: str, gave: str, attempts: int, problem: str, reply: str, method: str | None
) -> StructuredOutputError:
    """The error for a reply still unusable after the re-asks, as one readable line:
    the judge, what came back (cut short), why it could not be used, what to do.

    Example:
        >>> error = unusable_reply("judge-a", "no usable ClaimList", 3, "no JSON.", "Hi", None)
        >>> str(error)[:58]
        "judge-a gave no usable ClaimList after 3 attempts: no JSON"
    """
    came_back = f"; it replied {reply!r}" if reply else ""
    return StructuredOutputError(
        f"{judge} gave {gave} after {attempts} attempts: {for_user(problem)}"
        f"{came_back}; {what_to_try(method)}",
        reply_excerpt=reply,
    )
