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
from dataclasses import dataclass, field
from html.parser import HTMLParser
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


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    within: tuple[str, ...]  # the ids of the enclosing elements, outermost first (its own included)
    text: str = ""  # all the text inside it
    children: list[Element] = field(default_factory=list, repr=False)


_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class _Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.all: list[Element] = []
        self._open: list[Element] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        outer = self._open[-1].within if self._open else ()
        e = Element(tag, a, (*outer, a["id"]) if "id" in a else outer)
        if self._open:
            self._open[-1].children.append(e)
        self.all.append(e)
        if tag not in _VOID:
            self._open.append(e)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i].tag == tag:
                del self._open[i:]
                return

    def handle_data(self, data: str) -> None:
        for e in self._open:
            e.text += data


def elements(
    html: str, *, within: str | None = None, tag: str | None = None, cls: str | None = None
) -> list[Element]:
    """The elements of `html` in document order, filtered by an enclosing id, a tag name and a class."""
    tree = _Tree()
    tree.feed(html)
    return [
        e
        for e in tree.all
        if (within is None or within in e.within)
        and (tag is None or e.tag == tag)
        and (cls is None or cls in e.attrs.get("class", "").split())
    ]
