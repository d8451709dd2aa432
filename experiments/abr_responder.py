"""Is the RL responder strong enough to measure anything? Its ABR score against a
target beside the score of a named peer against the same target.

An approximate best response is only a useful bound if the responder beats
the target by more than a strong general player does. This script runs
``jekyll-hyde exploit TARGET`` (resuming ``--run-dir`` when it holds a
finished or stopped run of the same settings) and, in the same run, the peer
(default ``ismcts:1000``) against the target in ``--pairs`` duplicate pairs
on deals from ``--seed`` (default 2030, a seed that chose nothing). It prints
the RL responder's ABR score (the mean of its two seats' win rates) and the
peer's score, each with a 95% interval, their ratio, and whether the RL
responder beats the peer (the target: it must).

    python experiments/abr_responder.py [--target heuristic] [--peer ismcts:1000]
        [--pairs 1000] [--run-dir runs/abr-heuristic] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jekyll_hyde_arena import evaluate  # noqa: E402
from jekyll_hyde_train.common.files import atomic_write_text  # noqa: E402
from jekyll_hyde_train.exploit.config import load_exploit_config  # noqa: E402
from jekyll_hyde_train.exploit.run import run  # noqa: E402


def measure(target: str, peer: str, pairs: int, seed: int, run_dir: pathlib.Path) -> dict:
    """The RL responder's and the peer's scores against ``target``, with intervals and costs."""
    started = time.perf_counter()
    summary = run(target, load_exploit_config(None, []), run_dir)
    exploit_seconds = time.perf_counter() - started
    started = time.perf_counter()
    report = evaluate(peer, target, pairs, seed=seed, workers=2, progress=True)
    peer_seconds = time.perf_counter() - started
    rl, (rl_low, rl_high) = summary["rl_abr_score"], summary["rl_abr_ci"]
    return {
        "target": target,
        "rl_responder": {
            "abr_score": rl,
            "ci95": [rl_low, rl_high],
            "seats": {seat: row["rl"]["win_rate"] for seat, row in summary["seats"].items()},
            "steps_per_seat": summary["budget"]["steps_per_seat"],
            "start": summary["budget"]["rl_start"],
        },
        "peer": {
            "agent": peer,
            "score": report.score,
            "ci95": list(report.score_ci),
            "pairs": report.pairs,
            "seed": seed,
        },  # fmt: skip
        "ratio": rl / report.score,
        "beats_peer": rl > report.score,
        "seconds": {"exploit": exploit_seconds, "peer": peer_seconds},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="heuristic")
    parser.add_argument("--peer", default="ismcts:1000")
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2030)
    parser.add_argument("--run-dir", type=pathlib.Path, default=pathlib.Path("runs/abr-heuristic"))
    parser.add_argument("--out", type=pathlib.Path, help="write the figures as JSON")
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be positive")
    if args.out is not None and not args.out.parent.is_dir():
        parser.error(f"--out {args.out}: the folder {args.out.parent} does not exist")
    result = measure(args.target, args.peer, args.pairs, args.seed, args.run_dir)
    rl, peer = result["rl_responder"], result["peer"]
    verdict = "meets" if result["beats_peer"] else "MISSES"
    print(
        f"RL responder vs {args.target}: ABR {rl['abr_score']:.3f} "
        f"[{rl['ci95'][0]:.3f}, {rl['ci95'][1]:.3f}] (seats {rl['seats']}, "
        f"{rl['steps_per_seat']:,} steps a seat from {rl['start']})\n"
        f"{peer['agent']} vs {args.target}: {peer['score']:.3f} "
        f"[{peer['ci95'][0]:.3f}, {peer['ci95'][1]:.3f}] over {peer['pairs']} pairs\n"
        f"ratio {result['ratio']:.3f}: the RL responder {verdict} the target (beat the peer)"
    )
    if args.out is not None:
        atomic_write_text(args.out, json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
