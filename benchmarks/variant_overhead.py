"""The full game's speed with variants against the code before them, in the same run.

Variants (RULES.md V1-V7) put the deal, the exchange counts, the track and the rounds in
a table that the engine and the C core read at the start and the end of a round. This
script checks that the full game lost no speed (the target: every ratio at least 0.95).
It builds ``--base`` (a git ref, by default the last commit before variants) in a
temporary folder, compiles its C extensions, and times the same four loops with both
codes, alternating base and current ``--repeats`` times on one core:

- ``engine``: the Python engine, random legal play (``rules.legal_actions`` and
  ``rules.apply_action``, deals drawn in the loop), decisions per second;
- ``aec``: the PettingZoo AEC env, random legal play, steps per second;
- ``batched``: ``BatchedGames(1024, autoreset=True)``, actions drawn in C, decisions per
  second;
- ``ismcts``: the C ISMCTS of ``jekyll_hyde_agents._rollout`` from 40 fixed views, 2,000
  simulations each, simulations per second.

It prints the medians and their ratio (current / base) and writes them to
``docs/results/variant_overhead.json``.

    python benchmarks/variant_overhead.py [--base REF] [--seconds 2] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "results" / "variant_overhead.json"
BASE = "b513357"  # the last commit before variants
TARGET = 0.95
# Import name -> folder, as pyproject.toml's package-dir maps them.
PACKAGES = {
    "jekyll_hyde_env": "jekyll_hyde_env",
    "jekyll_hyde_agents": "agents",
    "jekyll_hyde_arena": "arena",
}

LOOPS = r"""
import json, sys, time
import numpy as np
kind, seconds = sys.argv[1], float(sys.argv[2])
if kind == "engine":
    from jekyll_hyde_env.engine import rules
    rng = np.random.default_rng(0)
    count, deadline = 0, time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        state = rules.new_game(rng)
        while state.phase != rules.GAME_OVER:
            legal = rules.legal_actions(state)
            rules.apply_action(state, legal[int(rng.integers(len(legal)))])
            count += 1
elif kind == "aec":
    from jekyll_hyde_env import jekyll_hyde_v0
    env = jekyll_hyde_v0.env()
    rng = np.random.default_rng(0)
    count, deadline = 0, time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        env.reset(seed=int(rng.integers(2**31)))
        for agent in env.agent_iter():
            _, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            mask = env.observe(agent)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
            count += 1
elif kind == "batched":
    from jekyll_hyde_env.vector import BatchedGames
    games = BatchedGames(1024, autoreset=True)
    games.reset(seed=0)
    out = np.zeros(1024, np.int64)
    count, deadline = 0, time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        live = int((~games.terminated).sum())
        games.sample_actions(out)
        games.step(out)
        count += live
elif kind == "ismcts":
    from jekyll_hyde_agents import rollout
    from jekyll_hyde_env.engine import rules, player_view
    rng = np.random.default_rng(1)
    specs = []
    while len(specs) < 40:
        state = rules.new_game(rng)
        while state.phase != rules.GAME_OVER and len(specs) < 40:
            legal = rules.legal_actions(state)
            if len(legal) > 1 and rng.random() < 0.1:
                specs.append(rollout.search_spec(player_view(state, state.to_act)))
            rules.apply_action(state, legal[int(rng.integers(len(legal)))])
    count, deadline, i = 0, time.perf_counter() + seconds, 0
    while time.perf_counter() < deadline:
        count += rollout._core.ismcts(specs[i % 40], 2000, 0.7, i, 0)[3]
        i += 1
print(json.dumps(count / seconds))
"""


def build_base(ref: str, folder: pathlib.Path) -> pathlib.Path:
    """Check out ``ref`` into ``folder``, compile its C extensions in place, and link its
    packages under their import names; returns the folder of the links."""
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder / "src"), ref],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
        cwd=folder / "src",
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    links = folder / "packages"
    links.mkdir()
    for name, source in PACKAGES.items():
        (links / name).symlink_to(folder / "src" / source)
    return links


def measure(kind: str, seconds: float, path: pathlib.Path | None) -> float:
    """One timed loop in a fresh process on one core, with ``path`` first on sys.path."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)
    done = subprocess.run(
        ["taskset", "-c", "0", sys.executable, "-c", LOOPS, kind, str(seconds)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Build the base, time both codes alternately and write the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=BASE, help="the git ref to compare with")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = pathlib.Path(scratch)
        try:
            links = build_base(args.base, folder)
            results = {}
            for kind in ("engine", "aec", "batched", "ismcts"):
                base, current = [], []
                for _ in range(args.repeats):
                    base.append(measure(kind, args.seconds, links))
                    current.append(measure(kind, args.seconds, None))
                ratio = statistics.median(current) / statistics.median(base)
                results[kind] = {
                    "base_per_second": statistics.median(base),
                    "current_per_second": statistics.median(current),
                    "ratio": ratio,
                    "base_runs": base,
                    "current_runs": current,
                }
                print(
                    f"{kind:8s} base {statistics.median(base):>12,.0f}/s  current "
                    f"{statistics.median(current):>12,.0f}/s  ratio {ratio:.3f}"
                    f"{'' if ratio >= TARGET else '  BELOW ' + str(TARGET)}",
                    flush=True,
                )
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder / "src")],
                capture_output=True,
            )
    data = {
        "base": args.base,
        "seconds": args.seconds,
        "repeats": args.repeats,
        "target_ratio": TARGET,
        "loops": results,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    temporary = OUT.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, OUT)
    print(f"written: {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
