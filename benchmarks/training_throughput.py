"""Training steps/s with different numbers of game processes per learner.

Runs short trainings of ``configs/default.yaml`` (no periodic evaluation, a
two-pair final arena against random) in the same session, one per setting of
``env.n_envs`` (with ``ppo.n_steps`` scaled so that a rollout stays 2,048
steps), and prints each one's steps per second of training and the ratio to
the first setting. The default config uses the fastest of these.

    python benchmarks/training_throughput.py [--steps 100000] [--n-envs 2,4,8]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROLLOUT = 2048
ROOT = pathlib.Path(__file__).resolve().parents[1]


def steps_per_second(n_envs: int, steps: int, folder: pathlib.Path) -> float:
    run_dir = folder / f"n_envs_{n_envs}"
    overrides = {
        "run.total_steps": steps,
        "run.eval_every": 10**9,
        "run.final_pairs": 2,
        "run.final_opponents": "[random]",
        "selfplay.phase_steps": steps // 2,
        "env.n_envs": n_envs,
        "ppo.n_steps": ROLLOUT // n_envs,
    }
    command = [sys.executable, "-m", "train.cli", "train", "--config", "configs/default.yaml"]
    command += ["--run-dir", str(run_dir)]
    for key, value in overrides.items():
        command += ["--set", f"{key}={value}"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:  # the progress bar is on stderr: show only its end
        raise SystemExit(f"training with env.n_envs={n_envs} failed:\n{done.stderr[-2000:]}")
    state = json.loads((run_dir / "checkpoint" / "state.json").read_text())
    return state["steps"] / state["wall_time"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--n-envs", default="2,4,8")
    args = parser.parse_args()
    settings = [int(n) for n in args.n_envs.split(",")]
    print(f"{'env.n_envs':>10} {'ppo.n_steps':>12} {'steps/s':>10} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as folder:
        first = None
        for n_envs in settings:
            rate = steps_per_second(n_envs, args.steps, pathlib.Path(folder))
            first = first or rate
            print(f"{n_envs:>10} {ROLLOUT // n_envs:>12} {rate:>10,.0f} {rate / first:>7.2f}x")


if __name__ == "__main__":
    main()
