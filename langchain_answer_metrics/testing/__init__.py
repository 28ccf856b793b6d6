"""Offline test helpers: a toy heuristic judge and a local OpenAI-compatible server."""
