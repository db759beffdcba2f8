"""The real headless Chromium the report tests drive (Debian's chromium and chromium-driver, installed by
`make setup`): a fresh profile, no network (every host unresolvable, a dead proxy), 1200 × 900 window,
browser and network logs kept; screenshots go to $SOTACHECK_ARTIFACTS (default artifacts/)."""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("SOTACHECK_ARTIFACTS", REPO / "artifacts"))
CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                  "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9", "--window-size=1200,900")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and chromedriver, "chromium and chromium-driver must be installed (make setup)"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    profile = tempfile.mkdtemp(prefix="sotacheck-chromium-")
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def screenshot(browser) -> Callable[[str, bool], Path]:
    """``screenshot(name, full_page=True)``: the page as ARTIFACTS/name (PNG), whole or its first screen."""

    def take(name: str, full_page: bool = True) -> Path:
        options: dict[str, Any] = {"format": "png"}
        if full_page:
            size = browser.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
            options |= {"captureBeyondViewport": True,
                        "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}}
        path = ARTIFACTS / name
        path.write_bytes(base64.b64decode(browser.execute_cdp_cmd("Page.captureScreenshot", options)["data"]))
        return path

    return take
