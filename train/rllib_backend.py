"""Self-play training on Ray RLlib: the same game, policies and export as the SB3 path.

``jekyll-hyde train --backend rllib --config configs/rllib.yaml`` trains the
Jekyll and Hyde policies as an RLlib multi-agent setup (new API stack, PPO):

* ``JekyllHydeMultiAgentEnv`` is the turn-based game for RLlib: only the agent
  to act gets an observation, a dict of the encoded view and the action mask,
  and both agents get their +1 / -1 at the end (R4).
* Modules map by role (``jekyll``, ``hyde``, or one ``shared`` module). Each is
  an action-masking PPO module, so illegal actions get no probability.
* Every ``selfplay.snapshot_every`` iterations the learning modules are copied
  into frozen modules (``jekyll_v3``, ...). In each episode, with probability
  ``selfplay.snapshot_weight``, one side is played by a frozen snapshot from
  the last ``selfplay.pool_size``; those modules are never trained.
* The number of env runners is ``rllib.num_env_runners``. ``--address`` (or
  ``RAY_ADDRESS``) joins an existing Ray cluster; otherwise Ray starts locally.

The result is exported in the same saved-policy format as the SB3 path
(``policy/policy.npz`` and ``policy.json``), so ``eval``, ``play`` and the Gym
opponent use it unchanged. Ray is imported only here (the ``rllib`` extra).
"""

from __future__ import annotations

import os
import pathlib
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from jekyll_hyde_agents.policy_file import save_policy
from jekyll_hyde_env.engine import (
    IllegalActionError,
    apply_action,
    legal_action_mask,
    new_game,
    player_view,
    returns,
)
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE, encode_with_mask
from jekyll_hyde_train.config import MAX_GAMES, MAX_PROCESSES, dump_config, load_config
from jekyll_hyde_train.config_checks import ConfigError, at_most, check_seed, positive
from jekyll_hyde_train.files import atomic_write_text, replace_folder, run_write_error
from jekyll_hyde_train.ppo_hyperparameters import PPOHyperparameters, rllib_training

# --- configuration -------------------------------------------------------------------


@dataclass
class RLlibRunConfig:
    name: str = "rllib"
    """Run folder name under ``runs/`` when ``--run-dir`` is not given."""
    seed: int = 0
    """Seeds RLlib and the environments."""
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
        positive(self, "iterations", "checkpoint_every", "final_pairs", "workers")
        check_seed(self, "seed")


@dataclass
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
        at_most(self, "num_envs_per_env_runner", MAX_GAMES)

    def games(self) -> int:
        """The games sampled together: every env runner's (the driver's without runners)."""
        return max(1, self.num_env_runners) * self.num_envs_per_env_runner


@dataclass
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


@dataclass
class RLlibTrainConfig:
    """PPO self-play on Ray RLlib (``algorithm: rllib``)."""

    ALGORITHM: ClassVar[str] = "rllib"
    run: RLlibRunConfig = field(default_factory=RLlibRunConfig)
    rllib: RLlibConfig = field(default_factory=RLlibConfig)
    ppo: PPOHyperparameters = field(default_factory=PPOHyperparameters)
    selfplay: RLlibSelfPlayConfig = field(default_factory=RLlibSelfPlayConfig)

    def check(self) -> None:
        for section in (self.run, self.rllib, self.ppo, self.selfplay):
            section.check()
        self.ppo.check_rollout(
            self.rllib.games(), "rllib.num_env_runners * rllib.num_envs_per_env_runner"
        )


# --- the environment ---------------------------------------------------------------


def _require_ray():
    try:
        import ray  # noqa: F401
        from ray.rllib.env.multi_agent_env import MultiAgentEnv
    except ImportError as error:
        raise ImportError(
            'training with --backend rllib needs Ray RLlib: pip install "jekyll-hyde-env[rllib]"'
        ) from error
    return MultiAgentEnv


def make_multi_agent_env_class():
    """``JekyllHydeMultiAgentEnv``, defined once Ray is importable."""
    import gymnasium as gym

    MultiAgentEnv = _require_ray()

    class JekyllHydeMultiAgentEnv(MultiAgentEnv):
        """The game for RLlib: turn-based, one observation per decision.

        An illegal action (which a masking module never samples) ends the
        episode with -1 for its author and 0 for the other side, as PettingZoo's
        illegal-move wrapper does.
        """

        def __init__(self, config: dict | None = None):
            super().__init__()
            self.agents = self.possible_agents = list(AGENTS)
            space = gym.spaces.Dict(
                {
                    "observations": gym.spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
                    "action_mask": gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
                }
            )
            self.observation_spaces = dict.fromkeys(AGENTS, space)
            self.action_spaces = {agent: gym.spaces.Discrete(NUM_ACTIONS) for agent in AGENTS}
            config = config or {}
            worker = getattr(config, "worker_index", 0)
            vector = getattr(config, "vector_index", 0)
            self._rng = np.random.default_rng([int(config.get("seed", 0)), worker, vector])
            self.game = None

        def _observe(self, player: int) -> dict[str, np.ndarray]:
            legal = legal_action_mask(self.game) if self.game.to_act == player else 0
            observation, mask = encode_with_mask(player_view(self.game, player), legal)
            return {
                "observations": observation.astype(np.float32),
                "action_mask": mask.astype(np.float32),
            }

        def reset(self, *, seed: int | None = None, options: dict | None = None):
            if seed is not None:
                self._rng = np.random.default_rng(seed)
            self.game = new_game(self._rng)
            player = self.game.to_act
            return {AGENTS[player]: self._observe(player)}, {}

        def step(self, action_dict: dict[str, int]):
            player = self.game.to_act
            agent = AGENTS[player]
            try:
                apply_action(self.game, int(action_dict[agent]))
            except IllegalActionError:
                observations = {a: self._observe(i) for i, a in enumerate(AGENTS)}
                rewards = {agent: -1.0, AGENTS[1 - player]: 0.0}
                return observations, rewards, {"__all__": True}, {"__all__": False}, {}
            if self.game.to_act < 0:
                result = returns(self.game)
                observations = {a: self._observe(i) for i, a in enumerate(AGENTS)}
                rewards = {a: float(result[i]) for i, a in enumerate(AGENTS)}
                return observations, rewards, {"__all__": True}, {"__all__": False}, {}
            following = self.game.to_act
            # RLlib wants a reward for every agent that acted before its next observation.
            return (
                {AGENTS[following]: self._observe(following)},
                {agent: 0.0},
                {"__all__": False},
                {"__all__": False},
                {},
            )

    return JekyllHydeMultiAgentEnv


# --- modules, mapping and snapshots -----------------------------------------------


def learning_modules(config: RLlibTrainConfig) -> list[str]:
    return ["shared"] if config.rllib.shared_policy else list(AGENTS)


def _learner_of(agent: str, config: RLlibTrainConfig) -> str:
    return "shared" if config.rllib.shared_policy else agent


def make_mapping(config: RLlibTrainConfig, snapshots: dict[str, list[str]]):
    """Agent -> module for an episode: the learners, one side sometimes a frozen snapshot.

    The choice depends only on the episode's id, so both agents of an episode
    agree on it.
    """
    weight = config.selfplay.snapshot_weight
    pool = config.selfplay.pool_size

    def mapping(agent_id: str, episode: Any, **kwargs: Any) -> str:
        learner = _learner_of(agent_id, config)
        choices = snapshots.get(learner, [])[-pool:]
        if not choices:
            return learner
        draw = random.Random(hash(episode.id_))
        if draw.random() >= weight:
            return learner
        frozen_side = draw.choice(AGENTS)
        snapshot = draw.choice(choices)
        return snapshot if agent_id == frozen_side else learner

    return mapping


def build_algorithm(config: RLlibTrainConfig):
    """The PPO algorithm with masking modules, one per role (or shared)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )
    from ray.tune.registry import register_env

    env_class = make_multi_agent_env_class()
    register_env("jekyll_hyde_rllib", lambda env_config: env_class(env_config))
    rl = config.rllib
    model = {
        "fcnet_hiddens": list(config.ppo.net_arch),
        "fcnet_activation": config.ppo.activation,
        "vf_share_layers": False,
    }
    modules = learning_modules(config)
    algorithm_config = (
        PPOConfig()
        .environment("jekyll_hyde_rllib", env_config={"seed": config.run.seed})
        .env_runners(
            num_env_runners=rl.num_env_runners,
            num_envs_per_env_runner=rl.num_envs_per_env_runner,
            sample_timeout_s=rl.sample_timeout_s,
        )
        .multi_agent(
            policies=set(modules),
            policy_mapping_fn=make_mapping(config, {}),
            policies_to_train=modules,
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    m: RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model)
                    for m in modules
                }
            )
        )
        .training(**rllib_training(config.ppo, rl.games()))
        .debugging(seed=config.run.seed)
    )
    return algorithm_config.build_algo()


def add_snapshots(
    algorithm: Any, config: RLlibTrainConfig, snapshots: dict[str, list[str]], version: int
) -> None:
    """Freeze copies of the learning modules and let episodes draw on them."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    for learner in learning_modules(config):
        module = algorithm.get_module(learner)
        module_id = f"{learner}_v{version}"
        snapshots.setdefault(learner, []).append(module_id)
        algorithm.add_module(
            module_id=module_id,
            module_spec=RLModuleSpec.from_module(module),
            new_agent_to_module_mapping_fn=make_mapping(config, snapshots),
            new_should_module_be_updated=learning_modules(config),
        )
        algorithm.set_state(
            {"learner_group": {"learner": {"rl_module": {module_id: module.get_state()}}}}
        )


# --- export ----------------------------------------------------------------------


def module_layers(module: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor of an RLlib PPO module as (weight, bias) layers: encoder, then pi head."""
    state = {k: v.detach().cpu().numpy() for k, v in module.state_dict().items()}
    layers = []
    for prefix in ("encoder.actor_encoder.net.mlp", "pi.net.mlp"):
        indices = sorted(
            {int(k[len(prefix) + 1 :].split(".")[0]) for k in state if k.startswith(prefix + ".")}
        )
        for i in indices:
            if f"{prefix}.{i}.weight" in state:
                layers.append((state[f"{prefix}.{i}.weight"], state[f"{prefix}.{i}.bias"]))
    if not layers or layers[-1][0].shape[0] != NUM_ACTIONS or layers[0][0].shape[1] != OBS_SIZE:
        raise RuntimeError(
            f"unexpected RLlib module layout; actor layers found: {[w.shape for w, _ in layers]}"
        )
    return layers


def export_rllib_policy(
    algorithm: Any, folder: pathlib.Path, config: RLlibTrainConfig, steps: int
) -> pathlib.Path:
    """Save the learning modules in the project's saved-policy format."""
    groups = {m: module_layers(algorithm.get_module(m)) for m in learning_modules(config)}
    roles = {agent: _learner_of(agent, config) for agent in AGENTS}
    return save_policy(
        folder,
        groups,
        roles,
        activation=config.ppo.activation,
        extra={"training_steps": steps, "run": config.run.name, "backend": "rllib"},
    )


# --- the run -----------------------------------------------------------------------


def init_ray(config: RLlibTrainConfig, address: str | None) -> None:
    import ray

    address = address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    else:
        ray.init(
            num_cpus=config.rllib.num_cpus or None,
            include_dashboard=False,
            ignore_reinit_error=True,
            log_to_driver=False,
        )


def _save_checkpoint(algorithm: Any, run_dir: pathlib.Path) -> None:
    """RLlib's checkpoint into ``rllib_checkpoint/``, written aside and swapped in whole."""
    replace_folder(
        run_dir, "rllib_checkpoint", lambda folder: algorithm.save_to_path(str(folder.resolve()))
    )


def train_rllib(config: RLlibTrainConfig, run_dir: pathlib.Path, address: str | None = None):
    """Train, checkpoint, export and report; returns the exported policy folder."""
    import ray

    init_ray(config, address)
    algorithm = build_algorithm(config)
    snapshots: dict[str, list[str]] = {}
    steps = 0
    started = time.perf_counter()
    metrics_path = run_dir / "metrics.csv"
    try:
        with open(metrics_path, "w") as metrics:
            metrics.write("iteration,env_steps,wall_time,steps_per_second,snapshots\n")
            for iteration in range(1, config.run.iterations + 1):
                result = algorithm.train()
                runners = result.get("env_runners", {})
                sampled = int(runners.get("num_env_steps_sampled_lifetime", steps))
                if sampled <= steps:
                    print(
                        f"warning: iteration {iteration} sampled no environment steps; the env "
                        f"runners took longer than rllib.sample_timeout_s "
                        f"({config.rllib.sample_timeout_s:g} s)",
                        file=sys.stderr,
                    )
                steps = sampled
                elapsed = time.perf_counter() - started
                metrics.write(
                    f"{iteration},{steps},{elapsed:.1f},{steps / elapsed:.1f},"
                    f"{sum(len(v) for v in snapshots.values())}\n"
                )
                metrics.flush()
                print(
                    f"iteration {iteration}/{config.run.iterations}: {steps:,} env steps, "
                    f"{steps / elapsed:,.0f} steps/s",
                    file=sys.stderr,
                )
                if iteration % config.selfplay.snapshot_every == 0:
                    add_snapshots(
                        algorithm, config, snapshots, iteration // config.selfplay.snapshot_every
                    )
                if iteration % config.run.checkpoint_every == 0:
                    _save_checkpoint(algorithm, run_dir)
        if steps == 0:
            raise RuntimeError(
                "no environment steps were sampled, so there is nothing to export; "
                "raise rllib.sample_timeout_s or free the CPUs the env runners need"
            )
        policy = export_rllib_policy(algorithm, run_dir / "policy", config, steps).parent
        wall = time.perf_counter() - started
        print(f"trained {steps:,} env steps in {wall:.0f} s ({steps / wall:,.0f} steps/s)")
    finally:
        algorithm.stop()
        ray.shutdown()
    from jekyll_hyde_train.ppo_report import write_report

    write_report(run_dir, config, steps, wall)
    return policy


def main(config_path: str, run_dir: str | None, overrides: list[str], address: str | None) -> int:
    """``jekyll-hyde train --backend rllib``."""
    _require_ray()
    config = load_config(config_path, overrides, schema=RLlibTrainConfig)
    if run_dir is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        run_dir = os.path.join("runs", f"{config.run.name}-{stamp}")
    folder = pathlib.Path(run_dir)
    if (folder / "policy" / "policy.json").exists():
        raise FileExistsError(f"{folder} already holds a finished run; choose another --run-dir")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / "config.yaml", dump_config(config))
        print(f"run folder: {folder}")
        train_rllib(config, folder, address)
    except (FileExistsError, FileNotFoundError):
        raise
    except OSError as error:  # a full disk, say: one line naming the file
        raise run_write_error(error, folder, resumable=False) from None
    return 0
