"""The curves' ``ppo`` trainer: this project's PPO self-play (Stable-Baselines3 MaskablePPO).

The settings are ``configs/ppo/default.yaml`` with ``run.variant`` and ``run.seed``
set, and the loop is ``jekyll_hyde_train.ppo.train.train``'s, built from its own
pieces (``build_vec_env``, ``new_maskable_ppo``, ``opponents_for``,
``export_policies``): a Jekyll and a Hyde learner, 64 games each stepped together in
C (``env.vec_env: batched``), learning in alternating phases of
``selfplay.phase_steps`` against a pool of the other role's snapshots and the
baselines. It differs from ``train`` only in what the curves do not need or must
have:

- it runs until it is stopped (``run.total_steps`` is not read);
- no evaluation matches (``run.eval_every`` cannot be switched off in the config:
  ``train`` plays them whenever they are due, so this loop leaves them out), no
  learner checkpoints, no ``metrics.csv``, no TensorBoard logs: a run cut short
  starts again from scratch (``run.py``);
- a Stable-Baselines3 callback looks for a checkpoint request after every step of
  the 64 games, and saves both learners' actors in the saved-policy format
  (``export_policies``: ``policy.npz`` and ``policy.json``).

Everything runs in the one process: the games and the opponents' networks in C and
numpy (BLAS on one thread), the learner in torch on ``run.torch_threads`` (2)
threads.
"""

from __future__ import annotations

import pathlib
import sys
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from jekyll_hyde_env.engine.variant import Variant
from jekyll_hyde_train.common.config import load_config
from jekyll_hyde_train.exact.table import InfosetTable, policy_probabilities
from jekyll_hyde_train.ppo.checkpoints import TrainState
from jekyll_hyde_train.ppo.config import TrainConfig
from jekyll_hyde_train.ppo.hyperparameters import new_maskable_ppo
from jekyll_hyde_train.ppo.opponent_pool import PoolOpponent, check_opponents
from jekyll_hyde_train.ppo.train import (
    build_vec_env,
    configure_torch,
    export_policies,
    learner_roles,
    learner_seed,
    opponents_for,
)

if TYPE_CHECKING:
    from protocol import Requests

NAME = "ppo"
LABEL = (
    "this project's PPO self-play (Stable-Baselines3 MaskablePPO, configs/ppo/default.yaml): "
    "a Jekyll and a Hyde learner in alternating phases of 100k steps against past "
    "snapshots and baselines, 64 batched games, [128, 128] tanh, 2 torch threads"
)
CONFIG = "ppo/default"
"""The shipped config the trainer starts from."""


def config_for(variant: Variant, seed: int) -> TrainConfig:
    """The project's default PPO config on ``variant`` with ``seed``.

    Args:
        variant: the version of the game.
        seed: the run's seed (``run.seed``).

    Returns:
        The checked config.
    """
    overrides = [f"run.variant={variant.name}", f"run.seed={seed}", "run.name=curves-ppo"]
    return load_config(CONFIG, overrides, schema=TrainConfig)


def _quiet(model: Any) -> None:
    """No log output at all: SB3 would otherwise make a temporary folder every ``learn``."""
    from stable_baselines3.common.logger import Logger  # lazy: the train extra

    model.set_logger(Logger(folder=None, output_formats=[]))


def _request_callback(check: Any):
    """A Stable-Baselines3 callback that calls ``check()`` after every step of the games.

    Args:
        check: answers a pending checkpoint request, if any.

    Returns:
        The callback.
    """
    from stable_baselines3.common.callbacks import BaseCallback  # lazy: the train extra

    class Check(BaseCallback):
        def _on_step(self) -> bool:
            check()
            return True

    return Check()


def train(out: pathlib.Path, variant: Variant, seed: int, requests: Requests) -> None:
    """Train PPO self-play from scratch until stopped, saving requested checkpoints.

    Args:
        out: the trainer's folder: the snapshots of the opponent pools go to
            ``out/snapshots``.
        variant: the version of the game.
        seed: the run's seed.
        requests: the checkpoint requests (``protocol.Requests``).
    """
    config = config_for(variant, seed)
    check_opponents(variant, {"selfplay.baselines": list(config.selfplay.baselines)})
    configure_torch(config.run.torch_threads)
    roles = learner_roles(config)
    state = TrainState()
    venvs: dict[str, Any] = {}
    models: dict[str, Any] = {}
    for i, role in enumerate(roles):
        env_role = "random" if role == "shared" else role
        members = opponents_for(role, config, state, out)
        venvs[role] = build_vec_env(config, env_role, members, config.run.seed + 100 * i)
        models[role] = new_maskable_ppo(config.ppo, venvs[role], learner_seed(config, i))
        _quiet(models[role])

    def steps() -> int:
        return sum(int(model.num_timesteps) for model in models.values())

    def check() -> None:
        name = requests.pending()
        if name is not None:
            requests.save(name, lambda folder: export_policies(folder, models, config, steps()))

    callback = _request_callback(check)
    started = time.perf_counter()
    try:
        while True:
            role = roles[state.phase % len(roles)]
            model = models[role]
            pool = PoolOpponent(opponents_for(role, config, state, out))
            venvs[role].env_method("set_opponent", pool)
            model.learn(config.selfplay.phase_steps, reset_num_timesteps=False, callback=callback)
            # The phase is over: snapshot the learner for the other side's pool.
            snapshot = pathlib.Path("snapshots") / f"{role}_{state.phase:04d}"
            export_policies(out / snapshot, {role: model}, config, steps())
            state.snapshots.setdefault(role, []).append(str(snapshot))
            state.phase += 1
            wall = time.perf_counter() - started
            print(
                f"phase {state.phase} ({role}): {steps():,} steps in {wall:.0f} s, "
                f"{steps() / wall:,.0f} steps/s",
                file=sys.stderr,
                flush=True,
            )
    finally:
        for venv in venvs.values():
            venv.close()


def probabilities(checkpoint: pathlib.Path, table: InfosetTable) -> np.ndarray:
    """The checkpoint's play at every information set: the softmax of its legal logits,
    as the policy plays when it samples (``PolicyAgent(deterministic=False)``).

    Args:
        checkpoint: a checkpoint's folder (``policy.json`` and ``policy.npz``).
        table: the information sets of the checkpoint's variant.

    Returns:
        float64 ``(table.size, NUM_ACTIONS)``, zero on illegal actions, rows summing to 1.
    """
    return policy_probabilities(checkpoint, table)
