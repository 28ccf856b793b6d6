"""Where the metrics meet other tools: ``langsmith/`` (evaluators, summary and comparative
evaluators, feedback), ``ray`` (Ray Data) and ``local_embeddings`` (the bundled offline
embedding model). Tables in and out are the run's (``run/tables.py``).

Imported only by those who use them; the metrics know nothing of this package (an adapter
wraps a metric: ``evaluator(metric)``).
"""
