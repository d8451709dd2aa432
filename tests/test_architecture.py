"""docs/architecture.md lists the code written twice on purpose (a Python reference and
its C twin) with the tests that hold them equal: every file and test it names exists."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"


def _twin_rows() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    table = text.split("| Python reference | C twin |", 1)[1].split("\n\n", 1)[0]
    return [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]


def test_every_twin_and_test_named_exists():
    """Fails when a twin moves or a named test is renamed without the page."""
    rows = _twin_rows()
    assert len(rows) >= 7
    for row in rows:
        for path in re.findall(r"`([\w]+/[\w/]+\.(?:py|c|h))[`(]", row):
            assert (ROOT / path).is_file(), f"{path} (named in docs/architecture.md) is missing"
        module = None
        for test in re.findall(r"`([\w/.]*::\w+)`", row):
            file, _, name = test.partition("::")
            module = file or module
            assert module, test
            source = (ROOT / module).read_text(encoding="utf-8")
            assert f"def {name}(" in source, f"{module}::{name} (docs/architecture.md) is missing"
