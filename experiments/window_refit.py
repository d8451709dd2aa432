"""Which games, and which fit, should a generation learn from? Refit it and play the refits.

An expert-iteration generation fits its network on its own labelled games and
those of the ``replay_generations - 1`` generations before it. For generation
N of a run and each width W in ``--windows``, this fits the network
again exactly as the run did (generation N's settings from the run's config,
from generation N-1's weights when the run starts warm) on generation N's
games and those of the W-1 generations before it, then plays each refit, and
the run's own fit of that generation, against ``--opponent`` in duplicate
pairs on the same deals. ``--fits`` varies the fit itself: each variant is a
comma-separated list of fit settings (``FIT_KEYS``) that replace the run's,
and every window is refit once per variant (``run``: the run's own settings).
The fits use the run's torch threads (``run.threads``) unless ``--threads``
says otherwise; with them, a refit on the run's own window and settings
remakes its network exactly.
The run folder is only read; the refits go to ``--out`` (a new folder; a
temporary one by default), each in its own folder: ``window_W`` with the
run's fit settings, ``window_W_KEY-VALUE...`` with a variant's.

What its refits found is in docs/results/training.md.

    python experiments/window_refit.py runs/long --generation 10 --windows 1 3 \
        [--fits run weight_decay=0.05 hidden=1024x1024,shared_policy=true,epochs=2] \
        [--pairs 1000] [--seed 2036] [--opponent ismcts:1000] [--workers 2] [--out DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jekyll_hyde_agents import make_agent  # noqa: E402
from jekyll_hyde_agents.policy_file import layer_sizes_text, parse_layer_sizes  # noqa: E402
from jekyll_hyde_arena import evaluate  # noqa: E402
from jekyll_hyde_train.common.config import ConfigError, load_config  # noqa: E402
from jekyll_hyde_train.expert_iteration.config import EITrainConfig  # noqa: E402
from jekyll_hyde_train.expert_iteration.distill import DATA_FOLDER  # noqa: E402
from jekyll_hyde_train.expert_iteration.fit import fit  # noqa: E402
from jekyll_hyde_train.expert_iteration.generation import network_kind, settings_for  # noqa: E402
from jekyll_hyde_train.expert_iteration.progress import generation_dir  # noqa: E402
from jekyll_hyde_train.expert_iteration.settings import DistillSettings  # noqa: E402


def yes_no(text: str) -> bool:
    """``"true"`` or ``"false"`` as a bool; ValueError otherwise."""
    if text.lower() not in ("true", "false"):
        raise ValueError(text)
    return text.lower() == "true"


# The settings a variant may change: the fit's alone, never the labelled games.
# A variant whose network differs in kind from the previous generation's (other
# hidden sizes, or shared_policy) is fit from fresh weights.
FIT_KEYS = {
    "hidden": parse_layer_sizes,
    "shared_policy": yes_no,
    "epochs": int,
    "batch_size": int,
    "learning_rate": float,
    "lr_schedule": str,
    "weight_decay": float,
    "value_loss_weight": float,
}
_KINDS = {
    int: "a whole number",
    float: "a number",
    str: "a name",
    parse_layer_sizes: "positive layer sizes joined by x, e.g. 1024x1024",
    yes_no: "true or false",
}
RUN_FIT = "run"  # the variant that keeps the run's own fit settings


def parse_fit(spec: str) -> dict[str, object]:
    """``"weight_decay=0.05,epochs=4"`` as settings; ``"run"`` as none changed.

    Raises ``ValueError`` naming the bad part and the allowed keys and values."""
    if spec.strip() == RUN_FIT:
        return {}
    changes: dict[str, object] = {}
    for part in spec.split(","):
        key, sep, text = (piece.strip() for piece in part.partition("="))
        if not sep or key not in FIT_KEYS:
            raise ValueError(
                f"{part!r} in {spec!r}: a fit variant is {RUN_FIT!r} or comma-separated "
                f"KEY=VALUE with KEY one of {sorted(FIT_KEYS)}"
            )
        if key in changes:
            raise ValueError(f"{part!r} in {spec!r}: {key} is given twice")
        try:
            changes[key] = FIT_KEYS[key](text)
        except ValueError:
            raise ValueError(f"{part!r} in {spec!r}: {key} takes {_KINDS[FIT_KEYS[key]]}") from None
        if isinstance(changes[key], float) and not math.isfinite(changes[key]):
            raise ValueError(f"{part!r} in {spec!r}: {key} must be a finite number")
    if changes.get("value_loss_weight", 1.0) <= 0:  # as a stage: the search needs a value head
        raise ValueError(
            f"{spec!r}: value_loss_weight must be > 0 (a generation's network guides the next "
            f"generation's search with its value head), got {changes['value_loss_weight']}"
        )
    try:
        dataclasses.replace(DistillSettings(), **changes)  # checks every setting
    except ValueError as error:
        raise ValueError(f"{spec!r}: {error}") from None
    return changes


def variant_name(changes: dict[str, object]) -> str:
    """A fit variant as a folder name: ``weight_decay-0.05_epochs-4`` (``run``: none)."""
    return "_".join(f"{key}-{_shown(value)}" for key, value in changes.items()) or RUN_FIT


def _shown(value: object) -> str:
    return layer_sizes_text(value) if isinstance(value, tuple) else str(value)


def refit(
    run: pathlib.Path,
    generation: int,
    width: int,
    folder: pathlib.Path,
    threads: int = 1,
    changes: dict[str, object] | None = None,
) -> pathlib.Path:
    """Fit generation ``generation`` of ``run`` again on a window of ``width`` generations,
    with the fit settings in ``changes`` replacing the run's, into ``folder`` (its
    shards are linked, not copied); returns the policy folder."""
    config = load_config(run / "config.yaml", schema=EITrainConfig)
    settings = settings_for(config, run, generation)  # as the run's own fit had them
    settings = dataclasses.replace(settings, **(changes or {}))
    folder.mkdir(parents=True)
    os.symlink((generation_dir(run, generation) / DATA_FOLDER).resolve(), folder / DATA_FOLDER)
    window = [generation_dir(run, g) for g in range(max(0, generation - width + 1), generation)]
    warm = (
        generation > 0
        and config.expert_iteration.warm_start
        and network_kind(config.expert_iteration.at(generation - 1)) == network_kind(settings)
    )  # from the previous network only when it is of the same kind, as the run does
    fit(
        folder,
        settings,
        threads=threads,
        more_data=window,
        init_from=generation_dir(run, generation - 1) / "policy" if warm else None,
    )
    return folder / "policy"


def _run_window(policy: pathlib.Path) -> list[int]:
    """The generations a saved generation's network was fit on (from its metadata)."""
    training = json.loads((policy / "policy.json").read_text()).get("training", {})
    return list(training.get("replay_generations", []))


def _check(args: argparse.Namespace) -> None:
    """Refuse bad input before any fit, naming the problem and what is allowed."""
    if not (args.run / "config.yaml").is_file():
        raise SystemExit(
            f"error: {args.run} is not an expert-iteration run folder (no config.yaml)"
        )
    for flag in ("pairs", "workers", "threads"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise SystemExit(f"error: --{flag} must be at least 1, got {value}")
    own = generation_dir(args.run, args.generation) / "policy"
    if not (own / "policy.json").is_file():
        raise SystemExit(f"error: {own} holds no policy; is generation {args.generation} fit?")
    bad = [w for w in args.windows if not 1 <= w <= args.generation + 1]
    if bad:
        raise SystemExit(
            f"error: --windows {bad}: a window of generation {args.generation} holds 1 to "
            f"{args.generation + 1} generations"
        )
    widest = max(args.windows)
    for g in range(args.generation - widest + 1, args.generation + 1):
        if not any((generation_dir(args.run, g) / DATA_FOLDER).glob("shard_*.npz")):
            raise SystemExit(f"error: generation {g} of {args.run} has no labelled shards")
    if args.out is not None and args.out.exists():
        if not args.out.is_dir():
            raise SystemExit(f"error: --out {args.out} is a file; name a new folder")
        if any(args.out.iterdir()):
            raise SystemExit(f"error: --out {args.out} is not empty; name a new folder")
    try:
        load_config(args.run / "config.yaml", schema=EITrainConfig)
    except ConfigError as error:
        raise SystemExit(f"error: {error}") from None
    for spec in args.fits:
        try:
            parse_fit(spec)
        except ValueError as error:
            raise SystemExit(f"error: --fits {error}") from None
    try:
        make_agent(args.opponent)
    except ValueError as error:
        raise SystemExit(f"error: --opponent: {error}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("run", type=pathlib.Path, help="an expert-iteration run folder")
    parser.add_argument("--generation", type=int, required=True, help="the generation to refit")
    parser.add_argument(
        "--windows", type=int, nargs="+", required=True, help="window widths, in generations"
    )
    parser.add_argument(
        "--fits",
        nargs="+",
        default=[RUN_FIT],
        help=f"fit variants: {RUN_FIT!r} or comma-separated KEY=VALUE of {sorted(FIT_KEYS)}",
    )
    parser.add_argument("--opponent", default="ismcts:1000", help="the agent every fit plays")
    parser.add_argument("--pairs", type=int, default=1000, help="duplicate pairs a fit")
    parser.add_argument("--seed", type=int, default=2036, help="seed of the deals")
    parser.add_argument("--workers", type=int, default=2, help="game processes")
    parser.add_argument(
        "--threads", type=int, help="torch threads for the fits (default: the run's run.threads)"
    )
    parser.add_argument("--out", type=pathlib.Path, help="a new folder for the refits")
    args = parser.parse_args(argv)
    _check(args)

    config = load_config(args.run / "config.yaml", schema=EITrainConfig)
    threads = args.threads or config.run.threads
    own = generation_dir(args.run, args.generation) / "policy"
    used = _run_window(own)
    rows = [(f"the run's fit (generations {used})" if used else "the run's fit", own)]
    out = args.out or pathlib.Path(tempfile.mkdtemp(prefix="window_refit_"))
    parsed = [parse_fit(spec) for spec in args.fits]
    variants = {variant_name(changes): changes for changes in parsed}
    for width in sorted(set(args.windows)):
        for name, changes in variants.items():
            label = f"window of {width} generation{'s' * (width > 1)}"
            label += "".join(f", {key}={_shown(value)}" for key, value in changes.items())
            folder = out / (f"window_{width}" + (f"_{name}" if changes else ""))
            rows.append((label, refit(args.run, args.generation, width, folder, threads, changes)))
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
