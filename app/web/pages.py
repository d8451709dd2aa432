"""The pages a browser opens: play (``/``), replay, watch and the players' rules.

The first three are plain HTML files of ``static/`` that draw what the JSON API (``api``)
answers; the rules page is ``rulebook.rules_text()`` written as HTML on the server, so
that it needs no script. ``STATIC`` is also mounted at ``/static`` for the pages' CSS
and JavaScript (``app.create_app``).
"""

from __future__ import annotations

import pathlib

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse
from markdown_it import MarkdownIt

from jekyll_hyde_env.rulebook import rules_text

# The folder of the files themselves: an editable install in strict mode reaches this
# module through a link, and the static files' server serves no file whose real
# path lies outside the folder it was given.
STATIC = pathlib.Path(__file__).resolve().parent / "static"
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")

router = APIRouter()


def markdown_html(text: str) -> str:
    """Markdown (CommonMark and tables) as HTML for a page. Raw HTML in the text is shown
    escaped, never passed through, and links are limited to safe schemes."""
    return _MARKDOWN.render(text)


@router.get("/", include_in_schema=False)
async def play_page() -> FileResponse:
    return FileResponse(str(STATIC.joinpath("index.html")))


@router.get("/replay", include_in_schema=False)
async def replay_page() -> FileResponse:
    return FileResponse(str(STATIC.joinpath("replay.html")))


@router.get("/watch", include_in_schema=False)
async def watch_page() -> FileResponse:
    return FileResponse(str(STATIC.joinpath("watch.html")))


@router.get("/rules", include_in_schema=False)
async def rules_page() -> HTMLResponse:
    return HTMLResponse(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<title>Rules: Jekyll vs Hyde</title><link rel='icon' href='data:,'>"
        "<link rel='stylesheet' href='/static/style.css'></head><body><nav>"
        "<span class='title'>Jekyll vs Hyde</span><a href='/'>Play</a>"
        "<a href='/replay'>Replay</a><a href='/watch'>Watch</a>"
        "<a href='/rules' class='here'>Rules</a></nav>"
        f"<main class='rules'>{markdown_html(rules_text())}</main></body></html>"
    )
