"""Exact answers on the small variants: each preset solved, its size, and exact scores.

For each variant named (``tiny`` and ``small`` by default), ``jekyll-hyde solve`` finds an
equilibrium with the sequence-form LP (``jekyll_hyde_train.exact``) into
``runs/exact/<variant>/`` (a variant already solved there is read back, not solved
again, so an interrupted run continues), then the exact best response scores, on the
whole tree:

- the equilibrium found (its exploitability is the solver's convergence figure);
- uniform random play;
- ``jekyll=<equilibrium>,hyde=random`` and the other way round, which show how much each
  seat's play matters.

It writes ``docs/results/exact.json`` and the tables of ``docs/results/exact.md``
(between the markers): every figure about the small variants is quoted from there.

    python benchmarks/exact_variants.py [--variants tiny small] [--runs runs/exact]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

from _results_page import RESULTS, check_section, write_section

from jekyll_hyde_agents.random_agent import RandomAgent
from jekyll_hyde_agents.sources import RoleAgent
from jekyll_hyde_agents.tabular import TabularAgent
from jekyll_hyde_env.engine.variant import parse_variant
from jekyll_hyde_train.common.files import atomic_write_text
from jekyll_hyde_train.exact.best_response import exact_score
from jekyll_hyde_train.exact.solve import SOLVE_FILE, solve_variant
from jekyll_hyde_train.exact.strategies import agent_strategy
from jekyll_hyde_train.exact.tree import build_tree

PAGE = "exact.md"
SCRIPT = "benchmarks/exact_variants.py"
DATA = RESULTS / "exact.json"


def solved(variant_name: str, runs: pathlib.Path) -> dict:
    """The variant's ``solve.json``: read back when that folder holds this variant's."""
    variant = parse_variant(variant_name)
    folder = runs / variant.name
    path = folder / SOLVE_FILE
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        if parse_variant(data["variant"]) == variant:
            print(f"{variant.name}: read back from {path}", flush=True)
            return data
    print(f"{variant.name}: solving into {folder}", flush=True)
    return solve_variant(variant, folder)


def scores(variant_name: str, runs: pathlib.Path) -> dict[str, dict]:
    """Exact scores of the equilibrium, random play and their mixes by seat."""
    variant = parse_variant(variant_name)
    tree = build_tree(variant)
    equilibrium = TabularAgent(runs / variant.name)
    agents = {
        "equilibrium": equilibrium,
        "random": RandomAgent(),
        "jekyll=equilibrium,hyde=random": RoleAgent(equilibrium, RandomAgent()),
        "jekyll=random,hyde=equilibrium": RoleAgent(RandomAgent(), equilibrium),
    }
    out = {}
    for name, agent in agents.items():
        started = time.perf_counter()
        score = exact_score(tree, agent_strategy(agent, tree, 0), agent_strategy(agent, tree, 1))
        out[name] = {**score.to_json(), "seconds": time.perf_counter() - started}
        print(f"{variant.name}: {name}: exact score {score.score:.6f}", flush=True)
    return out


def page(results: dict[str, dict]) -> str:
    """The page's tables: the variants and their solutions, then the exact scores."""
    lines = [
        "| variant | deals | histories | information sets (Jekyll / Hyde) | sequences "
        "(Jekyll / Hyde) | Jekyll wins at equilibrium | exploitability of the solution | "
        "tree + LP + check (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in results.items():
        solve, sizes, seconds = row["solve"], row["solve"]["sizes"], row["solve"]["seconds"]
        lines.append(
            f"| `{name}` | {sizes['deals']:,} | {sizes['histories']:,} | "
            f"{sizes['infosets_jekyll']:,} / {sizes['infosets_hyde']:,} | "
            f"{sizes['sequences_jekyll']:,} / {sizes['sequences_hyde']:,} | "
            f"{solve['jekyll_win_probability']:.6f} | {solve['exploitability']:.1e} | "
            f"{seconds['tree']:.0f} + {seconds['solve']:.0f} + {seconds['check']:.0f} |"
        )
    lines += [
        "",
        "Exact scores: the mean over the two seats of the best response's win probability "
        "(0.5 at an equilibrium), with each seat's.",
        "",
        "| variant | strategy | exact score | best response as Jekyll | best response as Hyde |",
        "|---|---|---|---|---|",
    ]
    for name, row in results.items():
        for strategy, score in row["scores"].items():
            seats = score["seats"]
            lines.append(
                f"| `{name}` | {strategy} | {score['score']:.6f} | {seats['jekyll']:.6f} | "
                f"{seats['hyde']:.6f} |"
            )
    return "\n".join(lines)


def main() -> None:
    """Solve the variants, score the strategies, write the data and the page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=["tiny", "small"])
    parser.add_argument("--runs", type=pathlib.Path, default=pathlib.Path("runs/exact"))
    args = parser.parse_args()
    check_section(PAGE, "exact", SCRIPT)
    results = {}
    for name in args.variants:
        variant = parse_variant(name)
        results[variant.name] = {
            "solve": solved(name, args.runs),
            "scores": scores(name, args.runs),
        }
    atomic_write_text(DATA, json.dumps(results, indent=2, sort_keys=True) + "\n")
    write_section(PAGE, "exact", SCRIPT, page(results))
    print(f"written: {DATA} and {RESULTS / PAGE}")


if __name__ == "__main__":
    main()
