"""Open a page in a real headless browser (Debian's chromium): the DOM after
scripts ran, the console messages, and a screenshot."""

import re
import shutil
import subprocess
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
]


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "chromium is not installed (make deps installs Debian's chromium)"
    return exe


def open_page(page: Path, tmp: Path, size=(1100, 6000)) -> dict:
    exe = chromium()
    url = page.resolve().as_uri()
    prof = tmp / "chromium-profile"
    common = [exe, *FLAGS, f"--user-data-dir={prof}"]
    dom = subprocess.run([*common, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    shot = tmp / "page.png"
    subprocess.run(
        [*common, f"--screenshot={shot}", f"--window-size={size[0]},{size[1]}", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    console = [line for line in dom.stderr.splitlines() if re.search(r":CONSOLE[:(]", line)]
    return {"dom": dom.stdout, "console": console, "screenshot": shot}
