"""The default judge prompts, to read, copy and adapt: ``from langchain_answer_metrics.prompts
import DEFAULT_PROMPTS``.

A metric takes a replacement per step (``prompts={"verify_claims": template}``), a
``ChatPromptTemplate`` using the step's variables (:data:`STEP_VARIABLES`) or a string
that replaces the system instructions; see docs/custom-prompts.md. The prompts themselves
live in :mod:`langchain_answer_metrics.judging.prompts`.
"""

from langchain_answer_metrics.judging.prompt_set import FewShotExample, PromptError
from langchain_answer_metrics.judging.prompts import (
    ASPECT_SYSTEM,
    ASPECT_USER,
    DATA_RULE,
    DECOMPOSE_SYSTEM,
    DECOMPOSE_USER,
    DEFAULT_PROMPTS,
    STEP_VARIABLES,
    VERIFY_SYSTEM,
    VERIFY_USER,
    StepVariables,
    escape_for_tag,
)

__all__ = [
    "ASPECT_SYSTEM",
    "ASPECT_USER",
    "DATA_RULE",
    "DECOMPOSE_SYSTEM",
    "DECOMPOSE_USER",
    "DEFAULT_PROMPTS",
    "STEP_VARIABLES",
    "VERIFY_SYSTEM",
    "VERIFY_USER",
    "FewShotExample",
    "PromptError",
    "StepVariables",
    "escape_for_tag",
]
