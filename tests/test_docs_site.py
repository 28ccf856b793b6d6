"""The documentation site: it builds strictly, lists every page and every exported name,
its command-line reference is the parser's own help, and it renders in headless Chromium
(home page and a metric page, with navigation and working search). Also the one way to
write the dataset function: ``evaluate_dataset``, the old name a deprecated alias.

The site is built once per module with ``mkdocs build --strict`` (the ``docs`` extra), or
taken from ``$ANSWER_METRICS_BUILT_SITE`` where ``.ci/run`` has just built it, and served on
127.0.0.1; the screenshots go to the test's temporary directory. The tests that need the
site are marked slow.
"""

from __future__ import annotations

import argparse
import functools
import html
import os
import re
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from support import CHROMEDRIVER, CHROMIUM, headless_chromium

import langchain_answer_metrics
from langchain_answer_metrics.cli.command import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

DOCS_EXTRA = 'the docs extra: pip install -e ".[docs]"'
pytest.importorskip("mkdocs", reason=DOCS_EXTRA)
pytest.importorskip("mkdocstrings_handlers.python", reason=DOCS_EXTRA)

needs_browser = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
    reason="needs Debian's chromium and chromium-driver (.ci/run installs them)",
)


BUILT_SITE_ENV = "ANSWER_METRICS_BUILT_SITE"
"""A site ``mkdocs build --strict`` has just built (``.ci/run`` builds it once and passes
it here); without it, the module builds its own."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = os.environ.get(BUILT_SITE_ENV)
    if built:
        assert (Path(built) / "index.html").is_file(), f"{BUILT_SITE_ENV}={built}: no site there"
        return Path(built)
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PATH": "/usr/bin:/bin", "HOME": str(out), "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def _text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


def _nav_files(entries: list) -> list[str]:
    files = []
    for entry in entries:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            files.extend(_nav_files(value) if isinstance(value, list) else [value])
    return files


def test_every_page_is_in_the_navigation() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_files(config["nav"])
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if "hooks" not in p.parts)
    assert sorted(nav) == pages


@pytest.mark.slow  # builds the site
def test_the_api_reference_documents_every_export(site: Path) -> None:
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        from registry_metrics import on_page_markdown
    finally:
        sys.path.remove(str(DOCS / "hooks"))
    page = on_page_markdown((DOCS / "api.md").read_text(encoding="utf-8"), None)
    documented = re.findall(r"^::: langchain_answer_metrics\.(\w+)$", page, re.M)
    assert sorted(documented) == sorted(langchain_answer_metrics.__all__)
    built = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in langchain_answer_metrics.__all__:
        assert f'id="langchain_answer_metrics.{name}"' in built, name
    # Docstring examples render as code, not as Markdown quotes.
    assert "&gt;&gt;&gt;" in built and "<blockquote>" not in built


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    commands = {"answer-metrics": parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            commands.update({f"answer-metrics {n}": p for n, p in action.choices.items()})
    return commands


@pytest.mark.slow  # builds the site
def test_the_cli_reference_is_the_parsers_help(site: Path) -> None:
    text = _text(site / "cli" / "index.html")
    for title, parser in _commands(build_parser()).items():
        assert f"usage: {title}" in text
        for action in parser._actions:
            for option in action.option_strings:
                assert option in text, (title, option)
    # The hook replaced its marker.
    assert "cli-reference" not in (site / "cli" / "index.html").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- in a browser


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.slow  # builds the site, then headless Chromium
@needs_browser
def test_the_site_renders_with_navigation_and_search(served: str, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    with headless_chromium() as browser:
        browser.get(f"{served}/")
        assert browser.title.startswith("langchain-answer-metrics")
        nav_links = browser.find_elements(By.CSS_SELECTOR, "nav.md-nav--primary a.md-nav__link")
        labels = {link.get_attribute("textContent").strip() for link in nav_links}
        assert {"Getting started without a key", "Faithfulness", "Command line"} <= labels
        assert browser.find_element(By.CSS_SELECTOR, "h1").text == "langchain-answer-metrics"
        assert browser.find_elements(By.CSS_SELECTOR, "table td code")  # the metric table
        search = browser.find_element(By.CSS_SELECTOR, "input.md-search__input")
        browser.save_screenshot(str(tmp_path / "home.png"))

        # Search works: the index loads in its worker and finds a metric page.
        search.click()
        search.send_keys("abstention")
        WebDriverWait(browser, 60).until(
            lambda b: b.find_elements(By.CSS_SELECTOR, ".md-search-result__item")
        )
        results = browser.find_elements(By.CSS_SELECTOR, ".md-search-result__item a")
        assert any("faithfulness" in (a.get_attribute("href") or "") for a in results)
        browser.save_screenshot(str(tmp_path / "search.png"))
        search.send_keys(Keys.ESCAPE)

        browser.get(f"{served}/metrics/faithfulness/")
        assert browser.find_element(By.CSS_SELECTOR, "h1").text == "Faithfulness"
        active = browser.find_elements(By.CSS_SELECTOR, "nav.md-nav--primary .md-nav__link--active")
        assert any(a.text.strip() == "Faithfulness" for a in active)
        assert browser.find_elements(By.CSS_SELECTOR, "div.highlight pre code")
        assert browser.find_elements(By.CSS_SELECTOR, "input.md-search__input")
        browser.save_screenshot(str(tmp_path / "faithfulness.png"))
    for name in ("home.png", "search.png", "faithfulness.png"):
        assert (tmp_path / name).stat().st_size > 10_000, name


# --------------------------------------------------------------------------- one way to write it


def test_the_dataset_function_is_evaluate_dataset_and_the_old_name_warns() -> None:
    from langchain_answer_metrics import aevaluate_dataset, evaluate_dataset

    for old, new in (("evaluate", evaluate_dataset), ("aevaluate", aevaluate_dataset)):
        with pytest.warns(DeprecationWarning, match=f"use {old}_dataset"):
            assert getattr(langchain_answer_metrics, old) is new
        assert old not in langchain_answer_metrics.__all__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert langchain_answer_metrics.evaluate_dataset is evaluate_dataset


def test_a_metric_error_reads_like_a_result_in_a_loop() -> None:
    from langchain_answer_metrics import MetricError, MetricResult

    error = MetricError(key="faithfulness", error_type="InvalidSampleError", message="no contexts")
    result = MetricResult(key="faithfulness", score=0.5, band="moderate")
    assert (error.score, error.ok) == (None, False)
    assert (result.score, result.ok) == (0.5, True)
    # records and checkpoints are unchanged
    assert not {"score", "ok"} & set(error.model_dump()) and "ok" not in result.model_dump()
