"""One headline figure per fact, written from the benchmarks' data, and every page quotes it.

docs/results/headlines.json defines each headline (the champion's score against
``ismcts:1000``, the champion's and the previous champion's ABR scores): what it
measures, the statistic, the seeds, the number of draws and the figure.
``benchmarks/headlines.py`` writes it from the data the benchmarks wrote. Pages quote a
headline as a link to its definition, ``[0.686](headlines.md#the-champion-against-ismcts1000)``.

These tests fail when:

- headlines.json, or the headlines page, differs from what the script computes from
  the benchmarks' data (a benchmark ran again, or the champion changed);
- a benchmark's table on a results page differs from the data it was written from;
- a page quotes a headline (a link to it) with another figure;
- a sentence or table row of the README or a page states a figure for a headline's
  fact, not linked and not labelled as one run's (by its seed), that is not the headline's;
- a page that should quote a headline does not.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess

import pytest

from jekyll_hyde_agents.champion import CHAMPION_DIR, champion_provenance
from jekyll_hyde_agents.policy_file import weights_sha256
from tests.test_benchmark_scripts import _script

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RESULTS = DOCS / "results"
README = ROOT / "README.md"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
HEADLINES = json.loads((RESULTS / "headlines.json").read_text(encoding="utf-8"))["headlines"]
BY_ANCHOR = {h["anchor"]: h for h in HEADLINES.values()}

# Where each headline must be quoted (a link to it with its figure).
QUOTED_ON = {
    "champion_vs_ismcts1000": [
        "README.md", "docs/agents.md", "docs/results/index.md", "docs/results/champion.md",
        "docs/results/leaderboard.md", "docs/results/training.md",
    ],
    "champion_abr": [
        "README.md", "docs/agents.md", "docs/results/index.md", "docs/results/champion.md",
        "docs/results/exploitability.md", "docs/results/leaderboard.md",
        "docs/results/training.md",
    ],
    "previous_champion_abr": ["docs/results/exploitability.md", "docs/results/training.md"],
}  # fmt: skip

# A statement of a headline's fact names all of its subject's patterns (the champion's
# once "previous champion" is taken out of the text).
SUBJECTS = {
    "champion_vs_ismcts1000": (r"\bchampion\b", r"ismcts:1000"),
    "champion_abr": (r"\bchampion\b", r"\bABR\b|best response|exploit"),
    "previous_champion_abr": (r"previous champion", r"\bABR\b|best response|exploit|conced"),
}
# One run's figure names its run: a seed ("seed 2066", "seeds 0 to 2"), a generation,
# "this run", or an earlier version of the command.
LABELLED = re.compile(
    r"\bseeds? \d|\bgenerations? \d|\b(?:this|one|single) runs?\b|\bthe runs? of\b"
    r"|\bearlier versions? of\b",
    re.I,
)
QUOTE = re.compile(r"\[([^\]]*)\]\(([^)\s]*headlines\.md)#([\w.-]+)\)")
# A score as the pages write one (0.686, 0.56), or a share (56%; 95% intervals are not one).
FIGURE = re.compile(r"(?<![\d.])(?:0\.\d{2,3}|(?!95%)\d{1,2}%)(?!\d|\.\d)")
SECTION = re.compile(r"<!-- ([\w-]+): written by [^>]*-->.*?<!-- end \1 -->", re.S)
FENCE = re.compile(r"^\s*```.*?^\s*```", re.S | re.M)
COMMENT = re.compile(r"<!--.*?-->", re.S)


def quotable(headline: dict) -> set[str]:
    """The figures a page may state for a headline: the figure, its interval's ends,
    the spread and mean over draws, and the figure as a percentage."""
    found = {headline["quote"], *re.findall(r"\d\.\d+", headline["quote_ci"])}
    if "spread" in headline:
        found |= {headline["quote_spread"], f"{headline['mean']:.3f}"}
    found.add(f"{round(headline['value'] * 100)}%")
    return found


def quote_problems(text: str) -> list[str]:
    """Links to a headline whose text states a figure other than the headline's."""
    problems = []
    for label, _target, anchor in QUOTE.findall(text):
        headline = BY_ANCHOR.get(anchor)
        if headline is None:
            problems.append(f"[{label}](...#{anchor}): no headline has that anchor")
            continue
        figures = FIGURE.findall(label)
        if not figures:
            continue  # a link to the definition, not a quote
        if figures[0] != headline["quote"] or not set(figures) <= quotable(headline):
            problems.append(
                f"[{label}] quotes {headline['key']} as {', '.join(figures)}; "
                f"the data say {headline['quote']} {headline['quote_ci']}"
            )
    return problems


def units(text: str) -> list[str]:
    """The sentences of a page's prose, and its table rows each with the table's header,
    leaving out code blocks, comments and the sections the benchmarks write (their
    tables are checked against their data below)."""
    text = FENCE.sub("\n", SECTION.sub("\n", text))
    text = COMMENT.sub(" ", text)
    found: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        if lines and all(line.startswith("|") for line in lines):
            header = lines[0]
            found += [f"{header} {row}" for row in lines[2:]]
            continue
        prose = " ".join(line for line in lines if not line.startswith("#"))
        found += re.split(r"(?<=[.!?])\s+(?=[A-Z`*\[(])", prose)
    return found


def statement_problems(text: str) -> list[str]:
    """Sentences and rows that state a headline's fact with a figure that is neither
    a quote of it (linked) nor one of its figures, nor labelled as one run's."""
    problems = []
    for unit in units(text):
        unlinked = QUOTE.sub(" ", unit)
        figures = FIGURE.findall(unlinked)
        if not figures or LABELLED.search(unit):
            continue
        told = [key for key, patterns in SUBJECTS.items() if _tells(unlinked, key, patterns)]
        if not told:
            continue
        allowed = set().union(*(quotable(HEADLINES[key]) for key in told))
        wrong = [f for f in figures if f not in allowed]
        if wrong:
            headlines = ", ".join(f"{key} is {HEADLINES[key]['quote']}" for key in told)
            problems.append(
                f"{headlines}, but {', '.join(wrong)} is stated unlinked and unlabelled "
                f"(name its seed, or link the headline): {unit[:200]!r}"
            )
    return problems


def _tells(text: str, key: str, patterns: tuple[str, ...]) -> bool:
    """Whether the text is about the headline's fact (the champion's facts with the
    previous champion taken out of the text)."""
    if not key.startswith("previous"):
        text = text.replace("previous champion", "")
    return all(re.search(pattern, text) for pattern in patterns)


def test_every_headline_says_what_it_measures_and_how():
    assert set(HEADLINES) == set(QUOTED_ON)
    for key, h in HEADLINES.items():
        for field in ("fact", "statistic", "seeds", "draws", "quote", "measured_by", "data"):
            assert h[field], f"{key} lacks {field}"
        assert h["quote"] == f"{h['value']:.3f}"
        assert h["draws"] == len(h.get("draw_scores", h["seeds"])) == len(h["seeds"])
    for key in ("champion_abr", "previous_champion_abr"):
        h = HEADLINES[key]
        scores = [d["abr_score"] for d in h["draw_scores"]]
        assert h["draws"] >= 3, "the ABR headline is a maximum over responder seeds"
        assert h["value"] == max(scores) and h["spread"] == round(max(scores) - min(scores), 3)
        assert min(scores) >= 0.5, "a failed draw (below 0.5) bounds nothing"


def test_headlines_are_written_from_the_benchmarks_data(monkeypatch):
    module = _script("headlines", monkeypatch)
    data = json.loads(json.dumps(module.build()))
    written = json.loads((RESULTS / "headlines.json").read_text(encoding="utf-8"))
    stale = []
    for key in data["headlines"].keys() | written["headlines"].keys():
        fresh, old = data["headlines"].get(key, {}), written["headlines"].get(key, {})
        changed = [f for f in fresh.keys() | old.keys() if fresh.get(f) != old.get(f)]
        stale += [f"{key}.{f}: written {old.get(f)!r}, now {fresh.get(f)!r}" for f in changed]
    assert data == written, "run python benchmarks/headlines.py; stale:\n" + "\n".join(stale)
    page = module.read_section(*module.SECTION)
    assert page == module.markdown(data).strip(), "stale: run python benchmarks/headlines.py"


def test_the_headlines_measured_the_champion_that_ships():
    shipped = weights_sha256(CHAMPION_DIR)
    for key in ("champion_vs_ismcts1000", "champion_abr"):
        assert HEADLINES[key]["weights_sha256"] == shipped, (
            f"{key} was measured on other weights than the shipped champion's: measure the "
            "new champion (benchmarks/champion.py, exploitability.py, leaderboard.py), then "
            "run python benchmarks/headlines.py"
        )


def test_the_champion_table_is_its_provenance(monkeypatch):
    module = _script("champion", monkeypatch)
    arena = champion_provenance()["arena"]
    table = module._markdown(arena["rows"], arena["seed"], arena["az_timing"])
    assert _script("_results_page", monkeypatch).read_section(*module.SECTION) == table.strip()


def test_the_exploitability_table_is_its_data(monkeypatch):
    module = _script("exploitability", monkeypatch)
    data = json.loads((RESULTS / module.DATA).read_text(encoding="utf-8"))
    written = _script("_results_page", monkeypatch).read_section(*module.SECTION)
    assert written == module.markdown(data["rows"]).strip()


def test_the_previous_champions_draws_are_the_ones_the_scripts_wrote(monkeypatch):
    """Its draws are recorded in benchmarks/headlines.py; the commits hold the pages."""
    module = _script("headlines", monkeypatch)
    pages = {}
    for draw in module.PREVIOUS_CHAMPION_DRAWS:
        path, commit = re.fullmatch(r"(\S+) at commit (\w+)", draw["source"]).groups()
        shown = subprocess.run(
            ["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, text=True
        )
        if shown.returncode != 0:
            pytest.skip(f"no git history here: {shown.stderr.strip()}")
        pages[draw["seed"]] = shown.stdout
        lo, hi = (f"{x:.3f}" for x in draw["ci"])
        score = f"{draw['abr_score']:.3f}"
        if path.endswith("exploitability.md"):
            assert f"seed {draw['seed']}: {score} [{lo}, {hi}]" in shown.stdout
        else:
            (row,) = [r for r in shown.stdout.splitlines() if r.startswith("| `champion` |")]
            assert f"**{score} [{lo}, {hi}]" in row and "seed 2029" in shown.stdout


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_pages_quote_each_headline_by_its_figure(page):
    text = page.read_text(encoding="utf-8")
    problems = quote_problems(text) + statement_problems(text)
    assert not problems, f"{page.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_each_headline_is_quoted_where_its_fact_is_told():
    missing = []
    for key, pages in QUOTED_ON.items():
        anchor = HEADLINES[key]["anchor"]
        for name in pages:
            quotes = [
                label
                for label, _target, found in QUOTE.findall((ROOT / name).read_text("utf-8"))
                if found == anchor and FIGURE.search(label)
            ]
            if not quotes:
                missing.append(f"{name} does not quote {key} ([{HEADLINES[key]['quote']}]...)")
    assert not missing, "\n".join(missing)


def test_the_checks_catch_a_figure_that_is_not_the_headlines():
    champion, abr = HEADLINES["champion_vs_ismcts1000"], HEADLINES["champion_abr"]
    previous = HEADLINES["previous_champion_abr"]
    link = f"headlines.md#{champion['anchor']}"
    right, wrong = champion["quote"], f"{champion['value'] + 0.01:.3f}"
    # Quoted as a link: the headline's figure (and its interval) only.
    assert quote_problems(f"It scores [{right}]({link}).") == []
    assert quote_problems(f"It scores **[{right} {champion['quote_ci']}]({link})**.") == []
    assert quote_problems(f"It scores [see]({link}).") == []  # a link to the definition
    assert quote_problems(f"It scores [{wrong}]({link}).")
    assert quote_problems("It scores [0.5](headlines.md#no-such-headline).")
    # Stated without a link: the headline's own figures pass, others fail unless labelled.
    versus = "against `ismcts:1000`"
    assert statement_problems(f"The champion scores {right} {versus}.") == []
    assert statement_problems(f"The champion scores {wrong} {versus}.")
    assert statement_problems(f"| deals | champion {versus} |\n|---|---|\n| fresh | {wrong} |\n")
    assert statement_problems(f"On seed 2066 the champion scored {wrong} {versus}.") == []
    assert statement_problems(f"The champion's ABR score, to quote: {abr['value'] - 0.02:.3f}.")
    assert statement_problems(f"The previous champion's ABR score: {previous['value'] + 0.01:.3f}.")
    # A benchmark's section is checked against its data instead.
    section = f"The champion scores {wrong} {versus}."
    assert statement_problems(f"<!-- t: written by x.py -->\n{section}\n<!-- end t -->") == []
