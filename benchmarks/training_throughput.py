"""Training steps/s of ``jekyll-hyde train`` with different ways of running the games.

Runs short trainings of ``configs/ppo/default.yaml`` (no periodic evaluation, a
two-pair final arena against random) in the same session, one per setting of
``env.vec_env``, ``env.n_envs`` and ``run.torch_threads`` (with ``ppo.n_steps``
scaled so that a rollout stays 2,048 steps; every other value, the PPO
hyperparameters and the self-play pool included, is the config's), and prints
each one's steps per second of training and the ratio to the first setting.

The first setting is the peer: eight ``SubprocVecEnv`` game processes per
learner and one torch thread, the fastest subprocess setting. The batched C
games run in the learner's process, which leaves the second core to torch.
Target: the batched games train at least 3x as many steps/s.

    python benchmarks/training_throughput.py [--steps 100000]
        [--settings subproc:8:1,batched:64:2,batched:128:2]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROLLOUT = 2048
TARGET_RATIO = 3.0
ROOT = pathlib.Path(__file__).resolve().parents[1]


def steps_per_second(
    vec_env: str, n_envs: int, threads: int, steps: int, folder: pathlib.Path
) -> float:
    run_dir = folder / f"{vec_env}_{n_envs}_{threads}"
    overrides = {
        "env.vec_env": vec_env,
        "run.torch_threads": threads,
        "run.total_steps": steps,
        "run.eval_every": 10**9,
        "run.final_pairs": 2,
        "run.final_opponents": "[random]",
        "selfplay.phase_steps": steps // 2,
        "env.n_envs": n_envs,
        "ppo.n_steps": ROLLOUT // n_envs,
    }
    command = [sys.executable, "-m", "jekyll_hyde_app.cli", "train", "--config", "ppo"]
    command += ["--run-dir", str(run_dir)]
    for key, value in overrides.items():
        command += ["--set", f"{key}={value}"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:  # the progress bar is on stderr: show only its end
        raise SystemExit(f"training with {run_dir.name} failed:\n{done.stderr[-2000:]}")
    state = json.loads((run_dir / "checkpoint" / "state.json").read_text())
    return state["steps"] / state["wall_time"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument(
        "--settings",
        default="subproc:8:1,batched:64:2,batched:128:2",
        help="comma-separated vec_env:n_envs:torch_threads; the first is the peer",
    )
    args = parser.parse_args()
    settings = []
    for item in args.settings.split(","):
        vec_env, n_envs, threads = item.split(":")
        settings.append((vec_env, int(n_envs), int(threads)))
    header = ("env.vec_env", 11), ("n_envs", 7), ("threads", 8), ("n_steps", 8), ("steps/s", 9)
    print(" ".join(f"{name:>{width}}" for name, width in header) + f" {'ratio':>7}")
    best_batched = 0.0
    with tempfile.TemporaryDirectory() as folder:
        first = None
        for vec_env, n_envs, threads in settings:
            rate = steps_per_second(vec_env, n_envs, threads, args.steps, pathlib.Path(folder))
            first = first or rate
            if vec_env == "batched":
                best_batched = max(best_batched, rate)
            print(
                f"{vec_env:>11} {n_envs:>7} {threads:>8} {ROLLOUT // n_envs:>8} "
                f"{rate:>9,.0f} {rate / first:>6.2f}x"
            )
    if best_batched and first:
        ratio = best_batched / first
        verdict = "meets" if ratio >= TARGET_RATIO else "MISSES"
        print(f"batched / first setting: {ratio:.2f}x ({verdict} the {TARGET_RATIO:.0f}x target)")


if __name__ == "__main__":
    main()
