"""Open a page in headless Chromium and report what it did: its DOM after the scripts ran, its console
messages (uncaught errors included) and the network requests the page itself made.

Test-only (the status-page and waterfall tests import it as `tools.headless`). One Chromium run gives
all three: `--dump-dom` after `--virtual-time-budget` ms of page time (timers and fetches run in that
time), `--enable-logging=stderr --v=0` for console lines, and `--log-net-log` for requests. Chromium's
own background requests (update checks and the like) are told apart from the page's by their
initiator, which is "not an origin" for the browser itself.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: "...:INFO:CONSOLE:12] "message", source: URL (12)" -- Chromium's console lines with --v=0
_CONSOLE = re.compile(r':CONSOLE[:(][^\]]*\] "(.*)", source: ')
_QUIET = [  # no background traffic worth having in a test run; none of these change how a page runs
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--no-first-run",
]


def chromium() -> str | None:
    """The Chromium executable on PATH (Debian's package installs /usr/bin/chromium), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Page:
    dom: str
    console: list[str]  # console messages, uncaught exceptions included ("Uncaught TypeError: ...")
    requests: list[str]  # URLs the page itself asked for (not Chromium's own background requests)
    stderr: str


def open_page(
    url: str, *, budget_ms: int = 3000, screenshot: Path | None = None, size: tuple[int, int] = (1280, 900)
) -> Page:
    """Load `url`, let it run `budget_ms` of (virtual) page time, and return what it did."""
    exe = chromium()
    if exe is None:
        raise RuntimeError("no chromium on PATH")
    with tempfile.TemporaryDirectory(prefix="cuzk-chromium-") as tmp:
        netlog = Path(tmp) / "net.json"
        argv = [
            exe,
            "--headless=new",
            "--disable-gpu",
            "--no-sandbox",
            f"--user-data-dir={tmp}/profile",
            *_QUIET,
            "--enable-logging=stderr",
            "--v=0",
            f"--log-net-log={netlog}",
            f"--virtual-time-budget={budget_ms}",
            f"--window-size={size[0]},{size[1]}",
            *([f"--screenshot={screenshot}"] if screenshot is not None else []),
            "--dump-dom",
            url,
        ]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=180)
        if proc.returncode != 0:
            raise RuntimeError(f"chromium exited {proc.returncode}: {proc.stderr[-2000:]}")
        console = [m.group(1) for m in map(_CONSOLE.search, proc.stderr.splitlines()) if m]
        return Page(proc.stdout, console, _page_requests(netlog), proc.stderr)


def _page_requests(netlog: Path) -> list[str]:
    log = json.loads(netlog.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log["events"]:
        params = event.get("params") or {}
        if event["type"] == start and "url" in params and params.get("initiator") != "not an origin":
            urls.append(params["url"])
    return urls
