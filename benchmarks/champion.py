"""The shipped champion measured: its results page and the arena record in its provenance.

``[--pairs 1000] [--seed 2028] [--simulations 4000] [--az-options ...]``
plays the shipped champion in duplicate pairs: without search against
``random``, ``heuristic`` and ``ismcts:1000``, and as ``az:N`` (network-guided
search with the champion, by default blending the value head with the
heuristic's playouts, ``--az-options value_weight=0.5,playouts=heuristic``)
against ``ismcts:1000``, with the time per decision of ``az:N``, and ``az``
against ``ismcts`` at equal seconds a decision (``--seconds``, ``--equal-pairs``
pairs; both on the clock, so the cores should be otherwise idle). It writes
the table into docs/results/champion.md between the ``champion-table`` markers
and into the champion's provenance (``arena``). ``tools/ship_champion.py``
puts a new champion into the package; the seed here must be one that chose
nothing.

    python benchmarks/champion.py [--pairs 1000] [--seed 2028] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _results_page import check_section, write_section  # noqa: E402
from az_strength import time_decisions  # noqa: E402

from jekyll_hyde_agents import parse_az_spec  # noqa: E402
from jekyll_hyde_agents.champion import CHAMPION_DIR, champion_path  # noqa: E402
from jekyll_hyde_agents.policy_format import METADATA_FILE  # noqa: E402
from jekyll_hyde_arena import evaluate  # noqa: E402
from jekyll_hyde_train.common.files import atomic_write_text  # noqa: E402

SECTION = ("champion.md", "champion-table", "benchmarks/champion.py")


def _row(label: str, report, spent: float) -> dict:
    lo, hi = report.score_ci
    return {
        "match": label,
        "pairs": report.pairs,
        "score": round(report.score, 4),
        "ci95": [round(lo, 4), round(hi, 4)],
        "as_jekyll": round(report.by_role["jekyll"]["win_rate"], 4),
        "as_hyde": round(report.by_role["hyde"]["win_rate"], 4),
        "seconds": round(spent, 1),
    }


def _markdown(rows: list[dict], seed: int, timing: dict) -> str:
    lines = [
        "| match | pairs | score | 95% interval | as Jekyll | as Hyde |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lo, hi = row["ci95"]
        lines.append(
            f"| {row['match']} | {row['pairs']:,} | {row['score']:.3f} | [{lo:.3f}, {hi:.3f}] "
            f"| {row['as_jekyll']:.3f} | {row['as_hyde']:.3f} |"
        )
    lines += [
        "",
        f"[Duplicate pairs](../glossary.md#duplicate-pairs) on deals from seed {seed}, "
        "[which chose nothing](../glossary.md#a-seed-no-one-chose). "
        f"`{timing['agent']}` took {timing['mean_ms']:.1f} ms a decision on average "
        f"(95th percentile {timing['p95_ms']:.1f} ms) on one core. "
        "The champion's row against `ismcts:1000` is its headline figure "
        "([Headline figures](headlines.md), which `python benchmarks/headlines.py` writes "
        "from this table's data in the champion's provenance). "
        "Written by `python benchmarks/champion.py`.",
    ]
    return "\n".join(lines)


def table(
    pairs: int,
    seed: int,
    simulations: int,
    workers: int,
    seconds: float,
    equal_pairs: int,
    az_options: str = "",
) -> None:
    champion_path()
    check_section(*SECTION)
    options = f",{az_options}" if az_options else ""
    az = parse_az_spec(f"{simulations}{options}")  # no policy: the champion
    timed_az = parse_az_spec(f"{seconds:g}s{options}")
    az.build()  # a policy that cannot be searched is refused before any game
    matches = [
        ("champion", "random", pairs),
        ("champion", "heuristic", pairs),
        ("champion", "ismcts:1000", pairs),
        (az, "ismcts:1000", pairs),
        (timed_az, f"ismcts:{seconds:g}s", equal_pairs),
    ]
    started = time.perf_counter()
    timing = time_decisions(az, 4, seed)
    print(f"{az.name}: {timing['mean_ms']:.1f} ms a decision", flush=True)
    rows = []
    for a, b, n in matches:
        begun = time.perf_counter()
        report = evaluate(a, b, n, seed=seed, workers=workers, progress=True)
        a_name, b_name = report.agents
        rows.append(_row(f"`{a_name}` vs `{b_name}`", report, time.perf_counter() - begun))
        print(rows[-1], flush=True)
    markdown = _markdown(rows, seed, timing)
    write_section(*SECTION, markdown)
    metadata = json.loads((CHAMPION_DIR / METADATA_FILE).read_text())
    metadata.setdefault("provenance", {})["arena"] = {
        "seed": seed,
        "rows": rows,
        "az_timing": {k: timing[k] for k in ("agent", "mean_ms", "p95_ms", "decisions")},
    }
    atomic_write_text(CHAMPION_DIR / METADATA_FILE, json.dumps(metadata, indent=2) + "\n")
    print(markdown)
    print(f"total {time.perf_counter() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2028)
    parser.add_argument("--simulations", type=int, default=4000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--seconds", type=float, default=0.01, help="per decision, az against ismcts at equal time"
    )
    parser.add_argument("--equal-pairs", type=int, default=300)
    parser.add_argument(
        "--az-options",
        default="value_weight=0.5,playouts=heuristic",
        help="options of both az rows ('' for the search's defaults)",
    )
    args = parser.parse_args()
    if min(args.pairs, args.simulations, args.workers, args.equal_pairs) < 1:
        parser.error("--pairs, --simulations, --workers and --equal-pairs must be positive")
    if not args.seconds > 0:
        parser.error("--seconds must be positive")
    if any(item.startswith("policy=") for item in args.az_options.split(",")):
        parser.error("--az-options: the table measures the champion; policy= is not allowed")
    table(args.pairs, args.seed, args.simulations, args.workers, args.seconds,
          args.equal_pairs, args.az_options)  # fmt: skip


if __name__ == "__main__":
    main()
