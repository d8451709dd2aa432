"""One list of extras: pyproject.toml's ``[project.optional-dependencies]``, the README's
install line and the table of docs/getting-started.md name the same extras, in one order
on the two pages; and the extras the pages say ``make test`` and CI install are the
Makefile's and .ci/run's."""

from __future__ import annotations

import pathlib
import re

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
GETTING_STARTED = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")


def pyproject_extras() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as file:
        return list(tomllib.load(file)["project"]["optional-dependencies"])


def readme_extras() -> list[str]:
    """The README's install line: ``... # and training; extras: train, render, ...``."""
    (line,) = re.findall(r"# and training; extras: (.+)$", README, re.M)
    return [name.strip() for name in line.split(",")]


def getting_started_extras() -> list[str]:
    """The first column of the table under ``| extra | adds |``."""
    table = GETTING_STARTED.split("| extra | adds |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    return [re.fullmatch(r"\| `([\w-]+)` \|.*", row)[1] for row in table.splitlines()]


def _make_variable(path: pathlib.Path, pattern: str) -> list[str]:
    (value,) = re.findall(pattern, path.read_text(encoding="utf-8"), re.M)
    return value.split(",")


def test_readme_getting_started_and_pyproject_list_the_same_extras():
    declared = pyproject_extras()
    assert {"train", "dev", "docs", "rlcard", "rllib"} <= set(declared)
    readme, page = readme_extras(), getting_started_extras()
    assert sorted(readme) == sorted(declared), (
        f"README.md lists {readme}; pyproject.toml declares {declared}"
    )
    assert sorted(page) == sorted(declared), (
        f"docs/getting-started.md lists {page}; pyproject.toml declares {declared}"
    )
    assert readme == page, "README.md and docs/getting-started.md list the extras in two orders"


def test_the_make_test_extras_the_pages_name_are_the_makefiles():
    make_test = _make_variable(ROOT / "Makefile", r"^EXTRAS \?= ([\w,]+)$")
    ci = _make_variable(ROOT / ".ci" / "run", r"^EXTRAS=([\w,]+)$")
    assert set(make_test) | set(ci) <= set(pyproject_extras())
    for name, text in (("README.md", README), ("docs/getting-started.md", GETTING_STARTED)):
        named = re.findall(r"`make test` installs the extras\s+`([\w,]+)`", text)
        assert named and all(n.split(",") == make_test for n in named), (
            f"{name} names {named} as make test's extras; the Makefile has {make_test}"
        )
    ci_named = re.findall(r"`make test EXTRAS=([\w,]+)`", GETTING_STARTED)
    assert ci_named == [",".join(ci)], f"getting-started names {ci_named}; .ci/run has {ci}"
