"""Rewrite one marked section of README.md: the tables that benchmarks measure."""

from __future__ import annotations

import pathlib

from train.files import atomic_write_text

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def markers(name: str, script: str) -> tuple[str, str]:
    """The begin and end comments around the section ``name`` that ``script`` writes."""
    return f"<!-- {name}: written by {script} -->", f"<!-- end {name} -->"


def check_section(name: str, script: str) -> None:
    """Stop before any measuring when README.md lacks the section's markers."""
    begin, end = markers(name, script)
    text = README.read_text()
    if begin not in text or end not in text:
        raise SystemExit(f"error: README.md lacks the markers {begin!r} ... {end!r}")


def write_section(name: str, script: str, body: str) -> None:
    """Replace what lies between the section's markers with ``body`` (atomically)."""
    check_section(name, script)
    begin, end = markers(name, script)
    text = README.read_text()
    start, stop = text.index(begin) + len(begin), text.index(end)
    atomic_write_text(README, text[:start] + "\n\n" + body.strip() + "\n\n" + text[stop:])
