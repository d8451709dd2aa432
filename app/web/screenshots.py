"""Take the docs' pictures of ``jekyll-hyde serve`` from the real pages.

``python -m jekyll_hyde_app.web.screenshots [--out DIR] [--chromium PATH]`` serves the
app on a free loopback port, drives a headless chromium through Playwright (the ``web``
extra) and writes ``play.png``, ``replay.png`` and ``watch.png`` into ``DIR``
(``docs/screenshots`` by default). The games are seeded, so the pictures change only
when the pages or the agents do. The pictures are build output, never kept in git:
``make docs`` takes them, and the docs build takes them where they are missing
(``docs/hooks/screenshots.py``).
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import socket
import threading
import time

import uvicorn
from playwright.sync_api import ViewportSize, sync_playwright

from jekyll_hyde_app.web.app import create_app

OUT = pathlib.Path("docs") / "screenshots"
"""Where ``main`` writes by default: the docs' folder, from the repository's root."""
PICTURES = ("play.png", "replay.png", "watch.png")
VIEWPORT: ViewportSize = {"width": 1100, "height": 900}


def _serve() -> tuple[uvicorn.Server, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning")
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}"


def _move(page) -> None:
    """One decision on the play page: the highest legal cards to give, a colour, or a card."""
    with page.expect_response(lambda r: r.url.endswith("/play")):
        if page.is_visible("#give"):
            for _ in range(page.evaluate("game.table.choose")):
                page.click("#hand .card.legal:not(.selected) >> nth=-1")
            page.click("#give")
        elif page.is_visible("#declare"):
            page.click("#declare button >> nth=0")
        else:
            page.click("#hand .card.legal >> nth=0")
    page.wait_for_function("!document.body.classList.contains('waiting')")


def take(chromium: str, out: pathlib.Path = OUT) -> list[pathlib.Path]:
    """Play, replay and watch seeded games in chromium and photograph each page.

    Args:
        chromium: the chromium executable.
        out: the folder to write ``PICTURES`` into; created when missing.

    Returns:
        The files written.
    """
    out.mkdir(parents=True, exist_ok=True)
    server, url = _serve()
    written = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(url + "/")
            page.select_option("#role", "hyde")
            page.select_option("#opponent", "champion")
            page.fill("#seed", "7")
            page.click("#new-game")
            page.wait_for_selector("#table:not(.hidden)")
            for _ in range(7):  # the exchange and six tricks
                _move(page)
            page.screenshot(path=str(out / "play.png"))
            written.append(out / "play.png")
            while not page.is_visible("#result"):
                _move(page)
            page.click("#replay-link")
            page.wait_for_selector("#table:not(.hidden)")
            for _ in range(6):
                page.click("#next")
            page.select_option("#seat", "both")
            page.screenshot(path=str(out / "replay.png"))
            written.append(out / "replay.png")
            page.goto(url + "/watch")
            page.select_option("#jekyll", "heuristic")
            page.select_option("#hyde", "champion")
            page.fill("#seed", "3")
            page.fill("#speed", "200")
            page.click("#start")
            page.wait_for_function("document.querySelectorAll('#log li').length >= 10")
            page.click("#pause")
            page.wait_for_timeout(300)
            page.screenshot(path=str(out / "watch.png"))
            written.append(out / "watch.png")
            browser.close()
    finally:
        server.should_exit = True
    return written


def main() -> None:
    """Parse ``--out`` and ``--chromium`` and take the pictures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default=shutil.which("chromium"), help="the browser")
    parser.add_argument("--out", type=pathlib.Path, default=OUT, help="the folder to write")
    args = parser.parse_args()
    if not args.chromium:
        parser.error("no chromium found: pass --chromium PATH (Debian: apt-get install chromium)")
    for path in take(args.chromium, args.out):
        print(path)


if __name__ == "__main__":
    main()
