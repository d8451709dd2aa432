"""Labelling expert iteration's shards on Ray against the local process pool.

``jekyll_hyde_train.expert_iteration.distill.generate`` labels the same shards (checked array by
array)
with the local pool of ``run.executor: local`` (``LocalExecutor``) and with
a local Ray of as many CPUs (``RayExecutor``, ``run.executor: ray``), with 1
and 2 workers. The teacher is network-guided search (``az``) with a random
network of ``--hidden`` widths, so that the network travels to the workers as
in every generation after the first. Ray's workers are warmed first by a
small generation, as they are in every generation of a run but its first; the
cold start (Ray's own start, then the first shard on each worker) is shown
apart. The two executors take turns, ``--repeats`` times, and the best of
each counts, so that both see the shared machine's speed alike.

Prints labelled decisions per second for each, Ray's throughput over the
pool's, Ray's overhead per shard (shards of one one-simulation game through
each executor, where labelling costs nearly nothing), the size of a shard's
file and of the network each generation broadcasts. With ``--write-page`` the
table replaces the ``ray-labelling`` section of docs/results/ray.md.

    python benchmarks/ray_labelling.py [--teacher az:300] [--hidden 512x512]
        [--games 80] [--games-per-shard 10] [--repeats 2] [--write-page]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from _results_page import check_section, write_section  # noqa: E402
from net_speed import random_policy  # noqa: E402

from jekyll_hyde_agents import parse_az_spec  # noqa: E402
from jekyll_hyde_agents.policy_file import parse_layer_sizes  # noqa: E402
from jekyll_hyde_agents.policy_format import WEIGHTS_FILE  # noqa: E402
from jekyll_hyde_train.expert_iteration.distill import (  # noqa: E402
    DATA_FOLDER,
    generate,
    read_shard,
)
from jekyll_hyde_train.expert_iteration.executors import RayExecutor, import_ray  # noqa: E402
from jekyll_hyde_train.expert_iteration.settings import DistillSettings  # noqa: E402

SECTION = ("ray.md", "ray-labelling", "benchmarks/ray_labelling.py --write-page")
OVERHEAD_SHARDS = 60


def shards_of(folder: pathlib.Path) -> list[pathlib.Path]:
    return sorted((folder / DATA_FOLDER).glob("shard_*.npz"))


def decisions_in(folder: pathlib.Path) -> int:
    return sum(len(read_shard(path)["role"]) for path in shards_of(folder))


def same_shards(a: pathlib.Path, b: pathlib.Path) -> bool:
    """Whether the two folders hold the same shard files with the same arrays."""
    left, right = shards_of(a), shards_of(b)
    if [p.name for p in left] != [p.name for p in right]:
        return False
    for x, y in zip(left, right, strict=True):
        ax, ay = read_shard(x), read_shard(y)
        if sorted(ax) != sorted(ay):
            return False
        if any(ax[k].dtype != ay[k].dtype or not np.array_equal(ax[k], ay[k]) for k in ax):
            return False
    return True


def timed(folder: pathlib.Path, settings: DistillSettings, workers: int, executor=None) -> float:
    """Seconds to label every shard of ``settings`` into the empty ``folder``."""
    started = time.perf_counter()
    generate(folder, settings, workers, executor=executor)
    return time.perf_counter() - started


def measure(args: argparse.Namespace, work: pathlib.Path, settings: DistillSettings) -> list[dict]:
    """Both executors at each worker count: a row of figures each."""
    tiny = DistillSettings(teacher="ismcts:1", games=OVERHEAD_SHARDS, games_per_shard=1, seed=2)
    rows = []
    for workers in (1, 2):
        started = time.perf_counter()
        ray = RayExecutor("local", workers)
        ray_start = time.perf_counter() - started
        warm = dataclasses.replace(settings, seed=1, games=workers, games_per_shard=1)
        first = timed(work / f"warm-{workers}", warm, workers, ray)
        best = {"local": 0.0, "ray": 0.0}
        folders = {}
        for repeat in range(args.repeats):
            for kind in ("local", "ray"):
                folder = work / f"{kind}-{workers}-{repeat}"
                seconds = timed(folder, settings, workers, ray if kind == "ray" else None)
                best[kind] = max(best[kind], decisions_in(folder) / seconds)
                folders[kind] = folder
                print(
                    f"{workers} worker(s), {kind}: {decisions_in(folder) / seconds:,.0f} "
                    "decisions/s",
                    flush=True,
                )
        if not same_shards(folders["local"], folders["ray"]):
            raise SystemExit("error: Ray's shards differ from the local pool's")
        overhead = {
            kind: timed(
                work / f"tiny-{kind}-{workers}", tiny, workers, ray if kind == "ray" else None
            )
            / OVERHEAD_SHARDS
            for kind in ("local", "ray")
        }
        ray.close()
        rows.append(
            {
                "workers": workers,
                "local": best["local"],
                "ray": best["ray"],
                "ray_start": ray_start,
                "first_shard": first,
                "local_shard_ms": 1000 * overhead["local"],
                "ray_shard_ms": 1000 * overhead["ray"],
            }
        )
    return rows


def markdown(
    rows: list[dict],
    args: argparse.Namespace,
    shard_bytes: float,
    net_bytes: int,
    decisions_per_game: float,
) -> str:
    lines = [
        f"Teacher `{args.teacher}` with a random {args.hidden} network, {args.games} games in "
        f"shards of {args.games_per_shard}, best of {args.repeats} turns each; "
        "`python benchmarks/ray_labelling.py --write-page`.",
        "",
        "| workers | local pool, decisions/s | Ray, decisions/s | Ray / local "
        "| ms a shard of one `ismcts:1` game, local / Ray "
        "| Ray's start; its first generation (a game a worker) |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['workers']} | {row['local']:,.0f} | {row['ray']:,.0f} "
            f"| {row['ray'] / row['local']:.2f} "
            f"| {row['local_shard_ms']:.1f} / {row['ray_shard_ms']:.1f} "
            f"| {row['ray_start']:.1f} s; {row['first_shard']:.1f} s |"
        )
    lines += [
        "",
        f"A shard's file: {shard_bytes / 1024:,.0f} KiB for {args.games_per_shard} games "
        f"({shard_bytes / args.games_per_shard / 1024:,.1f} KiB a game, "
        f"{decisions_per_game:.0f} labelled decisions a game). The network each generation "
        f"broadcasts ({args.hidden}, both roles, value heads): {net_bytes / 1024:,.0f} KiB.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--teacher", default="az:300", help="an az teacher, without policy=")
    parser.add_argument("--hidden", default="512x512", help="the random network's widths")
    parser.add_argument("--games", type=int, default=80)
    parser.add_argument("--games-per-shard", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--write-page", action="store_true")
    args = parser.parse_args()
    if min(args.games, args.games_per_shard, args.repeats) < 1:
        parser.error("--games, --games-per-shard and --repeats must be at least 1")
    name, _, argument = args.teacher.partition(":")
    try:
        teacher = parse_az_spec(argument) if name == "az" else None
    except ValueError as error:
        parser.error(f"--teacher: {error}")
    if teacher is None or teacher.policy is not None:
        parser.error("--teacher must be an az teacher without policy= (the network is random)")
    if args.write_page:
        check_section(*SECTION)
    import_ray()  # a clear message, before any work, when Ray is not installed
    with tempfile.TemporaryDirectory(prefix="ray-labelling-") as folder:
        work = pathlib.Path(folder)
        policy = random_policy(str(work / "policy"), list(parse_layer_sizes(args.hidden)))
        settings = DistillSettings(
            teacher=teacher.with_policy(policy),
            games=args.games,
            games_per_shard=args.games_per_shard,
            hidden=parse_layer_sizes(args.hidden),
        )
        rows = measure(args, work, settings)
        written = shards_of(work / "local-2-0")
        shard_bytes = float(np.mean([p.stat().st_size for p in written]))
        net_bytes = (pathlib.Path(policy) / WEIGHTS_FILE).stat().st_size
        decisions_per_game = decisions_in(work / "local-2-0") / args.games
    table = markdown(rows, args, shard_bytes, net_bytes, decisions_per_game)
    print(table)
    for row in rows:
        print(f"{row['workers']} worker(s): Ray / local = {row['ray'] / row['local']:.2f}")
    if args.write_page:
        write_section(*SECTION, table)
        print(f"wrote docs/results/{SECTION[0]}")


if __name__ == "__main__":
    main()
