"""The HTML report in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``) driven by Selenium. Saves ``artifacts/report.png``.

The report is made by the CLI from a small dataset, judged by a local OpenAI-compatible
server on 127.0.0.1; Chromium runs with networking features off and a fresh profile.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import BROWSER_AND_LOCAL_MODEL, answer_metrics, headless_chromium

from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
XSS = "<script>alert(1)</script>"

ROWS = [
    {
        "id": "einstein",
        "question": "Where was Einstein born?",
        "answer": "Einstein was born in Spain in 1879.",
        "ground_truth": "Einstein was born in Germany in 1879.",
        "contexts": ["Einstein was born in Germany in 1879."],
    },
    {
        "id": "paris",
        "question": "What is the capital of France?",
        "answer": f"Paris is the capital of France. {XSS}",
        "ground_truth": "The capital of France is Paris.",
        "contexts": ["Paris is the capital of France."],
    },
    {
        "id": "moscow",
        "question": "Какая столица России?",
        "answer": "Москва является столицей России.",
        "ground_truth": "Москва — столица России.",
        "contexts": ["Москва — столица России."],
    },
]

pytestmark = [*BROWSER_AND_LOCAL_MODEL, pytest.mark.slow]  # headless Chromium


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    data = folder / "qa.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), "utf-8")
    path = folder / "report.html"
    with LocalOpenAIServer() as server:
        result = answer_metrics(
            "evaluate",
            data,
            "--metric",
            "semantic_similarity,faithfulness,factual_correctness",
            "--base-url",
            server.base_url,
            "--model",
            "judge-a",
            "--threshold",
            "0.5",
            "--report",
            path,
            "--quiet",
            env={"PATH": "/usr/bin:/bin", "HOME": str(folder)},
        )
    assert result.returncode == 0, result.stderr
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with headless_chromium() as driver:
        yield driver


def test_report_renders_summary_and_samples(report: Path, browser: object) -> None:
    driver: webdriver.Chrome = browser  # type: ignore[assignment]
    driver.get(report.as_uri())
    assert "answer-metrics report" in driver.title

    cards = driver.find_elements(By.CSS_SELECTOR, ".summary-card")
    assert [card.find_element(By.TAG_NAME, "h3").text for card in cards] == [
        "semantic_similarity",
        "faithfulness",
        "factual_correctness",
    ]
    for card in cards:
        assert card.is_displayed()
        assert "95% CI" in card.text and "pass rate" in card.text
        bars = card.find_elements(By.CSS_SELECTOR, "svg.hist rect.bar")
        assert len(bars) == 10
        assert sum(bar.size["height"] for bar in bars) > 0  # the distribution is drawn

    rows = driver.find_elements(By.CSS_SELECTOR, "tr.sample-row")
    assert [row.find_element(By.TAG_NAME, "a").text for row in rows] == [
        "einstein",
        "paris",
        "moscow",
    ]
    assert all(row.is_displayed() for row in rows)
    samples = driver.find_elements(By.CSS_SELECTOR, "section.sample")
    assert len(samples) == 3
    assert "Москва является столицей России." in samples[2].text

    # Claims are coloured by verdict: a contradicted claim has a red bar.
    contradicted = driver.find_element(By.CSS_SELECTOR, "li.v-contradicted")
    assert contradicted.value_of_css_property("border-left-color") == "rgba(197, 48, 48, 1)"
    assert "Einstein was born in Spain" in contradicted.text

    # The dataset's script is shown as text and never runs.
    assert XSS in samples[1].text
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.accept()
    assert driver.execute_script("return document.scripts.length") == 0

    ARTIFACTS.mkdir(exist_ok=True)
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(1280, min(int(height) + 100, 8000))
    assert driver.save_screenshot(str(ARTIFACTS / "report.png"))
