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
"""

from __future__ import annotations

import csv
import datetime
import functools
import io
import json
import os
import pathlib
import sys
import time
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jekyll_hyde_agents.policy_file import save_policy
from jekyll_hyde_env import JekyllHydeGymEnv
from jekyll_hyde_train.config import TrainConfig, dump_config, load_config
from jekyll_hyde_train.files import (
    FileFormatError,
    atomic_write_text,
    check_fields,
    one_line,
    read_json_file,
    replace_folder,
    run_write_error,
)
from jekyll_hyde_train.opponent_pool import PoolOpponent, pool_members
from jekyll_hyde_train.report import read_metrics

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


@dataclass
class TrainState:
    """Progress that a checkpoint carries besides the learners' weights."""

    steps: int = 0
    phase: int = 0
    phase_progress: int = 0
    snapshots: dict[str, list[str]] = field(default_factory=dict)
    next_eval: int = 0
    wall_time: float = 0.0
    finished: bool = False


# --- files -------------------------------------------------------------------


def _hidden_indices(state: dict[str, Any]) -> list[int]:
    """The indices of the actor's Linear layers in ``mlp_extractor.policy_net``."""
    indices = []
    while f"mlp_extractor.policy_net.{2 * len(indices)}.weight" in state:
        indices.append(2 * len(indices))  # Linear, activation, Linear, ...
    return indices


def learner_layers(model: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor of a MaskablePPO MlpPolicy as (weight, bias) layers, for export."""
    state = {k: v.detach().cpu().numpy() for k, v in model.policy.state_dict().items()}
    layers = [
        (state[f"mlp_extractor.policy_net.{i}.weight"], state[f"mlp_extractor.policy_net.{i}.bias"])
        for i in _hidden_indices(state)
    ]
    layers.append((state["action_net.weight"], state["action_net.bias"]))
    return layers


def load_learner_layers(
    model: Any,
    layers: list[tuple[np.ndarray, np.ndarray]],
    value_head: tuple[np.ndarray, np.ndarray] | None = None,
    *,
    relu: bool,
) -> None:
    """Start a MaskablePPO MlpPolicy from a saved role network (``learner_layers``' inverse).

    The caller builds the model with the saved network's hidden sizes and
    activation (``relu``: ReLU, else tanh); both are checked. The hidden layers
    start both the actor and the critic (SB3 gives them separate networks); the
    last layer becomes the action logits and the saved value head, when there
    is one, the critic's output (the saved head's tanh has no counterpart in
    SB3's linear critic, so the critic starts from the head's pre-activation,
    which has the same sign and order).
    """
    import torch

    activation = torch.nn.ReLU if relu else torch.nn.Tanh
    if model.policy.activation_fn is not activation:
        raise ValueError(
            f"the network uses {model.policy.activation_fn.__name__}, the saved one "
            f"{activation.__name__}"
        )
    state = model.policy.state_dict()
    hidden = layers[:-1]
    wanted = [weight.shape[0] for weight, _ in hidden]
    found = [state[f"mlp_extractor.policy_net.{i}.weight"].shape[0] for i in _hidden_indices(state)]
    if found != wanted:
        raise ValueError(f"the network has hidden layers {found}, the saved one {wanted}")
    updates = {}
    for index, (weight, bias) in enumerate(hidden):
        for net in ("policy_net", "value_net"):
            updates[f"mlp_extractor.{net}.{2 * index}.weight"] = weight
            updates[f"mlp_extractor.{net}.{2 * index}.bias"] = bias
    updates["action_net.weight"], updates["action_net.bias"] = layers[-1]
    if value_head is not None:
        updates["value_net.weight"] = value_head[0].reshape(1, -1)
        updates["value_net.bias"] = value_head[1].reshape(1)
    for key, value in updates.items():
        if tuple(state[key].shape) != value.shape:
            raise ValueError(f"{key}: shape {tuple(state[key].shape)}, saved {value.shape}")
        state[key] = torch.as_tensor(np.ascontiguousarray(value), dtype=state[key].dtype)
    model.policy.load_state_dict(state)


def export_policies(
    folder: pathlib.Path, models: dict[str, Any], config: TrainConfig, steps: int
) -> pathlib.Path:
    """Write the learners as one saved policy that plays both roles."""
    if config.run.shared_policy:
        groups = {"shared": learner_layers(models["shared"])}
        roles = {"jekyll": "shared", "hyde": "shared"}
    else:
        groups = {role: learner_layers(models[role]) for role in models}
        roles = {role: role for role in models}
    return save_policy(
        folder,
        groups,
        roles,
        activation=config.ppo.activation,
        extra={"training_steps": steps, "run": config.run.name, "created": _now()},
    )


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


# --- environments and learners --------------------------------------------------


def make_env(role: str, members: list[tuple[str, float]], seed: int) -> Any:
    """One monitored Gym env (called inside the env's own process)."""
    from stable_baselines3.common.monitor import Monitor

    env = JekyllHydeGymEnv(role=role, opponent=PoolOpponent(members), game_info=False)
    env.reset(seed=seed)
    return Monitor(env)


def build_vec_env(config: TrainConfig, role: str, members: list[tuple[str, float]], seed: int):
    """The learner's games: batched in C (one object), or one Gym env per process or loop."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    if config.env.vec_env == "batched":
        from jekyll_hyde_env.sb3_vec_env import JekyllHydeSB3VecEnv

        venv = JekyllHydeSB3VecEnv(config.env.n_envs, role=role, opponent=PoolOpponent(members))
        venv.seed(seed)
        return VecMonitor(venv)
    thunks = [
        functools.partial(make_env, role, members, seed + i) for i in range(config.env.n_envs)
    ]
    if config.env.vec_env == "subproc":
        return SubprocVecEnv(thunks)
    return DummyVecEnv(thunks)


def configure_torch(threads: int) -> None:
    """Small networks: one thread per process is fastest beside game processes; with the
    batched games in this process, two let torch use the second core. numpy's BLAS stays on
    one thread: the batched opponents' small products gain nothing from more, and its
    threads would spin against torch's (measured: 4x slower opponent moves).
    Distribution argument checks are skipped; the masks come from the engine."""
    import torch
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")
    torch.set_num_threads(threads)
    torch.distributions.Distribution.set_default_validate_args(False)


def build_learner(config: TrainConfig, venv: Any, seed: int, tensorboard: pathlib.Path):
    import torch
    from sb3_contrib import MaskablePPO

    ppo = config.ppo
    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[ppo.activation]
    return MaskablePPO(
        "MlpPolicy",
        venv,
        learning_rate=ppo.learning_rate,
        n_steps=ppo.n_steps,
        batch_size=ppo.batch_size,
        n_epochs=ppo.n_epochs,
        gamma=ppo.gamma,
        gae_lambda=ppo.gae_lambda,
        clip_range=ppo.clip_range,
        ent_coef=ppo.ent_coef,
        vf_coef=ppo.vf_coef,
        max_grad_norm=ppo.max_grad_norm,
        policy_kwargs={"net_arch": list(ppo.net_arch), "activation_fn": activation},
        tensorboard_log=str(tensorboard),
        seed=seed,
        device="cpu",
        verbose=0,
    )


def learner_roles(config: TrainConfig) -> list[str]:
    return ["shared"] if config.run.shared_policy else ["jekyll", "hyde"]


def opponents_for(
    role: str, config: TrainConfig, state: TrainState, run_dir: pathlib.Path
) -> list[tuple[str, float]]:
    """A learner's pool: the other role's snapshots (its own, when shared) and the baselines."""
    other = {"jekyll": "hyde", "hyde": "jekyll", "shared": "shared"}[role]
    snapshots = [str((run_dir / path).resolve()) for path in state.snapshots.get(other, [])]
    return pool_members(config.selfplay, snapshots)


# --- checkpoints -----------------------------------------------------------


def save_checkpoint(run_dir: pathlib.Path, models: dict[str, Any], state: TrainState) -> None:
    """The learners (``<role>.zip``) and the progress (``state.json``) as one unit.

    Everything is written to ``.checkpoint.new/`` first, then swapped in by
    renames, so ``checkpoint/`` always holds a complete, consistent checkpoint;
    a crash between the two renames leaves the previous one in
    ``.checkpoint.old/``, which ``load_checkpoint`` falls back to.
    """

    def fill(folder: pathlib.Path) -> None:
        for role, model in models.items():
            model.save(folder / f"{role}.zip")
        atomic_write_text(folder / "state.json", json.dumps(state.__dict__, indent=2))

    replace_folder(run_dir, "checkpoint", fill)


def checkpoint_folder(run_dir: pathlib.Path) -> pathlib.Path | None:
    """The folder of the last complete checkpoint, if any."""
    for name in ("checkpoint", ".checkpoint.old"):
        if (run_dir / name / "state.json").exists():
            return run_dir / name
    return None


STATE_FIELDS = {
    "steps": "count",
    "phase": "count",
    "phase_progress": "count",
    "snapshots": "mapping",
    "next_eval": "count",
    "wall_time": "seconds",
    "finished": "flag",
}


def load_checkpoint(run_dir: pathlib.Path) -> TrainState | None:
    """The progress of the last complete checkpoint (``state.json``), checked against
    its schema; None when there is no checkpoint.

    Raises:
        FileFormatError: the file is unreadable or not a checkpoint's progress, naming it.
    """
    folder = checkpoint_folder(run_dir)
    if folder is None:
        return None
    path = folder / "state.json"
    data = read_json_file(path, "a PPO checkpoint's progress (JSON)")
    data = check_fields(path, data, STATE_FIELDS)
    for role, paths in data["snapshots"].items():
        if role not in ("jekyll", "hyde", "shared") or not isinstance(paths, list):
            raise FileFormatError(
                path, f"snapshots must map jekyll, hyde or shared to lists of folders, got {role!r}"
            )
        for snapshot in paths:
            if (
                not isinstance(snapshot, str)
                or pathlib.PurePath(snapshot).is_absolute()
                or ".." in pathlib.PurePath(snapshot).parts
            ):
                raise FileFormatError(
                    path, f"snapshot {snapshot!r} is not a folder inside the run (snapshots/...)"
                )
    return TrainState(**data)


def load_learner(checkpoint: pathlib.Path, venv: Any) -> Any:
    """A learner saved in a checkpoint (``<role>.zip``, SB3's format).

    Raises:
        FileFormatError: the file cannot be loaded as one, naming it.
    """
    from sb3_contrib import MaskablePPO

    try:
        return MaskablePPO.load(checkpoint, env=venv, device="cpu")
    except (OSError, ValueError, KeyError, EOFError, RuntimeError, zipfile.BadZipFile) as error:
        raise FileFormatError(
            checkpoint, f"not a readable learner checkpoint ({one_line(str(error))[:200]})"
        ) from None


# --- evaluation and metrics --------------------------------------------------------


def evaluate_policy(policy_dir: pathlib.Path, config: TrainConfig, pairs: int) -> dict[str, float]:
    """Duplicate matches of the exported policy against the baselines."""
    from jekyll_hyde_arena import evaluate

    results = {}
    for opponent in ("random", "heuristic"):
        report = evaluate(str(policy_dir), opponent, pairs, seed=12345, workers=config.run.workers)
        results[f"score_vs_{opponent}"] = report.score
        if opponent == "heuristic":
            results["jekyll_vs_heuristic"] = report.by_role["jekyll"]["win_rate"]
            results["hyde_vs_heuristic"] = report.by_role["hyde"]["win_rate"]
    return results


def append_metrics(run_dir: pathlib.Path, row: dict[str, Any]) -> None:
    """Add a phase's row to metrics.csv, rewritten atomically, so that a write cut
    short (a full disk) leaves no partial row. The rows of phases at or past
    ``row["steps"]`` go: a phase run again after a resume replaces its row."""
    path = run_dir / "metrics.csv"
    rows = [r for r in read_metrics(path, needed=("steps",)) if int(r["steps"]) < row["steps"]]
    rows.append({k: row.get(k, "") for k in METRICS_FIELDS})
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=METRICS_FIELDS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(path, text.getvalue())


def mean_episode_reward(model: Any) -> float | str:
    buffer = getattr(model, "ep_info_buffer", None)
    if not buffer:
        return ""
    return float(np.mean([info["r"] for info in buffer]))


class _Progress:
    """A progress bar over all training steps, with the time left."""

    def __init__(self, total: int, initial: int):
        self.bar = None
        if not sys.stderr.isatty():  # no bars in log files
            return
        try:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total,
                initial=initial,
                unit="step",
                file=sys.stderr,
                dynamic_ncols=True,
                desc="training",
            )
        except ImportError:
            self.bar = None

    def callback(self):
        from stable_baselines3.common.callbacks import BaseCallback

        bar = self.bar

        class Update(BaseCallback):
            def _on_step(self) -> bool:
                if bar is not None:
                    bar.update(self.training_env.num_envs)
                return True

        return Update()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# --- the run ---------------------------------------------------------------


def prepare_run_dir(config: TrainConfig, run_dir: str | None) -> pathlib.Path:
    if run_dir is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        run_dir = os.path.join("runs", f"{config.run.name}-{stamp}")
    path = pathlib.Path(run_dir)
    if checkpoint_folder(path) is not None:
        raise FileExistsError(
            f"{path} already holds a run; continue it with --resume {path}, "
            "or choose another --run-dir"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path / "config.yaml", dump_config(config))
    except OSError as error:
        raise run_write_error(error, path) from None
    return path


def train(config: TrainConfig, run_dir: pathlib.Path, resume: bool = False) -> pathlib.Path:
    """Run (or continue) training in ``run_dir``; returns the exported policy's folder."""
    state = (load_checkpoint(run_dir) if resume else None) or TrainState(
        next_eval=config.run.eval_every
    )
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
        if resume and checkpoint is not None and checkpoint.exists():
            models[role] = load_learner(checkpoint, venvs[role])
        else:
            models[role] = build_learner(
                config, venvs[role], config.run.seed + i, run_dir / "tensorboard"
            )

    progress = _Progress(config.run.total_steps, state.steps)
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
                    callback=progress.callback(),
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
            append_metrics(run_dir, row)
            save_checkpoint(run_dir, models, state)
    except KeyboardInterrupt:
        interrupted = True
        save_checkpoint(run_dir, models, state)
        print(
            f"\ninterrupted: checkpoint saved; continue with: jekyll-hyde train --resume {run_dir}",
            file=sys.stderr,
        )
    finally:
        progress.close()
        for venv in venvs.values():
            venv.close()
    if interrupted:
        raise KeyboardInterrupt
    policy = export_policies(run_dir / "policy", models, config, state.steps).parent
    state.finished = True
    save_checkpoint(run_dir, models, state)
    speed = state.steps / max(state.wall_time, 1e-9)
    print(f"trained {state.steps:,} steps in {state.wall_time:.0f} s ({speed:,.0f} steps/s)")
    from jekyll_hyde_train.report import write_report

    write_report(run_dir, config, state.steps, state.wall_time)
    return policy


def main(
    config_path: str | None, run_dir: str | None, overrides: list[str], resume: str | None
) -> int:
    """``jekyll-hyde train``: a new run from a config, or ``--resume`` an existing one."""
    if resume:
        folder = pathlib.Path(resume)
        config_file = folder / "config.yaml"
        if not config_file.exists():
            raise FileNotFoundError(f"{folder} is not a run folder (no config.yaml)")
        config = load_config(config_file, overrides)
        state = load_checkpoint(folder)
        if state is not None:
            print(f"resuming {folder} at step {state.steps:,} (phase {state.phase})")
        _train_or_explain(config, folder, resume=True)
        return 0
    config = load_config(config_path, overrides)
    folder = prepare_run_dir(config, run_dir)
    print(f"run folder: {folder}")
    print(dump_config(config))
    _train_or_explain(config, folder)
    return 0


def _train_or_explain(config: TrainConfig, folder: pathlib.Path, resume: bool = False) -> None:
    """``train``; a file that cannot be written (a full disk) stops the run with a
    ``RunWriteError`` naming it and the command that continues the run."""
    try:
        train(config, folder, resume=resume)
    except (FileExistsError, FileNotFoundError):
        raise
    except OSError as error:
        raise run_write_error(error, folder) from None
