"""``langchain_answer_metrics.cli`` gives ``main`` lazily (importing the package loads no
command), and names a missing attribute as any module does."""

from __future__ import annotations

import importlib

import pytest


def test_main_is_the_command_s_main_and_an_unknown_name_is_an_attribute_error() -> None:
    cli = importlib.import_module("langchain_answer_metrics.cli")
    from langchain_answer_metrics.cli.command import main

    assert cli.main is main
    with pytest.raises(AttributeError, match="has no attribute 'mian'"):
        cli.mian  # noqa: B018
