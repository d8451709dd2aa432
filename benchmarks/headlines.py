"""The headline figures: each fact the pages quote, defined once from the benchmarks' data.

A headline is a figure the README and the results pages quote as *the* figure of a
fact: the champion's score against ``ismcts:1000``, how beatable the champion is (its
ABR score), how beatable the previous champion was. This script computes each from
the data the benchmarks wrote, never from a page's prose:

- the champion against ``ismcts:1000``: the arena of ``benchmarks/champion.py``, kept
  in the champion's provenance (``agents/champion_policy/policy.json``, ``arena``);
- the champion's ABR score: the maximum over every draw of ``jekyll-hyde exploit``'s
  default budget, the responder seeds of ``benchmarks/exploitability.py``
  (docs/results/exploitability.json) and the champion's row of
  ``benchmarks/leaderboard.py`` (docs/results/leaderboard.md), with the spread;
- the previous champion's ABR score: the same statistic over the draws those two
  scripts wrote while it was the champion (recorded below with their commits: it
  no longer ships, so it is not measured again).

It writes them to docs/results/headlines.json (what each measures, the statistic,
the seeds, the number of draws, the weights measured, the data it came from) and
the section ``headlines`` of docs/results/headlines.md. Pages quote a headline as a
link to its definition, ``[0.686](headlines.md#the-champion-against-ismcts1000)``;
tests/test_headlines.py fails when a quoted figure differs from headlines.json, when
headlines.json differs from what this script computes, or when the champion shipped
is not the one measured. Run it after a benchmark rewrites its data:

    python benchmarks/headlines.py [--check]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import statistics
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _results_page import RESULTS, read_section, write_section  # noqa: E402

from jekyll_hyde_agents.champion import CHAMPION_DIR, champion_provenance  # noqa: E402
from jekyll_hyde_agents.policy_file import weights_sha256  # noqa: E402
from jekyll_hyde_train.common.files import atomic_write_text  # noqa: E402

SECTION = ("headlines.md", "headlines", "benchmarks/headlines.py")
DATA = "headlines.json"
REFERENCE = "ismcts:1000"
EXPLOITABILITY = RESULTS / "exploitability.json"
LEADERBOARD = ("leaderboard.md", "leaderboard", "benchmarks/leaderboard.py")
ABR_BUDGET = (
    "`jekyll-hyde exploit`'s default budget (`configs/exploit/default.yaml`): per seat an RL "
    "responder trained for 3,000,000 steps, then 2,000 games, and the search responder "
    "`br:300`; each seat counts the stronger of the two"
)
ABR_STATISTIC = (
    "the maximum over responder seeds (each seed one training of the responders, one noisy "
    "draw) of the ABR score, the mean over the two seats of the stronger responder's win "
    "rate; the spread is the maximum minus the minimum"
)
# The previous champion (generation 11 of configs/expert_iteration/long.yaml, weights
# f1bf16ab...) no longer ships; its draws as the scripts wrote them while it did.
PREVIOUS_CHAMPION_WEIGHTS = "f1bf16ab2b0f10f55b41ef449a8e444238cd5742c6ab96dded1727d0f486bf37"
PREVIOUS_CHAMPION_DRAWS = [
    {"seed": seed, "abr_score": score, "ci": ci, "run": run, "source": source}
    for seed, score, ci, run, source in [
        (0, 0.559, [0.544, 0.574], "benchmarks/exploitability.py, seeds 0 to 2",
         "docs/results/exploitability.md at commit f0a175e"),
        (1, 0.560, [0.545, 0.576], "benchmarks/exploitability.py, seeds 0 to 2",
         "docs/results/exploitability.md at commit f0a175e"),
        (2, 0.559, [0.544, 0.575], "benchmarks/exploitability.py, seeds 0 to 2",
         "docs/results/exploitability.md at commit f0a175e"),
        (2029, 0.563, [0.547, 0.578], "benchmarks/leaderboard.py, 1,000 search pairs",
         "docs/results/leaderboard.md at commit f7d2021"),
    ]
]  # fmt: skip


def figure(value: float) -> str:
    """A figure as the pages show it: three decimals."""
    return f"{value:.3f}"


def _is_champion(row: dict[str, Any]) -> bool:
    """A row of exploitability.json measured on the shipped champion (by name, or as
    the run folder that made it, which the script's label says)."""
    return row["target"] == "champion" or (row.get("label") or "").startswith("the champion ")


def champion_arena() -> dict[str, Any]:
    """The champion against the reference in the arena of benchmarks/champion.py."""
    arena = champion_provenance()["arena"]
    match = f"`champion` vs `{REFERENCE}`"
    (row,) = [row for row in arena["rows"] if row["match"] == match]
    lo, hi = row["ci95"]
    return {
        "key": "champion_vs_ismcts1000",
        "title": f"The champion against `{REFERENCE}`",
        "anchor": "the-champion-against-ismcts1000",
        "fact": (
            f"the shipped champion's score against `{REFERENCE}` (ISMCTS with 1,000 simulations "
            "a decision), the champion playing without search: its most likely legal action"
        ),
        "statistic": (
            "the score over duplicate pairs (a pair: two games on the same deals with the roles "
            "swapped), the mean over pairs of the wins in the pair divided by two, with its 95% "
            "interval over pairs"
        ),
        "value": row["score"],
        "quote": figure(row["score"]),
        "ci95": [lo, hi],
        "quote_ci": f"[{figure(lo)}, {figure(hi)}]",
        "as_jekyll": row["as_jekyll"],
        "as_hyde": row["as_hyde"],
        "seeds": [arena["seed"]],
        "seeds_note": "deals from a seed no one chose: fixed before the measurement and used "
        "to choose nothing",
        "draws": 1,
        "pairs": row["pairs"],
        "weights_sha256": weights_sha256(CHAMPION_DIR),
        "measured_by": "python benchmarks/champion.py",
        "data": "agents/champion_policy/policy.json: provenance.arena, the row "
        f"{match} (written by benchmarks/champion.py)",
    }


def leaderboard_draw(agent: str = "champion") -> dict[str, Any]:
    """The agent's ABR score in the leaderboard's table, with its responder seed."""
    section = read_section(*LEADERBOARD)
    (row,) = [line for line in section.splitlines() if line.startswith(f"| `{agent}` |")]
    cell = row.split("|")[4]
    found = re.search(r"\*\*(\d\.\d+) \[(\d\.\d+), (\d\.\d+)\]", cell)
    seed = re.search(r"on deals from seed (\d+)", section)
    if found is None or seed is None:
        raise SystemExit(f"error: the leaderboard's row of {agent} holds no ABR score")
    score, lo, hi = (float(x) for x in found.groups())
    return {
        "seed": int(seed[1]),
        "abr_score": score,
        "ci": [lo, hi],
        "run": "benchmarks/leaderboard.py, 1,000 search pairs",
        "source": "docs/results/leaderboard.md (the section written by benchmarks/leaderboard.py)",
    }


def exploitability_draws() -> list[dict[str, Any]]:
    """The champion's responder seeds in exploitability.json."""
    data = json.loads(EXPLOITABILITY.read_text())
    (row,) = [row for row in data["rows"] if _is_champion(row)]
    return [
        {
            "seed": s["seed"],
            "abr_score": s["abr_score"],
            "ci": s["ci"],
            "run": f"benchmarks/exploitability.py, seeds {data['seeds'][0]} to {data['seeds'][-1]}",
            "source": "docs/results/exploitability.json (written by benchmarks/exploitability.py)",
        }
        for s in row["seeds"]
    ]


def abr_headline(key: str, title: str, anchor: str, who: str, draws: list[dict]) -> dict:
    """The maximum over the draws, with the spread and mean, and where each came from."""
    if any(d["abr_score"] < 0.5 for d in draws):
        raise SystemExit(f"error: a draw of {who} is below 0.5 (failed): it bounds nothing")
    scores = [d["abr_score"] for d in draws]
    best = max(draws, key=lambda d: d["abr_score"])
    lo, hi = best["ci"]
    spread = round(max(scores) - min(scores), 3)
    mean = round(statistics.fmean(scores), 4)
    return {
        "key": key,
        "title": title,
        "anchor": anchor,
        "fact": f"how beatable {who} is: the ABR score (approximate best response) of {ABR_BUDGET}",
        "statistic": ABR_STATISTIC,
        "value": max(scores),
        "quote": figure(max(scores)),
        "ci95": [lo, hi],
        "quote_ci": f"[{figure(lo)}, {figure(hi)}]",
        "spread": spread,
        "quote_spread": figure(spread),
        "mean": mean,
        "exploitability_lower_bound": round(max(scores) - 0.5, 4),
        "seeds": [d["seed"] for d in draws],
        "draws": len(draws),
        "draw_scores": draws,
        "measured_by": "python benchmarks/exploitability.py TARGET --seeds 0 1 2 --write-page; "
        "python benchmarks/leaderboard.py --write-page",
    }


def build() -> dict[str, Any]:
    """Every headline, from the benchmarks' data."""
    arena = champion_arena()
    champion = abr_headline(
        "champion_abr",
        "The champion's ABR score",
        "the-champions-abr-score",
        "the shipped champion",
        [*exploitability_draws(), leaderboard_draw()],
    )
    champion["weights_sha256"] = arena["weights_sha256"]
    champion["data"] = (
        "docs/results/exploitability.json (benchmarks/exploitability.py) and the champion's "
        "row of docs/results/leaderboard.md (benchmarks/leaderboard.py)"
    )
    previous = abr_headline(
        "previous_champion_abr",
        "The previous champion's ABR score",
        "the-previous-champions-abr-score",
        "the previous champion (generation 11 of `configs/expert_iteration/long.yaml`)",
        PREVIOUS_CHAMPION_DRAWS,
    )
    previous["weights_sha256"] = PREVIOUS_CHAMPION_WEIGHTS
    previous["data"] = "recorded in benchmarks/headlines.py from the pages those scripts wrote"
    return {
        "about": (
            "The headline figures: one figure per fact, which the README and the results pages "
            "quote as links to docs/results/headlines.md. Written by `python "
            "benchmarks/headlines.py` from the benchmarks' data; tests/test_headlines.py checks "
            "every quote against it."
        ),
        "headlines": {h["key"]: h for h in (arena, champion, previous)},
    }


def _draws_table(headline: dict[str, Any]) -> list[str]:
    lines = ["| responder seed | ABR score [95% interval] | run | data |", "|---|---|---|---|"]
    for d in headline["draw_scores"]:
        lo, hi = d["ci"]
        lines.append(
            f"| {d['seed']} | {figure(d['abr_score'])} [{figure(lo)}, {figure(hi)}] "
            f"| {d['run']} | {d['source']} |"
        )
    return lines


def markdown(data: dict[str, Any]) -> str:
    """The headlines page's section: each headline with its definition and draws."""
    out: list[str] = []
    for h in data["headlines"].values():
        figure_line = f"**{h['quote']}** {h['quote_ci']}"
        if "spread" in h:
            figure_line += (
                f", spread {h['quote_spread']} over {h['draws']} draws (mean {h['mean']:.3f}); "
                f"exploitability lower bound {h['exploitability_lower_bound']:.3f}"
            )
        else:
            figure_line += (
                f" ({h['as_jekyll']:.3f} as Jekyll, {h['as_hyde']:.3f} as Hyde), "
                f"{h['pairs']:,} duplicate pairs"
            )
        seeds = ", ".join(str(s) for s in h["seeds"])
        if "seeds_note" in h:
            seeds += " ([a seed no one chose](../glossary.md#a-seed-no-one-chose))"
        out += [
            f"## {h['title']}",
            "",
            figure_line,
            "",
            "| | |",
            "|---|---|",
            f"| measures | {h['fact']} |",
            f"| statistic | {h['statistic']} |",
            f"| seeds, draws | {seeds}; {h['draws']} draw{'s' if h['draws'] > 1 else ''} |",
            f"| weights measured | sha256 `{h['weights_sha256'][:8]}…` |",
            f"| measured by | `{h['measured_by']}` |",
            f"| data | {h['data']} |",
            "",
        ]
        if "draw_scores" in h:
            out += [*_draws_table(h), ""]
    out.append(
        f"Written by `python benchmarks/headlines.py` from the data above, with the same "
        f"figures in [{DATA}]({DATA})."
    )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if the files are stale"
    )
    args = parser.parse_args()
    data = build()
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    section = markdown(data)
    if args.check:
        stale = [
            name
            for name, fresh in (
                (DATA, (RESULTS / DATA).read_text() == text),
                (SECTION[0], read_section(*SECTION) == section.strip()),
            )
            if not fresh
        ]
        if stale:
            raise SystemExit(f"stale: {', '.join(stale)}; run python benchmarks/headlines.py")
        return
    atomic_write_text(RESULTS / DATA, text)
    write_section(*SECTION, section)
    print(section)


if __name__ == "__main__":
    main()
