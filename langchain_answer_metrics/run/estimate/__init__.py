"""The estimate: a dry run of the run, which sends no request.

The metrics are copied onto offline stand-ins of their models (``dry_run``: the real model
still builds each request; ``replies``: their plausible answers) and streamed through the
run's own engine as a run streams its samples (``estimator``: :func:`estimate`,
:func:`aestimate`); each finished sample's requests are added up as it goes (``tally``:
requests, tokens by ``tokens``, cost by :mod:`~langchain_answer_metrics.core.prices`).

It is the run wing's because the run uses it: under ``budget=`` or ``max_requests=``, the
samples started before any has finished are expected to spend what the dry run says
(:mod:`~langchain_answer_metrics.run.limits`), and batch mode counts its requests with it.
The estimate as a face of its own, ``estimate()`` and ``answer-metrics --estimate``, is
reached through :mod:`langchain_answer_metrics.costs` (its short name) and the package
root. Nothing is imported here: each module loads on first import.

    >>> from langchain_answer_metrics.run.estimate.estimator import estimate
    >>> estimate(samples, [Faithfulness(llm=judge)]).total.requests
"""
