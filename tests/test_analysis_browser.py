"""The calibrate and compare HTML reports in a real browser: headless Chromium (Debian's
``chromium`` and ``chromium-driver``) driven by Selenium, as tests/test_report_browser.py.
Saves ``artifacts/calibration.png`` and ``artifacts/compare.png``.

The reports are made by the CLI, judged by a panel of two models on the local
OpenAI-compatible server; a response carries a script, which must show as text.
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
DATA = Path(__file__).resolve().parent.parent / "langchain_answer_metrics" / "data"
XSS = "<script>alert(1)</script>"

pytestmark = [*BROWSER_AND_LOCAL_MODEL, pytest.mark.slow]  # headless Chromium


def _cli(folder: Path, *args: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folder)}
    result = answer_metrics(*args, env=env, cwd=folder)  # in this process
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("analysis")
    labelled = folder / "labelled.jsonl"
    candidate = folder / "candidate.jsonl"
    for source, target in (
        (DATA / "demo_labelled.jsonl", labelled),
        (DATA / "demo_candidate.jsonl", candidate),
    ):
        rows = [json.loads(line) for line in source.read_text("utf-8").splitlines()]
        # a right answer the toy judge fails (a worst disagreement); a candidate's response
        rows[2 if target == labelled else 1]["response"] += f" {XSS}"
        target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    config = folder / "models.yaml"
    with LocalOpenAIServer() as server:
        config.write_text(
            f"providers:\n  local:\n    base_url: {server.base_url}\n"
            "chat_models:\n  list:\n    - id: judge-a\n    - id: judge-b\n",
            "utf-8",
        )
        common = ["--config", str(config), "--quiet"]
        _cli(
            folder,
            "calibrate",
            str(labelled),
            "--metric",
            "factual_correctness",
            "--threshold",
            "0.5",
            "--report",
            "calibration.html",
            *common,
        )
        for data, out in ((DATA / "demo.jsonl", "base.jsonl"), (candidate, "cand.jsonl")):
            _cli(
                folder,
                "evaluate",
                str(data),
                "--metric",
                "semantic_similarity",
                "--out",
                out,
                *common,
            )
    _cli(folder, "compare", "base.jsonl", "cand.jsonl", "--report", "compare.html")
    return folder / "calibration.html", folder / "compare.html"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with headless_chromium() as driver:
        yield driver


def _no_script_ran(driver: object) -> None:
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.accept()  # type: ignore[attr-defined]
    assert driver.execute_script("return document.scripts.length") == 0  # type: ignore[attr-defined]


def _screenshot(driver: object, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    height = driver.execute_script("return document.body.scrollHeight")  # type: ignore[attr-defined]
    driver.set_window_size(1280, min(int(height) + 100, 8000))  # type: ignore[attr-defined]
    assert driver.save_screenshot(str(ARTIFACTS / name))  # type: ignore[attr-defined]


def test_calibration_report_draws_roc_and_calibration(
    reports: tuple[Path, Path], browser: object
) -> None:
    driver: webdriver.Chrome = browser  # type: ignore[assignment]
    driver.get(reports[0].as_uri())
    assert "answer-metrics calibration" in driver.title
    section = driver.find_element(By.CSS_SELECTOR, "section.metric-calibration")
    assert section.find_element(By.TAG_NAME, "h2").text == "factual_correctness"
    rows = [
        row.find_element(By.TAG_NAME, "th").text
        for row in section.find_elements(By.CSS_SELECTOR, "table tr")[1:4]
    ]
    assert rows == ["aggregate", "judge-a", "judge-b"]
    roc = driver.find_element(By.CSS_SELECTOR, "svg.plot.roc")
    assert roc.is_displayed() and roc.size["width"] > 100
    curve = roc.find_element(By.CSS_SELECTOR, "polyline.curve")
    assert len(curve.get_attribute("points").split()) >= 2
    calibration = driver.find_element(By.CSS_SELECTOR, "svg.plot.calibration")
    assert calibration.is_displayed() and calibration.find_elements(By.TAG_NAME, "circle")
    assert "confusion at score" in section.text and "Krippendorff" in section.text
    assert XSS in section.text  # a worst disagreement shows the response, as text
    _no_script_ran(driver)
    _screenshot(driver, "calibration.png")


def test_compare_report_shows_regressions_side_by_side(
    reports: tuple[Path, Path], browser: object
) -> None:
    driver: webdriver.Chrome = browser  # type: ignore[assignment]
    driver.get(reports[1].as_uri())
    assert "answer-metrics compare" in driver.title
    header = driver.find_element(By.CSS_SELECTOR, "table tr").text
    assert "95% CI" in header and "regressed" in header
    regressed = driver.find_elements(By.CSS_SELECTOR, ".sample.regressed")
    assert regressed and all(item.is_displayed() for item in regressed)
    sides = regressed[0].find_elements(By.CSS_SELECTOR, ".pair > div")
    assert [side.text.split("\n")[0] for side in sides] == ["baseline", "candidate"]
    assert sides[0].location["x"] < sides[1].location["x"]  # side by side
    assert any("中国的首都是上海" in item.text for item in regressed)
    _no_script_ran(driver)
    _screenshot(driver, "compare.png")
