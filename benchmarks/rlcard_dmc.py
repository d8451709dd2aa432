"""RLCard's Deep Monte-Carlo on "jekyll-hyde", then in the arena: docs/results/rlcard.md.

Trains RLCard's ``DMCTrainer`` as RLCard ships it (one network per player id:
0 Jekyll, 1 Hyde; its actor processes play both seats) on the RLCard environment
``"jekyll-hyde"`` for ``--frames`` frames (the trainer's own budget: it stops once
its learners have consumed that many), then plays the trained networks through the
arena adapter (``jekyll_hyde_agents.rlcard_agent.RLCardAgent``) in duplicate
pairs against ``heuristic`` and ``ismcts:1000`` on the deals of ``--seed`` (3000
and up: deals that chose nothing), with 95% intervals, and writes the table into
docs/results/rlcard.md between the ``rlcard-dmc`` markers. The default budget
trains for a few minutes on 2 cores.

RLCard's DMC imports GitPython (``git``) to note the repository's commit in its
log; RLCard declares it in its own ``torch`` extra only, so this project's
``rlcard`` and ``bench`` extras install it.

    python benchmarks/rlcard_dmc.py [--frames 400000] [--actors 1] [--pairs 200]
        [--seed 3000] [--workers 2] [--savedir DIR] [--no-write]
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import os
import pathlib
import tempfile
import time
from typing import Any

import rlcard
import torch
from _results_page import check_section, write_section
from rlcard.agents.dmc_agent import DMCTrainer
from rlcard.agents.dmc_agent.model import DMCModel

import jekyll_hyde_env.integrations.rlcard as rlcard_env
from jekyll_hyde_agents.rlcard_agent import RLCardAgent
from jekyll_hyde_arena.duplicate import run_pairs
from jekyll_hyde_arena.report import MatchReport, summarise
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE

SECTION = ("rlcard.md", "rlcard-dmc", "benchmarks/rlcard_dmc.py")
OPPONENTS = ("heuristic", "ismcts:1000")
XPID = "jekyll_hyde"


def train(
    savedir: pathlib.Path,
    frames: int,
    actors: int = 1,
    batch_size: int = 32,
    unroll_length: int = 100,
    num_buffers: int = 50,
    seed: int = 0,
) -> dict[str, Any]:
    """Run RLCard's ``DMCTrainer`` until its learners have consumed ``frames`` frames.

    The trainer leaves its actor processes running when the learners stop; the
    ones this call started are ended here.

    Returns:
        ``checkpoint`` (the trainer's ``model.tar``), ``seconds`` and its ``stats``.
    """
    torch.manual_seed(seed)
    env = rlcard.make(rlcard_env.ENV_ID, config={"seed": seed})
    trainer = DMCTrainer(
        env,
        xpid=XPID,
        savedir=str(savedir),
        save_interval=24 * 60,  # minutes: only the trainer's first and last checkpoints
        num_actors=actors,
        training_device="cpu",
        total_frames=frames,
        batch_size=batch_size,
        unroll_length=unroll_length,
        num_buffers=num_buffers,
        num_threads=1,
    )
    # One thread per process: the actors and the learner share the cores, and
    # OpenMP threads waiting for cores slowed the actors tenfold. The spawned
    # actors read OMP_NUM_THREADS from the environment they inherit.
    threads, omp = torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS")
    before = set(multiprocessing.active_children())
    started = time.perf_counter()
    try:
        torch.set_num_threads(1)
        os.environ["OMP_NUM_THREADS"] = "1"
        trainer.start()
    finally:
        for child in set(multiprocessing.active_children()) - before:
            child.terminate()
            child.join(timeout=30)
        torch.set_num_threads(threads)
        if omp is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = omp
    seconds = time.perf_counter() - started
    checkpoint = savedir / XPID / "model.tar"
    saved = torch.load(checkpoint, weights_only=True)
    return {"checkpoint": checkpoint, "seconds": seconds, "frames": saved["frames"],
            "stats": saved["stats"]}  # fmt: skip


def load_agents(checkpoint: pathlib.Path) -> list[Any]:
    """The DMC agents of a trainer's ``model.tar``, player 0 (Jekyll) and 1 (Hyde), greedy."""
    saved = torch.load(checkpoint, weights_only=True)
    players = rlcard_env.NUM_PLAYERS
    model = DMCModel(
        [[OBS_SIZE]] * players, [[NUM_ACTIONS]] * players, exp_epsilon=0.0, device="cpu"
    )
    for agent, weights in zip(model.get_agents(), saved["model_state_dict"], strict=True):
        agent.load_state_dict(weights)
        agent.eval()
    return model.get_agents()


# --- the arena -----------------------------------------------------------------------------


def dmc_agent(checkpoint: str) -> RLCardAgent:
    """The trained DMC agents as one arena agent, built in each arena worker."""
    torch.set_num_threads(1)  # one game per process; small matrix products
    return RLCardAgent(load_agents(pathlib.Path(checkpoint)), name="dmc")


def match(
    checkpoint: pathlib.Path, opponent: str, pairs: int, seed: int, workers: int
) -> MatchReport:
    """The DMC agents (A) against ``opponent`` (B) in ``pairs`` duplicate pairs, on the
    arena's workers (spawned: torch's threads and fork do not mix)."""
    started = time.perf_counter()
    builder = functools.partial(dmc_agent, str(checkpoint))
    results = list(run_pairs(builder, opponent, pairs, seed, workers, start_method="spawn"))
    return summarise(("dmc", opponent), seed, results, pairs, time.perf_counter() - started)


def markdown(trained: dict[str, Any], reports: list[MatchReport], args: argparse.Namespace) -> str:
    """The results table and the run's facts."""
    lines = [
        "| match | pairs | score | 95% interval | as Jekyll | as Hyde |",
        "|---|---|---|---|---|---|",
    ]
    for report in reports:
        lo, hi = report.score_ci
        jekyll = report.by_role["jekyll"]["win_rate"]
        hyde = report.by_role["hyde"]["win_rate"]
        lines.append(
            f"| DMC vs `{report.agents[1]}` | {report.pairs:,} | {report.score:.3f} "
            f"| [{lo:.3f}, {hi:.3f}] | {jekyll:.3f} | {hyde:.3f} |"
        )
    stats = trained["stats"]
    minutes = trained["seconds"] / 60
    lines += [
        "",
        f"DMC trained for {trained['frames']:,} frames ({minutes:.1f} minutes, "
        f"{trained['frames'] / trained['seconds']:,.0f} frames/s) with {args.actors} actor "
        f"process(es), batch {args.batch_size} x unroll {args.unroll_length}, RLCard's other "
        f"defaults, seed {args.train_seed}; last losses {stats.get('loss_0', 0):.3f} (Jekyll) "
        f"and {stats.get('loss_1', 0):.3f} (Hyde). Duplicate pairs on deals from seed "
        f"{args.seed}, which chose nothing. Written by `python benchmarks/rlcard_dmc.py "
        f"--frames {args.frames} --actors {args.actors} --batch-size {args.batch_size} "
        f"--unroll-length {args.unroll_length} --train-seed {args.train_seed} "
        f"--pairs {args.pairs} --seed {args.seed}`.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=400_000, help="DMC's training budget")
    parser.add_argument("--actors", type=int, default=1, help="DMC's actor processes")
    # RLCard's default batch is 32 unrolls; 8 gives a budget of minutes four times the
    # updates from the same frames (the actors, not the learner, are the bottleneck).
    parser.add_argument("--batch-size", type=int, default=8, help="DMC's learner batch")
    parser.add_argument("--unroll-length", type=int, default=100, help="DMC's unroll length")
    parser.add_argument("--train-seed", type=int, default=0)
    parser.add_argument("--pairs", type=int, default=200, help="duplicate pairs per opponent")
    parser.add_argument("--seed", type=int, default=3000, help="the evaluation deals' seed")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--savedir", help="where DMC writes (default: a temporary folder)")
    parser.add_argument("--no-write", action="store_true", help="print, leave the page alone")
    args = parser.parse_args()
    sizes = args.frames, args.actors, args.batch_size, args.unroll_length, args.pairs
    if min(*sizes, args.workers) < 1:
        parser.error("--frames, --actors, --batch-size, --unroll-length, --pairs, --workers: >= 1")
    if args.seed < 0 or args.train_seed < 0:
        parser.error("--seed and --train-seed must be >= 0")
    if not args.no_write:
        check_section(*SECTION)
    with tempfile.TemporaryDirectory() as temporary:
        savedir = pathlib.Path(args.savedir or temporary)
        trained = train(
            savedir, args.frames, args.actors, args.batch_size, args.unroll_length,
            seed=args.train_seed,
        )  # fmt: skip
        print(f"trained {trained['frames']:,} frames in {trained['seconds']:.0f} s", flush=True)
        reports = []
        for opponent in OPPONENTS:
            report = match(trained["checkpoint"], opponent, args.pairs, args.seed, args.workers)
            reports.append(report)
            lo, hi = report.score_ci
            print(f"dmc vs {opponent}: {report.score:.3f} [{lo:.3f}, {hi:.3f}]", flush=True)
    table = markdown(trained, reports, args)
    print(table)
    if not args.no_write:
        write_section(*SECTION, table)


if __name__ == "__main__":
    main()
