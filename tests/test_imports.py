"""Imports sit at the top of a module; one inside a function says why with ``# lazy:``.

An import may wait for its function only when it must: an optional extra (named in
the comment), an import cycle or a lower floor calling a higher one
(docs/architecture.md), or a measured start-up cost on a command-line path. The
comment ``# lazy: <why>`` goes at the end of the import line or on the line above.
"""

from __future__ import annotations

import ast
import io
import pathlib
import subprocess
import sys
import tokenize

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The folders whose modules are checked, relative to the repository.
CHECKED_FOLDERS = (
    "jekyll_hyde_env",
    "agents",
    "arena",
    "app",
    "benchmarks",
    "experiments",
    "tools",
    "train",
)
LAZY = "# lazy:"


class _FunctionImports(ast.NodeVisitor):
    """Every import inside a function or method body (nested ones included), once."""

    def __init__(self) -> None:
        self.depth = 0
        self.found: list[ast.Import | ast.ImportFrom] = []

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        if self.depth:
            self.found.append(node)

    visit_Import = _import
    visit_ImportFrom = _import


def _lazy_reasons(source: str) -> tuple[set[int], set[int]]:
    """The lines of ``# lazy: <why>`` comments: those at the end of a line of code,
    and those alone on their line."""
    trailing, alone = set(), set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT or not token.string.startswith(LAZY):
            continue
        if token.string[len(LAZY) :].strip():  # a reason follows
            (alone if token.line.lstrip().startswith("#") else trailing).add(token.start[0])
    return trailing, alone


def _module_name(node: ast.Import | ast.ImportFrom) -> str:
    if isinstance(node, ast.Import):
        return ", ".join(alias.name for alias in node.names)
    return "." * node.level + (node.module or "")


def unexplained_function_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) for each import inside a function of ``source`` with no
    ``# lazy: <why>`` comment at the end of its lines or alone on the line above."""
    finder = _FunctionImports()
    finder.visit(ast.parse(source))
    trailing, alone = _lazy_reasons(source)
    unexplained = []
    for node in finder.found:
        own_lines = range(node.lineno, (node.end_lineno or node.lineno) + 1)
        if node.lineno - 1 not in alone and trailing.isdisjoint(own_lines):
            unexplained.append((node.lineno, _module_name(node)))
    return unexplained


def _checked_files() -> list[pathlib.Path]:
    return [path for folder in CHECKED_FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))]


def test_the_check_finds_each_function_import_without_a_reason():
    source = (
        "import os\n"  # 1: at the top
        "\n"
        "def plain():\n"
        "    import json\n"  # 4
        "\n"
        "def explained_above():\n"
        "    # lazy: the web extra (fastapi)\n"
        "    import fastapi\n"  # 8
        "    import starlette\n"  # 9: the line above is code, not the reason
        "\n"
        "class Server:\n"
        "    def run(self):\n"
        "        import uvicorn  # lazy: the web extra's server\n"  # 13
        "        def inner():\n"
        "            from . import sibling\n"  # 15: nested functions count once
        "        from ray import (  # lazy:\n"  # 16: no reason given
        "            tune,\n"
        "        )\n"
        "        from ray import (\n"  # 19
        "            train,  # lazy: the rllib extra\n"
        "        )\n"
    )
    assert unexplained_function_imports(source) == [
        (4, "json"),
        (9, "starlette"),
        (15, "."),
        (16, "ray"),
    ]


def test_every_import_inside_a_function_says_why_it_is_lazy():
    files = _checked_files()
    assert len(files) > 50  # the folders are where this test expects them
    unexplained = [
        f"{path.relative_to(ROOT)}:{line} {module}"
        for path in files
        for line, module in unexplained_function_imports(path.read_text(encoding="utf-8"))
    ]
    assert not unexplained, (
        "move these imports to the module's top, or say why they must wait with a "
        "'# lazy: <why>' comment (an optional extra, a cycle, a measured start-up cost):\n"
        + "\n".join(unexplained)
    )


def test_importing_the_env_loads_no_torch_and_no_higher_floor():
    """``import jekyll_hyde_env`` works without torch and loads nothing above its floor."""
    code = (
        "import sys\n"
        "import jekyll_hyde_env\n"
        "names = ('torch', 'jekyll_hyde_agents', 'jekyll_hyde_arena', 'jekyll_hyde_train', "
        "'jekyll_hyde_app')\n"
        "print(' '.join(sorted(n for n in sys.modules if n.split('.')[0] in names)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == []
