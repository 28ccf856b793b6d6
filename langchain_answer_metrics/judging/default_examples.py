"""The default few-shot examples of the claim steps: short, in English, Russian and Chinese.

Each step that a metric runs with its default prompt shows the judge these examples
between the system message and the data, rendered like any
:class:`~langchain_answer_metrics.judging.prompt_set.FewShotExample`. They show what the
rules only say: how atomic a claim is, a short answer turned into a sentence with its
question, a refusal giving no claims, and "supported" across units, dates, precision and
languages. They are kept short: they are sent with every request of the step (as part of
its static prefix, which providers' prompt caching discounts).

A step whose prompt or examples a user gives (``prompts=``, ``examples=``) gets none of
these: the user's examples replace them, and ``examples={step: []}`` sends none.

Example:
    >>> [example["output"]["claims"] for example in DEFAULT_EXAMPLES["decompose_claims"]][1]
    []
"""

from __future__ import annotations

from typing import Any

DEFAULT_EXAMPLES: dict[str, tuple[dict[str, Any], ...]] = {
    "decompose_claims": (
        {
            "input": {"question": "Who discovered penicillin?", "text": "Fleming, in 1928."},
            "output": {"claims": ["Fleming discovered penicillin in 1928."]},
        },
        {"input": {"text": "Не знаю."}, "output": {"claims": []}},
        {
            "input": {"text": "长江流经武汉和上海。"},
            "output": {"claims": ["长江流经武汉。", "长江流经上海。"]},
        },
    ),
    "verify_claims": (
        {
            "input": {
                "source": "Мост длиной 1,2 км открыт в 1932 году.",
                "claims": ["The bridge is 1200 m long.", "该桥1935年开通。"],
            },
            "output": {
                "verdicts": [
                    {
                        "index": 1,
                        "reason": "1.2 km = 1200 m.",
                        "evidence": "1,2 км",
                        "verdict": "supported",
                    },
                    {
                        "index": 2,
                        "reason": "来源说1932年。",
                        "evidence": "в 1932 году",
                        "verdict": "contradicted",
                    },
                ]
            },
        },
    ),
}
"""Per step, its default examples as ``{"input": {...}, "output": {...}}`` (the
``examples=`` format), checked against the step's variables and schema on import."""
