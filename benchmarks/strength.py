"""Strength table: duplicate matches with 95% intervals, and what duplication gains.

Rows: heuristic vs random, ismcts:1000 vs heuristic, ismcts:1000 vs
random, each over ``--pairs`` duplicate pairs (default 1,000). Target: every
first-named agent scores above 0.5 with the interval excluding 0.5.

Duplicate pairing is measured against independent games in the same run: the
``heuristic vs random`` match is played a second time with each game on its own
deals (``--independent`` in ``jekyll-hyde eval``), and the two interval widths
are compared. Every row also prints the width that independent games would
give for the same win rate (the binomial interval over its 2N games).

    python benchmarks/strength.py [--pairs 1000] [--workers 2] [--rows all] [--out FILE]
"""

from __future__ import annotations

import argparse
import json

from jekyll_hyde_arena import evaluate

ROWS = [("heuristic", "random"), ("ismcts:1000", "heuristic"), ("ismcts:1000", "random")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--rows", default="all", help="'all', 'none' or comma-separated row numbers (0-2)"
    )
    parser.add_argument("--out", help="write all reports as JSON")
    args = parser.parse_args()
    if args.rows == "all":
        rows = ROWS
    elif args.rows == "none":  # only the duplicate-against-independent measurement
        rows = []
    else:
        rows = [ROWS[int(i)] for i in args.rows.split(",")]

    reports = []
    header = (
        "| A | B | pairs | A score | 95% CI | A as Jekyll | A as Hyde "
        "| CI width (dup / indep.) | games/s |"
    )
    lines = [header, "|---" * 9 + "|"]
    for a, b in rows:
        report = evaluate(a, b, args.pairs, seed=args.seed, workers=args.workers, progress=True)
        reports.append(report.to_json())
        lo, hi = report.score_ci
        verdict = "yes" if lo > 0.5 else "NO"
        jekyll = report.by_role["jekyll"]["win_rate"]
        hyde = report.by_role["hyde"]["win_rate"]
        lines.append(
            f"| {a} | {b} | {report.pairs} | {report.score:.3f} | [{lo:.3f}, {hi:.3f}] ({verdict}) "
            f"| {jekyll:.3f} | {hyde:.3f} | {hi - lo:.4f} / {report.independent_ci_width:.4f} "
            f"| {report.games_per_second:.1f} |"
        )
        print("\n".join(lines), flush=True)

    duplicate = evaluate("heuristic", "random", args.pairs, seed=args.seed, workers=args.workers)
    independent = evaluate(
        "heuristic", "random", args.pairs, seed=args.seed, workers=args.workers, duplicate=False
    )
    dup_width = duplicate.score_ci[1] - duplicate.score_ci[0]
    ind_width = independent.score_ci[1] - independent.score_ci[0]
    print(
        f"\nheuristic vs random, {args.pairs} pairs: interval width {dup_width:.4f} with duplicate "
        f"deals, {ind_width:.4f} with independent deals (ratio {dup_width / ind_width:.3f}); "
        f"scores {duplicate.score:.3f} and {independent.score:.3f}"
    )
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(
                {
                    "rows": reports,
                    "duplicate": duplicate.to_json(),
                    "independent": independent.to_json(),
                },
                handle,
                indent=2,
            )


if __name__ == "__main__":
    main()
