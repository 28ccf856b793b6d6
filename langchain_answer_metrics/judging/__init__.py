"""The judging machinery under the metrics: models, structured output, steps, the panel.

- ``judges``: judge and embedding models as the metrics see them (any chat runnable).
- ``structured``: the one mechanism for asking a model for structured output (one re-ask
  loop); ``structured_chain``: a chat model asked for a schema, as one runnable.
- ``request``: the one way a request reaches a model (retry, rate limit, budget, interface).
- ``scope``: work shared within one run (identical calls, batchers, the request budget);
  ``futures``: the bounded map of futures that the scope and the batcher keep.
- ``retry``: the RetryPolicy (LangChain's RunnableRetry, honouring retry-after).
- ``tracing``: steps and panel members as named child runs; ``errors``: what fails.
- ``steps``: ``claims`` (``decompose_claims``, ``verify_claims``, ``claims_checked``),
  ``aspect`` (``judge_aspect``), ``embedding`` (``embed``).
  Under ``embed``: ``chunking``, ``batching`` (across samples), ``embedding_cache``.
- ``panel``: every model concurrently, failures left out, scores aggregated.
- ``prompts`` and ``schemas``: what the models are asked, and what they must return.
- ``sync``: the sync surface over the async logic, without touching users' event loops.

Nothing here knows the metrics, the CLI or LangSmith.
"""
