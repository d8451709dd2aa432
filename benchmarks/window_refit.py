"""Which games should a generation learn from? Refit it on replay windows of other widths.

An expert-iteration generation fits its network on its own labelled games and
those of the ``replay_generations - 1`` generations before it. For generation
N of a finished run and each width W in ``--windows``, this fits the network
again exactly as the run did (generation N's settings in its ``distill.json``,
from generation N-1's weights when the run starts warm) on generation N's
games and those of the W-1 generations before it, then plays each refit, and
the run's own fit of that generation, against ``--opponent`` in duplicate
pairs on the same deals. The run folder is only read; the refits go to
``--out`` (a new folder; a temporary one by default).

This is how the long recipe came to fit its first ``az:4000`` generation on
its own games alone (README, Training): on that generation the older games of
shallower searches made a weaker network.

    python benchmarks/window_refit.py runs/long_v4 --generation 10 --windows 1 2 \
        [--pairs 1000] [--seed 2036] [--opponent ismcts:1000] [--workers 2] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import make_agent  # noqa: E402
from train.config import EITrainConfig, load_config  # noqa: E402
from train.distill import DATA_FOLDER, SETTINGS_FILE, DistillSettings, with_defaults  # noqa: E402
from train.expert_iteration import generation_dir  # noqa: E402


def generation_settings(run: pathlib.Path, generation: int) -> DistillSettings:
    """The labelling and fit settings generation ``generation`` of ``run`` was made with."""
    path = generation_dir(run, generation) / SETTINGS_FILE
    if not path.is_file():
        raise SystemExit(f"error: {path} does not exist; is generation {generation} labelled?")
    saved = with_defaults(json.loads(path.read_text()))
    saved["hidden"] = tuple(saved["hidden"])
    return DistillSettings(**saved)


def refit(
    run: pathlib.Path, generation: int, width: int, folder: pathlib.Path, threads: int = 1
) -> pathlib.Path:
    """Fit generation ``generation`` of ``run`` again on a window of ``width`` generations,
    into ``folder`` (its shards are linked, not copied); returns the policy folder."""
    from train.distill_fit import fit

    config = load_config(run / "config.yaml", schema=EITrainConfig)
    settings = generation_settings(run, generation)
    folder.mkdir(parents=True)
    os.symlink((generation_dir(run, generation) / DATA_FOLDER).resolve(), folder / DATA_FOLDER)
    window = [generation_dir(run, g) for g in range(max(0, generation - width + 1), generation)]
    warm = generation > 0 and config.expert_iteration.warm_start
    fit(
        folder,
        settings,
        threads=threads,
        more_data=window,
        init_from=generation_dir(run, generation - 1) / "policy" if warm else None,
    )
    return folder / "policy"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("run", type=pathlib.Path, help="a finished expert-iteration run folder")
    parser.add_argument("--generation", type=int, required=True)
    parser.add_argument("--windows", type=int, nargs="+", required=True, help="widths to refit")
    parser.add_argument("--opponent", default="ismcts:1000")
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2036)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2, help="torch threads for the fits")
    parser.add_argument("--out", type=pathlib.Path, help="a new folder for the refits")
    args = parser.parse_args(argv)

    own = generation_dir(args.run, args.generation) / "policy"
    if not (own / "policy.json").is_file():
        raise SystemExit(f"error: {own} holds no policy; is generation {args.generation} fit?")
    bad = [w for w in args.windows if not 1 <= w <= args.generation + 1]
    if bad:
        raise SystemExit(
            f"error: --windows {bad}: a window of generation {args.generation} holds 1 to "
            f"{args.generation + 1} generations"
        )
    if args.out is not None and args.out.exists() and any(args.out.iterdir()):
        raise SystemExit(f"error: --out {args.out} is not empty; name a new folder")
    out = args.out or pathlib.Path(tempfile.mkdtemp(prefix="window_refit_"))
    generation_settings(args.run, args.generation)  # refuse an unlabelled generation first
    try:
        make_agent(args.opponent)  # and an unknown opponent, before any fit
    except ValueError as error:
        raise SystemExit(f"error: --opponent: {error}") from None

    from train.evaluate import evaluate

    replay = load_config(args.run / "config.yaml", schema=EITrainConfig).expert_iteration
    used = min(replay.at(args.generation).replay_generations, args.generation + 1)
    rows = [(f"the run's fit ({used} generation{'s' * (used > 1)})", own)]
    for width in sorted(set(args.windows)):
        policy = refit(args.run, args.generation, width, out / f"window_{width}", args.threads)
        rows.append((f"window of {width} generation{'s' * (width > 1)}", policy))
    print(
        f"\ngeneration {args.generation} of {args.run} against {args.opponent}, "
        f"{args.pairs} duplicate pairs on deals from seed {args.seed}; refits in {out}\n"
    )
    print("| fit | score | 95% interval |\n|---|---|---|")
    for label, policy in rows:
        report = evaluate(
            str(policy), args.opponent, args.pairs, seed=args.seed, workers=args.workers
        )
        low, high = report.score_ci
        print(f"| {label} | {report.score:.3f} | [{low:.3f}, {high:.3f}] |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
