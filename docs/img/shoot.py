"""Retake the README's two pictures of the page from the shipped reports/index.html.

Run from the repository root after `make bench`, with Debian's chromium and chromium-driver and the dev
extras installed: `.venv/bin/python docs/img/shoot.py [SEQUENCE LOOP]` (default: the drill-down of
chat-length-text-cut x corecoder: rule links, a violation, the conformance record).
"""

import shutil
import sys
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1500,950"]


def main() -> None:
    sequence, loop = (sys.argv[1], sys.argv[2]) if len(sys.argv) == 3 else ("chat-length-text-cut", "corecoder")
    page = Path("reports/index.html").resolve()
    profile = tempfile.mkdtemp(prefix="stopbench-shoot-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in [*FLAGS, f"--user-data-dir={profile}"]:
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                              options=opts)
    try:
        driver.get(page.as_uri())
        time.sleep(1.5)
        driver.save_screenshot("docs/img/page-matrix.png")
        driver.get(f"{page.as_uri()}#cell-{sequence}--{loop}")
        time.sleep(1.5)
        driver.save_screenshot("docs/img/page-drilldown.png")
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
