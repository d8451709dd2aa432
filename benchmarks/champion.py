"""Ship the champion policy and measure it: its provenance and its results page.

Two steps, each a subcommand:

``ship RUN [--generation N] [--note TEXT]`` copies one generation's policy of an
expert-iteration run folder into the package (``agents/champion_policy/``),
with the weights unchanged and its ``policy.json`` provenance extended by the
run's record: the generation, how it was chosen, the games and decisions it
was fit on, its held-out losses and the run's per-generation metrics. The
default generation is the one that scored best against ``ismcts:1000`` in the
run's own evaluation (ties go to the later one); those deals come from the
run's seeds, so the table below, on other seeds, is not the one that chose.

``table [--pairs 1000] [--seed 2028] [--simulations 4000] [--az-options ...]``
plays the shipped champion in duplicate pairs: without search against
``random``, ``heuristic`` and ``ismcts:1000``, and as ``az:N`` (network-guided
search with the champion, by default blending the value head with the
heuristic's playouts, ``--az-options value_weight=0.5,playouts=heuristic``)
against ``ismcts:1000``, with the time per decision of ``az:N``, and ``az``
against ``ismcts`` at equal seconds a decision (``--seconds``, ``--equal-pairs``
pairs; both on the clock, so the cores should be otherwise idle). It writes
the table into docs/results/champion.md between the ``champion-table`` markers
and into the champion's provenance (``arena``). Seed 2028 was used to choose
nothing.

    python benchmarks/champion.py ship runs/long [--generation 7]
    python benchmarks/champion.py table [--pairs 1000] [--seed 2028] [--workers 2]
"""

from __future__ import annotations

import argparse
import csv
import json
import pathlib
import shutil
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _readme import check_section, write_section  # noqa: E402

from agents import make_agent  # noqa: E402
from agents.champion import CHAMPION_DIR, champion_path  # noqa: E402
from agents.policy_file import METADATA_FILE, WEIGHTS_FILE, read_policy  # noqa: E402
from train.files import atomic_write_text  # noqa: E402

SECTION = ("champion.md", "champion-table", "benchmarks/champion.py table")
SELECTION_KEY = "score_vs_ismcts:1000"
MAX_BYTES = 8 * 1024 * 1024


def _metrics(run: pathlib.Path) -> list[dict[str, str]]:
    path = run / "metrics.csv"
    if not path.is_file():
        raise SystemExit(f"error: {run} has no metrics.csv; is it an expert-iteration run folder?")
    with path.open() as file:
        return list(csv.DictReader(file))


def choose_generation(rows: list[dict[str, str]]) -> int:
    """The generation with the best score against ``ismcts:1000``; ties go to the later one."""
    if not rows or SELECTION_KEY not in rows[0]:
        raise SystemExit(f"error: metrics.csv has no {SELECTION_KEY!r} column to choose by")
    best = max(rows, key=lambda row: (float(row[SELECTION_KEY]), int(row["generation"])))
    return int(best["generation"])


def ship(run: pathlib.Path, generation: int | None, note: str | None = None) -> None:
    rows = _metrics(run)
    chosen = choose_generation(rows) if generation is None else generation
    by_generation = {int(row["generation"]): row for row in rows}
    if chosen not in by_generation:
        raise SystemExit(
            f"error: generation {chosen} is not finished in {run}; "
            f"finished: {sorted(by_generation)}"
        )
    source = run / f"generation_{chosen:02d}" / "policy"
    saved = read_policy(source)  # refuses a corrupt or foreign file before anything is copied
    if not saved.metadata.get("value_head"):
        raise SystemExit(f"error: {source} has no value head; the champion needs one for az")
    if (source / WEIGHTS_FILE).stat().st_size > MAX_BYTES:
        raise SystemExit(f"error: {source / WEIGHTS_FILE} is larger than 8 MB")
    row = by_generation[chosen]
    metadata = dict(saved.metadata)
    provenance = dict(metadata.get("provenance", {}))
    provenance.update(
        run=run.name,
        generation=chosen,
        selected_by=(
            f"the highest {SELECTION_KEY} among the run's generations "
            "(the run's evaluation deals, not the arena table's)"
            if generation is None
            else "named by hand"
        ),
        data={
            "games": int(row["train_games"]),
            "decisions": int(row["train_decisions"]),
            "teacher": row["teacher"],
        },
        held_out={
            key: float(row[key])
            for key in ("validation_loss", "validation_value_loss", "validation_agreement")
        },
        generations=[
            {key: value for key, value in r.items() if key != "teacher"} for r in rows
        ],
    )
    provenance.pop("arena", None)
    provenance.pop("note", None)
    if note:
        provenance["note"] = note
    metadata["provenance"] = provenance
    CHAMPION_DIR.mkdir(exist_ok=True)
    temporary = CHAMPION_DIR / f".{WEIGHTS_FILE}.tmp"
    shutil.copyfile(source / WEIGHTS_FILE, temporary)
    temporary.replace(CHAMPION_DIR / WEIGHTS_FILE)
    atomic_write_text(CHAMPION_DIR / METADATA_FILE, json.dumps(metadata, indent=2) + "\n")
    read_policy(CHAMPION_DIR)
    print(f"shipped generation {chosen} of {run} to {CHAMPION_DIR}")


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
        f"Duplicate pairs on deals from seed {seed}, which chose nothing. "
        f"`{timing['agent']}` took {timing['mean_ms']:.1f} ms a decision on average "
        f"(95th percentile {timing['p95_ms']:.1f} ms) on one core. "
        "Written by `python benchmarks/champion.py table`.",
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
    from az_strength import time_decisions

    from train.evaluate import evaluate

    champion_path()
    check_section(*SECTION)
    options = f",{az_options}" if az_options else ""
    az = f"az:{simulations}{options}"
    make_agent(az)  # a bad option is refused before any game
    matches = [
        ("champion", "random", pairs),
        ("champion", "heuristic", pairs),
        ("champion", "ismcts:1000", pairs),
        (az, "ismcts:1000", pairs),
        (f"az:{seconds:g}s{options}", f"ismcts:{seconds:g}s", equal_pairs),
    ]
    started = time.perf_counter()
    timing = time_decisions(az, 4, seed)
    print(f"{az}: {timing['mean_ms']:.1f} ms a decision", flush=True)
    rows = []
    for a, b, n in matches:
        begun = time.perf_counter()
        report = evaluate(a, b, n, seed=seed, workers=workers, progress=True)
        rows.append(_row(f"`{a}` vs `{b}`", report, time.perf_counter() - begun))
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
    commands = parser.add_subparsers(dest="command", required=True)
    ship_parser = commands.add_parser("ship", help="copy a run's generation into the package")
    ship_parser.add_argument("run", type=pathlib.Path, help="an expert-iteration run folder")
    ship_parser.add_argument("--generation", type=int, help="default: best vs ismcts:1000")
    ship_parser.add_argument("--note", help="recorded in the provenance: how the run went")
    table_parser = commands.add_parser("table", help="measure the champion, write its table")
    table_parser.add_argument("--pairs", type=int, default=1000)
    table_parser.add_argument("--seed", type=int, default=2028)
    table_parser.add_argument("--simulations", type=int, default=4000)
    table_parser.add_argument("--workers", type=int, default=2)
    table_parser.add_argument(
        "--seconds", type=float, default=0.01, help="per decision, az against ismcts at equal time"
    )
    table_parser.add_argument("--equal-pairs", type=int, default=300)
    table_parser.add_argument(
        "--az-options",
        default="value_weight=0.5,playouts=heuristic",
        help="options of both az rows ('' for the search's defaults)",
    )
    args = parser.parse_args()
    if args.command == "ship":
        ship(args.run, args.generation, args.note)
    else:
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
