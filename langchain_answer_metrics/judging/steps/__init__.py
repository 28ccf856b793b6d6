"""The judge steps every metric is built from, each a named child run in a trace.

- ``decompose_claims``: text -> atomic, self-contained claims in the text's language.
- ``verify_claims``: claims + source -> exactly one verdict per claim.
- ``claims_checked``: both, for one text against its source; ``supported_ratio`` of them.
- ``judge_aspect``: criterion + response -> PASS or FAIL with a reason.
- ``embed``: texts -> one vector each (long texts chunked on sentence boundaries).

A step knows nothing of the metrics that use it.
"""

from langchain_answer_metrics.judging.steps.aspect import AspectJudgement, judge_aspect
from langchain_answer_metrics.judging.steps.claims import (
    ClaimSide,
    Decomposition,
    Verification,
    claims_checked,
    decompose_claims,
    supported_ratio,
    verify_claims,
)
from langchain_answer_metrics.judging.steps.embedding import Embedding, embed

__all__ = [
    "AspectJudgement",
    "ClaimSide",
    "Decomposition",
    "Embedding",
    "Verification",
    "claims_checked",
    "decompose_claims",
    "embed",
    "judge_aspect",
    "supported_ratio",
    "verify_claims",
]
