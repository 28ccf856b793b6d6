"""``python -m langchain_answer_metrics.cli``: the ``answer-metrics`` command."""

from langchain_answer_metrics.cli import console

console()
