"""The curves' ``rllib-ppo`` trainer: this project's PPO self-play on Ray RLlib.

The settings are ``configs/rllib/default.yaml`` with ``run.variant`` and ``run.seed``
set, and the loop is ``jekyll_hyde_train.ppo.rllib.train_rllib``'s, built from its
own pieces (``init_ray``, ``build_algorithm``, ``add_snapshots``,
``export_rllib_policy``): RLlib's PPO (new API stack) with one action-masking module
per role, 2 env runners of one game each sampling 2,000 steps per iteration, and
every 5 iterations frozen copies of the modules that one side of half the episodes
plays. It differs from ``train_rllib`` only in what the curves do not need or must
have:

- it runs until it is stopped (``run.iterations`` is not read);
- no RLlib checkpoints, no ``metrics.csv`` and no final matches (the config has no
  evaluation during training): a run cut short starts again from scratch (``run.py``);
- Ray always starts on this machine (``RAY_ADDRESS`` is ignored), so that the CPU
  meter sees every process it runs;
- after every ``algorithm.train()`` iteration it looks for a checkpoint request and
  saves the learning modules' actors in the saved-policy format
  (``export_rllib_policy``: ``policy.npz`` and ``policy.json``). A request waits for
  the end of the iteration under way.

Processes: this one (the driver, which also holds RLlib's learner: torch on its
default threads), Ray's own (the GCS server, the raylet, its agents and idle
workers) and the 2 env runner actors (one game each), all under this process.
"""

from __future__ import annotations

import functools
import os
import pathlib
import sys
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from jekyll_hyde_env.engine.variant import Variant
from jekyll_hyde_train.common.config import load_config
from jekyll_hyde_train.exact.table import InfosetTable, policy_probabilities
from jekyll_hyde_train.ppo.rllib_config import RLlibTrainConfig

if TYPE_CHECKING:
    from protocol import Requests

NAME = "rllib-ppo"
LABEL = (
    "this project's PPO self-play on Ray RLlib (new API stack, configs/rllib/default.yaml): "
    "an action-masking module per role, 2 env runners x 2,000 steps an iteration, "
    "frozen snapshots every 5 iterations, [128, 128] tanh"
)
CONFIG = "rllib/default"
"""The shipped config the trainer starts from."""


def config_for(variant: Variant, seed: int) -> RLlibTrainConfig:
    """The project's default RLlib config on ``variant`` with ``seed``.

    Args:
        variant: the version of the game.
        seed: the run's seed (``run.seed``).

    Returns:
        The checked config.
    """
    overrides = [f"run.variant={variant.name}", f"run.seed={seed}", "run.name=curves-rllib"]
    return load_config(CONFIG, overrides, schema=RLlibTrainConfig)


def sampled_steps(result: dict[str, Any], before: int) -> int:
    """The env steps sampled so far, from an iteration's result.

    Args:
        result: what ``algorithm.train()`` returned.
        before: the count before the iteration.

    Returns:
        RLlib's lifetime count of sampled env steps, or ``before`` without one.
    """
    runners = result.get("env_runners", {})
    return max(before, int(runners.get("num_env_steps_sampled_lifetime", before)))


def train(out: pathlib.Path, variant: Variant, seed: int, requests: Requests) -> None:
    """Train RLlib PPO self-play from scratch until stopped, saving requested checkpoints.

    Args:
        out: the trainer's folder (only the checkpoints are written there).
        variant: the version of the game.
        seed: the run's seed.
        requests: the checkpoint requests (``protocol.Requests``).
    """
    import ray  # lazy: the rllib extra

    from jekyll_hyde_train.ppo.rllib import (  # lazy: imports Ray
        add_snapshots,
        build_algorithm,
        export_rllib_policy,
        init_ray,
    )

    config = config_for(variant, seed)
    os.environ.pop("RAY_ADDRESS", None)  # a local Ray: its processes are this one's children
    init_ray(config, None)
    try:
        algorithm = build_algorithm(config)
        snapshots: dict[str, list[str]] = {}
        steps, iteration = 0, 0
        started = time.perf_counter()
        try:
            while True:
                iteration += 1
                steps = sampled_steps(algorithm.train(), steps)
                wall = time.perf_counter() - started
                print(
                    f"iteration {iteration}: {steps:,} env steps in {wall:.0f} s, "
                    f"{steps / wall:,.0f} steps/s",
                    file=sys.stderr,
                    flush=True,
                )
                if iteration % config.selfplay.snapshot_every == 0:
                    version = iteration // config.selfplay.snapshot_every
                    add_snapshots(algorithm, config, snapshots, version)
                name = requests.pending()
                if name is not None:
                    write = functools.partial(
                        export_rllib_policy, algorithm, config=config, steps=steps
                    )
                    requests.save(name, write)
        finally:
            algorithm.stop()
    finally:
        ray.shutdown()


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
