"""Import names of the project's own: a user's ``agents`` and ``train`` packages never clash.

Users register the env inside their own projects, where ``agents/`` and ``train/``
are common folder names. The package installs and imports only names of its own
(``jekyll_hyde_env``, ``jekyll_hyde_agents``, ``jekyll_hyde_arena``,
``jekyll_hyde_train``, ``jekyll_hyde_app``); the names ``agents`` and ``train`` are
left to the user's project.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import sysconfig

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
OWN_NAMES = (
    "jekyll_hyde_env",
    "jekyll_hyde_agents",
    "jekyll_hyde_arena",
    "jekyll_hyde_train",
    "jekyll_hyde_app",
)


def _run(args: list[str], cwd: pathlib.Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _user_project(tmp_path: pathlib.Path) -> pathlib.Path:
    """A project with its own ``agents`` and ``train`` packages, as many RL projects have."""
    project = tmp_path / "my_project"
    for name in ("agents", "train"):
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text(f'WHOSE = "the user\'s {name}"\n')
    return project


def test_a_users_own_agents_and_train_packages_do_not_clash(tmp_path):
    project = _user_project(tmp_path)
    (project / "run.py").write_text(
        "import gymnasium as gym\n"
        "import jekyll_hyde_env  # registers JekyllHyde-v0\n"
        "import agents, train\n"
        'assert agents.WHOSE == "the user\'s agents", agents.WHOSE\n'
        'assert train.WHOSE == "the user\'s train", train.WHOSE\n'
        "env = gym.make('JekyllHyde-v0', opponent='heuristic')\n"
        "observation, info = env.reset(seed=0)\n"
        "observation, reward, done, truncated, info = env.step(int(info['action_mask'].argmax()))\n"
        "from jekyll_hyde_agents import make_agent\n"
        "print(type(make_agent('heuristic')).__name__)\n"
    )
    result = _run([sys.executable, "run.py"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "HeuristicAgent"

    command = pathlib.Path(sysconfig.get_path("scripts")) / "jekyll-hyde"
    result = _run([str(command), "eval", "heuristic", "random", "--pairs", "2"], project)
    assert result.returncode == 0, result.stderr
    assert "heuristic" in result.stdout


def test_the_names_agents_and_train_are_not_the_packages(tmp_path):
    """Outside a project that has them, ``agents`` and ``train`` import nothing of ours."""
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    code = (
        "import importlib.util\n"
        "import jekyll_hyde_env, jekyll_hyde_agents, jekyll_hyde_train\n"
        "found = [n for n in ('agents', 'train') if importlib.util.find_spec(n) is not None]\n"
        "print(found)\n"
    )
    result = _run([sys.executable, "-c", code], empty)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_package_uses_no_generic_import_name():
    """No module of the package imports ``agents`` or ``train`` by those names."""
    offenders = []
    for folder in ("jekyll_hyde_env", "agents", "arena", "train", "app"):
        for path in (ROOT / folder).rglob("*.py"):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                words = line.split()
                if words[:1] in (["import"], ["from"]) and len(words) > 1:
                    top = words[1].split(".")[0]
                    if top in ("agents", "train", "app", "arena"):
                        offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize("name", OWN_NAMES)
def test_every_import_name_is_the_projects_own(name):
    assert name.startswith("jekyll_hyde_")
    result = _run([sys.executable, "-c", f"import {name}; print({name}.__name__)"], ROOT.parent)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == name
