"""The leaderboard's HTML report as a reader sees it: opened in a real headless Chromium, its tables there,
every picture loaded, a screenshot taken.

It needs the `browser` extra (Playwright, which drives the browser) and Debian's ``chromium`` package
(Playwright's own browser download is not used); `.ci/run` installs both. Elsewhere it is skipped, saying
which is missing.
"""

from __future__ import annotations

import importlib
import shutil

import pytest

from cloudsim.run.config import LeaderboardConfig, RunnerConfig

board = importlib.import_module("cloudsim.run.leaderboard")

# Chromium as root in a closed network: no sandbox, no GPU, no background connections
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.mark.needs("playwright")
def test_the_html_report_shows_its_tables_and_pictures_in_a_real_browser(tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    result = board.leaderboard(LeaderboardConfig(out=str(tmp_path / "board"), brokers=("first-fit", "sjf", "tetris"),
                                                 workloads=("synthetic",), seeds=2, runner=RunnerConfig(workers=1)))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto((result.out / "leaderboard.html").resolve().as_uri())
            page.wait_for_load_state("load")
            assert page.title() == "cloudsim leaderboard"
            ranking = page.locator("table#ranking tr")
            assert ranking.count() == 1 + 3  # the header and one row per broker
            assert page.locator("table#ranking th").first.inner_text() == "broker"
            assert page.locator("table.values").count() == 1 and page.locator("table.against").count() == 1
            assert page.locator("table.against tr").count() == 1 + 2  # sjf and tetris against first-fit
            images = page.eval_on_selector_all("img", "imgs => imgs.map(i => [i.getAttribute('src'), i.complete, "
                                                      "i.naturalWidth])")
            assert [src for src, _, _ in images] == ["ranking.png", "workload-synthetic.png"]
            broken = [src for src, complete, width in images if not complete or width == 0]
            assert not broken, f"pictures that did not load: {broken}"
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
