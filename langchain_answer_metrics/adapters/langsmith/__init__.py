"""The LangSmith adapter: a metric as a row, function, summary or comparative evaluator,
and its results as LangSmith feedback.

``evaluators`` (row and function evaluators), ``summary`` (summary evaluators),
``comparative`` (a pairwise metric over two experiments), ``results`` (what LangSmith
reads of a result or an error), ``feedback`` (a metric's feedback keys).
"""
