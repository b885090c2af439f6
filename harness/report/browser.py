"""Render a report in a real headless Chromium (Debian's `chromium`): the DOM it builds, a screenshot, and
whatever it logged. Used by the tests and by `harness report --screenshot`; no Python browser driver needed."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# No network, no first-run UI, no background services: the page is a local file with nothing to fetch.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0")
CONSOLE_ERRORS = ("Uncaught", "ERROR:CONSOLE", ":CONSOLE(")


def find_chromium() -> str | None:
    """Path of a Chromium-like browser on PATH, or None."""
    return next((p for p in map(shutil.which, CANDIDATES) if p), None)


@dataclass(frozen=True)
class Rendered:
    output: str  # stdout: the DOM for --dump-dom
    log: str  # stderr: Chromium's log, where console messages of the page appear

    def console_errors(self) -> list[str]:
        """Log lines of page console messages or uncaught exceptions (a page without scripts has none)."""
        return [line for line in self.log.splitlines() if any(mark in line for mark in CONSOLE_ERRORS)]


def _run(page: Path, *extra: str, browser: str | None = None, timeout: float = 60) -> Rendered:
    browser = browser or find_chromium()
    if browser is None:
        raise FileNotFoundError("No Chromium found: install Debian's `chromium` "
                                "(tests/integration/install_chromium.sh).")
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        proc = subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", *extra, Path(page).resolve().as_uri()],
                              capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{browser} exited with {proc.returncode}: {proc.stderr[-2000:]}")
    return Rendered(proc.stdout, proc.stderr)


def dump_dom(page: Path, browser: str | None = None) -> Rendered:
    """The DOM Chromium built from `page` (after parsing, layout and any scripts)."""
    return _run(page, "--dump-dom", browser=browser)


def screenshot(page: Path, png: Path, width: int = 1400, height: int = 3000, browser: str | None = None) -> Rendered:
    """Save a `width`×`height` screenshot of `page` to `png`."""
    png = Path(png).resolve()
    png.parent.mkdir(parents=True, exist_ok=True)
    rendered = _run(page, f"--screenshot={png}", f"--window-size={width},{height}", browser=browser)
    if not png.is_file():
        raise RuntimeError(f"Chromium wrote no screenshot to {png}: {rendered.log[-2000:]}")
    return rendered
