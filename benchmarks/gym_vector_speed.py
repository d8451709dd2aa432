"""Gym vector env speed: JekyllHydeVectorEnv against SubprocVecEnv, saved-policy opponent.

Every side plays against the same saved policy (random float32 weights, hidden
layers 128 and 128 with tanh, shared by both roles), written to a temporary
folder whose path is the opponent spec of every environment, and every side's
infos leave out the game facts (``game_info=False``):

- the peer: stable_baselines3's ``SubprocVecEnv`` of ``--subproc-envs``
  ``JekyllHydeGymEnv(role="random", opponent=<policy>, game_info=False)``
  (one process each, started with fork), masks read through
  ``env_method("action_masks")`` as MaskablePPO does;
- Gymnasium's own ``gymnasium.make_vec(..., vectorization_mode="sync")`` of
  ``--sync-envs`` of the same Gym envs, in this process, masks read from
  ``infos["action_mask"]``: the env ours replaces, game for game;
- ours: ``JekyllHydeVectorEnv(num_envs=N, role="random", opponent=<policy>,
  game_info=False)`` for each N of ``--games``, in this one process; the policy
  opponent plays all its games with one matrix product per layer.

The learner plays a uniformly random legal action in every game, chosen the
same vectorised way on both sides (argmax of mask x uniform). The figure is
learner steps per second: a learner step is one learner decision in one game
(the opponent's replies are inside it). The peer counts ``num_envs`` per step
call (its games reset inside the step that ends them); ours counts the games
that were not over before the step, since under Gymnasium's NEXT_STEP
autoreset the step after a game's end only starts it anew (about 1 step in 40).

The machine is not pinned to one core: the peer spreads its processes over
every core (as it would in training), ours runs in one process, its matrix
products on one BLAS thread (as training runs them: ``threadpool_limits``; on a
shared machine, BLAS threads make the figures swing tenfold). Best of
``--repeats`` runs of ``--seconds`` each (``--quick``: 1 run of 1 second). No
target is set; the ratio to SubprocVecEnv is reported.

    python benchmarks/gym_vector_speed.py [--seconds 5] [--repeats 2] [--quick]
        [--games 64 256] [--subproc-envs 8] [--sync-envs 8]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time
import warnings

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import SubprocVecEnv
from threadpoolctl import threadpool_limits

from _timing import rate
from jekyll_hyde_agents.policy_file import save_policy
from jekyll_hyde_env import JekyllHydeGymEnv
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.gym_vector import JekyllHydeVectorEnv
from jekyll_hyde_env.observation import OBS_SIZE

HIDDEN = (128, 128)


def make_policy(folder: str, seed: int = 0) -> str:
    """A saved policy with random weights (normal / sqrt(fan_in)); returns its folder."""
    rng = np.random.default_rng(seed)
    layers = []
    fan_in = OBS_SIZE
    for size in (*HIDDEN, NUM_ACTIONS):
        weight = (rng.standard_normal((size, fan_in)) / np.sqrt(fan_in)).astype(np.float32)
        bias = (rng.standard_normal(size) * 0.1).astype(np.float32)
        layers.append((weight, bias))
        fan_in = size
    save_policy(
        folder, {"shared": layers}, {"jekyll": "shared", "hyde": "shared"}, activation="tanh"
    )
    return folder


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of ``masks`` (argmax of mask x uniform)."""
    return np.argmax(masks * rng.random(masks.shape, dtype=np.float32), axis=1)


def subproc_driver(venv):
    """Random legal play through an SB3 VecEnv; counts num_envs learner steps per step."""

    def drive(seconds: float) -> int:
        rng = np.random.default_rng(0)
        venv.seed(0)
        venv.reset()
        n = venv.num_envs
        steps = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            masks = np.stack(venv.env_method("action_masks"))
            venv.step(random_legal(masks, rng))
            steps += n
        return steps

    return drive


def sync_driver(env):
    """Random legal play through Gymnasium's sync vector env; counts games not over."""

    def drive(seconds: float) -> int:
        rng = np.random.default_rng(0)
        _, infos = env.reset(seed=0)
        n = env.num_envs
        ended = np.zeros(n, bool)
        steps = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            steps += n - int(ended.sum())
            _, _, ended, _, infos = env.step(random_legal(infos["action_mask"], rng))
        return steps

    return drive


def vector_driver(env):
    """Random legal play through JekyllHydeVectorEnv; counts games not over before the step."""

    def drive(seconds: float) -> int:
        rng = np.random.default_rng(0)
        env.reset(seed=0)
        n = env.num_envs
        ended = np.zeros(n, bool)
        steps = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            steps += n - int(ended.sum())
            _, _, ended, _, _ = env.step(random_legal(env.action_masks(), rng))
        return steps

    return drive


def subproc_rate(policy: str, n_envs: int, seconds: float, repeats: int) -> float:
    def make():
        return JekyllHydeGymEnv(role="random", opponent=policy, game_info=False)

    start_method = "fork" if "fork" in _start_methods() else None
    venv = SubprocVecEnv([make] * n_envs, start_method=start_method)
    try:
        return rate(subproc_driver(venv), seconds, repeats)
    finally:
        venv.close()


def sync_rate(policy: str, num_envs: int, seconds: float, repeats: int) -> float:
    env = gym.make_vec(
        "JekyllHyde-v0",
        num_envs=num_envs,
        vectorization_mode="sync",
        role="random",
        opponent=policy,
        game_info=False,
    )
    try:
        return rate(sync_driver(env), seconds, repeats)
    finally:
        env.close()


def vector_rate(policy: str, num_envs: int, seconds: float, repeats: int) -> float:
    env = JekyllHydeVectorEnv(num_envs=num_envs, role="random", opponent=policy, game_info=False)
    try:
        return rate(vector_driver(env), seconds, repeats)
    finally:
        env.close()


def _start_methods() -> list[str]:
    return multiprocessing.get_all_start_methods()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--games", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--subproc-envs", type=int, default=8)
    parser.add_argument("--sync-envs", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="one run of one second each")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.repeats = 1.0, 1
    warnings.filterwarnings("ignore")

    with tempfile.TemporaryDirectory(prefix="jh_policy_") as folder:
        policy = make_policy(folder)
        peer = subproc_rate(policy, args.subproc_envs, args.seconds, args.repeats)
        with threadpool_limits(1, user_api="blas"):
            sync = sync_rate(policy, args.sync_envs, args.seconds, args.repeats)
            ours = {n: vector_rate(policy, n, args.seconds, args.repeats) for n in args.games}

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"opponent: saved policy {OBS_SIZE}-{'-'.join(map(str, HIDDEN))}-{NUM_ACTIONS} "
        f"(tanh); {cores} cores available, not pinned"
    )
    print(f"{'env':<26}{'num envs':>10}{'learner steps/s':>18}{'/ SubprocVecEnv':>17}")
    print(f"{'SubprocVecEnv (Gym env)':<26}{args.subproc_envs:>10}{peer:>18,.0f}{1.0:>16.1f}x")
    print(f"{'make_vec sync (Gym env)':<26}{args.sync_envs:>10}{sync:>18,.0f}{sync / peer:>16.1f}x")
    for n, speed in ours.items():
        print(f"{'JekyllHydeVectorEnv':<26}{n:>10}{speed:>18,.0f}{speed / peer:>16.1f}x")
    best_n = max(ours, key=ours.__getitem__)
    print(
        f"best: JekyllHydeVectorEnv({best_n}) at {ours[best_n]:,.0f} learner steps/s, "
        f"{ours[best_n] / peer:.1f}x SubprocVecEnv({args.subproc_envs}) "
        f"(one process against {args.subproc_envs} processes on every core), "
        f"{ours[best_n] / sync:.0f}x make_vec sync({args.sync_envs})"
    )


if __name__ == "__main__":
    main()
