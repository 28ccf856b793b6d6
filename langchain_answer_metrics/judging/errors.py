"""The judging layer's own errors, as the panel and the results report them."""

from __future__ import annotations


class StepError(Exception):
    """A step failed for one model; ``step`` names it for the result's ``excluded`` list."""

    def __init__(self, step: str, error: BaseException) -> None:
        self.step = step
        self.error = error
        super().__init__(f"{step}: {type(error).__name__}: {error}")


class StructuredOutputError(ValueError):
    """The judge's reply stayed unusable after every re-ask."""
