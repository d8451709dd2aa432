"""RLlib sampling throughput with 1 and 2 env runners, and RLlib against SB3 at equal wall time.

1. Sampling: PPO on ``JekyllHydeMultiAgentEnv`` with 1 and then 2 env runners;
   env steps sampled per second over ``--iterations`` training iterations
   (after one warm-up iteration), as RLlib reports them.
2. Equal wall time: the RLlib backend (2 env runners) and the Stable-Baselines3
   backend (2 subprocess envs) each train for ``--seconds``; then each exported
   policy plays ``--pairs`` duplicate pairs against the heuristic.

    python benchmarks/rllib_throughput.py [--iterations 5] [--seconds 180] [--pairs 200]
"""

from __future__ import annotations

import argparse
import pathlib
import tempfile
import time

import ray

from jekyll_hyde_arena import evaluate
from jekyll_hyde_train.common.config import from_dict
from jekyll_hyde_train.ppo.config import TrainConfig
from jekyll_hyde_train.ppo.rllib import build_algorithm, export_rllib_policy, init_ray
from jekyll_hyde_train.ppo.rllib_config import RLlibTrainConfig
from jekyll_hyde_train.ppo.train import (
    build_learner,
    build_vec_env,
    configure_torch,
    export_policies,
)


def rllib_config(runners: int, seed: int = 0) -> RLlibTrainConfig:
    return from_dict(
        {
            "run": {"seed": seed},
            "rllib": {"num_env_runners": runners},
            # 4,000 steps an iteration, shared by the env runners' games
            "ppo": {"n_steps": 4000 // max(1, runners), "batch_size": 500, "n_epochs": 4},
        },
        schema=RLlibTrainConfig,
    )


def sampling_rate(runners: int, iterations: int) -> float:
    config = rllib_config(runners)
    init_ray(config, None)
    algorithm = build_algorithm(config)
    try:
        algorithm.train()  # warm-up
        first = algorithm.train()["env_runners"]["num_env_steps_sampled_lifetime"]
        start = time.perf_counter()
        for _ in range(iterations - 1):
            last = algorithm.train()["env_runners"]["num_env_steps_sampled_lifetime"]
        return (last - first) / (time.perf_counter() - start)
    finally:
        algorithm.stop()
        ray.shutdown()


def rllib_for(seconds: float, folder: pathlib.Path) -> int:
    config = rllib_config(2)
    init_ray(config, None)
    algorithm = build_algorithm(config)
    steps = 0
    try:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            steps = algorithm.train()["env_runners"]["num_env_steps_sampled_lifetime"]
        export_rllib_policy(algorithm, folder, config, steps)
    finally:
        algorithm.stop()
        ray.shutdown()
    return int(steps)


def sb3_for(seconds: float, folder: pathlib.Path) -> int:
    config: TrainConfig = from_dict(
        {"ppo": {"n_steps": 1024, "batch_size": 512}}, schema=TrainConfig
    )
    configure_torch(1)
    models, venvs = {}, {}
    for i, role in enumerate(("jekyll", "hyde")):
        venvs[role] = build_vec_env(config, role, [("random", 0.3), ("heuristic", 0.7)], 100 * i)
        models[role] = build_learner(config, venvs[role], i, folder / "tb")
    deadline = time.perf_counter() + seconds
    steps = 0
    turn = 0
    while time.perf_counter() < deadline:
        role = ("jekyll", "hyde")[turn % 2]
        models[role].learn(20_480, reset_num_timesteps=False)
        steps += 20_480
        turn += 1
    export_policies(folder, models, config, steps)
    for venv in venvs.values():
        venv.close()
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--pairs", type=int, default=200)
    args = parser.parse_args()
    print("| env runners | env steps/s sampled |")
    print("|---|---|")
    for runners in (1, 2):
        print(f"| {runners} | {sampling_rate(runners, args.iterations):,.0f} |", flush=True)

    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        rows = []
        for name, run in (
            ("rllib (2 env runners)", rllib_for),
            ("sb3 (2 subprocess envs)", sb3_for),
        ):
            folder = scratch / name.split()[0]
            steps = run(args.seconds, folder)
            report = evaluate(str(folder), "heuristic", args.pairs, seed=99, workers=2)
            lo, hi = report.score_ci
            rows.append(
                f"| {name} | {args.seconds:.0f} | {steps:,} | {report.score:.3f} "
                f"[{lo:.3f}, {hi:.3f}] |"
            )
        print(f"\n| backend | seconds | env steps | score vs heuristic ({args.pairs} pairs) |")
        print("|---|---|---|---|")
        print("\n".join(rows))


if __name__ == "__main__":
    main()
