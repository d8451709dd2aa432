"""The config of PPO self-play on Ray RLlib (``algorithm: rllib``): the sections
``run``, ``rllib``, ``ppo`` and ``selfplay``, their defaults and their checks.

Kept apart from ``jekyll_hyde_train.ppo.rllib`` so that a config is read and checked
without Ray (the ``rllib`` extra). The ``ppo`` section is the
``PPOHyperparameters`` that SB3's PPO reads too; RLlib takes each key under its
own name (``jekyll_hyde_train.ppo.hyperparameters.rllib_training``).
"""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

from jekyll_hyde_train.common.config import register_algorithm
from jekyll_hyde_train.common.config_checks import (
    ConfigError,
    at_most,
    check_folder_name,
    check_seed,
    check_variant,
    positive,
    section,
)
from jekyll_hyde_train.ppo.config import MAX_BATCHED_GAMES, MAX_PROCESSES
from jekyll_hyde_train.ppo.hyperparameters import PPOHyperparameters


@section
class RLlibRunConfig:
    name: str = "rllib"
    """Run folder name under ``runs/`` when ``--run-dir`` is not given."""
    seed: int = 0
    """Seeds RLlib and the environments."""
    variant: str = "full"
    """The version of the game (RULES.md V1-V7): ``full``, ``small``, ``tiny`` or
    ``key=value`` pairs such as ``values=3,potions=3,hand=3,rounds=1``."""
    iterations: int = 20
    """Training iterations (each samples ``ppo.n_steps`` steps in each of the games)."""
    checkpoint_every: int = 5
    """Iterations between RLlib checkpoints (``rllib_checkpoint/``, replaced whole)."""
    final_pairs: int = 200
    """Duplicate pairs per opponent in the final report."""
    final_opponents: list[str] = field(default_factory=lambda: ["random", "heuristic"])
    """Agents the exported policy meets in the final report."""
    workers: int = 2
    """Processes for the final evaluation matches."""

    def check(self) -> None:
        check_variant(self, "variant")
        positive(self, "iterations", "checkpoint_every", "final_pairs", "workers")
        check_seed(self, "seed")
        check_folder_name(self, "name")


@section
class RLlibConfig:
    """How RLlib samples and where it runs; PPO's own settings are the ``ppo`` section."""

    RENAMED: ClassVar[dict[str, str]] = {
        "lr": "ppo.learning_rate",
        "gamma": "ppo.gamma",
        "lambda_": "ppo.gae_lambda",
        "clip_param": "ppo.clip_range",
        "entropy_coeff": "ppo.ent_coef",
        "num_epochs": "ppo.n_epochs",
        "minibatch_size": "ppo.batch_size",
        "train_batch_size": "ppo.n_steps (steps per game; a batch is n_steps times the games)",
        "fcnet_hiddens": "ppo.net_arch",
        "fcnet_activation": "ppo.activation",
    }
    """Keys this section once held and where they are now (named when an old config
    still has them)."""

    num_env_runners: int = 2
    """Env runner actors sampling in parallel (0: sample in the driver)."""
    num_envs_per_env_runner: int = 1
    """Environments per env runner."""
    shared_policy: bool = False
    """One module for both roles instead of one per role."""
    num_cpus: int = 0
    """CPUs for a local Ray instance (0: all of this machine's)."""
    sample_timeout_s: float = 600.0
    """How long an iteration waits for env runners' samples (RLlib's default, 60 s, can
    pass with nothing sampled on a busy machine)."""

    def check(self) -> None:
        positive(self, "num_envs_per_env_runner", "sample_timeout_s")
        if self.num_env_runners < 0 or self.num_cpus < 0:
            raise ConfigError("rllib.num_env_runners and rllib.num_cpus must be >= 0")
        at_most(self, "num_env_runners", MAX_PROCESSES)
        at_most(self, "num_envs_per_env_runner", MAX_BATCHED_GAMES)

    def games(self) -> int:
        """The games sampled together: every env runner's (the driver's without runners)."""
        return max(1, self.num_env_runners) * self.num_envs_per_env_runner


@section
class RLlibSelfPlayConfig:
    snapshot_every: int = 5
    """Iterations between frozen copies of the learning modules."""
    snapshot_weight: float = 0.5
    """Chance that one side of an episode is played by a frozen snapshot."""
    pool_size: int = 5
    """Most recent snapshots per role that episodes draw from."""

    def check(self) -> None:
        positive(self, "snapshot_every", "pool_size")
        if not 0 <= self.snapshot_weight <= 1:
            raise ConfigError(
                f"selfplay.snapshot_weight must be in [0, 1], got {self.snapshot_weight}"
            )


@section
class RLlibTrainConfig:
    """PPO self-play on Ray RLlib (``algorithm: rllib``)."""

    ALGORITHM: ClassVar[str] = "rllib"
    run: RLlibRunConfig = field(default_factory=RLlibRunConfig)
    rllib: RLlibConfig = field(default_factory=RLlibConfig)
    ppo: PPOHyperparameters = field(default_factory=PPOHyperparameters)
    selfplay: RLlibSelfPlayConfig = field(default_factory=RLlibSelfPlayConfig)

    def check(self) -> None:
        for part in (self.run, self.rllib, self.ppo, self.selfplay):
            part.check()
        self.ppo.check_rollout(
            self.rllib.games(), "rllib.num_env_runners * rllib.num_envs_per_env_runner"
        )


register_algorithm(RLlibTrainConfig)
