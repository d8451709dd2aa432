"""PPO self-play's config (``algorithm: ppo``): the sections ``run``, ``env``,
``ppo`` and ``selfplay``, their defaults and their checks.

A YAML file (``configs/ppo/*.yaml``) overrides these defaults; it is read into
these types by ``jekyll_hyde_train.common.config.load_config``. The ``ppo`` section
is ``jekyll_hyde_train.ppo.hyperparameters.PPOHyperparameters``, which RLlib and
the exploit responder read too.
"""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any, ClassVar

from jekyll_hyde_train.common.config import register_algorithm
from jekyll_hyde_train.common.config_checks import (
    ConfigError,
    at_most,
    check_folder_name,
    check_seed,
    check_variant,
    known_agents,
    one_of,
    positive,
    section,
)
from jekyll_hyde_train.ppo.hyperparameters import PPOHyperparameters


@section
class RunConfig:
    name: str = "default"
    """Run folder name under ``runs/`` when ``--run-dir`` is not given."""
    seed: int = 0
    """Seeds the environments, the networks and the opponent choices."""
    variant: str = "full"
    """The version of the game (RULES.md V1-V7): ``full``, ``small``, ``tiny`` or
    ``key=value`` pairs such as ``values=3,potions=3,hand=3,rounds=1``."""
    total_steps: int = 1_000_000
    """Environment steps over both roles (each step is one learner decision)."""
    shared_policy: bool = False
    """One policy for both roles (the role is in the observation) instead of two."""
    eval_every: int = 100_000
    """Steps between evaluations against the baselines, logged in metrics.csv."""
    eval_pairs: int = 100
    """Duplicate pairs per evaluation against each baseline."""
    final_pairs: int = 200
    """Duplicate pairs per opponent in the final report."""
    final_opponents: list[str] = field(
        default_factory=lambda: ["random", "heuristic", "ismcts:200"]
    )
    """Agents the exported policy meets in the final report."""
    workers: int = 2
    """Processes for evaluation matches."""
    torch_threads: int = 1
    """Threads torch may use in the learner's process (1 is fastest for small networks)."""

    def check(self) -> None:
        check_variant(self, "variant")
        positive(
            self,
            "total_steps",
            "eval_every",
            "eval_pairs",
            "final_pairs",
            "workers",
            "torch_threads",
        )
        check_seed(self, "seed")
        check_folder_name(self, "name")


VEC_ENVS = ("batched", "subproc", "dummy")
MAX_BATCHED_GAMES = 4096
"""The most games a learner steps together."""
MAX_PROCESSES = 64
"""The most processes a learner's games may run in (``vec_env: subproc``)."""


@section
class EnvConfig:
    n_envs: int = 2
    """Games per learner: batched in C (vec_env 'batched') or one env per process or loop."""
    vec_env: str = "batched"
    """'batched' (all games stepped together in C, in the learner's process; opponents
    batched where they can be), 'subproc' (one process per env) or 'dummy' (in process)."""

    def check(self) -> None:
        positive(self, "n_envs")
        one_of(self, "vec_env", VEC_ENVS)
        at_most(self, "n_envs", MAX_PROCESSES if self.vec_env == "subproc" else MAX_BATCHED_GAMES)


@section
class SelfPlayConfig:
    phase_steps: int = 50_000
    """Steps one role trains (against a frozen pool) before the other role takes over;
    a checkpoint is written at the end of every phase."""
    pool_size: int = 8
    """Past snapshots kept per role in the opponent pool."""
    latest_weight: float = 0.5
    """Chance that an episode's opponent is the other role's latest snapshot."""
    past_weight: float = 0.25
    """Chance shared by the older snapshots of the pool."""
    baselines: dict[str, float] = field(default_factory=lambda: {"random": 0.05, "heuristic": 0.2})
    """Fixed opponents (agent names) and their chances."""

    def check(self) -> None:
        positive(self, "phase_steps", "pool_size")
        weights = {"latest_weight": self.latest_weight, "past_weight": self.past_weight}
        weights.update({f"baselines.{k}": v for k, v in self.baselines.items()})
        for name, value in weights.items():
            if value < 0:
                raise ConfigError(f"selfplay.{name} must be >= 0, got {value}")
        if sum(weights.values()) <= 0:
            raise ConfigError("selfplay weights must not all be zero")
        known_agents("selfplay.baselines", list(self.baselines))


@section
class TrainConfig:
    """PPO self-play (``algorithm: ppo``)."""

    ALGORITHM: ClassVar[str] = "ppo"
    run: RunConfig = field(default_factory=RunConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    ppo: PPOHyperparameters = field(default_factory=PPOHyperparameters)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)

    def check(self) -> None:
        for part in (self.run, self.env, self.ppo, self.selfplay):
            part.check()
        self.ppo.check_rollout(self.env.n_envs, "env.n_envs")
        if self.selfplay.phase_steps < self.ppo.n_steps * self.env.n_envs:
            raise ConfigError(
                f"selfplay.phase_steps ({self.selfplay.phase_steps}) must be at least one "
                f"rollout, ppo.n_steps * env.n_envs = {self.ppo.n_steps * self.env.n_envs}"
            )

    def to_dict(self) -> dict[str, Any]:
        """The config as nested dicts (``dataclasses.asdict``).

        Returns:
            Each section's name to its keys and values; ``algorithm`` is not included.
        """
        return dataclasses.asdict(self)


register_algorithm(TrainConfig)
