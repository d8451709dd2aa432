"""The engine imports only the standard library and numpy (STYLE 1)."""

from __future__ import annotations

import ast
import pathlib
import sys

ENGINE = pathlib.Path(__file__).resolve().parents[2] / "jekyll_hyde_env" / "engine"
ALLOWED = set(sys.stdlib_module_names) | {"numpy"}


def test_engine_modules_import_no_rl_library():
    files = sorted(ENGINE.glob("*.py"))
    assert len(files) >= 7
    for path in files:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                own = name == "jekyll_hyde_env.engine" or name.startswith("jekyll_hyde_env.engine.")
                assert own or name.split(".")[0] in ALLOWED, f"{path.name} imports {name}"


def test_no_global_randomness_in_the_engine():
    for path in ENGINE.glob("*.py"):
        text = path.read_text()
        assert "import random" not in text and "np.random." not in text.replace(
            "np.random.Generator", ""
        ), path.name
