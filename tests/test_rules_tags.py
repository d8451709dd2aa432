"""Every rule tag the project cites (R2.2, T3b, ...) is defined in the repository's RULES.md.

RULES.md defines a tag by writing it in bold (``**T3b**``). The code, the tests and the
docs cite tags in comments, docstrings, messages and pages; a citation of a tag that
RULES.md does not define points nowhere.
"""

from __future__ import annotations

import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[1]
RULES = ROOT / "RULES.md"
TAG = r"[RTV][1-9](?:\.[1-9])?[a-c]?"
DEFINITION = re.compile(rf"\*\*({TAG})\*\*")
CITATION = re.compile(rf"(?<![\w.-])({TAG})(?![\w])")
CITING_SUFFIXES = {".py", ".c", ".h", ".md", ".js", ".html", ".yaml", ".toml", ".txt"}


def _defined() -> set[str]:
    return set(DEFINITION.findall(RULES.read_text(encoding="utf-8")))


def _tracked_files() -> list[pathlib.Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [ROOT / name for name in listed if pathlib.Path(name).suffix in CITING_SUFFIXES]


def test_rules_define_every_tag_of_the_game():
    defined = _defined()
    expected = {"R1", "R2", "R3", "R4", "T1", "T2", "T3", "T4", "T5", "T6", "T7"}
    expected |= {f"R2.{step}" for step in range(1, 5)}
    expected |= {"T3a", "T3b", "T5a", "T5b", "T5c", "T6a", "T6b", "T6c"}
    expected |= {f"V{number}" for number in range(1, 8)}  # the small variants
    assert expected <= defined, f"RULES.md does not define {sorted(expected - defined)}"


def test_every_cited_tag_is_defined_in_the_rules():
    defined = _defined()
    undefined: list[str] = []
    cited: set[str] = set()
    for path in _tracked_files():
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            for tag in CITATION.findall(line):
                cited.add(tag)
                if tag not in defined:
                    undefined.append(f"{path.relative_to(ROOT)}:{number}: {tag}")
    assert len(cited) >= 20, f"only {sorted(cited)} found: the search itself is broken"
    assert not undefined, "tags cited but not defined in RULES.md:\n" + "\n".join(undefined)


def test_citations_of_the_rules_name_a_file_in_the_repository():
    """Code that points to RULES.md points to a file that exists."""
    assert RULES.is_file()
    cited = [p for p in _tracked_files() if p.is_file() and "RULES.md" in p.read_text("utf-8")]
    assert cited, "no file cites RULES.md"
