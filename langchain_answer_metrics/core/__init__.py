"""The data layer: what users pass in and get back, and the rules every layer shares.

``sample`` (:class:`~langchain_answer_metrics.core.sample.Sample` and its checks),
``result`` (:class:`~langchain_answer_metrics.core.result.MetricResult` and the details
models), ``redaction`` (secrets kept out of text), ``strict_options`` (unknown options
refused), ``prices`` (the price table), ``json_text`` (JSON the user wrote, nesting
bounded), ``compat`` (0.1.0's data, read until 0.3.0) and ``moved`` (the old import paths
of 0.1.x, kept for one minor version). Nothing here imports a layer above it.
"""
