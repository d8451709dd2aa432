"""Models of other libraries in the arena: SB3's MaskablePPO and the exchange format against numpy.

Measures, in one run, on the same ``--pairs`` duplicate pairs (default 1,000)
of ``--seed`` (default 2071, a seed no other measurement uses) against
``heuristic``, with one worker (``workers=1``: the games and the model in this
one process):

1. the arena's wall time (loading the agent included) for each of
   - the champion, numpy (``champion``, a saved policy played decision by decision);
   - the champion exported to TorchScript and to ONNX
     (``jekyll_hyde_agents.external.exchange.export_policy``), by path;
   - an sb3-contrib MaskablePPO with a 256x256 network
     (``policy_kwargs=dict(net_arch=[256, 256])``), trained here for
     ``--train-steps`` steps (its speed is measured, not its play), by path;
   with the ratio of each to the champion's. The models play through
   ``ModelAgent``, asked once per batch of waiting decisions. Target: the
   MaskablePPO takes at most twice the champion's wall time. The exported
   champions must play the champion's games (their pair scores are compared);
2. the forward pass alone, for a batch of 1 and of 64 observations of real
   games (half Jekyll's, half Hyde's): numpy (the champion's ``logits`` for one,
   ``batch_logits`` per role for 64), and the ``scores`` call the arena makes of
   the TorchScript, ONNX and MaskablePPO models. Best of ``--repeats`` runs of
   ``--seconds`` each.

The process is pinned to one core, and numpy's BLAS, torch and onnxruntime
each run on one thread, as in the arena's worker processes (the arena limits
BLAS to one thread itself, and its ONNX loader asks onnxruntime for one).
Each arena match is played ``--repeats`` times and its shortest wall time
kept; the repeats must give the same games.

With ``--write-page``, ``external-speed.md`` and its data ``external-speed.json``
are written (atomically) into ``--results-dir`` (default docs/results), which
needs at least 1,000 pairs; a trial with fewer pairs writes elsewhere.

    python benchmarks/external_speed.py [--pairs 1000] [--seed 2071] [--repeats 3]
        [--seconds 1.0] [--train-steps 512] [--results-dir DIR] [--write-page]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pathlib
import platform
import sys
import tempfile
import time
from typing import Any, NoReturn

import numpy as np
from threadpoolctl import threadpool_limits

import jekyll_hyde_env  # noqa: F401  (registers JekyllHyde-v0)
from _timing import pin_to_one_core, rate
from jekyll_hyde_agents import make_agent
from jekyll_hyde_agents.champion import champion_path
from jekyll_hyde_agents.external.exchange import export_policy
from jekyll_hyde_agents.model_agent import mask_of
from jekyll_hyde_agents.sources import load_agent
from jekyll_hyde_arena import evaluate
from jekyll_hyde_env.engine import apply_action, legal_actions, new_game, player_view
from jekyll_hyde_env.engine.cards import AGENTS
from jekyll_hyde_env.observation import encode
from jekyll_hyde_train.common.config_checks import SEED_MAX
from jekyll_hyde_train.common.files import atomic_write_text

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
PAGE, DATA = "external-speed.md", "external-speed.json"
DEFAULT_SEED = 2071
DEFAULT_PAIRS = 1000
PAGE_PAIRS = 1000  # the page's figures come from at least this many pairs
OPPONENT = "heuristic"
TARGET_RATIO = 2.0  # MaskablePPO's wall time at most this times the champion's
NET_ARCH = [256, 256]
BATCHES = (1, 64)
NEEDED = {  # module: the extra that installs it
    "torch": "train",
    "stable_baselines3": "train",
    "sb3_contrib": "train",
    "onnx": "onnx",
    "onnxruntime": "onnx",
}


class OneLineParser(argparse.ArgumentParser):
    """An argument parser that refuses with one line (``error: ...``) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        refuse(message)


def refuse(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, checked before anything is trained or played."""
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=DEFAULT_PAIRS, help="duplicate pairs a match")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the deals' seed")
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs of each measurement; the best is kept"
    )
    parser.add_argument(
        "--seconds", type=float, default=1.0, help="length of one forward-pass timing run"
    )
    parser.add_argument(
        "--train-steps", type=int, default=512, help="MaskablePPO's training steps (speed only)"
    )
    parser.add_argument(
        "--results-dir", default=str(RESULTS), help=f"where --write-page writes {PAGE} and {DATA}"
    )
    parser.add_argument("--write-page", action="store_true", help=f"write {PAGE} and {DATA}")
    args = parser.parse_args(argv)
    for name in ("pairs", "repeats", "train_steps"):
        if getattr(args, name) < 1:
            refuse(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if not 0 <= args.seed <= SEED_MAX:
        refuse(f"--seed must be a whole number from 0 to {SEED_MAX}, got {args.seed}")
    if not (np.isfinite(args.seconds) and args.seconds > 0):
        refuse(f"--seconds must be a positive, finite number, got {args.seconds}")
    results = pathlib.Path(args.results_dir)
    if args.write_page:
        if not results.is_dir():
            refuse(f"--results-dir: no such folder {results}")
        if results.resolve() == RESULTS.resolve() and args.pairs < PAGE_PAIRS:
            refuse(
                f"--write-page into {RESULTS.relative_to(ROOT)} needs --pairs {PAGE_PAIRS} or "
                f"more, got {args.pairs}; a trial writes into another --results-dir"
            )
    for module, extra in NEEDED.items():
        try:
            importlib.import_module(module)
        except ImportError:
            refuse(f"{module} is missing: pip install 'jekyll-hyde-env[{extra}]'")
    return args


# --- the agents ---------------------------------------------------------------------


def train_maskable_ppo(folder: pathlib.Path, steps: int, seed: int) -> pathlib.Path:
    """A MaskablePPO with a 256x256 network, trained ``steps`` steps, saved as a zip."""
    import gymnasium as gym  # lazy: with the SB3 model, which only its match needs
    from sb3_contrib import MaskablePPO  # lazy: torch loads after the process is pinned

    env = gym.make("JekyllHyde-v0", role="random", opponent=OPPONENT)
    n_steps = min(256, steps)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=n_steps,
        batch_size=min(64, n_steps),
        policy_kwargs=dict(net_arch=NET_ARCH),
        seed=seed,
    )
    model.learn(steps)
    path = folder / "mppo.zip"
    model.save(path)
    return path


def exported_champions(folder: pathlib.Path) -> dict[str, pathlib.Path]:
    """The champion written in both forms of the exchange format."""

    return {
        "torchscript": export_policy(champion_path(), "torchscript", folder / "champion.pt"),
        "onnx": export_policy(champion_path(), "onnx", folder / "champion.onnx"),
    }


# --- the arena ----------------------------------------------------------------------


def time_match(spec: str, pairs: int, seed: int, repeats: int) -> dict[str, Any]:
    """The best wall time of ``repeats`` matches of ``spec`` against the opponent, loading
    included; the repeats must play the same games."""

    best, kept = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        report = evaluate(spec, OPPONENT, pairs, seed=seed, workers=1)
        wall = time.perf_counter() - start
        if report.interrupted:
            raise SystemExit("interrupted: nothing written")
        if kept is not None and report.pair_scores != kept.pair_scores:
            raise SystemExit(f"error: {spec} played other games when repeated: not reproducible")
        if wall < best:
            best, kept = wall, report
    play = 2 * kept.pairs / kept.games_per_second
    return {
        "wall_seconds": best,
        "play_seconds": play,
        "load_seconds": max(0.0, best - play),
        "games_per_second": kept.games_per_second,
        "score": kept.score,
        "ci": list(kept.score_ci),
        "pair_scores": kept.pair_scores,
        "replaced": kept.illegal.get("A", {}).get("replaced", 0),
    }


# --- the forward pass ---------------------------------------------------------------


def game_rows(rows: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(observations float32, masks bool, seats) of ``rows`` decisions of heuristic games,
    half of them Jekyll's and half Hyde's."""

    by_seat: list[list[tuple[np.ndarray, np.ndarray]]] = [[], []]
    players = [make_agent(OPPONENT, seed=seed), make_agent(OPPONENT, seed=seed + 1)]
    game = 0
    while min(len(found) for found in by_seat) < (rows + 1) // 2:
        state = new_game(np.random.default_rng([seed, game]))
        while state.to_act >= 0:
            seat = state.to_act
            view, legal = player_view(state, seat), legal_actions(state)
            by_seat[seat].append((encode(view).astype(np.float32), mask_of(legal)))
            apply_action(state, players[seat].act(view, legal))
        game += 1
    seats = np.arange(rows) % 2  # Jekyll, Hyde, Jekyll, ...
    observations, masks = zip(*(by_seat[seat][k // 2] for k, seat in enumerate(seats)), strict=True)
    return np.stack(observations), np.stack(masks), seats


def numpy_forward(champion: Any, observations: np.ndarray, seats: np.ndarray) -> Any:
    """The champion's numpy logits as the arena computes them: one observation a call
    (``logits``), or a batch split by role (``batch_logits``)."""
    if len(observations) == 1:
        role = AGENTS[int(seats[0])]
        return lambda: champion.logits(observations[0], role)
    groups = [(np.flatnonzero(seats == seat), role) for seat, role in enumerate(AGENTS)]

    def forward() -> None:
        for rows, role in groups:
            if rows.size:
                champion.batch_logits(observations[rows], role)

    return forward


def time_forward(call: Any, seconds: float, repeats: int) -> float:
    """Microseconds per call of ``call()``, best of ``repeats`` runs of ``seconds``."""
    call()  # warm up (first calls allocate)

    def run(budget: float) -> int:
        calls = 0
        deadline = time.perf_counter() + budget
        while time.perf_counter() < deadline:
            call()
            calls += 1
        return calls

    return 1e6 / rate(run, seconds, repeats)


def forward_rows(
    paths: dict[str, pathlib.Path], seed: int, seconds: float, repeats: int
) -> list[dict[str, Any]]:
    """Microseconds a call of each model's forward pass (and the champion's in numpy)
    for each batch size of ``BATCHES``."""

    observations, masks, seats = game_rows(max(BATCHES), seed)
    models = {label: load_agent(str(path)).model for label, path in paths.items()}
    champion = make_agent("champion")
    rows = []
    for batch in BATCHES:
        o, m, s = observations[:batch], masks[:batch], seats[:batch]
        calls = {"champion (numpy)": numpy_forward(champion, o, s)}
        for label, model in models.items():
            calls[label] = lambda model=model, o=o, m=m, s=s: model.scores(o, m, s)
        for label, call in calls.items():
            micros = time_forward(call, seconds, repeats)
            row = {"model": label, "batch": batch, "us_per_call": micros}
            rows.append({**row, "us_per_row": micros / batch})
            print(f"forward {label:<28} batch {batch:>3}: {micros:9.1f} µs a call", flush=True)
    return rows


# --- the report ---------------------------------------------------------------------


def versions() -> dict[str, str]:
    names = ("numpy", "torch", "onnxruntime", "stable_baselines3", "sb3_contrib")
    found = {name: getattr(importlib.import_module(name), "__version__", "?") for name in names}
    return {"python": platform.python_version(), **found}


def cpu_name() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def command_line(args: argparse.Namespace) -> str:
    words = ["python benchmarks/external_speed.py", f"--pairs {args.pairs}", f"--seed {args.seed}"]
    if args.repeats != 3:
        words.append(f"--repeats {args.repeats}")
    if args.seconds != 1.0:
        words.append(f"--seconds {args.seconds:g}")
    if args.train_steps != 512:
        words.append(f"--train-steps {args.train_steps}")
    return " ".join([*words, "--write-page"])


def arena_table(data: dict[str, Any]) -> str:
    lines = [
        "| agent | loaded from | wall seconds | of which loading | games/s | / champion's time "
        "| score against `heuristic` [95% interval] |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in data["arena"]:
        low, high = row["ci"]
        lines.append(
            f"| {row['agent']} | {row['loaded_from']} | {row['wall_seconds']:.2f} "
            f"| {row['load_seconds']:.2f} | {row['games_per_second']:,.0f} "
            f"| {row['ratio']:.2f}x | {row['score']:.3f} [{low:.3f}, {high:.3f}] |"
        )
    return "\n".join(lines)


def forward_table(data: dict[str, Any]) -> str:
    header = " | ".join(f"batch of {batch}: µs a call (an observation)" for batch in BATCHES)
    lines = [f"| model | {header} |", "|---|" + "---|" * len(BATCHES)]
    for model in dict.fromkeys(row["model"] for row in data["forward"]):
        cells = []
        for batch in BATCHES:
            row = next(r for r in data["forward"] if r["model"] == model and r["batch"] == batch)
            cells.append(
                f"{row['us_per_call']:,.1f}" + (f" ({row['us_per_row']:,.1f})" if batch > 1 else "")
            )
        lines.append(f"| {model} | {' | '.join(cells)} |")
    return "\n".join(lines)


def page(data: dict[str, Any]) -> str:
    target = data["target"]
    same = data["exports_score_as_the_champion"]
    machine = data["machine"]
    return "\n".join(
        [
            "# Models of other libraries: speed in the arena",
            "",
            f"Written by `{data['command']}` ([{DATA}]({DATA}) holds the same figures). "
            f"{data['pairs']:,} duplicate pairs of seed {data['seed']} against `heuristic`, "
            "the same pairs for every agent, one worker (the games and the model in one "
            "process), pinned to one core, with numpy's BLAS, torch and onnxruntime on one "
            f"thread each; each match played {data['repeats']} "
            f"time{'s' if data['repeats'] > 1 else ''}, its shortest wall time kept. Wall time "
            "counts loading the agent. The MaskablePPO (a 256x256 network, "
            f"{data['train_steps']:,} training steps) is measured for its speed, not its play. "
            f"How to evaluate a model: [Evaluate your own agent](../evaluation/own-agent.md).",
            "",
            arena_table(data),
            "",
            f"Target: the MaskablePPO takes at most {TARGET_RATIO:g} times the champion's wall "
            f"time: {target['ratio']:.2f}x, **{'meets' if target['meets'] else 'MISSES'}**. "
            "The champion exported to TorchScript and to ONNX "
            + (
                "scored as the champion on every pair."
                if same
                else "did NOT score as the champion on every pair."
            )
            + " The champion in numpy plays one decision a call; the models are asked once "
            "for all the games waiting on them.",
            "",
            "The forward pass alone, on observations of real games (half Jekyll's, half "
            "Hyde's): numpy is the champion's own forward pass (one observation a call, or "
            "the batch split by role); the others are the `scores` call the arena makes. An "
            "exported module computes both roles' networks for every row and keeps the one "
            "of the row's role.",
            "",
            forward_table(data),
            "",
            f"Measured on {machine['cpu']} ({machine['cores']} cores available); "
            + ", ".join(f"{name} {version}" for name, version in data["versions"].items())
            + ".",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    import torch  # lazy: loads after the process is pinned to one core

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    pin_to_one_core()
    torch.set_num_threads(1)

    with (
        threadpool_limits(limits=1, user_api="blas"),
        tempfile.TemporaryDirectory(prefix="jh_external_") as name,
    ):
        folder = pathlib.Path(name)
        start = time.perf_counter()
        mppo = train_maskable_ppo(folder, args.train_steps, args.seed)
        print(f"MaskablePPO 256x256: {args.train_steps} steps in "
              f"{time.perf_counter() - start:.1f} s", flush=True)  # fmt: skip
        exports = exported_champions(folder)
        agents = [
            ("champion (numpy)", "champion", "`champion`, a saved policy"),
            ("champion, TorchScript", str(exports["torchscript"]), "`champion.pt`"),
            ("champion, ONNX", str(exports["onnx"]), "`champion.onnx`"),
            ("MaskablePPO 256x256", str(mppo), "`mppo.zip`"),
        ]
        arena = []
        for label, spec, loaded_from in agents:
            row = time_match(spec, args.pairs, args.seed, args.repeats)
            arena.append({"agent": label, "loaded_from": loaded_from, **row})
            print(
                f"{label:<24} {row['wall_seconds']:8.2f} s wall ({row['load_seconds']:.2f} s "
                f"loading), {row['games_per_second']:8,.0f} games/s, score {row['score']:.3f}",
                flush=True,
            )
        forward = forward_rows(
            {
                "champion, TorchScript": exports["torchscript"],
                "champion, ONNX": exports["onnx"],
                "MaskablePPO 256x256": mppo,
            },
            args.seed,
            args.seconds,
            args.repeats,
        )

    champion = arena[0]
    for row in arena:
        row["ratio"] = row["wall_seconds"] / champion["wall_seconds"]
    same = all(row["pair_scores"] == champion["pair_scores"] for row in arena[1:3])
    ratio = arena[3]["ratio"]
    data = {
        "command": command_line(args),
        "pairs": args.pairs,
        "seed": args.seed,
        "opponent": OPPONENT,
        "workers": 1,
        "repeats": args.repeats,
        "train_steps": args.train_steps,
        "arena": [{k: v for k, v in row.items() if k != "pair_scores"} for row in arena],
        "exports_score_as_the_champion": same,
        "target": {"max_ratio": TARGET_RATIO, "ratio": ratio, "meets": ratio <= TARGET_RATIO},
        "forward": forward,
        "machine": {"cpu": cpu_name(), "cores": cores, "pinned": 1, "torch_threads": 1},
        "versions": versions(),
    }
    print(f"\n{args.pairs} pairs, seed {args.seed}, against {OPPONENT}, workers=1, one core")
    print(arena_table(data))
    print()
    print(forward_table(data))
    print(
        f"\nMaskablePPO / champion: {ratio:.2f}x (target <= {TARGET_RATIO:g}x: "
        f"{'meets' if ratio <= TARGET_RATIO else 'MISSES'}); the exports score as the "
        f"champion on every pair: {'yes' if same else 'NO'}"
    )
    if args.write_page:
        results = pathlib.Path(args.results_dir)
        atomic_write_text(results / DATA, json.dumps(data, indent=2) + "\n")
        atomic_write_text(results / PAGE, page(data))
        print(f"written: {results / PAGE}, {results / DATA}")


if __name__ == "__main__":
    main()
