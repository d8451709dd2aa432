"""The training commands of ``jekyll-hyde``: ``train``, ``distill``, ``exploit``,
``export`` and ``ensemble``, their options and what each runs.

Their code lives in ``jekyll_hyde_train`` (the train extra), imported only when a
command runs, so that the other commands start without torch.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from collections.abc import Callable

from jekyll_hyde_agents.policy_ensemble import average_policies
from jekyll_hyde_app.cli_options import (
    AGENT_HELP,
    TRUST_NOTE,
    default_workers,
    layer_sizes_type,
    seed_type,
    variant_type,
)
from jekyll_hyde_train.common.config import (
    ALGORITHM_NAMES,
    ConfigError,
    read_algorithm,
    shipped_config_names,
)
from jekyll_hyde_train.common.files import atomic_write_text, folder_slug
from jekyll_hyde_train.exact.tree import MAX_NODES  # numpy and the engine only, no scipy
from jekyll_hyde_train.expert_iteration.config import ACTIVATIONS, LR_SCHEDULES
from jekyll_hyde_train.expert_iteration.settings import DistillSettings
from jekyll_hyde_train.expert_iteration.teacher import parse_teacher, teacher_label

DEFAULT_CONFIG = "default"

DISTILL_OPTIONS: dict[str, tuple[Callable[[str], object], str]] = {
    "games": (int, "games to label"),
    "games_per_shard": (int, "games per data file (the unit of resumption)"),
    "hidden": (layer_sizes_type, "hidden layer sizes, comma-separated"),
    "activation": (str, "hidden layers' activation"),
    "epochs": (int, "passes over the data"),
    "batch_size": (int, "decisions per gradient step"),
    "learning_rate": (float, "Adam's step size"),
    "lr_schedule": (str, "constant, or cosine (falls to zero over the fit)"),
    "weight_decay": (float, "AdamW's weight decay"),
    "validation_share": (float, "share of the shards held out to choose the best epoch"),
}
"""The labelling and fit settings ``distill`` takes as options (``--games-per-shard``
for ``games_per_shard``): its type on the command line and its help. The defaults
are ``DistillSettings``' (``LabelAndFitSettings``)."""


def _train(args: argparse.Namespace) -> int:
    if args.variant is not None:  # --variant is run.variant, as --set would give it
        args.set = [*(args.set or []), f"run.variant={args.variant.name}"]
    if args.backend == "rllib":
        print(
            "note: --backend rllib is deprecated and goes in the next release: the config "
            "names its algorithm (algorithm: rllib, as configs/rllib/default.yaml does)",
            file=sys.stderr,
        )
        if args.config == DEFAULT_CONFIG:
            args.config = "rllib"
    if args.resume and not (pathlib.Path(args.resume) / "config.yaml").exists():
        print(f"error: {args.resume} is not a run folder (no config.yaml)", file=sys.stderr)
        return 2
    try:
        algorithm = read_algorithm(
            pathlib.Path(args.resume) / "config.yaml" if args.resume else args.config
        )
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.backend == "rllib" and algorithm != "rllib":
        print(f"error: {args.config} is an {algorithm} config, not an rllib one", file=sys.stderr)
        return 2
    if algorithm == "rllib":
        return _train_rllib(args)
    if algorithm == "ppo":
        # lazy: the train extra; the other commands start without it
        from jekyll_hyde_train.ppo.train import main as train_main
    else:
        # lazy: the train extra; the other commands start without it
        from jekyll_hyde_train.expert_iteration.loop import main as train_main

    try:
        return train_main(args.config, args.run_dir, args.set or [], args.resume)
    except KeyboardInterrupt:
        return 130
    except (FileExistsError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _train_rllib(args: argparse.Namespace) -> int:
    """``algorithm: rllib``: PPO self-play on Ray RLlib (the rllib extra)."""
    try:
        from jekyll_hyde_train.ppo.rllib import main as rllib_main  # lazy: the rllib extra

        return rllib_main(args.config, args.run_dir, args.set or [], args.address, args.resume)
    except KeyboardInterrupt:
        return 130
    except (ImportError, FileExistsError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


def _distill(args: argparse.Namespace) -> int:
    # lazy: the labelling's modules load only when a distill run starts
    from jekyll_hyde_train.expert_iteration.distill import generate

    settings = DistillSettings(
        teacher=parse_teacher(args.teacher),
        seed=args.seed,
        variant=args.variant.name,
        **{name: getattr(args, name) for name in DISTILL_OPTIONS},
    )
    run_dir = pathlib.Path(args.run_dir)
    started = time.perf_counter()

    def generated(done: int, total: int, decisions: int) -> None:
        print(
            f"shard {done}/{total}: {decisions} decisions ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )

    def fitted(row: dict) -> None:
        measures = ", ".join(f"{k} {v:.4f}" for k, v in row.items() if isinstance(v, float))
        print(f"{row['role']} epoch {row['epoch']}: {measures}", flush=True)

    try:
        if not args.fit_only:
            generate(run_dir, settings, args.workers, generated)
        if not args.generate_only:
            from jekyll_hyde_train.expert_iteration.fit import fit  # lazy: torch (the train extra)

            summary = fit(run_dir, settings, fitted, threads=args.threads)
            print(
                f"policy: {run_dir / 'policy'} ({summary['decisions']:,} decisions "
                f"from {summary['games']:,} games of {teacher_label(settings.teacher)})"
            )
    except KeyboardInterrupt:
        return 130
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


MAX_NODES_LIMIT = 200_000_000


def max_nodes_type(text: str) -> int:
    """``--max-nodes``: a whole number from 1 to ``MAX_NODES_LIMIT``.

    Args:
        text: the option's value.

    Returns:
        The number.

    Raises:
        argparse.ArgumentTypeError: not a whole number in that range.
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if not 1 <= value <= MAX_NODES_LIMIT:
        raise argparse.ArgumentTypeError(f"must be 1 to {MAX_NODES_LIMIT:,}, got {value:,}")
    return value


def _solve(args: argparse.Namespace) -> int:
    from jekyll_hyde_train.exact.solve import solve_variant  # lazy: scipy

    try:
        result = solve_variant(args.variant, args.out, args.max_nodes, args.resume)
    except KeyboardInterrupt:
        print(
            f"\ninterrupted: the programs solved so far are kept in {args.out}; continue "
            "with the same command and --resume",
            file=sys.stderr,
        )
        return 130
    print(
        f"variant {args.variant.name}: Jekyll wins {result['jekyll_win_probability']:.9f} "
        f"under equilibrium play (game value {result['game_value']:+.9f}); exact score of "
        f"the equilibrium found {result['exact_score']:.9f} (exploitability "
        f"{result['exploitability']:.1e}); strategy: {pathlib.Path(args.out) / 'tabular.npz'}"
    )
    return 0


def _exploit_exact(args: argparse.Namespace) -> int:
    from jekyll_hyde_agents.sources import load_agent  # lazy: the agents' libraries
    from jekyll_hyde_train.exact.solve import exact_exploit  # lazy: scipy

    if args.variant is None:
        raise ValueError("--exact needs --variant (tiny, small or key=value pairs)")
    agent = load_agent(args.target, deterministic=not args.sample)
    result = exact_exploit(agent, args.variant)
    data = {"target": args.target, "variant": args.variant.to_json(), **result.to_json()}
    if args.out:
        atomic_write_text(pathlib.Path(args.out), json.dumps(data, indent=2) + "\n")
    seats = data["seats"]
    print(
        f"exact score of a best response to {args.target} on {args.variant.name}: "
        f"{result.score:.9f} (jekyll seat {seats['jekyll']:.9f}, hyde seat "
        f"{seats['hyde']:.9f}); 0.5 is an equilibrium"
    )
    return 0


def _exploit(args: argparse.Namespace) -> int:
    if args.exact:
        return _exploit_exact(args)
    # lazy: the train extra; the other commands start without it
    from jekyll_hyde_train.exploit.config import load_exploit_config
    from jekyll_hyde_train.exploit.report import FAILED_BELOW  # lazy: as above
    from jekyll_hyde_train.exploit.run import run  # lazy: as above

    overrides = list(args.set or [])
    if args.variant is not None:  # --variant is run.variant (RULES.md V1-V7)
        overrides.append(f"run.variant={args.variant.name}")
    config = load_exploit_config(args.config, overrides)
    run_dir = pathlib.Path(args.run_dir or f"runs/exploit-{folder_slug(args.target)}")
    out = pathlib.Path(args.out) if args.out else None
    try:
        summary = run(args.target, config, run_dir, out)
    except KeyboardInterrupt:
        print(f"\ninterrupted: rerun the same command to continue {run_dir}", file=sys.stderr)
        return 130
    except (FileExistsError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    low, high = summary["abr_ci"]
    if summary["failed"]:
        print(
            f"the responders failed against {args.target}: each seat's stronger one scores "
            f"{summary['abr_score']:.3f} [{low:.3f}, {high:.3f}], below {FAILED_BELOW}, "
            "which bounds nothing; give them more budget "
            "(--set responder.steps=N, search.simulations=N) "
            f"(report: {run_dir / 'report.md'})"
        )
        return 0
    print(
        f"ABR score of a responder against {args.target}: {summary['abr_score']:.3f} "
        f"[{low:.3f}, {high:.3f}]; exploitability lower bound "
        f"{summary['exploitability_lower_bound']:+.3f} (report: {run_dir / 'report.md'})"
    )
    return 0


def _export(args: argparse.Namespace) -> int:
    from jekyll_hyde_agents.champion import champion_path  # lazy: export alone needs it
    from jekyll_hyde_agents.external.exchange import export_policy  # lazy: torch or onnx

    policy = champion_path() if args.policy == "champion" else args.policy
    path = export_policy(policy, args.format, args.out)
    print(f"{args.format}: {path} (plays {args.policy}; signature in docs/evaluation/own-agent.md)")
    return 0


def _ensemble(args: argparse.Namespace) -> int:
    if (pathlib.Path(args.out) / "policy.json").exists():
        print(
            f"error: {args.out} already holds a policy; choose another --out or remove it",
            file=sys.stderr,
        )
        return 2
    path = average_policies(args.policies, args.out)
    print(f"policy: {path.parent} (the mean of the logits of {len(args.policies)} policies)")
    return 0


def add_train_commands(add_command: Callable[..., argparse.ArgumentParser]) -> None:
    """Add the training commands to the parser whose ``add_command`` makes a command."""
    train = add_command("train", help="train Jekyll and Hyde policies by self-play")
    training_configs = [n for n in shipped_config_names() if n.split("/")[0] in ALGORITHM_NAMES]
    train.add_argument(
        "--config",
        default=DEFAULT_CONFIG,
        help="a YAML config file, or a shipped config's name "
        f"({', '.join(training_configs)}; "
        "a folder alone names its default, as ppo; a name alone is expert iteration's, "
        f"as smoke) (default: {DEFAULT_CONFIG}); its 'algorithm' key chooses "
        "expert_iteration, ppo or rllib",
    )
    train.add_argument(
        "--backend",
        choices=["sb3", "rllib"],
        default="sb3",
        help="deprecated: name the algorithm in the config instead (algorithm: rllib)",
    )
    train.add_argument(
        "--address", help="Ray cluster an rllib run joins (default: RAY_ADDRESS or local)"
    )
    train.add_argument("--run-dir", help="run folder (default: runs/<run.name>-<time>)")
    train.add_argument(
        "--set",
        action="append",
        metavar="SECTION.KEY=VALUE",
        help="override one config value, e.g. --set ppo.learning_rate=1.0e-4 (repeatable)",
    )
    train.add_argument("--resume", metavar="RUN_DIR", help="continue the run in this folder")
    train.add_argument(
        "--variant",
        type=variant_type,
        help="train on this version of the game: full, small, tiny or key=value pairs "
        "(RULES.md V1-V7); the same as --set run.variant=V (default: the config's)",
    )
    train.set_defaults(run=_train)

    default = DistillSettings()
    distill = add_command(
        "distill", help="train a policy to imitate ISMCTS (labelled self-play, then a fit)"
    )
    distill.add_argument("--run-dir", required=True, help="data, fit and policy go here")
    distill.add_argument(
        "--teacher", default=default.teacher, help="ismcts:N, ismcts:Xs or az:N,policy=PATH"
    )
    distill.add_argument(
        "--seed", type=seed_type, default=default.seed, help="fixes deals and search"
    )
    distill.add_argument(
        "--variant",
        type=variant_type,
        default=default.variant,
        help="the version of the game the games are dealt in: full, small, tiny or key=value "
        "pairs (RULES.md V1-V7); an az teacher's policy must have been trained on it",
    )
    for name, (kind, text) in DISTILL_OPTIONS.items():
        flag = "--" + name.replace("_", "-")
        choices = {"activation": ACTIVATIONS, "lr_schedule": LR_SCHEDULES}.get(name)
        if choices:  # a name from the list, taken as written
            distill.add_argument(
                flag, choices=list(choices), default=getattr(default, name), help=text
            )
        else:
            distill.add_argument(flag, type=kind, default=getattr(default, name), help=text)
    distill.add_argument(
        "--workers", type=int, default=default_workers(), help="processes labelling games"
    )
    distill.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads for the fit (more threads beside other work on the same "
        "cores slow it down)",
    )
    stage = distill.add_mutually_exclusive_group()
    stage.add_argument("--generate-only", action="store_true", help="label games, do not fit")
    stage.add_argument("--fit-only", action="store_true", help="fit on the shards on disk")
    distill.set_defaults(run=_distill)

    exploit = add_command(
        "exploit",
        help="how beatable is an agent: train a best responder per seat, report the ABR score",
        description=TRUST_NOTE,
    )
    exploit.add_argument("target", help=AGENT_HELP)
    exploit.add_argument(
        "--config",
        default=None,
        help="a YAML config file, or a shipped config's name such as exploit "
        "(default: the built-in settings, those of the shipped exploit config)",
    )
    exploit.add_argument(
        "--set",
        action="append",
        metavar="SECTION.KEY=VALUE",
        help="override one config value, e.g. --set responder.steps=100000 (repeatable)",
    )
    exploit.add_argument("--run-dir", help="run folder (default: runs/exploit-<target>)")
    exploit.add_argument("--out", help="also write the results as JSON to this file")
    exploit.add_argument(
        "--variant",
        type=variant_type,
        help="the version of the game: full (default), small, tiny or key=value pairs",
    )
    exploit.add_argument(
        "--exact",
        action="store_true",
        help="compute the exact best response in each seat on the whole tree of a small "
        "--variant (for agents whose action probabilities can be enumerated)",
    )
    exploit.add_argument(
        "--sample",
        action="store_true",
        help="with --exact: saved policies play their softmax, not their best action",
    )
    exploit.set_defaults(run=_exploit)

    solve = add_command(
        "solve",
        help="an exact equilibrium of a small variant (sequence-form LP, HiGHS)",
    )
    solve.add_argument("variant", type=variant_type, help="tiny, small or key=value pairs")
    solve.add_argument(
        "--out", required=True, help="folder for the equilibrium (tabular.npz, solve.json)"
    )
    solve.add_argument(
        "--max-nodes",
        type=max_nodes_type,
        default=MAX_NODES,
        help=f"refuse a variant whose tree would hold more nodes (1 to {MAX_NODES_LIMIT:,}; "
        "about 1.5 KB of memory each)",
    )
    solve.add_argument(
        "--resume",
        action="store_true",
        help="continue a solve interrupted with Ctrl-C from the programs it solved (in --out)",
    )
    solve.set_defaults(run=_solve)

    export = add_command(
        "export",
        help="write a saved policy as a TorchScript or ONNX module (the exchange format)",
        description="The module's signature: (observation float32[B, 327], action_mask "
        "float32[B, 28]) -> logits float32[B, 28]; one module plays both roles.",
    )
    export.add_argument("policy", help="champion, a run folder or a policy folder")
    export.add_argument(
        "--format",
        choices=["torchscript", "onnx"],
        default="onnx",
        help="the file's format: onnx (data only, the onnx extra) or torchscript",
    )
    export.add_argument("--out", required=True, help="the file to write (.pt or .onnx)")
    export.set_defaults(run=_export)

    ensemble = add_command(
        "ensemble", help="merge saved policies into one that plays the mean of their logits"
    )
    ensemble.add_argument("policies", nargs="+", help="run folders or policy folders (2 or more)")
    ensemble.add_argument("--out", required=True, help="the folder of the merged policy")
    ensemble.set_defaults(run=_ensemble, folder_options=("out",))  # --out names a folder
