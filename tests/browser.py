"""Render a page in headless Chromium for the report tests: what the page's own script recorded (load errors,
blocked resources, images that did not decode) and a screenshot.

Without Chromium the tests that need it skip, saying so, unless CAPTIONKIT_REQUIRE_BROWSER=1 (set by .ci/run,
which installs the Debian package `chromium`): then they fail."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--mute-audio",
    "--hide-scrollbars",
)


def chromium() -> str:
    """The browser's path; skips the test (or fails it, under CAPTIONKIT_REQUIRE_BROWSER=1) when there is none."""
    found = os.environ.get("CAPTIONKIT_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None
    )
    if found:
        return found
    reason = "headless Chromium is not installed (Debian: apt-get install chromium)"
    if os.environ.get("CAPTIONKIT_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason}, and CAPTIONKIT_REQUIRE_BROWSER=1 requires it")
    pytest.skip(reason)


def _run(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [chromium(), *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=120
    )


def render(page: Path, work: Path) -> dict[str, str]:
    """Load `page` and return the attributes of <html> after the load event (the page's script sets
    data-rendered, data-images, data-broken-images, data-errors)."""
    done = _run(["--virtual-time-budget=15000", "--dump-dom", page.resolve().as_uri()], work / "profile-dom")
    match = re.search(r"<html\b([^>]*)>", done.stdout)
    assert match, f"no DOM came back (exit {done.returncode}): {done.stderr[-2000:]}"
    return {k: html.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', match.group(1))}


def screenshot(page: Path, out: Path, work: Path, size: tuple[int, int] = (1200, 2400)) -> Path:
    """A PNG of the page in a window of `size` pixels."""
    done = _run(
        [
            "--virtual-time-budget=15000",
            f"--window-size={size[0]},{size[1]}",
            f"--screenshot={out}",
            page.resolve().as_uri(),
        ],
        work / "profile-shot",
    )
    assert out.is_file(), f"no screenshot (exit {done.returncode}): {done.stderr[-2000:]}"
    return out


def pixels(png: Path):
    """The screenshot as an (H, W, 3) float array in [0, 1]."""
    import matplotlib.image

    return matplotlib.image.imread(str(png))[..., :3]
