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
import os
import pathlib
import sys

from jekyll_hyde_app.cli_options import (
    AGENT_HELP,
    EXAMPLES,
    TRUST_NOTE,
    HelpFormatter,
    default_workers,
    seed_type,
    variant_type,
    write_json,
)
from jekyll_hyde_app.interrupts import deliver_interrupts
from jekyll_hyde_app.train_commands import add_train_commands
from jekyll_hyde_app.web.opponents import DEFAULT_OPPONENTS, split_specs
from jekyll_hyde_app.web.thinking import MAX_THINK_SECONDS
from jekyll_hyde_env import __version__
from jekyll_hyde_env.rulebook import rules_text
from jekyll_hyde_train.common.files import RunWriteError, one_line


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
        variant=args.variant,
    )
    print(format_report(report))
    if args.out:
        write_json(args.out, report.to_json())
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
        variant=args.variant,
    )
    print(format_tournament(result))
    if args.out:
        write_json(args.out, result)
    return 130 if result.get("interrupted") else 0


def _play(args: argparse.Namespace) -> int:
    # lazy: only play and replay load the terminal game; the other commands start without it
    from jekyll_hyde_app.play import play_command

    return play_command(args.role, args.opponent, args.seed, args.save, args.variant)


def _rules(args: argparse.Namespace) -> int:
    """The players' rules: on a terminal rendered from their Markdown (headings, bold,
    lists) and paged; to a pipe or a file, the Markdown itself, which reads as text."""
    text = rules_text()
    if not sys.stdout.isatty():
        print(text)
        return 0
    try:
        from rich.console import Console  # lazy: rich comes with the train extra
        from rich.markdown import Markdown  # lazy: as above; without rich, the Markdown
    except ImportError:
        print(text)
        return 0
    console = Console()
    with console.pager(styles=True):
        console.print(Markdown(text))
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
        return commands.add_parser(name, formatter_class=HelpFormatter, epilog=epilog, **kwargs)

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
        command.add_argument("--seed", type=seed_type, default=0, help="fixes every deal")
        command.add_argument(
            "--workers", type=int, default=default_workers(), help="processes playing games"
        )
        command.add_argument("--out", help="write the results as JSON to this file")
        command.add_argument("--no-progress", action="store_true", help="no progress bar")
        command.add_argument(
            "--variant",
            type=variant_type,
            default="full",
            help="the version of the game: full, small, tiny or key=value pairs (RULES.md "
            "V1-V7); agents that cannot play it say so",
        )

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
    play.add_argument("--seed", type=seed_type, help="fixes the deals (default: drawn, and shown)")
    play.add_argument("--save", help="write the game record (JSON) to this file")
    play.add_argument(
        "--variant",
        type=variant_type,
        default="full",
        help="the version of the game: full, small, tiny or key=value pairs (RULES.md V1-V7)",
    )
    play.set_defaults(run=_play)

    replay = add_command("replay", help="step through a recorded game")
    replay.add_argument("record", help="a game record (JSON) from play or eval --save-games")
    replay.add_argument("--no-wait", action="store_true", help="print it all without pausing")
    replay.set_defaults(run=_replay)

    rules = add_command(
        "rules",
        help="the rules of the game, for players (on a terminal rendered and paged; "
        "to a pipe, as Markdown)",
    )
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

    add_train_commands(add_command)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``jekyll-hyde`` command: parse the arguments and run the subcommand.

    A failure ends in one line on stderr, never a traceback.

    Args:
        argv: the arguments after the program name (``["eval", "random", "heuristic",
            "--pairs", "10"]``); None reads ``sys.argv[1:]``.

    Returns:
        The exit status: 0 on success (and for a bare ``jekyll-hyde``, which prints the
        help), 2 for bad input (a bad option value, a ``ValueError`` from the command, an
        output path that cannot be written), 1 for a file that could not be read or
        written, 130 when interrupted with Ctrl-C; a subcommand may return its own.

    Raises:
        SystemExit: from argparse, with status 2 for arguments it cannot parse and 0
            after ``--help`` or ``--version``.
    """
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
