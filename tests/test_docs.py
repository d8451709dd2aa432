"""The documentation: the site builds with warnings as errors, and every code block runs.

Every fenced block of README.md and docs/**/*.md is one of:

- ``python`` (or ``py``): executed, in a temporary working folder;
- ``bash`` or ``console``: every command is a ``jekyll-hyde`` command, run through the
  installed CLI in a temporary working folder (one per page, so a page's later blocks see
  what its earlier ones wrote); ``console`` blocks run their ``$ `` lines;
- a listing (``text``, ``yaml``, ``json``, ``toml``), which is not code;
- marked on the line right before it with ``<!-- not run in tests: REASON -->`` (for
  ``make train``, servers, interactive play, installs).

A block marked ``<!-- runs where MODULE imports -->`` (an optional extra such as
``ray.rllib``) runs where that module is installed, as in CI, and is skipped with the
reason elsewhere.

A block that is none of these fails the test, so a page cannot show code that no test runs.
"""

from __future__ import annotations

import dataclasses
import html
import importlib.util
import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
CLI = pathlib.Path(sys.executable).with_name("jekyll-hyde")

PYTHON = {"python", "py"}
SHELL = {"bash", "console", "sh", "shell"}
LISTING = {"text", "yaml", "json", "toml"}
NOT_RUN = re.compile(r"^<!-- not run in tests: (\S.*\S) -->$")
NEEDS = re.compile(r"^<!-- runs where ([\w.]+) imports -->$")
FENCE = re.compile(r"^(\s*)```\s*([\w-]*)")
COMMAND_SECONDS = 120


@dataclasses.dataclass
class Block:
    page: pathlib.Path
    line: int
    language: str
    code: str
    marker: str | None
    needs: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: pathlib.Path) -> list[Block]:
    """The fenced blocks of a page, with the marker on the line before each, if any."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, language = opening.groups()
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise AssertionError(f"{page.relative_to(ROOT)}:{index + 1}: unclosed code block")
        previous = next((line.strip() for line in reversed(lines[:index]) if line.strip()), "")
        marker = previous if NOT_RUN.match(previous) else None
        needs = NEEDS.match(previous)
        body = [line.removeprefix(indent) for line in lines[index + 1 : end]]
        found.append(
            Block(
                page, index + 1, language, "\n".join(body) + "\n", marker,
                needs[1] if needs else None,
            )
        )  # fmt: skip
        index = end + 1
    return found


def commands(block: Block) -> list[list[str]]:
    """The commands of a shell block, each split as the shell would (comments dropped)."""
    text = block.code.replace("\\\n", " ")
    lines = text.splitlines()
    if block.language == "console":
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    return [words for line in lines if (words := shlex.split(line, comments=True))]


def runnable_problem(block: Block) -> str | None:
    """Why an unmarked block cannot run in the tests, or None when it can."""
    if block.language in PYTHON or block.language in LISTING:
        return None
    if block.language not in SHELL:
        return f"a {block.language or 'plain'} block is neither run nor a listing"
    found = commands(block)
    if not found:
        return "a shell block without commands"
    for words in found:
        if words[0] != "jekyll-hyde":
            return f"{shlex.join(words)!r} is not a jekyll-hyde command"
    return None


def run_block(block: Block, folder: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if block.language in PYTHON:
        monkeypatch.chdir(folder)
        exec(compile(block.code, block.where, "exec"), {"__name__": "docs_snippet"})
    elif block.language in SHELL:
        for words in commands(block):
            done = subprocess.run(
                [str(CLI), *words[1:]],
                cwd=folder,
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                timeout=COMMAND_SECONDS,
            )
            assert done.returncode == 0, (
                f"{block.where}: {shlex.join(words)} exited with {done.returncode}\n"
                f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            )


def test_pages_exist_and_hold_code():
    found = [block for page in PAGES for block in blocks(page)]
    assert len(PAGES) >= 20, [str(page) for page in PAGES]
    assert sum(block.language in PYTHON and not block.marker for block in found) >= 15
    assert sum(block.language in SHELL and not block.marker for block in found) >= 6


def test_every_block_runs_or_says_why_not():
    problems = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8").splitlines()
        for block in blocks(page):
            if block.marker is None and (problem := runnable_problem(block)):
                problems.append(f"{block.where}: {problem}; run it, or mark why not")
        # A marker that marks no block (a blank line and a fence must follow) is a typo.
        for number, line in enumerate(text):
            if NOT_RUN.match(line.strip()):
                following = next((later for later in text[number + 1 :] if later.strip()), "")
                if not FENCE.match(following):
                    where = f"{page.relative_to(ROOT)}:{number + 1}"
                    problems.append(f"{where}: a marker before no block")
    assert not problems, "\n".join(problems)


def test_the_checks_catch_an_unmarked_block(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```bash\nmake train\n```\n\n"
        "<!-- not run in tests: trains for minutes -->\n```bash\nmake train\n```\n\n"
        "```bash\njekyll-hyde eval heuristic random \\\n  --pairs 2  # a comment\n```\n"
    )
    unmarked, marked, cheap = blocks(page)
    assert runnable_problem(unmarked) == "'make train' is not a jekyll-hyde command"
    assert marked.marker == "<!-- not run in tests: trains for minutes -->"
    assert commands(cheap) == [["jekyll-hyde", "eval", "heuristic", "random", "--pairs", "2"]]
    assert runnable_problem(cheap) is None


# Pages whose blocks train (the README's tour, SB3 and Tianshou) take over ten seconds.
SLOW_PAGES = {README, DOCS / "envs" / "clients.md", DOCS / "evaluation" / "own-agent.md"}


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # its parent package is missing
        return False


@pytest.mark.parametrize(
    "page",
    [pytest.param(page, marks=pytest.mark.slow) if page in SLOW_PAGES else page for page in PAGES],
    ids=lambda page: str(page.relative_to(ROOT)),
)
def test_page_code_runs(page, tmp_path, monkeypatch):
    missing = []
    for block in blocks(page):
        if block.needs and not _importable(block.needs):
            missing.append(f"{block.where} needs {block.needs}")
            continue
        if block.marker is None and block.language not in LISTING:
            run_block(block, tmp_path, monkeypatch)
    if missing:
        pytest.skip("not installed: " + "; ".join(missing))


def test_readme_is_a_short_manual():
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; the details go in docs/"
    first = "\n".join(lines[:100])
    for needed in (
        "jekyll-hyde play",
        "jekyll-hyde serve",
        "jekyll_hyde_v0.env()",
        "JekyllHyde-v0",
        "BatchedGames",
        "jekyll-hyde train",
        "jekyll-hyde eval",
    ):
        assert needed in first, f"{needed!r} is not in the README's first 100 lines"
    assert "make test" in text  # .ci/run calls it as the README's test command
    assert "runs/default-" in text  # where make train's run folder goes


# The web app's pictures, which the docs build takes (docs/hooks/screenshots.py): never in
# git, so a link to one is checked against the list of pictures the hook makes.
SCREENSHOTS = DOCS / "screenshots"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_point_to_files(page):
    """Links between pages are relative, so that they work on GitHub and on the site."""
    from jekyll_hyde_app.web.screenshots import PICTURES

    missing = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (page.parent / target.split("#")[0]).resolve()
        if path.parent == SCREENSHOTS.resolve() and path.name in PICTURES:
            continue  # taken by the docs build
        if not path.exists():
            missing.append(target)
    assert not missing, f"{page.relative_to(ROOT)} links to missing files: {missing}"


def build_site(folder: pathlib.Path, site: pathlib.Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of the mkdocs.yml in ``folder`` into ``site``."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=folder,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # Material's banner, not a warning
        capture_output=True,
        text=True,
        timeout=300,
    )


def _text(page: str) -> str:
    """A built page's text: tags dropped, entities read."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_site_builds_strict(tmp_path):
    """``mkdocs build --strict``: a broken link or anchor, a missing page or a bad
    docstring fails."""
    site = tmp_path / "site"
    done = build_site(ROOT, site)
    assert done.returncode == 0, f"mkdocs build --strict failed (the docs extra?):\n{done.stderr}"
    rules = (site / "rules" / "index.html").read_text(encoding="utf-8")
    assert "R2.1" in rules and "T6a" in rules  # RULES.md is included, not copied
    configs = (site / "training" / "configs" / "index.html").read_text(encoding="utf-8")
    for path in sorted((ROOT / "configs").glob("*/*.yaml")):
        anchor = f"{path.parent.name}-{path.stem}"
        assert f'id="{anchor}"' in configs, f"the configs page lacks {path.parent.name}/{path.name}"
    reference = (site / "reference" / "agents" / "index.html").read_text(encoding="utf-8")
    assert "make_agent" in reference and "ISMCTSConfig" in reference
    # Typed signatures, of the public API only.
    assert "act(view: PlayerView, legal_actions: list[int]) -> int" in _text(reference)
    arena = _text((site / "reference" / "arena" / "index.html").read_text(encoding="utf-8"))
    assert "pairs: int," in arena and ") -> MatchReport" in arena
    for page in (site / "reference").glob("*/index.html"):
        private = re.findall(r'id="(jekyll_hyde_\w+(?:\.\w+)*\._\w+)"', page.read_text("utf-8"))
        assert not private, f"{page.parent.name}: private names in the reference: {private[:5]}"
    assert 'id="T3b"' in rules and 'id="R2.1"' in rules  # docs/hooks/rule_tags.py
    assert (site / "glossary" / "index.html").is_file()
    # The README is not built; its links into the docs must meet their anchors all the same.
    broken = []
    for target in re.findall(r"\]\((docs/[^)#\s]+\.md)#([^)\s]+)\)", README.read_text("utf-8")):
        path, anchor = target
        built = site / pathlib.Path(path).relative_to("docs").with_suffix("") / "index.html"
        if path.endswith("/index.md"):
            built = site / pathlib.Path(path).relative_to("docs").parent / "index.html"
        if not built.is_file() or f'id="{anchor}"' not in built.read_text("utf-8"):
            broken.append(f"{path}#{anchor}")
    assert not broken, f"README.md links to anchors that do not exist: {broken}"
    aec = (site / "envs" / "aec" / "index.html").read_text(encoding="utf-8")
    assert "played_by_opponent" in aec  # the observation table, from the module docstring
    assert (site / "screenshots" / "play.png").is_file()
    # A reader's size: each package's reference page documents at most 90 objects (its
    # exported API and the few modules a program calls), not every helper.
    for page in (site / "reference").glob("*/index.html"):
        headings = page.read_text(encoding="utf-8").count('class="doc doc-heading"')
        assert 10 <= headings <= 90, f"reference/{page.parent.name}: {headings} objects"


def _benchmark(name: str, monkeypatch: pytest.MonkeyPatch):
    """A benchmark script as a module (benchmarks/ is not a package; its helpers import by name)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    path = ROOT / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script", ["champion", "leaderboard"])
def test_benchmarks_write_their_tables_into_results_pages(script, tmp_path, monkeypatch):
    module = _benchmark(script, monkeypatch)
    page, name, writer = module.SECTION
    results = DOCS / "results"
    module.check_section(page, name, writer)  # the real page has the markers
    original = (results / page).read_text(encoding="utf-8")
    begin, end = f"<!-- {name}: written by {writer} -->", f"<!-- end {name} -->"
    (tmp_path / page).write_text(original, encoding="utf-8")
    module.write_section(page, name, writer, "| a | new |\n|---|---|", folder=tmp_path)
    written = (tmp_path / page).read_text(encoding="utf-8")
    assert written.startswith(original[: original.index(begin) + len(begin)])
    assert written.endswith(original[original.index(end) :])
    assert f"{begin}\n\n| a | new |\n|---|---|\n\n{end}" in written
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / page).write_text("# a page without the markers\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="lacks the markers"):
        module.check_section(page, name, writer, folder=bare)


def test_the_reference_documents_every_public_module():
    """Each tracked module of the packages whose name has no leading underscore is in the
    reference, or listed by name among the internal modules on the reference's index."""
    import_names = {
        "jekyll_hyde_env": "jekyll_hyde_env",
        "agents": "jekyll_hyde_agents",
        "arena": "jekyll_hyde_arena",
        "train": "jekyll_hyde_train",
        "app": "jekyll_hyde_app",
    }
    listed = subprocess.run(
        ["git", "ls-files", *import_names],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    modules = set()
    for name in listed:
        path = pathlib.PurePosixPath(name)
        parts = path.with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if path.suffix == ".py" and not any(part.startswith("_") for part in parts):
            modules.add(".".join((import_names[parts[0]], *parts[1:])))
    # A module is documented on a reference page, or whole on a page of its own (the
    # environments' modules are the env pages, which the reference links).
    reference = "\n".join(page.read_text() for page in DOCS.rglob("*.md"))
    documented = set(re.findall(r"^::: ([\w.]+)", reference, re.M))
    # A package rendered whole shows its exports (``__all__``), its public API: its
    # modules are documented through them.
    whole = set(re.findall(r"^::: ([\w.]+)\n(?!    options:\n      members:)", reference, re.M))
    documented |= {m for m in modules if any(m.startswith(p + ".") for p in whole)}
    assert {"jekyll_hyde_env.jekyll_hyde", "jekyll_hyde_agents.ismcts", "jekyll_hyde_app.cli"} <= (
        modules
    )
    # The rest are listed as internal on the reference's index, by name.
    index = (DOCS / "reference" / "index.md").read_text(encoding="utf-8")
    internal = set(re.findall(r"^- `([\w.]+)`$", index.split("## Internal modules")[1], re.M))
    assert "jekyll_hyde_app.web.sessions" in internal
    assert not internal - modules, f"no such modules: {sorted(internal - modules)}"
    assert not internal & documented, f"both internal and in the reference: {internal & documented}"
    missing = modules - documented - internal
    assert not missing, f"add to docs/reference/ or list as internal: {sorted(missing)}"


def test_link_problems_are_warnings_so_the_strict_build_fails_on_them():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["strict"] is True
    links = config["validation"]["links"]
    assert links == {
        "not_found": "warn", "anchors": "warn", "absolute_links": "warn",
        "unrecognized_links": "warn",
    }  # fmt: skip
    assert set(config["validation"]["nav"].values()) == {"warn"}


@pytest.mark.parametrize(
    "link, problem",
    [
        ("other.md#nowhere", "does not contain an anchor '#nowhere'"),
        ("missing.md", "not found among documentation files"),
        ("/other.md", "absolute link"),
    ],
    ids=["anchor", "page", "absolute"],
)
def test_a_broken_link_fails_the_strict_build(tmp_path, link, problem):
    """A tiny site with the repository's link validation: one bad link fails its build,
    and the same site with the link mended builds."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other\n\n## There\n", encoding="utf-8")
    minimal = {"site_name": "t", "strict": True, "validation": config["validation"]}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(minimal), encoding="utf-8")
    page = tmp_path / "docs" / "index.md"
    page.write_text(f"# Home\n\n[there]({link})\n", encoding="utf-8")
    done = build_site(tmp_path, tmp_path / "site")
    assert done.returncode != 0 and problem in done.stderr, done.stderr
    page.write_text("# Home\n\n[there](other.md#there)\n", encoding="utf-8")
    done = build_site(tmp_path, tmp_path / "site")
    assert done.returncode == 0, done.stderr
