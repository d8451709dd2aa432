"""Print the lowest versions that pyproject.toml allows for the core install, one
``name==version`` a line, for pip: ``pip install $(python tools/lowest_versions.py)``.

`make test-lowest` (run by CI) installs them and runs the environment tests, so that
the ranges ``pyproject.toml`` states for a core install are true, not hoped for.
A range's lowest version is its ``>=`` bound; every core dependency must have one.
"""

from __future__ import annotations

import pathlib
import re
import sys

import tomllib

PYPROJECT = pathlib.Path(__file__).resolve().parents[1] / "pyproject.toml"
LOWER_BOUND = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+)\s*>=\s*(?P<version>[0-9][0-9A-Za-z.]*)$")


def lowest_versions(pyproject: pathlib.Path = PYPROJECT) -> list[str]:
    """``name==version`` for each core dependency, at its ``>=`` bound.

    Raises:
        ValueError: a dependency without a plain ``>=`` lower bound, naming it.
    """
    dependencies = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    pins = []
    for requirement in dependencies:
        match = LOWER_BOUND.match(requirement.split(";")[0].strip())
        if match is None:
            raise ValueError(f"{requirement!r}: a core dependency needs a '>=' lower bound")
        pins.append(f"{match['name']}=={match['version']}")
    return pins


if __name__ == "__main__":
    try:
        print("\n".join(lowest_versions()))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
