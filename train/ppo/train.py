"""Self-play training of Jekyll and Hyde policies with MaskablePPO.

Reads top to bottom: load the config, make the run folder, build one
vectorised Gym environment per learner (each env in its own process), build or
reload the MaskablePPO learners, then alternate phases: the role whose turn it
is learns for ``selfplay.phase_steps`` against a pool of the other role's
snapshots and the baselines; then its policy is snapshotted, evaluated when due
and checkpointed. At the end the policies are exported (``policy/``) and
``report.md`` is written with learning curves and the final arena table.

With ``run.shared_policy`` one learner plays both roles (its env draws the
role each episode) against snapshots of itself.

A run folder holds: ``config.yaml`` (resolved), ``checkpoint/`` (learners and
``state.json``, replaced as a whole at the end of every phase, so a run killed
even with ``kill -9`` resumes losing at most one phase),
``snapshots/``, ``tensorboard/``, ``metrics.csv``, ``policy/`` and
``report.md``. Ctrl-C saves a checkpoint and stops cleanly.

Every game of the run is of ``run.variant`` (RULES.md V1-V7; the full game by
default): the learners', the opponents' (one that cannot play it is refused before
the run starts), the evaluations' and the final arena's; the exported policy
records it, and a checkpoint of another variant is not resumed.
"""

from __future__ import annotations

import functools
import pathlib
import sys
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from threadpoolctl import threadpool_limits

from jekyll_hyde_agents.policy_file import save_policy
from jekyll_hyde_agents.policy_format import provenance
from jekyll_hyde_arena import evaluate
from jekyll_hyde_arena.duplicate import progress_bar
from jekyll_hyde_env import JekyllHydeGymEnv
from jekyll_hyde_env.engine.variant import FULL, Variant, parse_variant
from jekyll_hyde_train.common.config import dump_config, load_config
from jekyll_hyde_train.common.config_checks import SEED_MAX
from jekyll_hyde_train.common.files import FileFormatError
from jekyll_hyde_train.common.run_folder import (
    resume_hint,
    run_config_file,
    run_writes,
    start_run_folder,
)
from jekyll_hyde_train.ppo.checkpoints import (
    TrainState,
    checkpoint_folder,
    load_checkpoint,
    load_learner,
    save_checkpoint,
)
from jekyll_hyde_train.ppo.config import TrainConfig
from jekyll_hyde_train.ppo.hyperparameters import new_maskable_ppo
from jekyll_hyde_train.ppo.learner import learner_layers
from jekyll_hyde_train.ppo.opponent_pool import PoolOpponent, check_opponents, pool_members
from jekyll_hyde_train.ppo.report import METRICS, write_report

METRICS_FIELDS = (
    "steps",
    "wall_time",
    "phase",
    "role",
    "ep_rew_mean",
    "score_vs_random",
    "score_vs_heuristic",
    "jekyll_vs_heuristic",
    "hyde_vs_heuristic",
)
EVAL_OPPONENTS = ("random", "heuristic")
"""The baselines the exported policy meets in the evaluations during training."""


def export_policies(
    folder: pathlib.Path, models: dict[str, Any], config: TrainConfig, steps: int
) -> pathlib.Path:
    """Write the learners as one saved policy that plays both roles.

    Args:
        folder: the policy folder to write (``policy.json`` and ``policy.npz``).
        models: the MaskablePPO learners by role: ``jekyll`` and ``hyde``, or
            ``shared`` under ``run.shared_policy`` (a snapshot holds one role only).
        config: the run's config: the network's activation, the run's name, its
            provenance and its variant (``run.variant``) are recorded.
        steps: the training steps so far, recorded as ``training_steps``.

    Returns:
        The path of the written ``policy.json``.
    """
    if config.run.shared_policy:
        groups = {"shared": learner_layers(models["shared"])}
        roles = {"jekyll": "shared", "hyde": "shared"}
    else:
        groups = {role: learner_layers(models[role]) for role in models}
        roles = {role: role for role in models}
    _, activation = config.ppo.network()
    return save_policy(
        folder,
        groups,
        roles,
        activation=activation,
        extra={
            "training_steps": steps,
            "training": {"method": "ppo", "backend": "sb3", "run": config.run.name},
            "provenance": provenance(dump_config(config), config.run.seed),
        },
        variant=parse_variant(config.run.variant),
    )


# --- environments and learners --------------------------------------------------


def make_env(
    role: str, members: list[tuple[str, float]], seed: int, variant: Variant = FULL
) -> gym.Env:
    """One monitored Gym env (called inside the env's own process).

    Args:
        role: the learner's seat: ``"jekyll"``, ``"hyde"`` or ``"random"`` (drawn each
            episode).
        members: the opponent pool, ``(agent spec, weight)`` pairs (``PoolOpponent``).
        seed: seeds the env's first reset.
        variant: the version of the game the env plays (``run.variant``).

    Returns:
        The ``JekyllHydeGymEnv`` wrapped in Stable-Baselines3's ``Monitor``.
    """
    from stable_baselines3.common.monitor import Monitor  # lazy: as torch, only with a learner

    env = JekyllHydeGymEnv(
        role=role, opponent=PoolOpponent(members), game_info=False, variant=variant
    )
    env.reset(seed=seed)
    return Monitor(env)


def build_vec_env(config: TrainConfig, role: str, members: list[tuple[str, float]], seed: int):
    """The learner's games: batched in C (one object), or one Gym env per process or loop.

    Args:
        config: the run's config: ``env.n_envs`` games of ``run.variant``, stepped as
            ``env.vec_env`` says (``batched``, ``subproc`` or ``dummy``).
        role: the learner's seat: ``"jekyll"``, ``"hyde"`` or ``"random"``.
        members: the opponent pool, ``(agent spec, weight)`` pairs.
        seed: seeds the games; with one Gym env per process or loop, env ``i`` gets
            ``seed + i``.
    """
    # lazy: as torch, only with a learner
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    variant = parse_variant(config.run.variant)
    if config.env.vec_env == "batched":
        # lazy: Stable-Baselines3, as torch, only with a learner
        from jekyll_hyde_env.integrations.sb3_vec_env import JekyllHydeSB3VecEnv

        venv = JekyllHydeSB3VecEnv(
            config.env.n_envs, role=role, opponent=PoolOpponent(members), variant=variant
        )
        venv.seed(seed)
        return VecMonitor(venv)
    thunks: list[Callable[[], gym.Env]] = [
        functools.partial(make_env, role, members, seed + i, variant)
        for i in range(config.env.n_envs)
    ]
    if config.env.vec_env == "subproc":
        return SubprocVecEnv(thunks)
    return DummyVecEnv(thunks)


def configure_torch(threads: int) -> None:
    """Small networks: one thread per process is fastest beside game processes; with the
    batched games in this process, two let torch use the second core. numpy's BLAS stays on
    one thread: the batched opponents' small products gain nothing from more, and its
    threads would spin against torch's (measured: 4x slower opponent moves).
    Distribution argument checks are skipped; the masks come from the engine.

    Args:
        threads: torch's threads in this process (``run.torch_threads``).
    """
    import torch  # lazy: torch loads only with a learner; exploit's search side reads no learner

    threadpool_limits(1, user_api="blas")
    torch.set_num_threads(threads)
    torch.distributions.Distribution.set_default_validate_args(False)


def build_learner(config: TrainConfig, venv: Any, seed: int, tensorboard: pathlib.Path):
    """A fresh learner of the config's ``ppo`` hyperparameters on ``venv``.

    Args:
        config: the run's config (its ``ppo`` section).
        venv: the learner's vectorised games (``build_vec_env``).
        seed: the learner's seed (``learner_seed``).
        tensorboard: the folder of its TensorBoard logs.
    """
    return new_maskable_ppo(config.ppo, venv, seed, tensorboard_log=str(tensorboard))


def learner_seed(config: TrainConfig, index: int) -> int:
    """The seed of learner ``index`` (of ``learner_roles``): below 2**32, as numpy's
    legacy seeding, which SB3 seeds with, requires.

    Args:
        config: the run's config (its ``run.seed``).
        index: the learner's position in ``learner_roles``, from 0.

    Returns:
        ``(run.seed + index) % 2**32``.
    """
    return (config.run.seed + index) % (SEED_MAX + 1)


def learner_roles(config: TrainConfig) -> list[str]:
    """The learners a run trains, by role, in the order their phases take turns.

    Args:
        config: the run's config (its ``run.shared_policy``).

    Returns:
        ``["shared"]`` under ``run.shared_policy``, else ``["jekyll", "hyde"]``.
    """
    return ["shared"] if config.run.shared_policy else ["jekyll", "hyde"]


def opponents_for(
    role: str, config: TrainConfig, state: TrainState, run_dir: pathlib.Path
) -> list[tuple[str, float]]:
    """A learner's pool: the other role's snapshots (its own, when shared) and the baselines.

    Args:
        role: the learner's role: ``"jekyll"``, ``"hyde"`` or ``"shared"``.
        config: the run's config (its ``selfplay`` weights and baselines).
        state: the run's progress, which lists the snapshots, oldest first.
        run_dir: the run's folder; the snapshots' paths are resolved against it.

    Returns:
        ``(agent spec, weight)`` pairs (``pool_members``): ``policy:<path>`` for a
        snapshot, an agent name for a baseline.
    """
    other = {"jekyll": "hyde", "hyde": "jekyll", "shared": "shared"}[role]
    snapshots = [str((run_dir / path).resolve()) for path in state.snapshots.get(other, [])]
    return pool_members(config.selfplay, snapshots)


def check_run_opponents(config: TrainConfig) -> None:
    """Refuse, before the run starts, an opponent that cannot play ``run.variant``: a
    baseline of the pool, of the evaluations or of the final arena (``check_opponents``).

    Args:
        config: the run's config: ``run.variant``, ``selfplay.baselines`` and
            ``run.final_opponents``.

    Raises:
        ConfigError: one line naming the opponent, its key and the variant.
    """
    check_opponents(
        parse_variant(config.run.variant),
        {
            "selfplay.baselines": list(config.selfplay.baselines),
            "evaluation": list(EVAL_OPPONENTS),
            "run.final_opponents": list(config.run.final_opponents),
        },
    )


# --- checkpoints -----------------------------------------------------------


def check_progress(run_dir: pathlib.Path, state: TrainState, config: TrainConfig) -> None:
    """Check a checkpoint's progress against the run: every learner saved beside it
    once steps were trained, every snapshot it lists, and ``policy/`` when it says
    the run is finished.

    Args:
        run_dir: the run's folder.
        state: the progress read from its checkpoint (``load_checkpoint``).
        config: the run's config (which learners it trains).

    Raises:
        FileFormatError: naming ``state.json`` and what in the run disagrees with it.
    """
    folder = checkpoint_folder(run_dir)
    if folder is None:
        return
    path = folder / "state.json"
    needed = [folder / f"{role}.zip" for role in learner_roles(config)] if state.steps else []
    needed += [
        run_dir / snapshot / "policy.json"
        for paths in state.snapshots.values()
        for snapshot in paths
    ]
    if state.finished:
        needed.append(run_dir / "policy" / "policy.json")
    for file in needed:
        if not file.is_file():
            raise FileFormatError(
                path,
                f"steps {state.steps:,}{', finished' if state.finished else ''}: the run "
                f"should hold {file}, which does not exist; it is not this run's progress",
            )


# --- evaluation and metrics --------------------------------------------------------


def evaluate_policy(policy_dir: pathlib.Path, config: TrainConfig, pairs: int) -> dict[str, float]:
    """Duplicate matches of the exported policy against the baselines (``EVAL_OPPONENTS``).

    Args:
        policy_dir: the exported policy's folder.
        config: the run's config (``run.workers`` processes play the games of
            ``run.variant``).
        pairs: duplicate pairs per opponent; the deals come from seed 12345.

    Returns:
        ``score_vs_random`` and ``score_vs_heuristic``, the mean scores (0 to 1),
        and ``jekyll_vs_heuristic`` and ``hyde_vs_heuristic``, the win rates in each
        seat against the heuristic agent.
    """
    results = {}
    variant = parse_variant(config.run.variant)
    for opponent in EVAL_OPPONENTS:
        report = evaluate(
            str(policy_dir),
            opponent,
            pairs,
            seed=12345,
            workers=config.run.workers,
            variant=variant,
        )
        results[f"score_vs_{opponent}"] = report.score
        if opponent == "heuristic":
            results["jekyll_vs_heuristic"] = report.by_role["jekyll"]["win_rate"]
            results["hyde_vs_heuristic"] = report.by_role["hyde"]["win_rate"]
    return results


def mean_episode_reward(model: Any) -> float | str:
    """The learner's mean reward over its recent episodes, for the metrics.

    Args:
        model: the learner (its ``ep_info_buffer`` of finished episodes).

    Returns:
        The mean episode reward, or ``""`` when no episode has finished yet (an empty
        cell in ``metrics.csv``).
    """
    buffer = getattr(model, "ep_info_buffer", None)
    if not buffer:
        return ""
    return float(np.mean([info["r"] for info in buffer]))


def progress_callback(bar: Any):
    """A Stable-Baselines3 callback that moves ``bar`` (``run_folder.progress_bar``,
    or None) by every step of the learner's games.

    Args:
        bar: the progress bar (its ``update(n)`` is called with the games stepped), or
            None for none.
    """
    from stable_baselines3.common.callbacks import BaseCallback  # lazy: the train extra

    class Update(BaseCallback):
        def _on_step(self) -> bool:
            if bar is not None:
                bar.update(self.training_env.num_envs)
            return True

    return Update()


# --- the run ---------------------------------------------------------------


def prepare_run_dir(config: TrainConfig, run_dir: str | None) -> pathlib.Path:
    """A new run's folder with its config.

    Args:
        config: the run's config, written to ``config.yaml``.
        run_dir: the folder to make; None for ``runs/<run.name>-<time>``.

    Returns:
        The run's folder.

    Raises:
        FileExistsError: the folder already holds a run (a ``config.yaml`` or a
            checkpoint).
        RunWriteError: the folder or its config cannot be written.
    """
    return start_run_folder(
        run_dir, config.run.name, dump_config(config), lambda p: checkpoint_folder(p) is not None
    )


def train(config: TrainConfig, run_dir: pathlib.Path, resume: bool = False) -> pathlib.Path:
    """Run (or continue) training in ``run_dir``; returns the exported policy's folder.

    Args:
        config: the run's config.
        run_dir: the run's folder (``prepare_run_dir``).
        resume: continue from the run's last checkpoint, if it has one.

    Returns:
        The run's ``policy/`` folder.

    Raises:
        KeyboardInterrupt: Ctrl-C, raised again once a checkpoint is saved and the
            command that continues the run is printed.
        FileFormatError: on ``resume``, a checkpoint that is unreadable, disagrees
            with the run, or holds another network or variant than the config's.
        ConfigError: an opponent that cannot play ``run.variant``.
    """
    variant = parse_variant(config.run.variant)
    check_run_opponents(config)
    state = (load_checkpoint(run_dir, variant) if resume else None) or TrainState(
        next_eval=config.run.eval_every
    )
    if resume:
        check_progress(run_dir, state, config)
    if state.finished:
        print(f"{run_dir} is already finished; its policy is in {run_dir / 'policy'}")
        return run_dir / "policy"
    configure_torch(config.run.torch_threads)
    roles = learner_roles(config)
    seed = config.run.seed + 1000 * state.phase  # fresh games after a resume
    venvs, models = {}, {}
    for i, role in enumerate(roles):
        env_role = "random" if role == "shared" else role
        members = opponents_for(role, config, state, run_dir)
        venvs[role] = build_vec_env(config, env_role, members, seed + 100 * i)
        folder = checkpoint_folder(run_dir)
        checkpoint = folder / f"{role}.zip" if folder else None
        models[role] = build_learner(
            config, venvs[role], learner_seed(config, i), run_dir / "tensorboard"
        )
        if resume and checkpoint is not None and checkpoint.exists():
            load_learner(checkpoint, models[role], config)

    bar = progress_bar(config.run.total_steps, "training", unit="step", initial=state.steps)
    started = time.perf_counter() - state.wall_time
    interrupted = False
    try:
        while state.steps < config.run.total_steps:
            role = roles[state.phase % len(roles)]
            model = models[role]
            pool = PoolOpponent(opponents_for(role, config, state, run_dir))
            venvs[role].env_method("set_opponent", pool)
            budget = min(
                config.selfplay.phase_steps - state.phase_progress,
                config.run.total_steps - state.steps,
            )
            before = model.num_timesteps
            try:
                model.learn(
                    budget,
                    reset_num_timesteps=False,
                    callback=progress_callback(bar),
                    tb_log_name=role,
                )
            finally:
                done = model.num_timesteps - before
                state.steps += done
                state.phase_progress += done
                state.wall_time = time.perf_counter() - started
            # The phase is over: snapshot the learner for the other side's pool.
            snapshot = pathlib.Path("snapshots") / f"{role}_{state.phase:04d}"
            export_policies(run_dir / snapshot, {role: model}, config, state.steps)
            state.snapshots.setdefault(role, []).append(str(snapshot))
            state.phase += 1
            state.phase_progress = 0
            row = {
                "steps": state.steps,
                "wall_time": round(state.wall_time, 1),
                "phase": state.phase,
                "role": role,
                "ep_rew_mean": mean_episode_reward(model),
            }
            if state.steps >= state.next_eval and len(state.snapshots) == len(roles):
                export_policies(run_dir / "policy", models, config, state.steps)
                metrics = evaluate_policy(run_dir / "policy", config, config.run.eval_pairs)
                row.update(metrics)
                for key, value in metrics.items():
                    model.logger.record(f"eval/{key}", value)
                model.logger.dump(model.num_timesteps)
                while state.next_eval <= state.steps:
                    state.next_eval += config.run.eval_every
            METRICS.add(run_dir, row, METRICS_FIELDS)
            save_checkpoint(run_dir, models, state, variant)
    except KeyboardInterrupt:
        interrupted = True
        save_checkpoint(run_dir, models, state, variant)
        print(f"\ncheckpoint saved. {resume_hint(run_dir)}", file=sys.stderr)
    finally:
        if bar is not None:
            bar.close()
        for venv in venvs.values():
            venv.close()
    if interrupted:
        raise KeyboardInterrupt
    policy = export_policies(run_dir / "policy", models, config, state.steps).parent
    state.finished = True
    save_checkpoint(run_dir, models, state, variant)
    speed = state.steps / max(state.wall_time, 1e-9)
    print(f"trained {state.steps:,} steps in {state.wall_time:.0f} s ({speed:,.0f} steps/s)")
    write_report(run_dir, config, state.steps, state.wall_time)
    return policy


def main(config_path: str, run_dir: str | None, overrides: list[str], resume: str | None) -> int:
    """``jekyll-hyde train``: a new run from a config, or ``--resume`` an existing one.

    Args:
        config_path: the config, a YAML file or a shipped config's name; unused with
            ``resume``.
        run_dir: the new run's folder; None for ``runs/<run.name>-<time>``.
        overrides: ``--set`` items, ``section.key=value``, applied to the config (on
            ``resume``, to the run's own config.yaml).
        resume: a run folder to continue instead of starting a run; None to start one.

    Returns:
        The exit status, 0.

    Raises:
        ConfigError: a bad config or ``--set``, or an opponent that cannot play
            ``run.variant``.
        FileExistsError: ``run_dir`` already holds a run.
        FileNotFoundError: ``resume`` is not a run folder.
        FileFormatError: the run's checkpoint is not valid, or of another variant.
        RunWriteError: a file of the run cannot be written.
        KeyboardInterrupt: Ctrl-C, after a checkpoint is saved.
    """
    if resume:
        folder = pathlib.Path(resume)
        config = load_config(run_config_file(folder), overrides, schema=TrainConfig)
        state = load_checkpoint(folder, parse_variant(config.run.variant))
        if state is not None:
            print(f"resuming {folder} at step {state.steps:,} (phase {state.phase})")
        _train_or_explain(config, folder, resume=True)
        return 0
    config = load_config(config_path, overrides, schema=TrainConfig)
    check_run_opponents(config)  # before the run's folder is made
    folder = prepare_run_dir(config, run_dir)
    print(f"run folder: {folder}")
    print(dump_config(config))
    _train_or_explain(config, folder)
    return 0


def _train_or_explain(config: TrainConfig, folder: pathlib.Path, resume: bool = False) -> None:
    """``train``; a file that cannot be written (a full disk) stops the run with a
    ``RunWriteError`` naming it and the command that continues the run."""
    with run_writes(folder):
        train(config, folder, resume=resume)
