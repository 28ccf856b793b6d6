"""The judging layer's own errors, as the panel and the results report them."""

from __future__ import annotations


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
