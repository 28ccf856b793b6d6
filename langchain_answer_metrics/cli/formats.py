"""The dataset formats the command reads (its ``--format`` choices), apart from the
reading itself so that building the argument parser loads no reader."""

from __future__ import annotations

from typing import Literal

Format = Literal["jsonl", "json", "csv", "parquet"]
FORMATS: tuple[Format, ...] = ("jsonl", "json", "csv", "parquet")
