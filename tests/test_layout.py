"""The floors and the training folders that docs/architecture.md draws, held by tests.

- A module imports only from its own floor or the floors below it (env 1, agents 2,
  arena 3, train 4, app 5), at the top or inside a function.
- ``train/`` holds a folder per algorithm and a shared part: the shared part
  imports no algorithm, and no algorithm imports another algorithm's entry module
  (the module that runs it); their library modules (the PPO learner, the exploit
  responder) are shared on purpose.
- No module of the packages is longer than 600 lines.
"""

from __future__ import annotations

import pathlib

import pytest

from tests.test_architecture import imported_modules

ROOT = pathlib.Path(__file__).resolve().parents[1]
FLOORS = {
    "jekyll_hyde_env": (1, "jekyll_hyde_env"),
    "jekyll_hyde_agents": (2, "agents"),
    "jekyll_hyde_arena": (3, "arena"),
    "jekyll_hyde_train": (4, "train"),
    "jekyll_hyde_app": (5, "app"),
}
ALGORITHMS = ("expert_iteration", "ppo", "exploit")
ENTRY_MODULES = {
    "jekyll_hyde_train.expert_iteration.loop",
    "jekyll_hyde_train.ppo.train",
    "jekyll_hyde_train.ppo.rllib",
    "jekyll_hyde_train.exploit.run",
}
MAX_LINES = 600


def package_modules() -> dict[str, pathlib.Path]:
    """Every module of the five packages, by import name."""
    modules = {}
    for package, (_, folder) in FLOORS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            modules[".".join((package, *parts))] = path
    return modules


def imports_of(module: str, path: pathlib.Path) -> set[str]:
    source = path.read_text(encoding="utf-8")
    names = imported_modules(source, module, path.name == "__init__.py")
    return {name for name in names if name.split(".")[0] in FLOORS}


def floor(name: str) -> int:
    return FLOORS[name.split(".")[0]][0]


def test_the_packages_are_where_the_floors_say():
    modules = package_modules()
    expected = {
        "jekyll_hyde_env.jekyll_hyde",
        "jekyll_hyde_agents.az",
        "jekyll_hyde_arena.duplicate",
        "jekyll_hyde_train.expert_iteration.loop",
        "jekyll_hyde_app.cli",
    }
    assert expected <= set(modules)
    assert ENTRY_MODULES <= set(modules)


def test_every_import_goes_down_or_stays_on_its_floor():
    upward = {
        module: sorted(name for name in imports_of(module, path) if floor(name) > floor(module))
        for module, path in package_modules().items()
    }
    assert not {module: names for module, names in upward.items() if names}


def _algorithm(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] == "jekyll_hyde_train" and len(parts) > 1 and parts[1] in ALGORITHMS:
        return parts[1]
    return None


def test_no_algorithm_imports_another_algorithms_entry_module():
    crossing = {}
    for module, path in package_modules().items():
        own = _algorithm(module)
        if own is None:
            continue
        entries = {
            name
            for name in imports_of(module, path)
            if name in ENTRY_MODULES and _algorithm(name) != own
        }
        if entries:
            crossing[module] = sorted(entries)
    assert not crossing


def test_the_shared_part_of_train_imports_no_algorithm():
    shared = {
        module: sorted(name for name in imports_of(module, path) if _algorithm(name))
        for module, path in package_modules().items()
        if module.startswith("jekyll_hyde_train.common")
    }
    assert len(shared) >= 4
    assert not {module: names for module, names in shared.items() if names}


@pytest.mark.parametrize(
    ("source", "module", "crosses"),
    [
        ("from jekyll_hyde_train.ppo.train import main\n", "jekyll_hyde_train.exploit.run", True),
        ("from ..ppo import train\n", "jekyll_hyde_train.exploit.run", True),
        ("from ..ppo.learner import read_learner\n", "jekyll_hyde_train.exploit.run", False),
        ("from . import loop\n", "jekyll_hyde_train.expert_iteration.fit", False),
    ],
)  # fmt: skip
def test_the_check_sees_an_entry_module_however_it_is_imported(source, module, crosses):
    own = _algorithm(module)
    names = imported_modules(source, module)
    assert any(n in ENTRY_MODULES and _algorithm(n) != own for n in names) == crosses


def test_no_package_module_is_longer_than_600_lines():
    long = {
        module: lines
        for module, path in package_modules().items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long
