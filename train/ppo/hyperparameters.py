"""PPO's hyperparameters: one type for every trainer that runs PPO, and the learner
built from them.

Three trainers run PPO, and they read the same keys with the same meaning:

- PPO self-play (``algorithm: ppo``, section ``ppo``), on Stable-Baselines3's
  MaskablePPO;
- self-play on Ray RLlib (``algorithm: rllib``, section ``ppo``), whose PPO
  takes each key under RLlib's name (``rllib_training``);
- the exploit command's RL responder (section ``responder``, which adds its
  budget and its starting network to these keys), on MaskablePPO.

``new_maskable_ppo`` builds the MaskablePPO learner of the first and the last.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar

from jekyll_hyde_agents.policy_format import ACTIVATIONS
from jekyll_hyde_train.common.config_checks import (
    MAX_EPOCHS,
    ConfigError,
    at_most,
    layer_sizes,
    one_of,
    positive,
    section,
)

MAX_ROLLOUT_STEPS = 2**20
"""The most decisions one rollout may hold (``n_steps`` times the games stepped
together): the rollout buffer keeps every observation of it, and 2**20 of them
already take more than a gigabyte."""


@section
class PPOHyperparameters:
    """The PPO update: rollout length, minibatches, losses and the network's shape."""

    SECTION: ClassVar[str] = "ppo"
    """The config section these keys are read from (named in every message)."""

    learning_rate: float = 3.0e-4
    """Adam step size."""
    n_steps: int = 512
    """Steps per game between updates: a rollout holds ``n_steps`` decisions of each
    game stepped together."""
    batch_size: int = 256
    """Minibatch size; at most a rollout's decisions, best a divisor of them."""
    n_epochs: int = 4
    """Passes over each rollout."""
    gamma: float = 1.0
    """Discount; the only reward is the game's result (R4), so 1.0 is natural."""
    gae_lambda: float = 0.95
    """GAE parameter."""
    clip_range: float = 0.2
    """PPO clipping."""
    ent_coef: float = 0.01
    """Entropy bonus."""
    vf_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient clipping (the global norm)."""
    net_arch: list[int] | None = field(default_factory=lambda: [128, 128])
    """Hidden layer sizes of the policy and value networks."""
    activation: str | None = "tanh"
    """'tanh' or 'relu'."""

    def check(self) -> None:
        positive(self, "learning_rate", "n_steps", "batch_size", "n_epochs", "clip_range")
        positive(self, "vf_coef", "max_grad_norm")
        at_most(self, "n_epochs", MAX_EPOCHS)
        for name in ("gamma", "gae_lambda"):
            if not 0 < getattr(self, name) <= 1:
                raise ConfigError(
                    f"{self.SECTION}.{name} must be in (0, 1], got {getattr(self, name)}"
                )
        if self.ent_coef < 0:
            raise ConfigError(f"{self.SECTION}.ent_coef must be >= 0, got {self.ent_coef}")
        self.check_network()

    def check_network(self) -> None:
        """The network's shape is required here; a section that can take it from
        elsewhere (the responder's starting policy) allows null."""
        layer_sizes(f"{self.SECTION}.net_arch", self.net_arch)
        one_of(self, "activation", ACTIVATIONS)

    def network(self) -> tuple[list[int], str]:
        """``net_arch`` and ``activation``, which ``check_network`` requires of a checked
        ``ppo`` section (a responder's may be null: it takes them from its start)."""
        assert self.net_arch is not None and self.activation is not None  # check_network
        return self.net_arch, self.activation

    def check_rollout(self, games: int, games_key: str) -> None:
        """Refuse a rollout (``n_steps`` times ``games``, the games stepped together,
        read from ``games_key``) over ``MAX_ROLLOUT_STEPS`` or under one minibatch."""
        rollout = self.n_steps * games
        if rollout > MAX_ROLLOUT_STEPS:
            raise ConfigError(
                f"{self.SECTION}.n_steps * {games_key} = {rollout:,} decisions a rollout; "
                f"at most {MAX_ROLLOUT_STEPS:,} are allowed"
            )
        if self.batch_size > rollout:
            raise ConfigError(
                f"{self.SECTION}.batch_size ({self.batch_size}) must not exceed a rollout, "
                f"{self.SECTION}.n_steps * {games_key} = {rollout}"
            )


def new_maskable_ppo(
    hyperparameters: PPOHyperparameters,
    venv: Any,
    seed: int,
    net_arch: list[int] | None = None,
    activation: str | None = None,
    tensorboard_log: str | None = None,
) -> Any:
    """A fresh MaskablePPO learner on ``venv`` with these hyperparameters; ``net_arch``
    and ``activation`` replace the hyperparameters' own when given (a responder takes
    its starting policy's)."""
    import torch  # lazy: torch and sb3-contrib come with the train extra
    from sb3_contrib import MaskablePPO  # lazy: the train extra

    hp = hyperparameters
    activation = activation or hp.activation
    net_arch = net_arch or hp.net_arch
    # a ppo section's check_network requires both; a responder passes its start's
    assert net_arch is not None and activation is not None
    return MaskablePPO(
        "MlpPolicy",
        venv,
        learning_rate=hp.learning_rate,
        n_steps=hp.n_steps,
        batch_size=hp.batch_size,
        n_epochs=hp.n_epochs,
        gamma=hp.gamma,
        gae_lambda=hp.gae_lambda,
        clip_range=hp.clip_range,
        ent_coef=hp.ent_coef,
        vf_coef=hp.vf_coef,
        max_grad_norm=hp.max_grad_norm,
        policy_kwargs={
            "net_arch": list(net_arch),
            "activation_fn": {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[activation],
        },
        tensorboard_log=tensorboard_log,
        seed=seed,
        device="cpu",
        verbose=0,
    )


def rllib_training(hyperparameters: PPOHyperparameters, games: int) -> dict[str, Any]:
    """The keyword arguments of RLlib's ``PPOConfig.training`` for these
    hyperparameters, ``games`` being the games sampled together (every env runner's)."""
    hp = hyperparameters
    return {
        "train_batch_size_per_learner": hp.n_steps * games,
        "minibatch_size": hp.batch_size,
        "num_epochs": hp.n_epochs,
        "lr": hp.learning_rate,
        "gamma": hp.gamma,
        "lambda_": hp.gae_lambda,
        "clip_param": hp.clip_range,
        "entropy_coeff": hp.ent_coef,
        "vf_loss_coeff": hp.vf_coef,
        "grad_clip": hp.max_grad_norm,
        "grad_clip_by": "global_norm",
    }
