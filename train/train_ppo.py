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

import datetime
import functools
import io
import json
import math
import pathlib
import sys
import time
import zipfile
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from jekyll_hyde_agents.policy_file import save_policy
from jekyll_hyde_arena import evaluate
from jekyll_hyde_arena.duplicate import progress_bar
from jekyll_hyde_env import JekyllHydeGymEnv
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE
from jekyll_hyde_train.config import TrainConfig, dump_config, load_config
from jekyll_hyde_train.config_checks import MAX_LAYER_SIZE, MAX_LAYERS, SEED_MAX
from jekyll_hyde_train.files import (
    FileFormatError,
    atomic_write_text,
    check_fields,
    describe,
    one_line,
    read_json_bytes,
    read_json_file,
    read_zip_member,
    replace_folder,
)
from jekyll_hyde_train.opponent_pool import PoolOpponent, pool_members
from jekyll_hyde_train.ppo_hyperparameters import new_maskable_ppo
from jekyll_hyde_train.ppo_report import METRICS, write_report
from jekyll_hyde_train.run_folder import (
    STATE_FILE,
    resume_hint,
    run_config_file,
    run_writes,
    saved_folder,
    start_run_folder,
)

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
    import torch  # lazy: torch loads only with a learner; exploit's search side reads no learner

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
    from stable_baselines3.common.monitor import Monitor  # lazy: as torch, only with a learner

    env = JekyllHydeGymEnv(role=role, opponent=PoolOpponent(members), game_info=False)
    env.reset(seed=seed)
    return Monitor(env)


def build_vec_env(config: TrainConfig, role: str, members: list[tuple[str, float]], seed: int):
    """The learner's games: batched in C (one object), or one Gym env per process or loop."""
    # lazy: as torch, only with a learner
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    if config.env.vec_env == "batched":
        # lazy: Stable-Baselines3, as torch, only with a learner
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
    import torch  # lazy: torch loads only with a learner; exploit's search side reads no learner

    threadpool_limits(1, user_api="blas")
    torch.set_num_threads(threads)
    torch.distributions.Distribution.set_default_validate_args(False)


def build_learner(config: TrainConfig, venv: Any, seed: int, tensorboard: pathlib.Path):
    """A fresh learner of the config's ``ppo`` hyperparameters on ``venv``."""
    return new_maskable_ppo(config.ppo, venv, seed, tensorboard_log=str(tensorboard))


def learner_seed(config: TrainConfig, index: int) -> int:
    """The seed of learner ``index`` (of ``learner_roles``): below 2**32, as numpy's
    legacy seeding, which SB3 seeds with, requires."""
    return (config.run.seed + index) % (SEED_MAX + 1)


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
            (folder / f"{role}.zip").write_bytes(learner_archive(model).getvalue())
        atomic_write_text(folder / "state.json", json.dumps(state.__dict__, indent=2))

    replace_folder(run_dir, "checkpoint", fill)


def checkpoint_folder(run_dir: pathlib.Path) -> pathlib.Path | None:
    """The folder of the last complete checkpoint, if any."""
    return saved_folder(run_dir, "checkpoint", STATE_FILE)


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


def check_progress(run_dir: pathlib.Path, state: TrainState, config: TrainConfig) -> None:
    """Check a checkpoint's progress against the run: every learner saved beside it
    once steps were trained, every snapshot it lists, and ``policy/`` when it says
    the run is finished.

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


def load_learner(checkpoint: pathlib.Path, model: Any, config: TrainConfig) -> None:
    """Continue ``model``, built from the run's config (``build_learner``), from the
    learner saved in ``checkpoint`` (``<role>.zip``; ``read_learner``).

    Raises:
        FileFormatError: the file is not a learner checkpoint, or one of another
            network than the config's, naming it.
    """
    saved = read_learner(checkpoint, (list(config.ppo.net_arch), config.ppo.activation))
    restore_learner(model, saved)


# --- learner files ------------------------------------------------------------------
#
# A learner is saved in Stable-Baselines3's zip (``model.save``) with one more member,
# ``episodes.json``. SB3's own loader unpickles parts of the ``data`` member, which
# could run any code a stranger's file holds, so it is never used: a learner is built
# from the run's config and only numbers are taken from the file, the weights and the
# optimiser's state through ``torch.load(weights_only=True)``, the rest as JSON.

EPISODES_MEMBER = "episodes.json"
"""The member holding the learner's recent episodes (``ep_info_buffer``, its
``ep_success_buffer``), which SB3 keeps pickled, as JSON."""
LEARNER_WHAT = "a learner checkpoint (Stable-Baselines3 zip)"
MAX_LEARNER_JSON_BYTES = 16 * 2**20  # SB3's data member and episodes.json: kilobytes
MAX_WEIGHTS_BYTES = 2**30  # as a saved policy's arrays (jekyll_hyde_agents.policy_file)
ACTIVATION_CLASSES = {
    "<class 'torch.nn.modules.activation.Tanh'>": "tanh",
    "<class 'torch.nn.modules.activation.ReLU'>": "relu",
}
"""How SB3 describes the activation beside its pickle in the ``data`` member."""
LEARNER_COUNTERS = {
    "num_timesteps": "count",
    "_n_updates": "count",
    "_episode_num": "count",
    "_current_progress_remaining": "finite",
}
"""The plain values of the ``data`` member that a learner continues from."""
EPISODE_NUMBER_TYPES = {
    "float32": np.float32,
    "float64": np.float64,
    "int32": np.int32,
    "int64": np.int64,
    "bool": np.bool_,
}


@dataclass
class SavedLearner:
    """What ``read_learner`` takes from a learner's zip."""

    path: pathlib.Path
    net_arch: list[int]
    activation: str
    counters: dict[str, Any]
    policy: dict[str, Any]
    """The policy's state dict (tensors)."""
    optimizer: dict[str, Any]
    """The optimiser's state dict."""
    episodes: dict[str, list] | None
    """``info`` and ``success``: the episode buffers as ``episodes_json`` wrote them;
    None for a checkpoint saved without them (they then start empty)."""


def learner_archive(model: Any) -> io.BytesIO:
    """``model`` as ``read_learner`` reads it: SB3's zip with ``episodes.json``."""
    archive = io.BytesIO()
    model.save(archive)
    with zipfile.ZipFile(archive, "a") as members:
        members.writestr(EPISODES_MEMBER, json.dumps(episodes_json(model)))
    return archive


def episodes_json(model: Any) -> dict[str, list]:
    """The model's episode buffers as JSON; a numpy number keeps its type, as
    ``[value, "float32"]``, so that the means over them come out the same."""

    def plain(value: Any) -> Any:
        return [value.item(), value.dtype.name] if isinstance(value, np.generic) else value

    info = [{k: plain(v) for k, v in episode.items()} for episode in model.ep_info_buffer or ()]
    success = [plain(value) for value in model.ep_success_buffer or ()]
    return {"info": info, "success": success}


def _parameter_count(net_arch: list[int]) -> int:
    """The parameters of a MaskablePPO MlpPolicy with these hidden layers: the actor's
    and the critic's layers, the action logits and the value."""
    sizes = [OBS_SIZE, *net_arch]
    hidden = sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:], strict=True))
    return 2 * hidden + (sizes[-1] + 1) * NUM_ACTIONS + sizes[-1] + 1


def read_learner(path: pathlib.Path, expected: tuple[list[int], str] | None = None) -> SavedLearner:
    """A learner's zip read without unpickling anything but tensors: the network's
    shape from SB3's description of it, the counters of the ``data`` member, the
    weights and optimiser state (``torch.load(weights_only=True)``, each member's
    size checked first against what that network needs) and ``episodes.json``.

    Args:
        expected: the hidden layers and activation the learner must have (the
            run's config), checked before the weights are read.

    Raises:
        FileFormatError: naming ``path`` and the first problem.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            data = read_json_bytes(
                path,
                read_zip_member(path, archive, "data", LEARNER_WHAT, MAX_LEARNER_JSON_BYTES),
                f"SB3's data member of {LEARNER_WHAT}",
            )
            if not isinstance(data, dict):
                raise FileFormatError(path, f"its data member is {describe(data)}, not an object")
            counters = {key: data.get(key) for key in LEARNER_COUNTERS}
            check_fields(path, counters, LEARNER_COUNTERS, where="data")
            described = data.get("policy_kwargs")
            net_arch = described.get("net_arch") if isinstance(described, dict) else None
            activation = (
                ACTIVATION_CLASSES.get(str(described.get("activation_fn")))
                if isinstance(described, dict)
                else None
            )
            if (
                not isinstance(net_arch, list)
                or not 1 <= len(net_arch) <= MAX_LAYERS
                or not all(
                    isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= MAX_LAYER_SIZE
                    for n in net_arch
                )
                or activation is None
            ):
                raise FileFormatError(
                    path,
                    "its data member does not describe an MLP policy (policy_kwargs with "
                    f"net_arch, a list of layer sizes, and activation_fn Tanh or ReLU); "
                    f"expected {LEARNER_WHAT}",
                )
            if expected is not None and (net_arch, activation) != expected:
                raise FileFormatError(
                    path,
                    f"it holds a {activation} network of hidden layers {net_arch}, but the "
                    f"run's config.yaml asks for {expected[1]} {expected[0]}; resume with the "
                    "config the run was started with",
                )
            weights = min(4 * _parameter_count(net_arch), MAX_WEIGHTS_BYTES)
            policy = _load_tensors(path, archive, "policy.pth", weights + 2**20)
            optimizer = _load_tensors(path, archive, "policy.optimizer.pth", 2 * weights + 2**20)
            episodes = None
            if EPISODES_MEMBER in archive.namelist():
                episodes = read_json_bytes(
                    path,
                    read_zip_member(
                        path, archive, EPISODES_MEMBER, LEARNER_WHAT, MAX_LEARNER_JSON_BYTES
                    ),
                    "a learner's recent episodes (JSON)",
                )
                check_fields(path, episodes, {"info": "list", "success": "list"})
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as error:
        raise FileFormatError(
            path, f"not readable ({one_line(str(error))[:200]}); expected {LEARNER_WHAT}"
        ) from None
    if not isinstance(policy, dict) or not isinstance(optimizer, dict):
        raise FileFormatError(path, f"its weights are not state dicts; expected {LEARNER_WHAT}")
    return SavedLearner(path, net_arch, activation, counters, policy, optimizer, episodes)


def _load_tensors(path: pathlib.Path, archive: zipfile.ZipFile, name: str, limit: int) -> Any:
    """A ``.pth`` member read by ``torch.load(weights_only=True)``: tensors and plain
    values only, never an object that would run code."""
    import torch  # lazy: torch loads only with a learner; exploit's search side reads no learner

    data = read_zip_member(path, archive, name, LEARNER_WHAT, limit)
    try:
        return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 -- torch.load fails on damaged bytes in many ways
        raise FileFormatError(
            path,
            f"its member {name} is not plain tensors ({one_line(str(error))[:160]}); "
            f"expected {LEARNER_WHAT}",
        ) from None


def restore_learner(model: Any, saved: SavedLearner) -> None:
    """Put a saved learner's weights, optimiser state, counters and episodes into
    ``model``, built with the saved network; every tensor is checked against the
    model's (names, shapes, dtypes, finite values) first.

    Raises:
        FileFormatError: naming the file and what disagrees.
    """
    import torch  # lazy: torch loads only with a learner; exploit's search side reads no learner

    path = saved.path

    def refuse(problem: str) -> FileFormatError:
        return FileFormatError(path, f"{problem}; expected {LEARNER_WHAT}")

    current = model.policy.state_dict()
    if set(saved.policy) != set(current):
        missing = sorted(set(current) - set(saved.policy))
        extra = sorted(map(str, set(saved.policy) - set(current)))
        raise refuse(f"policy.pth lacks {missing[:3]} or has unknown {extra[:3]} weights")
    for key, value in current.items():
        loaded = saved.policy[key]
        if not isinstance(loaded, torch.Tensor) or loaded.shape != value.shape:
            shape = tuple(loaded.shape) if isinstance(loaded, torch.Tensor) else describe(loaded)
            raise refuse(f"policy.pth: {key} is {shape}, the network's {tuple(value.shape)}")
        if loaded.dtype != value.dtype or not bool(torch.isfinite(loaded).all()):
            raise refuse(f"policy.pth: {key} is not finite {value.dtype} numbers")
    parameters = list(model.policy.optimizer.param_groups[0]["params"])
    _check_optimizer(saved.optimizer, model.policy.optimizer.state_dict(), parameters, refuse)
    parameters_of = {"policy": saved.policy, "policy.optimizer": saved.optimizer}
    model.set_parameters(parameters_of, exact_match=True, device="cpu")
    for key, value in saved.counters.items():
        setattr(model, key, value)
    if saved.episodes is not None:
        window = model._stats_window_size
        info, success = saved.episodes["info"], saved.episodes["success"]
        if len(info) > window or len(success) > window:
            raise refuse(f"{EPISODES_MEMBER} holds more than {window} episodes")
        model.ep_info_buffer = deque(
            (_episode(episode, refuse) for episode in info), maxlen=window
        )
        model.ep_success_buffer = deque(
            (_episode_number(value, refuse) for value in success), maxlen=window
        )


def _check_optimizer(saved: Any, fresh: dict, parameters: list, refuse: Callable) -> None:
    """Adam's saved state against a fresh optimiser's: the same groups and settings
    (the learning rate excepted, which SB3 sets every update), and for each
    parameter finite moments of its shape and a step count."""
    import torch  # lazy: torch loads only with a learner; exploit's search side reads no learner

    groups = saved.get("param_groups")
    state = saved.get("state")
    if set(saved) != {"state", "param_groups"} or not isinstance(groups, list):
        raise refuse("policy.optimizer.pth is not an optimiser's state")
    if not isinstance(state, dict) or len(groups) != len(fresh["param_groups"]):
        raise refuse("policy.optimizer.pth holds other parameter groups than the network's")
    for group, wanted in zip(groups, fresh["param_groups"], strict=True):
        if not isinstance(group, dict) or group.get("params") != wanted["params"]:
            raise refuse("policy.optimizer.pth holds other parameters than the network's")
        for key, value in group.items():
            if key == "lr":
                good = isinstance(value, float) and math.isfinite(value) and value >= 0
            else:
                good = key in wanted and value == wanted[key]
            if not good:
                raise refuse(f"policy.optimizer.pth: the setting {key} is {describe(value)}")
    for index, entry in state.items():
        if not isinstance(index, int) or not 0 <= index < len(parameters):
            raise refuse(f"policy.optimizer.pth: a state for parameter {describe(index)}")
        if not isinstance(entry, dict):
            raise refuse(f"policy.optimizer.pth: the state of parameter {index} is not a dict")
        for key, value in entry.items():
            shape = () if key == "step" else parameters[index].shape
            if (
                not isinstance(value, torch.Tensor)
                or value.shape != shape
                or not value.is_floating_point()
                or not bool(torch.isfinite(value).all())
            ):
                raise refuse(
                    f"policy.optimizer.pth: {key} of parameter {index} is not finite numbers "
                    f"of shape {tuple(shape)}"
                )


def _episode_number(value: Any, refuse: Callable) -> Any:
    """A number of ``episodes_json``: a Python number, or [number, numpy type name]."""
    if isinstance(value, list) and len(value) == 2 and value[1] in EPISODE_NUMBER_TYPES:
        number, kind = value
        if isinstance(number, (int, float)) and (kind == "bool") == isinstance(number, bool):
            if math.isfinite(number):
                return EPISODE_NUMBER_TYPES[kind](number)
    elif isinstance(value, (int, float)) and math.isfinite(value):
        return value
    raise refuse(f"{EPISODES_MEMBER}: {describe(value)} is not a number of an episode")


def _episode(episode: Any, refuse: Callable) -> dict[str, Any]:
    if not isinstance(episode, dict) or set(episode) != {"r", "l", "t"}:
        raise refuse(f"{EPISODES_MEMBER}: an episode is {describe(episode)}, not r, l and t")
    return {key: _episode_number(value, refuse) for key, value in episode.items()}


# --- evaluation and metrics --------------------------------------------------------


def evaluate_policy(policy_dir: pathlib.Path, config: TrainConfig, pairs: int) -> dict[str, float]:
    """Duplicate matches of the exported policy against the baselines."""
    results = {}
    for opponent in ("random", "heuristic"):
        report = evaluate(str(policy_dir), opponent, pairs, seed=12345, workers=config.run.workers)
        results[f"score_vs_{opponent}"] = report.score
        if opponent == "heuristic":
            results["jekyll_vs_heuristic"] = report.by_role["jekyll"]["win_rate"]
            results["hyde_vs_heuristic"] = report.by_role["hyde"]["win_rate"]
    return results


def mean_episode_reward(model: Any) -> float | str:
    buffer = getattr(model, "ep_info_buffer", None)
    if not buffer:
        return ""
    return float(np.mean([info["r"] for info in buffer]))


def progress_callback(bar: Any):
    """A Stable-Baselines3 callback that moves ``bar`` (``run_folder.progress_bar``,
    or None) by every step of the learner's games."""
    from stable_baselines3.common.callbacks import BaseCallback  # lazy: the train extra

    class Update(BaseCallback):
        def _on_step(self) -> bool:
            if bar is not None:
                bar.update(self.training_env.num_envs)
            return True

    return Update()


# --- the run ---------------------------------------------------------------


def prepare_run_dir(config: TrainConfig, run_dir: str | None) -> pathlib.Path:
    """A new run's folder with its config."""
    return start_run_folder(
        run_dir, config.run.name, dump_config(config), lambda p: checkpoint_folder(p) is not None
    )


def train(config: TrainConfig, run_dir: pathlib.Path, resume: bool = False) -> pathlib.Path:
    """Run (or continue) training in ``run_dir``; returns the exported policy's folder."""
    state = (load_checkpoint(run_dir) if resume else None) or TrainState(
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
            save_checkpoint(run_dir, models, state)
    except KeyboardInterrupt:
        interrupted = True
        save_checkpoint(run_dir, models, state)
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
    save_checkpoint(run_dir, models, state)
    speed = state.steps / max(state.wall_time, 1e-9)
    print(f"trained {state.steps:,} steps in {state.wall_time:.0f} s ({speed:,.0f} steps/s)")
    write_report(run_dir, config, state.steps, state.wall_time)
    return policy


def main(
    config_path: str | None, run_dir: str | None, overrides: list[str], resume: str | None
) -> int:
    """``jekyll-hyde train``: a new run from a config, or ``--resume`` an existing one."""
    if resume:
        folder = pathlib.Path(resume)
        config = load_config(run_config_file(folder), overrides)
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
    with run_writes(folder):
        train(config, folder, resume=resume)
