"""The PPO learner's files, a library for every trainer that runs MaskablePPO.

PPO self-play (``jekyll_hyde_train.ppo.train``), the exploit command's RL
responder (``jekyll_hyde_train.exploit.responder``) and expert iteration's
exploiters read and write learners through this module:

- ``learner_layers`` and ``load_learner_layers`` move a learner's network to and
  from a saved policy's layers (``jekyll_hyde_train.ppo.train.export_policies`` saves
  self-play's learners as a policy);
- ``learner_archive``, ``read_learner`` and ``restore_learner`` checkpoint a
  learner (Stable-Baselines3's zip, read without unpickling: only numbers are
  taken from the file).
"""

from __future__ import annotations

import io
import json
import math
import pathlib
import zipfile
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE
from jekyll_hyde_train.common.config_checks import MAX_LAYER_SIZE, MAX_LAYERS
from jekyll_hyde_train.common.files import (
    FileFormatError,
    check_fields,
    describe,
    one_line,
    read_json_bytes,
    read_zip_member,
)

# --- files -------------------------------------------------------------------


def _hidden_indices(state: dict[str, Any]) -> list[int]:
    """The indices of the actor's Linear layers in ``mlp_extractor.policy_net``."""
    indices: list[int] = []
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
        model.ep_info_buffer = deque((_episode(episode, refuse) for episode in info), maxlen=window)
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
