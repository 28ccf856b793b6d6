"""Where the metrics meet other tools: LangSmith evaluators, the bundled local embeddings.

Imported only by those who use them; the metrics know nothing of this package.
"""
