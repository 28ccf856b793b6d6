"""Where the metrics meet other tools: ``langsmith/`` (evaluators, summary and comparative
evaluators, feedback), ``dataframes`` (tables in and out), ``ray`` (Ray Data) and
``local_embeddings`` (the bundled offline embedding model).

Imported only by those who use them; the metrics know nothing of this package (an adapter
wraps a metric: ``evaluator(metric)``).
"""
