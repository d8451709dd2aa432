"""Stable-Baselines3 and sb3-contrib models as agents: ``.zip`` files and models in memory.

A model trained on ``JekyllHyde-v0`` or its vector envs reads the 327-entry
observation, which names the player's role, so one model plays both seats.
The policy is rebuilt from the zip the way SB3 itself loads one (its class,
spaces and ``policy_kwargs`` from ``data``, its weights from ``policy.pth``), so
any algorithm whose policy scores the actions plays:

- actor-critic policies (PPO, A2C, TRPO, sb3-contrib's MaskablePPO): the
  logits of the action distribution. MaskablePPO reads the action mask
  (``mask_aware``); the others may choose an illegal action, which the agent
  replaces by the most probable legal one and counts;
- Q-networks (DQN; QR-DQN as the mean of its quantiles): the action values,
  played greedily.

Loading unpickles the policy class and schedules stored in the zip: it runs
code, so load only your own files.
"""

from __future__ import annotations

import copy
import io
import os
import pathlib
import pickle
import zipfile
from typing import Any

import numpy as np

from jekyll_hyde_agents.model_agent import ModelAgent, ModelError, first_line
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE

REQUIRED_ENTRIES = ("data", "policy.pth")
GAME_SPACES = f"observations of shape ({OBS_SIZE},) and Discrete({NUM_ACTIONS}) actions"


def is_sb3_zip(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a zip holding SB3's ``data`` and ``policy.pth``.

    Args:
        path: the file to look into.

    Returns:
        True for a readable zip archive with both entries; False otherwise (a
        folder, a missing file or another archive included).
    """
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return False
    return all(entry in names for entry in REQUIRED_ENTRIES)


def _check_zip(path: str) -> None:
    if os.path.isdir(path):
        raise ModelError(
            f"{path}: not an SB3 model: this is a folder; model.save() of Stable-Baselines3 "
            "writes a .zip file"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except zipfile.BadZipFile:
        raise ModelError(f"{path}: not an SB3 model: the file is not a zip archive") from None
    missing = [entry for entry in REQUIRED_ENTRIES if entry not in names]
    if missing:
        raise ModelError(
            f"{path}: not an SB3 model: the zip has no {' or '.join(missing)} "
            "(model.save() of Stable-Baselines3 writes both)"
        )


_DAMAGED = (pickle.UnpicklingError, EOFError, zipfile.BadZipFile)
"""What reading a damaged entry of a zip raises (torch.load of ``policy.pth``, a truncated
member)."""


def check_spaces(name: str, observation_space: Any, action_space: Any) -> None:
    """Refuse a model made for another environment, naming both shapes.

    Args:
        name: the model's name, quoted in the error.
        observation_space: the model's observation space (a Gymnasium space, or
            anything with a ``shape``; None counts as no shape).
        action_space: the model's action space (anything with an ``n``).

    Raises:
        ModelError: the observations are not of shape (327,) or the actions not
            ``Discrete(28)``.
    """
    shape = getattr(observation_space, "shape", None)
    actions = getattr(action_space, "n", None)
    if tuple(shape or ()) != (OBS_SIZE,) or actions is None or int(actions) != NUM_ACTIONS:
        got_actions = f"Discrete({int(actions)})" if actions is not None else repr(action_space)
        raise ModelError(
            f"{name}: the model was trained on another environment: its observations have "
            f"shape {tuple(shape) if shape is not None else None} and its actions are "
            f"{got_actions}; this game has {GAME_SPACES}"
        )


class SB3Model:
    """The scores of an SB3 policy (see the module docstring).

    Args:
        policy: the SB3 policy (moved to the CPU and put in evaluation mode): an
            actor-critic policy, whose scores are logits, or a DQN or QR-DQN
            Q-network, whose scores are action values.
        name: the model's name in reports and errors.

    Raises:
        ModelError: a policy made for another environment, with neither an action
            distribution nor Q-values, or recurrent.
    """

    def __init__(self, policy: Any, name: str) -> None:
        check_spaces(name, policy.observation_space, policy.action_space)
        self.policy = policy.to("cpu")
        self.policy.set_training_mode(False)
        self.name = name
        if hasattr(policy, "get_distribution"):
            self.kind = "logits"
        elif hasattr(policy, "q_net") or hasattr(policy, "quantile_net"):
            self.kind = "values"
        else:
            raise ModelError(
                f"{name}: SB3 policy {type(policy).__name__} has neither an action distribution "
                "nor Q-values; supported: actor-critic policies (PPO, A2C, MaskablePPO, ...), "
                "DQN and QR-DQN"
            )
        if getattr(policy, "lstm_actor", None) is not None:
            raise ModelError(
                f"{name}: recurrent policies (RecurrentPPO) keep a state between moves and are "
                "not supported; export a feed-forward policy"
            )
        self.mask_aware = type(policy).__name__.startswith("Maskable")

    def scores(self, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The policy's scores of a batch; one policy plays both seats.

        Args:
            observations: float32 (B, 327), a row per decision.
            masks: bool (B, 28), each row's legal actions; not passed to the policy.
            seats: (B,) the seat to act in each row; unused, as the observation
                names the role.

        Returns:
            (B, 28) logits of the action distribution, or Q-values (QR-DQN: the
            mean of its quantiles).
        """
        import torch  # lazy: the train extra (already loaded with the policy)

        with torch.no_grad():
            obs = torch.as_tensor(observations, dtype=torch.float32)
            policy = self.policy
            if self.kind == "logits":
                distribution = policy.get_distribution(obs)
                return distribution.distribution.logits.numpy()
            if hasattr(policy, "quantile_net"):
                return policy.quantile_net(obs).mean(dim=1).numpy()
            return policy.q_net(obs).numpy()


def _policy_of(model: Any) -> Any:
    """The policy of an SB3 algorithm object, or the object itself when it is a policy."""
    return getattr(model, "policy", model)


def _load_sb3_policy(source: str | pathlib.Path | io.BufferedIOBase, name: str) -> Any:
    """Rebuild the policy saved in an SB3 zip (a path, as SB3 takes one, or a file object
    of its bytes).

    Args:
        source: the zip's path, or a file object of its bytes.
        name: the model's name, quoted in errors.

    Returns:
        The SB3 policy, rebuilt from the zip's class, spaces and ``policy_kwargs``,
        with its saved weights, on the CPU.

    Raises:
        ModelError: stable-baselines3 is not installed, not an SB3 zip, a model made
            for another environment, or a policy SB3 cannot rebuild; names ``name``.
    """
    try:
        from stable_baselines3.common.save_util import load_from_zip_file  # lazy: train extra
    except ImportError as error:
        raise ModelError(
            f"{name}: SB3 models need stable-baselines3: pip install 'jekyll-hyde-env[train]'"
        ) from error
    if isinstance(source, (str, os.PathLike)):
        _check_zip(str(source))
    try:
        data, params, _ = load_from_zip_file(source, device="cpu", print_system_info=False)
    except _DAMAGED as error:
        raise ModelError(
            f"{name}: SB3 could not load this model: an entry of the zip is damaged or was not "
            f"written by SB3 ({type(error).__name__})"
        ) from None
    except (ValueError, KeyError, RuntimeError, AttributeError, ImportError, TypeError) as error:
        raise ModelError(f"{name}: SB3 could not load this model: {first_line(error)}") from None
    if not data or "policy_class" not in data or "policy" not in (params or {}):
        raise ModelError(f"{name}: not an SB3 model: its data has no policy class or weights")
    check_spaces(name, data.get("observation_space"), data.get("action_space"))
    policy_class = data["policy_class"]
    if isinstance(policy_class, dict):  # SB3 could not unpickle the class
        raise ModelError(
            f"{name}: SB3 could not rebuild the policy class of this model (made with another "
            "version of SB3 or of Python?)"
        )
    try:
        policy = policy_class(
            data["observation_space"],
            data["action_space"],
            lambda _: 0.0,  # the optimiser's schedule: no training happens here
            **(data.get("policy_kwargs") or {}),
        )
        policy.load_state_dict(params["policy"])
    except (TypeError, RuntimeError, KeyError, ValueError, AssertionError) as error:
        first = first_line(error)
        raise ModelError(f"{name}: SB3 could not rebuild this model's policy: {first}") from None
    return policy


def load_sb3(path: str, deterministic: bool = True) -> ModelAgent:
    """An agent playing the SB3 model saved at ``path`` (a ``model.save()`` zip).

    Args:
        path: the zip file; also the model's name in reports.
        deterministic: play the best action (True) or sample from the policy's
            distribution (actor-critic policies only).

    Returns:
        The ``ModelAgent`` playing the rebuilt policy.

    Raises:
        ModelError: stable-baselines3 is not installed, not an SB3 zip, or a policy
            this game cannot play (see ``SB3Model``); sampling asked of a Q-network.
    """
    return ModelAgent(SB3Model(_load_sb3_policy(path, path), path), deterministic)


def sb3_agent(model: Any, deterministic: bool = True, name: str | None = None) -> ModelAgent:
    """An agent playing an SB3 algorithm or policy held in memory: a copy of its policy,
    so that the caller's model keeps its device and training mode.

    Args:
        model: an SB3 algorithm (its ``policy`` is played) or an SB3 policy.
        deterministic: play the best action (True) or sample from the policy's
            distribution (actor-critic policies only).
        name: the agent's name in reports (default: ``sb3:`` and the class name).

    Returns:
        The ``ModelAgent`` playing a copy of the policy.

    Raises:
        ModelError: a policy this game cannot play (see ``SB3Model``), or sampling
            asked of a Q-network.
    """
    label = name or f"sb3:{type(model).__name__}"
    return ModelAgent(SB3Model(copy.deepcopy(_policy_of(model)), label), deterministic)


def sb3_bytes(model: Any) -> bytes:
    """An SB3 algorithm saved to bytes (a zip), from which each arena worker rebuilds it.

    Args:
        model: an SB3 algorithm (anything with SB3's ``save(file)``).

    Returns:
        The bytes of the zip ``model.save`` writes; ``load_sb3_bytes`` reads them.
    """
    buffer = io.BytesIO()
    model.save(buffer)
    return buffer.getvalue()


def load_sb3_bytes(data: bytes, name: str, deterministic: bool = True) -> ModelAgent:
    """The agent of ``sb3_bytes``'s zip.

    Args:
        data: the zip's bytes, as ``sb3_bytes`` gives them.
        name: the agent's name in reports and errors.
        deterministic: play the best action (True) or sample from the policy's
            distribution (actor-critic policies only).

    Returns:
        The ``ModelAgent`` playing the rebuilt policy.

    Raises:
        ModelError: stable-baselines3 is not installed, bytes that are not an SB3 zip,
            or a policy this game cannot play (see ``SB3Model``); sampling asked of a
            Q-network.
    """
    return ModelAgent(SB3Model(_load_sb3_policy(io.BytesIO(data), name), name), deterministic)
