"""Self-play training on Ray RLlib: the same game, policies and export as the SB3 path.

``jekyll-hyde train --config rllib`` (a config with ``algorithm: rllib``) trains
the Jekyll and Hyde policies as an RLlib multi-agent setup (new API stack, PPO):

* ``JekyllHydeMultiAgentEnv`` (``jekyll_hyde_train.ppo.rllib_env``) is the
  turn-based game for RLlib: only the agent to act gets an observation, a dict
  of the encoded view and the action mask, and both agents get their +1 / -1 at
  the end (R4).
* Modules map by role (``jekyll``, ``hyde``, or one ``shared`` module). Each is
  an action-masking PPO module, so illegal actions get no probability.
* Every ``selfplay.snapshot_every`` iterations the learning modules are copied
  into frozen modules (``jekyll_v3``, ...). In each episode, with probability
  ``selfplay.snapshot_weight``, one side is played by a frozen snapshot from
  the last ``selfplay.pool_size``; those modules are never trained.
* The number of env runners is ``rllib.num_env_runners``. ``--address`` (or
  ``RAY_ADDRESS``) joins an existing Ray cluster; otherwise Ray starts locally.
* Every ``run.checkpoint_every`` iterations (and after the last) RLlib's
  checkpoint and the run's progress are replaced together in
  ``rllib_checkpoint/``; ``jekyll-hyde train --resume RUN`` continues from there.

Every game is of ``run.variant`` (RULES.md V1-V7; the full game by default): the
env's, the final arena's; a final opponent that cannot play it is refused before the
run starts, the exported policy records it, and a checkpoint of another is not resumed.

The result is exported in the same saved-policy format as the SB3 path
(``policy/policy.npz`` and ``policy.json``), so ``eval``, ``play`` and the Gym
opponent use it unchanged. Ray is imported only here and in
``jekyll_hyde_train.ppo.rllib_env`` (the ``rllib`` extra).
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import sys
import time
from typing import Any

import numpy as np

from jekyll_hyde_agents.policy_file import save_policy
from jekyll_hyde_agents.policy_format import provenance
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.engine.variant import FULL, parse_variant
from jekyll_hyde_env.observation import OBS_SIZE
from jekyll_hyde_train.common.config import dump_config, load_config
from jekyll_hyde_train.common.config_checks import ConfigError
from jekyll_hyde_train.common.files import (
    FileFormatError,
    atomic_write_text,
    check_fields,
    read_json_file,
    replace_folder,
)
from jekyll_hyde_train.common.run_folder import (
    STATE_FILE,
    resume_hint,
    run_config_file,
    run_writes,
    saved_folder,
    start_run_folder,
)
from jekyll_hyde_train.ppo.checkpoints import check_saved_variant, variant_record
from jekyll_hyde_train.ppo.hyperparameters import rllib_training
from jekyll_hyde_train.ppo.opponent_pool import check_opponents
from jekyll_hyde_train.ppo.report import RLLIB_METRICS, write_report
from jekyll_hyde_train.ppo.rllib_config import RLlibTrainConfig
from jekyll_hyde_train.ppo.rllib_env import _require_ray, make_multi_agent_env_class

# --- modules, mapping and snapshots -----------------------------------------------


def learning_modules(config: RLlibTrainConfig) -> list[str]:
    """The modules that learn (the others are frozen snapshots).

    Args:
        config: the run's config (its ``rllib.shared_policy``).

    Returns:
        ``["shared"]`` under ``rllib.shared_policy``, else ``["jekyll", "hyde"]``.
    """
    return ["shared"] if config.rllib.shared_policy else list(AGENTS)


def _learner_of(agent: str, config: RLlibTrainConfig) -> str:
    return "shared" if config.rllib.shared_policy else agent


def make_mapping(config: RLlibTrainConfig, snapshots: dict[str, list[str]]):
    """Agent -> module for an episode: the learners, one side sometimes a frozen snapshot.

    The choice depends only on the episode's id, so both agents of an episode
    agree on it.

    Args:
        config: the run's config: with probability ``selfplay.snapshot_weight`` an
            episode has one side, drawn at random, played by one of the last
            ``selfplay.pool_size`` snapshots of its learner.
        snapshots: the frozen modules' ids by learner, oldest first (read when an
            episode is mapped, so later snapshots count).
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


def build_algorithm(config: RLlibTrainConfig, stretch: int = 0):
    """The PPO algorithm with masking modules, one per role (or shared); its games deal
    from (``run.seed``, ``stretch``): a run resumed at iteration ``stretch`` plays
    fresh games, not its first iterations' again.

    Args:
        config: the run's config: the ``ppo`` network and hyperparameters, the
            ``rllib`` env runners, ``run.seed`` and ``run.variant``.
        stretch: the iteration the run starts at (0 for a new run), mixed into the
            games' seeds.
    """
    # lazy: the rllib extra, here and in every function below that imports ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec  # lazy: rllib
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # lazy: rllib extra

    # lazy: the rllib extra
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )
    from ray.tune.registry import register_env  # lazy: the rllib extra

    env_class = make_multi_agent_env_class()
    register_env("jekyll_hyde_rllib", lambda env_config: env_class(env_config))
    rl = config.rllib
    net_arch, activation = config.ppo.network()
    model = {
        "fcnet_hiddens": list(net_arch),
        "fcnet_activation": activation,
        "vf_share_layers": False,
    }
    modules = learning_modules(config)
    env_config: dict[str, Any] = {"seed": config.run.seed, "stretch": stretch}
    if parse_variant(config.run.variant) != FULL:
        env_config["variant"] = config.run.variant
    algorithm_config = (
        PPOConfig()
        .environment("jekyll_hyde_rllib", env_config=env_config)
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
    """Freeze copies of the learning modules and let episodes draw on them.

    Args:
        algorithm: the RLlib PPO algorithm (``build_algorithm``).
        config: the run's config.
        snapshots: the frozen modules' ids by learner; the new ones are added to it.
        version: the snapshot's number, in the new modules' ids (``jekyll_v3``).
    """
    for learner in learning_modules(config):
        module_id = f"{learner}_v{version}"
        _add_frozen_module(algorithm, config, snapshots, learner, module_id)
        state = algorithm.get_module(learner).get_state()
        algorithm.set_state({"learner_group": {"learner": {"rl_module": {module_id: state}}}})
        _share_with_env_runners(algorithm, module_id, state)


def _share_with_env_runners(algorithm: Any, module_id: str, state: dict[str, Any]) -> None:
    """Give every env runner's copy of ``module_id`` these weights: a frozen module is
    never trained, so RLlib's weight syncs pass it by, and a new copy would otherwise
    keep the weights it was made with."""
    algorithm.env_runner_group.foreach_env_runner(
        lambda runner: runner.module[module_id].set_state(state), local_env_runner=True
    )


def _add_frozen_module(
    algorithm: Any,
    config: RLlibTrainConfig,
    snapshots: dict[str, list[str]],
    learner: str,
    module_id: str,
) -> None:
    """Add ``module_id``, a never-trained module shaped as ``learner``, to the
    algorithm and to ``snapshots``, and map episodes onto it."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # lazy: the rllib extra

    snapshots.setdefault(learner, []).append(module_id)
    algorithm.add_module(
        module_id=module_id,
        module_spec=RLModuleSpec.from_module(algorithm.get_module(learner)),
        new_agent_to_module_mapping_fn=make_mapping(config, snapshots),
        new_should_module_be_updated=learning_modules(config),
    )


# --- export ----------------------------------------------------------------------


def module_layers(module: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor of an RLlib PPO module as (weight, bias) layers: encoder, then pi head.

    Args:
        module: an RLlib PPO module (torch) of the action-masking kind.

    Returns:
        The layers in order, each (weight of shape (outputs, inputs), bias), as numpy
        arrays: from the observation's ``OBS_SIZE`` inputs to the ``NUM_ACTIONS``
        logits.

    Raises:
        RuntimeError: the module's layers are not laid out as expected (no actor
            layers, or not from the observation to the actions).
    """
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
    """Save the learning modules in the project's saved-policy format.

    Args:
        algorithm: the trained RLlib PPO algorithm.
        folder: the policy folder to write (``policy.json`` and ``policy.npz``).
        config: the run's config: the activation, the run's name, its provenance and
            its variant (``run.variant``) are recorded.
        steps: the environment steps trained, recorded as ``training_steps``.

    Returns:
        The path of the written ``policy.json``.
    """
    groups = {m: module_layers(algorithm.get_module(m)) for m in learning_modules(config)}
    roles = {agent: _learner_of(agent, config) for agent in AGENTS}
    _, activation = config.ppo.network()
    return save_policy(
        folder,
        groups,
        roles,
        activation=activation,
        extra={
            "training_steps": steps,
            "training": {"method": "ppo", "backend": "rllib", "run": config.run.name},
            "provenance": provenance(dump_config(config), config.run.seed),
        },
        variant=parse_variant(config.run.variant),
    )


# --- the run -----------------------------------------------------------------------


def init_ray(config: RLlibTrainConfig, address: str | None) -> None:
    """Connect to a Ray cluster, or start Ray on this machine.

    Args:
        config: the run's config: a local Ray gets ``rllib.num_cpus`` CPUs (0: all).
        address: the cluster to join (``--address``); None or empty for the
            ``RAY_ADDRESS`` environment variable, and without that a local Ray.
    """
    import ray  # lazy: the rllib extra

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


CHECKPOINT = "rllib_checkpoint"
"""The run's checkpoint folder: RLlib's own checkpoint with the run's progress
(``state.json``) beside it, replaced as one unit."""
PROGRESS_FIELDS = {
    "iteration": "count", "steps": "count", "wall_time": "seconds", "snapshots": "mapping",
    "variant": "mapping",  # optional: a smaller variant's Variant.to_json (absent: full)
}  # fmt: skip


def _save_checkpoint(algorithm: Any, run_dir: pathlib.Path, progress: dict[str, Any]) -> None:
    """RLlib's checkpoint and the progress at it into ``rllib_checkpoint/``, written
    aside and swapped in whole, so the two always agree."""

    def fill(folder: pathlib.Path) -> None:
        algorithm.save_to_path(str((folder / "algorithm").resolve()))
        atomic_write_text(folder / STATE_FILE, json.dumps(progress, indent=2))

    replace_folder(run_dir, CHECKPOINT, fill)


def read_progress(run_dir: pathlib.Path, config: RLlibTrainConfig) -> dict[str, Any] | None:
    """The progress of the run's last checkpoint (None without one), checked against
    the run: no more iterations than planned, snapshots of this run's modules, its variant.

    Args:
        run_dir: the run's folder.
        config: the run's config (its ``run.iterations``, modules and ``run.variant``).

    Returns:
        ``state.json``'s ``iteration``, ``steps``, ``wall_time`` and ``snapshots``
        (module ids by learner), with ``folder``: the checkpoint folder that holds
        it; None when the run has no checkpoint.

    Raises:
        FileFormatError: naming ``state.json`` and what is wrong with it.
    """
    folder = saved_folder(run_dir, CHECKPOINT, STATE_FILE)
    if folder is None:
        return None
    path = folder / STATE_FILE
    progress = read_json_file(path, "an RLlib run's progress (JSON)")
    progress = check_fields(path, progress, PROGRESS_FIELDS, optional=("variant",))
    check_saved_variant(path, progress, parse_variant(config.run.variant))
    if progress["iteration"] > config.run.iterations:
        raise FileFormatError(
            path,
            f"iteration is {progress['iteration']}, but the run's config.yaml plans "
            f"{config.run.iterations} (run.iterations); it is not this run's progress",
        )
    learners = learning_modules(config)
    for learner, ids in progress["snapshots"].items():
        if (
            learner not in learners
            or not isinstance(ids, list)
            or not all(isinstance(i, str) and i.startswith(f"{learner}_v") for i in ids)
        ):
            raise FileFormatError(
                path,
                f"snapshots.{learner} does not list snapshots of this run's modules "
                f"{learners}; it is not this run's progress",
            )
    if not (folder / "algorithm").is_dir():
        raise FileFormatError(path, f"{folder.name}/algorithm, RLlib's checkpoint, is missing")
    return {**progress, "folder": str(folder)}


def train_rllib(
    config: RLlibTrainConfig,
    run_dir: pathlib.Path,
    address: str | None = None,
    resume: bool = False,
) -> pathlib.Path:
    """Train (or, with ``resume``, continue from the last checkpoint), export and
    report; returns the exported policy folder.

    Args:
        config: the run's config.
        run_dir: the run's folder (made by ``main``).
        address: the Ray cluster to join; None for ``RAY_ADDRESS`` or a local Ray.
        resume: continue from the run's last checkpoint, if it has one.

    Returns:
        The run's ``policy/`` folder.

    Raises:
        RuntimeError: no environment step was sampled, so there is nothing to export.
        FileFormatError: on ``resume``, a progress file that is unreadable or not this
            run's (another variant's, say).
        ConfigError: a final opponent that cannot play ``run.variant``.
        KeyboardInterrupt: Ctrl-C, raised again after printing the command that
            continues the run.
    """
    import ray  # lazy: the rllib extra

    variant = parse_variant(config.run.variant)
    check_opponents(variant, {"run.final_opponents": list(config.run.final_opponents)})
    progress = read_progress(run_dir, config) if resume else None
    if progress is None:
        progress = {"iteration": 0, "steps": 0, "wall_time": 0.0, "snapshots": {}}
    init_ray(config, address)
    algorithm = build_algorithm(config, progress["iteration"])
    snapshots: dict[str, list[str]] = {}
    try:
        if progress["iteration"]:
            for learner, ids in progress["snapshots"].items():
                for module_id in ids:
                    _add_frozen_module(algorithm, config, snapshots, learner, module_id)
            algorithm.restore_from_path(
                str((pathlib.Path(progress["folder"]) / "algorithm").resolve())
            )
            # The restored weights, learners' and snapshots', on every env runner
            # before the first episodes (RLlib syncs the learners only after an update).
            modules = learning_modules(config) + [m for ids in snapshots.values() for m in ids]
            for module_id in modules:
                _share_with_env_runners(
                    algorithm, module_id, algorithm.get_module(module_id).get_state()
                )
            print(f"resuming {run_dir} at iteration {progress['iteration']}", file=sys.stderr)
        steps = progress["steps"]
        started = time.perf_counter() - progress["wall_time"]
        fields = ("iteration", "steps", "wall_time", "steps_per_second", "snapshots")
        for iteration in range(progress["iteration"] + 1, config.run.iterations + 1):
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
            steps = max(steps, sampled)
            elapsed = time.perf_counter() - started
            RLLIB_METRICS.add(
                run_dir,
                {
                    "iteration": iteration,
                    "steps": steps,
                    "wall_time": round(elapsed, 1),
                    "steps_per_second": round(steps / elapsed, 1),
                    "snapshots": sum(len(v) for v in snapshots.values()),
                },
                fields,
            )
            print(
                f"iteration {iteration}/{config.run.iterations}: {steps:,} env steps, "
                f"{steps / elapsed:,.0f} steps/s",
                file=sys.stderr,
            )
            if iteration % config.selfplay.snapshot_every == 0:
                add_snapshots(
                    algorithm, config, snapshots, iteration // config.selfplay.snapshot_every
                )
            if iteration % config.run.checkpoint_every == 0 or iteration == config.run.iterations:
                progress = {
                    "iteration": iteration, "steps": steps, "wall_time": elapsed,
                    "snapshots": snapshots, **variant_record(variant),
                }  # fmt: skip
                _save_checkpoint(algorithm, run_dir, progress)
        if steps == 0:
            raise RuntimeError(
                "no environment steps were sampled, so there is nothing to export; "
                "raise rllib.sample_timeout_s or free the CPUs the env runners need"
            )
        policy = export_rllib_policy(algorithm, run_dir / "policy", config, steps).parent
        wall = time.perf_counter() - started
        print(f"trained {steps:,} env steps in {wall:.0f} s ({steps / wall:,.0f} steps/s)")
    except KeyboardInterrupt:
        print(
            f"\n{resume_hint(run_dir)} (from iteration {progress['iteration']}, the last "
            "checkpoint)",
            file=sys.stderr,
        )
        raise
    finally:
        algorithm.stop()
        ray.shutdown()
    try:
        write_report(run_dir, config, steps, wall, RLLIB_METRICS)
    except KeyboardInterrupt:
        print(f"\n{resume_hint(run_dir)} (to write the report)", file=sys.stderr)
        raise
    return policy


def main(
    config_path: str,
    run_dir: str | None,
    overrides: list[str],
    address: str | None,
    resume: str | None = None,
) -> int:
    """``jekyll-hyde train`` with ``algorithm: rllib``: a new run, or ``--resume`` one.

    Args:
        config_path: the config, a YAML file or a shipped config's name; unused with
            ``resume``.
        run_dir: the new run's folder; None for ``runs/<run.name>-<time>``.
        overrides: ``--set`` items, ``section.key=value``; refused with ``resume``.
        address: the Ray cluster to join (``--address``); None for ``RAY_ADDRESS`` or
            a local Ray.
        resume: a run folder to continue instead of starting a run; None to start one.

    Returns:
        The exit status, 0 (also for a run already finished).

    Raises:
        ImportError: Ray RLlib is not installed (the ``rllib`` extra).
        ConfigError: a bad config or ``--set``, or any ``--set`` with ``resume``, or a
            final opponent that cannot play ``run.variant``.
        FileExistsError: ``run_dir`` already holds a run.
        FileNotFoundError: ``resume`` is not a run folder.
        RuntimeError: no environment step was sampled.
        RunWriteError: a file of the run cannot be written.
    """
    _require_ray()
    if resume:
        folder = pathlib.Path(resume)
        config = load_config(run_config_file(folder), overrides, schema=RLlibTrainConfig)
        if overrides:
            raise ConfigError(
                "--set cannot change an RLlib run on --resume (its checkpoint holds the "
                "algorithm as configured); resume without --set, or start a new run"
            )
        progress = read_progress(folder, config)
        finished = progress is not None and progress["iteration"] >= config.run.iterations
        if finished and all((folder / f).exists() for f in ("policy/policy.json", "report.md")):
            print(f"{folder} is already finished; its policy is in {folder / 'policy'}")
            return 0
    else:
        config = load_config(config_path, overrides, schema=RLlibTrainConfig)
        check_opponents(  # before the run's folder is made
            parse_variant(config.run.variant),
            {"run.final_opponents": list(config.run.final_opponents)},
        )
        folder = start_run_folder(
            run_dir,
            config.run.name,
            dump_config(config),
            lambda p: saved_folder(p, CHECKPOINT, STATE_FILE) is not None,
        )
        print(f"run folder: {folder}")
    with run_writes(folder):
        train_rllib(config, folder, address, resume=bool(resume))
    return 0
