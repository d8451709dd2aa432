"""The ``jekyll-hyde`` command: train, evaluate, exploit, play and watch Jekyll vs Hyde agents.

    jekyll-hyde eval A B --pairs N [--seed S] [--workers W] [--out FILE] [--save-games DIR]
    jekyll-hyde tournament A B C ... --pairs N [--seed S] [--workers W] [--out FILE]
    jekyll-hyde play --as hyde --opponent ismcts:500 [--seed S] [--save FILE]
    jekyll-hyde replay FILE
    jekyll-hyde rules
    jekyll-hyde serve [--host 127.0.0.1] [--port 8000] [--opponent SPEC]
    jekyll-hyde train --config default [--run-dir DIR] [--set k=v] [--resume DIR]
    jekyll-hyde distill --run-dir DIR [--teacher ismcts:2000] [--games N] [--epochs E] ...
    jekyll-hyde ensemble --out DIR POLICY POLICY ...
    jekyll-hyde exploit TARGET [--config exploit] [--set k=v] [--run-dir DIR] [--out F]

Agents are names (``random``, ``heuristic``, ``ismcts:1000``, ``pimc:50``,
``ismcts:0.05s``) or, once trained, run folders. A ``--config`` is a YAML file
or the name of a config shipped with the package (``default``, ``smoke``,
``long``, ``ppo``, ...: the repository's ``configs/``).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import sys
import time

from jekyll_hyde_agents.policy_ensemble import average_policies
from jekyll_hyde_app.interrupts import deliver_interrupts
from jekyll_hyde_app.web.opponents import DEFAULT_OPPONENTS, split_specs
from jekyll_hyde_app.web.thinking import MAX_THINK_SECONDS
from jekyll_hyde_env import __version__
from jekyll_hyde_env.rulebook import rules_text
from jekyll_hyde_train.common.config import (
    ALGORITHM_NAMES,
    ConfigError,
    read_algorithm,
    shipped_config_names,
)
from jekyll_hyde_train.common.config_checks import SEED_MAX
from jekyll_hyde_train.common.files import RunWriteError, folder_slug, one_line
from jekyll_hyde_train.expert_iteration.distill import LR_SCHEDULES, DistillSettings

DEFAULT_CONFIG = "default"


def _default_workers() -> int:
    return min(2, os.cpu_count() or 1)


def _write_json(path: str, data: object) -> None:
    temporary = f"{path}.tmp"
    with open(temporary, "w") as handle:
        json.dump(data, handle, indent=2)
    os.replace(temporary, path)


def _eval(args: argparse.Namespace) -> int:
    # lazy: only eval and tournament load the arena; the other commands start without it
    from jekyll_hyde_arena import evaluate, format_report

    report = evaluate(
        args.agent_a,
        args.agent_b,
        args.pairs,
        seed=args.seed,
        workers=args.workers,
        progress=not args.no_progress,
        save_games=args.save_games,
        duplicate=not args.independent,
        illegal=args.illegal,
        deterministic=not args.sample,
    )
    print(format_report(report))
    if args.out:
        _write_json(args.out, report.to_json())
    return 130 if report.interrupted else 0


def _tournament(args: argparse.Namespace) -> int:
    # lazy: only eval and tournament load the arena; the other commands start without it
    from jekyll_hyde_arena import format_tournament, tournament

    specs = [os.path.normpath(spec.strip()) for spec in args.agents]
    twice = sorted({spec for spec in specs if specs.count(spec) > 1})
    if twice:  # its rows would be one agent's, twice, with nothing to tell them apart
        print(
            f"error: a tournament plays different agents; {', '.join(map(repr, twice))} "
            f"named more than once (to play an agent against itself: jekyll-hyde eval "
            f"{twice[0]} {twice[0]})",
            file=sys.stderr,
        )
        return 2
    result = tournament(
        args.agents,
        args.pairs,
        seed=args.seed,
        workers=args.workers,
        progress=not args.no_progress,
        illegal=args.illegal,
        deterministic=not args.sample,
    )
    print(format_tournament(result))
    if args.out:
        _write_json(args.out, result)
    return 130 if result.get("interrupted") else 0


def _play(args: argparse.Namespace) -> int:
    # lazy: only play and replay load the terminal game; the other commands start without it
    from jekyll_hyde_app.play import play_command

    return play_command(args.role, args.opponent, args.seed, args.save)


def _rules(args: argparse.Namespace) -> int:
    print(rules_text())
    return 0


def _replay(args: argparse.Namespace) -> int:
    # lazy: only play and replay load the terminal game; the other commands start without it
    from jekyll_hyde_app.play import replay_command

    replay_command(args.record, wait=not args.no_wait and sys.stdin.isatty())
    return 0


def _serve(args: argparse.Namespace) -> int:
    try:
        from jekyll_hyde_app.web.app import ServeError, serve  # lazy: the web extra (fastapi)
    except ImportError as error:  # fastapi or uvicorn missing
        print(
            f"error: jekyll-hyde serve needs the web extra ({error}): "
            "pip install 'jekyll-hyde-env[web]'",
            file=sys.stderr,
        )
        return 2
    try:
        serve(
            args.host,
            args.port,
            args.opponent,
            allow=split_specs(args.allow_opponents),
            max_think_seconds=args.max_think_seconds,
            trust_proxy=args.trust_proxy,
        )
    except ServeError as error:  # the port is in use or not allowed; a bad value exits with 2
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def _train(args: argparse.Namespace) -> int:
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
    from jekyll_hyde_train.expert_iteration.distill import (  # lazy: the train extra
        DistillSettings,
        generate,
    )

    settings = DistillSettings(
        teacher=args.teacher,
        games=args.games,
        games_per_shard=args.games_per_shard,
        seed=args.seed,
        hidden=tuple(args.hidden),
        activation=args.activation,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        lr_schedule=args.lr_schedule,
        weight_decay=args.weight_decay,
        validation_share=args.validation_share,
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
                f"from {summary['games']:,} games of {settings.teacher})"
            )
    except KeyboardInterrupt:
        return 130
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def _exploit(args: argparse.Namespace) -> int:
    # lazy: the train extra; the other commands start without it
    from jekyll_hyde_train.exploit.config import load_exploit_config
    from jekyll_hyde_train.exploit.report import FAILED_BELOW  # lazy: as above
    from jekyll_hyde_train.exploit.run import run  # lazy: as above

    config = load_exploit_config(args.config, args.set or [])
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


def _seed(text: str) -> int:
    """The type of every command's ``--seed``: a whole number from 0 to ``SEED_MAX``."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if not 0 <= seed <= SEED_MAX:
        raise argparse.ArgumentTypeError(
            f"--seed must be a whole number from 0 to {SEED_MAX}, got {text!r}"
        )
    return seed


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Ends an option's help with its default once: not when the help already says
    it, nor for options with no default value (None) and flags."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if re.search(r"\(default[:)]", text) or action.default is None or action.default is False:
            return text
        return super()._get_help_string(action)


def _layer_sizes(text: str) -> list[int]:
    try:
        return [int(size) for size in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of layer sizes, e.g. 256,256"
        ) from None


EXAMPLES = {
    "eval": "jekyll-hyde eval runs/mine ismcts:1000 --pairs 500 --out results.json",
    "tournament": "jekyll-hyde tournament random heuristic ismcts:100 --pairs 100",
    "play": "jekyll-hyde play --as hyde --opponent ismcts:500 --seed 7 --save mygame.json",
    "replay": "jekyll-hyde replay mygame.json",
    "rules": "jekyll-hyde rules | less",
    "serve": "jekyll-hyde serve --opponent champion, then open http://127.0.0.1:8000/",
    "train": "jekyll-hyde train --config smoke --run-dir runs/mine",
    "distill": "jekyll-hyde distill --run-dir runs/distilled --teacher ismcts:2000 --games 2000",
    "exploit": "jekyll-hyde exploit runs/mine --out exploit.json",
    "ensemble": "jekyll-hyde ensemble --out runs/both runs/a runs/b",
    "export": "jekyll-hyde export champion --format onnx --out champion.onnx",
}

AGENT_HELP = (
    "an agent: a name (random, heuristic, ismcts:N, champion, az:N,...), a run or policy "
    "folder, an SB3 .zip, an RLlib checkpoint folder, a TorchScript or Tianshou .pt, an "
    ".onnx, python:module:name or python:file.py:name, or jekyll=A,hyde=B (prefixes sb3:, "
    "rllib:, tianshou:, torchscript:, onnx: name a file's kind)"
)
TRUST_NOTE = (
    "SB3 zips, RLlib checkpoints, Tianshou files, TorchScript modules and Python files run "
    "code when loaded: name only your own. policy.npz and .onnx files are data only."
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jekyll-hyde",
        description="Jekyll vs Hyde: train, evaluate, exploit, play and watch agents.",
        epilog=(
            "examples: jekyll-hyde train (expert iteration, the default config); "
            "jekyll-hyde eval runs/mine ismcts:1000 --pairs 500; "
            "jekyll-hyde play --as hyde --opponent heuristic; jekyll-hyde rules. "
            "Run 'jekyll-hyde COMMAND --help' for a command's options."
        ),
    )
    parser.add_argument("--version", action="version", version=f"jekyll-hyde {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add_command(name: str, **kwargs) -> argparse.ArgumentParser:
        """A command whose --help shows every option's default (once) and an example."""
        epilog = f"example: {EXAMPLES[name]}"
        return commands.add_parser(name, formatter_class=_HelpFormatter, epilog=epilog, **kwargs)

    def arena_options(command: argparse.ArgumentParser) -> None:
        command.add_argument("--pairs", type=int, default=100, help="duplicate pairs per match")
        command.add_argument(
            "--illegal",
            choices=["error", "forfeit"],
            default="error",
            help="an agent's illegal action stops the match (error) or loses that game "
            "(forfeit, counted in the report); a model's illegal choice is replaced by its "
            "most probable legal action either way, and counted",
        )
        command.add_argument(
            "--sample",
            action="store_true",
            help="models (saved policies, SB3, RLlib, Tianshou, TorchScript, ONNX) sample "
            "from their policy instead of playing their best action",
        )
        command.add_argument("--seed", type=_seed, default=0, help="fixes every deal")
        command.add_argument(
            "--workers", type=int, default=_default_workers(), help="processes playing games"
        )
        command.add_argument("--out", help="write the results as JSON to this file")
        command.add_argument("--no-progress", action="store_true", help="no progress bar")

    evaluation = add_command(
        "eval", help="duplicate match between two agents", description=TRUST_NOTE
    )
    evaluation.add_argument("agent_a", help=AGENT_HELP)
    evaluation.add_argument("agent_b", help="its opponent, the same kinds of agent")
    arena_options(evaluation)
    evaluation.add_argument("--save-games", help="save every game's record in this folder")
    evaluation.add_argument(
        "--independent",
        action="store_true",
        help="give the second game of each pair its own deals (to measure what duplication gains)",
    )
    evaluation.set_defaults(run=_eval)

    round_robin = add_command("tournament", help="round robin with ratings", description=TRUST_NOTE)
    round_robin.add_argument(
        "agents", nargs="+", help="two or more different agent specs (one named twice is refused)"
    )
    arena_options(round_robin)
    round_robin.set_defaults(run=_tournament)

    play = add_command(
        "play", help="play a game against an agent in the terminal", description=TRUST_NOTE
    )
    play.add_argument(
        "--as", dest="role", choices=["jekyll", "hyde"], default="jekyll", help="your role"
    )
    play.add_argument("--opponent", default="heuristic", help=AGENT_HELP)
    play.add_argument("--seed", type=_seed, help="fixes the deals (default: drawn, and shown)")
    play.add_argument("--save", help="write the game record (JSON) to this file")
    play.set_defaults(run=_play)

    replay = add_command("replay", help="step through a recorded game")
    replay.add_argument("record", help="a game record (JSON) from play or eval --save-games")
    replay.add_argument("--no-wait", action="store_true", help="print it all without pausing")
    replay.set_defaults(run=_replay)

    rules = add_command("rules", help="print the rules of the game, for players")
    rules.set_defaults(run=_rules)

    serve = add_command("serve", help="play, replay and watch games in the browser (the web extra)")
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (the loopback: only this machine can connect)",
    )
    serve.add_argument(
        "--port", type=int, default=8000, help="port to listen on, 0 to 65535 (0: any free port)"
    )
    serve.add_argument(
        "--opponent",
        default="heuristic",
        help="the play page's default opponent: champion, heuristic, ismcts:N, a run folder ... "
        "(always allowed)",
    )
    serve.add_argument(
        "--allow-opponents",
        default=",".join(DEFAULT_OPPONENTS),
        metavar="SPEC,SPEC,...",
        help="the only agents clients may play or watch, comma-separated: names, ismcts:N, "
        "az:N (N bounded), or saved policies (pimc is refused); searches stop within the "
        "thinking limit",
    )
    serve.add_argument(
        "--max-think-seconds",
        type=float,
        default=MAX_THINK_SECONDS,
        help="the most an agent's decision may take (all the decisions one request waits for: "
        "twice this); past it the heuristic's move is played",
    )
    serve.add_argument(
        "--trust-proxy",
        action="store_true",
        help="behind a reverse proxy: a client is the address the proxy appends to "
        "X-Forwarded-For (per-client game limits; an IPv6 client is its /64)",
    )
    serve.set_defaults(run=_serve)

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
    train.set_defaults(run=_train)

    default = DistillSettings()
    distill = add_command(
        "distill", help="train a policy to imitate ISMCTS (labelled self-play, then a fit)"
    )
    distill.add_argument("--run-dir", required=True, help="data, fit and policy go here")
    distill.add_argument(
        "--teacher", default=default.teacher, help="ismcts:N, ismcts:Xs or az:N,policy=PATH"
    )
    distill.add_argument("--games", type=int, default=default.games, help="games to label")
    distill.add_argument(
        "--games-per-shard",
        type=int,
        default=default.games_per_shard,
        help="games per data file (the unit of resumption)",
    )
    distill.add_argument(
        "--seed", type=_seed, default=default.seed, help="fixes deals and search"
    )
    distill.add_argument(
        "--hidden",
        type=_layer_sizes,
        default=list(default.hidden),
        help="hidden layer sizes, comma-separated",
    )
    distill.add_argument(
        "--activation",
        choices=["tanh", "relu"],
        default=default.activation,
        help="hidden layers' activation",
    )
    distill.add_argument("--epochs", type=int, default=default.epochs, help="passes over the data")
    distill.add_argument(
        "--batch-size", type=int, default=default.batch_size, help="decisions per gradient step"
    )
    distill.add_argument(
        "--learning-rate", type=float, default=default.learning_rate, help="Adam's step size"
    )
    distill.add_argument(
        "--lr-schedule",
        choices=list(LR_SCHEDULES),
        default=default.lr_schedule,
        help="constant, or cosine (falls to zero over the fit)",
    )
    distill.add_argument(
        "--weight-decay", type=float, default=default.weight_decay, help="AdamW's weight decay"
    )
    distill.add_argument(
        "--validation-share",
        type=float,
        default=default.validation_share,
        help="share of the shards held out to choose the best epoch",
    )
    distill.add_argument(
        "--workers", type=int, default=_default_workers(), help="processes labelling games"
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
    exploit.set_defaults(run=_exploit)

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
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # a bare `jekyll-hyde`: say what there is
        parser.print_help()
        return 0
    if getattr(args, "pairs", 1) < 1:
        print("error: --pairs must be at least 1", file=sys.stderr)
        return 2
    if getattr(args, "workers", 1) < 1:
        print("error: --workers must be at least 1", file=sys.stderr)
        return 2
    if args.command == "tournament" and len(args.agents) < 2:
        print("error: a tournament needs at least two agents", file=sys.stderr)
        return 2
    problem = _unwritable_output(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    # Every failure ends in one line on stderr, never a traceback: bad input (a file
    # that is not what it should be names itself: jekyll_hyde_train.common.files.FileFormatError)
    # exits
    # with 2, a file that could not be written with 1.
    try:
        with deliver_interrupts():  # Ctrl-C lands in the command's code, never in an import
            return args.run(args)
    except ValueError as error:
        print(f"error: {one_line(str(error))}", file=sys.stderr)
        return 2
    except RunWriteError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, with nothing left to flush.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as error:  # a file that could not be read or written, named
        where = f"{error.filename}: " if error.filename else ""
        print(f"error: {where}{one_line(error.strerror or str(error))}", file=sys.stderr)
        return 1


FILE_OUTPUTS = ("out", "save")
FOLDER_OUTPUTS = ("save_games", "run_dir")


def _unwritable_output(args: argparse.Namespace) -> str | None:
    """The first output path that cannot be written, found before any work starts, so that
    no game, match or training is done for nothing: a file output (--out, --save) whose
    folder does not exist or that names a folder; a folder output (--save-games,
    --run-dir, and any a command lists in ``folder_options``, as ensemble's --out) that
    names a file or lies under one."""
    folder_outputs = FOLDER_OUTPUTS + getattr(args, "folder_options", ())
    for option in FILE_OUTPUTS + FOLDER_OUTPUTS:
        value = getattr(args, option, None)
        if not value:
            continue
        flag, path = "--" + option.replace("_", "-"), pathlib.Path(value)
        if option not in folder_outputs:
            if path.is_dir():
                return f"{flag} {value}: that is a folder; name a file to write"
            parent = path.resolve().parent
            if not parent.is_dir():
                return f"{flag} {value}: the folder {parent} does not exist"
            continue
        if path.exists() and not path.is_dir():
            return f"{flag} {value}: that is a file; name a folder"
        ancestor = path.resolve().parent
        while not ancestor.exists():
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            return f"{flag} {value}: {ancestor} is a file, so no folder can be made under it"
        if option == "save_games" and ancestor != path.resolve().parent:
            return f"{flag} {value}: the folder {path.resolve().parent} does not exist"
    return None

if __name__ == "__main__":
    sys.exit(main())
