"""Rewrite one marked section of a results page (docs/results/): the tables benchmarks measure."""

from __future__ import annotations

import pathlib

from jekyll_hyde_train.common.files import atomic_write_text

RESULTS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "results"


def markers(name: str, script: str) -> tuple[str, str]:
    """The begin and end comments around the section ``name`` that ``script`` writes."""
    return f"<!-- {name}: written by {script} -->", f"<!-- end {name} -->"


def check_section(page: str, name: str, script: str, folder: pathlib.Path = RESULTS) -> None:
    """Stop before any measuring when the page lacks the section's markers."""
    begin, end = markers(name, script)
    path = folder / page
    text = path.read_text() if path.is_file() else ""
    if begin not in text or end not in text:
        raise SystemExit(f"error: {path} lacks the markers {begin!r} ... {end!r}")


def read_section(page: str, name: str, script: str, folder: pathlib.Path = RESULTS) -> str:
    """What lies between the section's markers on the page (stripped)."""
    check_section(page, name, script, folder)
    begin, end = markers(name, script)
    text = (folder / page).read_text()
    return text[text.index(begin) + len(begin) : text.index(end)].strip()


def write_section(
    page: str, name: str, script: str, body: str, folder: pathlib.Path = RESULTS
) -> None:
    """Replace what lies between the section's markers on the page with ``body`` (atomically)."""
    check_section(page, name, script, folder)
    begin, end = markers(name, script)
    path = folder / page
    text = path.read_text()
    start, stop = text.index(begin) + len(begin), text.index(end)
    atomic_write_text(path, text[:start] + "\n\n" + body.strip() + "\n\n" + text[stop:])
