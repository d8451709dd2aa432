"""A user's type checker reads the packages' annotations, installed either way.

Every package ships ``py.typed``, and the development install is setuptools' strict
editable one (a link tree of the import names), so mypy run from a user's folder
resolves ``jekyll_hyde_agents``, ``jekyll_hyde_arena`` ... as Python does: a script
that uses them well passes, and one that misuses a return type is refused with the
package's own types in the message. ``tests/test_packaging.py`` makes the same check
against an installed wheel (``check_a_users_script``).
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("mypy", reason="mypy comes with the dev extra")

USERS_SCRIPT = """\
from jekyll_hyde_agents import make_agent
from jekyll_hyde_arena import evaluate
from jekyll_hyde_env import jekyll_hyde_v0
from jekyll_hyde_train.expert_iteration.config import EITrainConfig

env = jekyll_hyde_v0.env()
agent = make_agent("heuristic")
report = evaluate(agent, "random", pairs=2)
score: float = report.score
generations: int = EITrainConfig().expert_iteration.generations
"""
MISUSE = "wrong: str = report.score\n"


def check_a_users_script(python: pathlib.Path | str, folder: pathlib.Path) -> None:
    """mypy (of this environment), reading the packages that ``python`` has installed,
    passes a script that uses them well and refuses one that misuses ``MatchReport``."""
    good = folder / "uses_the_packages.py"
    good.write_text(USERS_SCRIPT)
    bad = folder / "misuses_the_packages.py"
    bad.write_text(USERS_SCRIPT + MISUSE)
    command = [
        sys.executable, "-m", "mypy", "--python-executable", str(python),
        "--cache-dir", str(folder / ".mypy_cache"), "--no-error-summary",
    ]  # fmt: skip
    passed = subprocess.run(
        [*command, good.name], cwd=folder, capture_output=True, text=True, timeout=600
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    refused = subprocess.run(
        [*command, bad.name], cwd=folder, capture_output=True, text=True, timeout=600
    )
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert 'Incompatible types in assignment (expression has type "float"' in refused.stdout


@pytest.mark.slow
def test_the_editable_install_resolves_in_a_users_type_checker(tmp_path):
    check_a_users_script(sys.executable, tmp_path)
