"""The architecture that docs/architecture.md states, held by tests.

- The env core (``jekyll_hyde_env`` outside ``jekyll_hyde_env/integrations/``) never
  imports the integrations, at the top of a module or inside a function: the
  integrations import the core and their own frameworks, so the environments work
  without any of those frameworks installed.
- The code written twice on purpose (a Python reference and its C twin) is listed
  with the tests that hold them equal: every file and test the page names exists.
"""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "jekyll_hyde_env"
INTEGRATIONS = "jekyll_hyde_env.integrations"


def _module_of(path: pathlib.Path) -> str:
    """The import name of a file of ``jekyll_hyde_env``."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module that ``source`` (the module ``module``) imports, anywhere in it,
    as absolute names; ``from a import b`` gives ``a`` and ``a.b``, since ``b`` may be
    a module."""
    package = module if is_package else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)
    return found


def _imports_integrations(names: set[str]) -> list[str]:
    return sorted(n for n in names if n == INTEGRATIONS or n.startswith(INTEGRATIONS + "."))


def test_the_check_finds_each_way_of_importing_the_integrations():
    source = (
        "import jekyll_hyde_env.integrations.rlcard\n"
        "from jekyll_hyde_env.engine import cards\n"
        "def render():\n"
        "    from .integrations import openspiel\n"
        "    from . import integrations\n"
        "    from jekyll_hyde_env import observation\n"
    )
    names = imported_modules(source, "jekyll_hyde_env.jekyll_hyde")
    assert _imports_integrations(names) == [
        "jekyll_hyde_env.integrations",
        "jekyll_hyde_env.integrations.openspiel",
        "jekyll_hyde_env.integrations.rlcard",
    ]
    # From a subpackage of the core, ``..`` is jekyll_hyde_env.
    names = imported_modules("from ..integrations import clients\n", "jekyll_hyde_env.engine.rules")
    assert _imports_integrations(names) == [
        "jekyll_hyde_env.integrations",
        "jekyll_hyde_env.integrations.clients",
    ]


def _core_files() -> list[pathlib.Path]:
    core = [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if "integrations" not in path.relative_to(PACKAGE).parts
    ]
    assert len(core) > 15  # the core is where this test expects it
    return core


def test_the_core_never_imports_the_integrations():
    """No module of the core names the integrations in an import, lazy ones included."""
    core = _core_files()
    offending = {
        str(path.relative_to(ROOT)): found
        for path in core
        if (
            found := _imports_integrations(
                imported_modules(
                    path.read_text(encoding="utf-8"),
                    _module_of(path),
                    is_package=path.name == "__init__.py",
                )
            )
        )
    }
    assert not offending, f"the core imports the integrations: {offending}"


def test_importing_the_core_loads_no_integration():
    """Importing every module of the core, and playing a game, loads no integration."""
    modules = [_module_of(path) for path in _core_files()]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "import jekyll_hyde_env\n"
        "env = jekyll_hyde_env.jekyll_hyde_v0.env()\n"
        "env.reset(seed=0)\n"
        "for agent in env.agent_iter():\n"
        "    observation, reward, done, truncated, info = env.last()\n"
        "    env.step(None if done or truncated else int(observation['action_mask'].argmax()))\n"
        "print(' '.join(sorted(n for n in sys.modules if n.startswith('jekyll_hyde_env.'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.split()
    assert "jekyll_hyde_env.jekyll_hyde" in loaded and "jekyll_hyde_env.picture" in loaded
    assert _imports_integrations(set(loaded)) == []


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
