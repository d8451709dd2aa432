"""The API reference (mkdocstrings, Google style) has Args, Returns and Yields sections.

Every public function and class that the docs render (each ``::: module`` block of
``docs/``, honouring its ``members:`` option) is checked. So is every public function
of ``arena/*.py`` (and every public method of its public classes),
and every function and class exported in ``jekyll_hyde_agents.__all__`` and
``jekyll_hyde_env.__all__`` (the class's ``__init__`` and public methods, followed to the
module that defines them) documents its parameters under ``Args:`` (for ``__init__``, in
the class docstring or its own: the reference merges the two) and, when its return
annotation is not ``None``, its result under ``Returns:`` or ``Yields:``. Each parameter
is named in ``Args:`` and ``Args:`` names no parameter the signature lacks. Properties are
attributes in the reference and need neither section.

The files are parsed with ``ast``: nothing heavy is imported.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Import name -> source folder (pyproject.toml's package-dir).
PACKAGES = {
    "jekyll_hyde_env": ROOT / "jekyll_hyde_env",
    "jekyll_hyde_agents": ROOT / "agents",
    "jekyll_hyde_arena": ROOT / "arena",
    "jekyll_hyde_train": ROOT / "train",
    "jekyll_hyde_app": ROOT / "app",
}
# A mkdocstrings block: ``::: module`` and its indented options.
BLOCK = re.compile(r"^::: (\S+)\n((?:    .*\n)*)", re.M)
SECTION = re.compile(r"^(\s*)([A-Z][A-Za-z ]*):\s*$")
ENTRY = re.compile(r"^(\**\w+)\s*(\([^)]*\))?\s*:")

Function = ast.FunctionDef | ast.AsyncFunctionDef


def parse(path: pathlib.Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def module_file(module: str) -> pathlib.Path:
    package, _, rest = module.partition(".")
    folder = PACKAGES[package]
    if not rest:
        return folder / "__init__.py"
    path = folder.joinpath(*rest.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def sections(docstring: str | None) -> dict[str, list[str]]:
    """The docstring's Google sections: title -> the entry names (``Args``) or lines."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    indent = 0
    entry_indent: int | None = None
    for line in (docstring or "").splitlines():
        match = SECTION.match(line)
        if match:
            current = found.setdefault(match.group(2), [])
            indent, entry_indent = len(match.group(1)), None
            continue
        if current is None or not line.strip():
            continue
        width = len(line) - len(line.lstrip())
        if width <= indent:
            current = None
            continue
        if entry_indent is None:
            entry_indent = width
        if width == entry_indent:
            current.append(line.strip())
    return found


def arg_names(lines: list[str]) -> set[str]:
    names = set()
    for line in lines:
        match = ENTRY.match(line)
        if match:
            names.add(match.group(1).lstrip("*"))
    return names


def parameters(function: Function) -> list[str]:
    arguments = function.args
    names = [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
    names += [a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None]
    if names and names[0] in ("self", "cls") and not is_static(function):
        names = names[1:]
    return names


def decorators(function: Function) -> set[str]:
    names = set()
    for decorator in function.decorator_list:
        node = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Name):
            names.add(node.id)
    return names


def is_static(function: Function) -> bool:
    return "staticmethod" in decorators(function)


def is_property(function: Function) -> bool:
    return bool(decorators(function) & {"property", "cached_property", "setter", "getter"})


def returns_value(function: Function) -> bool:
    node = function.returns
    if node is None:
        return False
    return not (
        (isinstance(node, ast.Constant) and node.value in (None, "None"))
        or (isinstance(node, ast.Name) and node.id in ("None", "NoReturn", "Never"))
    )


def problems(
    where: str, function: Function, class_doc: str | None = None, init: bool = False
) -> list[str]:
    if is_property(function):
        return []
    found = sections(ast.get_docstring(function))
    if init and class_doc is not None:
        # mkdocstrings' merge_init_into_class: the class docstring documents __init__.
        for title, lines in sections(class_doc).items():
            found.setdefault(title, []).extend(lines)
    wrong = []
    names = parameters(function)
    if names:
        if "Args" not in found:
            wrong.append(f"{where}: parameters {names} and no Args: section")
        else:
            documented = arg_names(found["Args"])
            missing = [n for n in names if n not in documented]
            if missing:
                wrong.append(f"{where}: Args: does not name {missing}")
            unknown = sorted(documented - set(names))
            if unknown:
                wrong.append(f"{where}: Args: names {unknown}, not parameters")
    if returns_value(function) and not ({"Returns", "Yields"} & set(found)):
        wrong.append(f"{where}: returns a value and has no Returns: or Yields: section")
    return wrong


def public(name: str) -> bool:
    return not name.startswith("_")


def class_problems(where: str, node: ast.ClassDef) -> list[str]:
    wrong = []
    class_doc = ast.get_docstring(node)
    for item in node.body:
        if not isinstance(item, Function):
            continue
        if item.name == "__init__":
            wrong += problems(f"{where}.__init__", item, class_doc or "", init=True)
        elif public(item.name):
            wrong += problems(f"{where}.{item.name}", item)
    return wrong


def definitions(tree: ast.Module) -> dict[str, ast.AST]:
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def arena_problems() -> list[str]:
    wrong = []
    for path in sorted(PACKAGES["jekyll_hyde_arena"].glob("*.py")):
        for name, node in definitions(parse(path)).items():
            if not public(name):
                continue
            where = f"arena/{path.name}:{name}"
            if isinstance(node, ast.ClassDef):
                wrong += class_problems(where, node)
            else:
                assert isinstance(node, Function)
                wrong += problems(where, node)
    return wrong


def exported(package: str) -> list[str]:
    """The names of ``package.__all__``."""
    tree = parse(module_file(package))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            return list(value)
    raise AssertionError(f"{package} has no __all__")


def origins(package: str) -> dict[str, str]:
    """Name -> the module it comes from: the package's imports and its lazy ``_LAZY``."""
    tree = parse(module_file(package))
    found = {name: package for name in definitions(tree)}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                found[alias.asname or alias.name] = node.module
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                found[alias.asname or alias.name] = f"{package}.{node.module or alias.name}"
        elif (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            for name, module in ast.literal_eval(node.value).items():
                found[name] = f"{package}.{module}"
    return found


def resolve(module: str, name: str, depth: int = 0) -> tuple[str, ast.AST | None]:
    """The module that defines ``name`` (following re-exports) and its node, or None for a
    submodule or a constant."""
    if module.partition(".")[0] not in PACKAGES or depth > 5:
        return module, None
    path = module_file(module)
    if not path.exists():
        return module, None
    tree = parse(path)
    node = definitions(tree).get(name)
    if node is not None:
        return module, node
    for item in tree.body:
        if isinstance(item, ast.ImportFrom) and item.module and item.level == 0:
            if item.module == module:  # ``from package import submodule``
                continue
            for alias in item.names:
                if (alias.asname or alias.name) == name:
                    return resolve(item.module, alias.name, depth + 1)
    return module, None


def exported_problems(package: str) -> list[str]:
    wrong = []
    sources = origins(package)
    for name in exported(package):
        assert name in sources, f"{package}.__all__ names {name!r}, found nowhere"
        module, node = resolve(sources[name], name)
        where = f"{package}.{name} ({module})"
        if isinstance(node, ast.ClassDef):
            wrong += class_problems(where, node)
        elif isinstance(node, Function):
            wrong += problems(where, node)
    return wrong


def rendered_modules() -> list[tuple[str, list[str] | None]]:
    """Each module the docs render with its members: (module, None) for every public
    member, (module, [names]) for a ``members: [...]`` list; ``members: false`` renders
    only the module's docstring and is left out."""
    found = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for block in BLOCK.finditer(page.read_text(encoding="utf-8")):
            options = block.group(2)
            if re.search(r"members:\s*false", options):
                continue
            listed = re.search(r"members:\s*\[(.*)\]", options)
            names = [n.strip() for n in listed.group(1).split(",")] if listed else None
            found.append((block.group(1), names))
    return found


def rendered_problems(package: str) -> list[str]:
    wrong = []
    for module, names in rendered_modules():
        if module.partition(".")[0] != package:
            continue
        path = module_file(module)
        assert path.exists(), f"the docs render {module}, which has no source file"
        for name, node in definitions(parse(path)).items():
            if not public(name) or (names is not None and name not in names):
                continue
            where = f"{module}:{name}"
            if isinstance(node, ast.ClassDef):
                wrong += class_problems(where, node)
            else:
                assert isinstance(node, Function)
                wrong += problems(where, node)
    return wrong


def test_the_checker_reads_google_sections():
    doc = """Summary.

    More prose.

    Args:
        spec: a name,
            continued: still spec.
        *rest: more.
        seed (int): the seed.

    Returns:
        The agent.
    """
    found = sections(doc)
    assert arg_names(found["Args"]) == {"spec", "rest", "seed"}
    assert "Returns" in found
    tree = ast.parse("def f(a, *b, c=1, **d) -> int:\n    '''S.'''\n")
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    assert parameters(function) == ["a", "c", "b", "d"]
    assert problems("f", function) == [
        "f: parameters ['a', 'c', 'b', 'd'] and no Args: section",
        "f: returns a value and has no Returns: or Yields: section",
    ]


def test_the_exports_are_found():
    sources = origins("jekyll_hyde_agents")
    assert resolve(sources["make_agent"], "make_agent")[0] == "jekyll_hyde_agents.base"
    sources = origins("jekyll_hyde_env")
    assert resolve(sources["JekyllHydeVectorEnv"], "JekyllHydeVectorEnv")[0] == (
        "jekyll_hyde_env.gym_vector"
    )


def test_arena_functions_document_their_arguments_and_results():
    wrong = arena_problems()
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    "package", ["jekyll_hyde_agents", "jekyll_hyde_env", "jekyll_hyde_env.engine"]
)
def test_exported_api_documents_its_arguments_and_results(package):
    wrong = exported_problems(package)
    assert not wrong, "\n".join(wrong)


def test_the_rendered_modules_are_found():
    rendered = dict(rendered_modules())
    assert rendered["jekyll_hyde_app.cli"] == ["main"]
    assert "jekyll_hyde_app.web" not in rendered  # members: false
    assert rendered["jekyll_hyde_env.engine"] is None  # the engine's exports


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_rendered_function_documents_its_arguments_and_results(package):
    wrong = rendered_problems(package)
    assert not wrong, f"{len(wrong)} problems:\n" + "\n".join(wrong)
