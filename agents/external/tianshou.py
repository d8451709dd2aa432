"""Tianshou 2 policies as agents: files of ``torch.save`` and objects in memory.

Tianshou saves a policy as its docs show, in one of two ways:

- **the whole object**, ``torch.save(policy, path)`` (a policy, or an algorithm
  such as ``DQN`` or ``MultiAgentOffPolicyAlgorithm``, whose ``policy`` plays).
  It plays as it is: ``load_tianshou`` unpickles it, which runs code, so load
  only your own files. Files of this kind are detected (``is_tianshou_file``)
  without unpickling them;
- **a state dict**, ``torch.save(policy.state_dict(), path)``: weights without
  the network that reads them, which cannot be played alone. Save the whole
  object instead, or write a Python function that builds the policy, loads the
  state dict into it and returns it, and name it ``python:file.py:function``.

A policy reads the 327-entry observation of ``JekyllHyde-v0`` and scores the 28
actions (one policy plays both seats: the observation names the role):

- Q-learning policies (``DiscreteQLearningPolicy``: DQN, C51, QR-DQN, IQN, FQF,
  discrete BCQ): their Q-values, played greedily (epsilon exploration is not
  applied). They are given the action mask the way Tianshou's ``PettingZooEnv``
  gives it (``obs`` a ``Batch`` of ``obs``, ``mask`` and ``agent_id``) and apply
  it themselves (``mask_aware``);
- policies with a categorical actor (``DiscreteActorPolicy`` of PPO, A2C,
  Reinforce, NPG and TRPO; ``DiscreteSACPolicy``): the logits of their action
  distribution. Their network is called on the observation as the Gym env gives
  it, or, when it cannot read that (a network trained through ``PettingZooEnv``
  that reads ``obs.obs``), as ``PettingZooEnv`` gives it. They may choose an
  illegal action, which the agent replaces by the most probable legal one and
  counts;
- multi-agent policies (``MultiAgentPolicy``, the policy of
  ``MultiAgent{On,Off}PolicyAlgorithm``), whose sub-policies are keyed by the
  PettingZoo agents ``jekyll`` and ``hyde``: each seat plays its sub-policy.
  A random sub-policy (``MARLRandomDiscreteMaskedOffPolicyAlgorithm``) plays a
  legal action drawn from a hash of the observation, so that its games are
  reproducible.

A policy whose network takes another observation size or gives another number of
actions is refused with a ``ModelError`` naming both shapes, found by calling it
on a probe batch when its spaces do not say. Torch and Tianshou are imported when
a policy is loaded, never at import time.
"""

from __future__ import annotations

import copy
import functools
import os
import pickletools
import zipfile
import zlib
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any, cast

import numpy as np

from jekyll_hyde_agents.external.sb3 import check_spaces
from jekyll_hyde_agents.model_agent import ModelAgent, ModelError, RoleModel, first_line
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE

_PROBE_ROWS = 3
_MAX_PICKLE_BYTES = 64 << 20  # the pickle of a policy is small: its tensors are stored apart
_STRING_OPCODES = frozenset(
    {
        "SHORT_BINUNICODE",
        "BINUNICODE",
        "BINUNICODE8",
        "UNICODE",
        "STRING",
        "BINSTRING",
        "SHORT_BINSTRING",
    }
)
_GET_OPCODES = frozenset({"GET", "BINGET", "LONG_BINGET"})
_PUT_OPCODES = frozenset({"PUT", "BINPUT", "LONG_BINPUT"})
NEEDS_TIANSHOU = "Tianshou policies need Tianshou 2 and torch: pip install 'jekyll-hyde-env[bench]'"
SAVE_WHOLE = (
    "save the whole policy with torch.save(policy, path), or write a Python function that "
    "builds the policy, loads the state dict into it and returns it, and give it as "
    "python:file.py:function"
)


# --- files -----------------------------------------------------------------------


def _pickle_of(path: str | os.PathLike) -> bytes | None:
    """The bytes of ``*/data.pkl`` in the ``torch.save`` zip at ``path``, or None."""
    try:
        with zipfile.ZipFile(path) as archive:
            entries = [
                info
                for info in archive.infolist()
                if info.filename.endswith("/data.pkl") and info.filename.count("/") == 1
            ]
            if len(entries) != 1 or entries[0].file_size > _MAX_PICKLE_BYTES:
                return None
            return archive.read(entries[0])
    except (zipfile.BadZipFile, OSError, KeyError, ValueError, RuntimeError):
        return None


def pickled_modules(data: bytes) -> set[str]:
    """The modules whose classes or functions the pickle ``data`` names, read from its
    opcodes without unpickling (``GLOBAL``/``INST`` carry ``module name``;
    ``STACK_GLOBAL`` takes the module from the second of the two strings pushed before
    it, directly or from the memo).

    Args:
        data: the bytes of a pickle (``data.pkl`` of a ``torch.save`` zip).

    Returns:
        The module names found (``tianshou.algorithm.modelfree.dqn``, ...); for a
        damaged pickle, those read before the damage.
    """
    modules: set[str] = set()
    recent: list[str | None] = []  # what each opcode pushed: a string, or None for anything else
    memo: dict[int, str | None] = {}
    try:
        for opcode, argument, _ in pickletools.genops(data):
            name = opcode.name
            if name in ("GLOBAL", "INST"):
                modules.add(str(argument).split(" ", 1)[0])
                recent.append(None)
            elif name == "STACK_GLOBAL":
                if len(recent) >= 2 and isinstance(recent[-2], str):
                    modules.add(recent[-2])
                recent.append(None)
            elif name in _STRING_OPCODES:
                recent.append(argument if isinstance(argument, str) else None)
            elif name in _GET_OPCODES:  # genops types every argument Any | None: here an int
                recent.append(memo.get(int(cast(int, argument))))
            elif name == "MEMOIZE":
                memo[len(memo)] = recent[-1] if recent else None
            elif name in _PUT_OPCODES:
                memo[int(cast(int, argument))] = recent[-1] if recent else None
            else:
                recent.append(None)
            del recent[:-2]
    except (ValueError, EOFError, UnicodeDecodeError):
        pass  # a damaged pickle: the modules read up to the damage
    return modules


def _names_tianshou(modules: set[str]) -> bool:
    return any(module == "tianshou" or module.startswith("tianshou.") for module in modules)


def is_tianshou_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a ``torch.save`` zip whose pickle names a Tianshou class.

    Safe: the pickle's opcodes are read, nothing is unpickled. A state dict names no
    Tianshou class and gives False.

    Args:
        path: the file to look into.

    Returns:
        True when the file is such a zip and its pickle names a ``tianshou`` module;
        False otherwise (an unreadable file included).
    """
    data = _pickle_of(path)
    return data is not None and _names_tianshou(pickled_modules(data))


def _load_object(path: str) -> Any:
    """The object ``torch.save`` wrote at ``path``; a state dict or other data only is a
    ``ModelError`` that says what to save instead."""
    try:
        import torch  # lazy: Tianshou's own dependency
    except ImportError as error:
        raise ModelError(f"{path}: {NEEDS_TIANSHOU}") from error
    data = _pickle_of(path)
    if data is None:
        raise ModelError(
            f"{path}: not a file of torch.save (a zip holding data.pkl); a Tianshou policy is "
            "saved with torch.save(policy, path)"
        )
    if not _names_tianshou(pickled_modules(data)):
        # No Tianshou class named: weights only? Read it without running code first.
        try:
            weights = torch.load(path, weights_only=True, map_location="cpu")
        except Exception:  # noqa: BLE001 - classes of the user's own: a policy, maybe
            pass
        else:
            if isinstance(weights, Mapping):
                raise ModelError(
                    f"{path}: this file holds a state dict (weights without their network, as "
                    "torch.save(policy.state_dict(), path) writes), which cannot be played "
                    f"alone; {SAVE_WHOLE}"
                )
            raise ModelError(
                f"{path}: this file holds a {type(weights).__name__}, not a Tianshou policy; "
                "save one with torch.save(policy, path)"
            )
    try:
        return torch.load(path, weights_only=False, map_location="cpu")
    except ModuleNotFoundError as error:
        hint = f" ({NEEDS_TIANSHOU})" if (error.name or "").split(".")[0] == "tianshou" else ""
        raise ModelError(
            f"{path}: torch could not load this policy: {first_line(error)}{hint}"
        ) from None
    except Exception as error:  # noqa: BLE001 - unpickling fails in the user's classes' own ways
        raise ModelError(
            f"{path}: torch could not load this policy ({type(error).__name__}: "
            f"{first_line(error)}); was it saved with another version of Tianshou?"
        ) from None


# --- scoring -----------------------------------------------------------------------


@functools.cache
def _tianshou() -> SimpleNamespace:
    """The Tianshou classes that tell policies apart (imported on first use)."""
    from tianshou.algorithm import algorithm_base, random  # lazy: the bench extra (Tianshou 2)
    from tianshou.algorithm.imitation import discrete_bcq  # lazy: the bench extra (Tianshou 2)
    from tianshou.algorithm.modelfree import (  # lazy: the bench extra (Tianshou 2)
        discrete_sac,
        dqn,
        fqf,
        reinforce,
    )
    from tianshou.algorithm.multiagent import marl  # lazy: the bench extra (Tianshou 2)
    from tianshou.data import Batch  # lazy: the bench extra (Tianshou 2)

    return SimpleNamespace(
        Algorithm=algorithm_base.Algorithm,
        Batch=Batch,
        DiscreteBCQPolicy=discrete_bcq.DiscreteBCQPolicy,
        DiscreteQLearningPolicy=dqn.DiscreteQLearningPolicy,
        DiscreteSACPolicy=discrete_sac.DiscreteSACPolicy,
        FQFPolicy=fqf.FQFPolicy,
        MARLRandom=random.MARLRandomDiscreteMaskedOffPolicyAlgorithm.Policy,
        MultiAgentPolicy=marl.MultiAgentPolicy,
        Policy=algorithm_base.Policy,
        ProbabilisticActorPolicy=reinforce.ProbabilisticActorPolicy,
        RandomActionPolicy=algorithm_base.RandomActionPolicy,
    )


def _first_linear_inputs(module: Any) -> int | None:
    """The input size of the first ``nn.Linear`` of ``module`` (an MLP's input layer)."""
    import torch  # lazy: Tianshou's dependency, only for Tianshou policies

    for layer in module.modules():
        if isinstance(layer, torch.nn.Linear):
            return int(layer.in_features)
    return None


def _spaces_error(name: str, observations: int | None, actions: int | None) -> None:
    """``check_spaces``'s refusal of a network with ``observations`` inputs, ``actions`` outputs."""
    check_spaces(
        name,
        SimpleNamespace(shape=(observations,) if observations is not None else None),
        SimpleNamespace(n=actions),
    )


class TianshouModel:
    """The scores of one Tianshou policy (see the module docstring).

    Args:
        policy: the Tianshou policy, moved to the CPU and put in evaluation mode
            (for a multi-agent policy, one of its sub-policies: see
            ``tianshou_model``).
        name: the model's name in reports and errors.

    Raises:
        ModelError: a policy of another environment (both shapes named), or one
            that gives no scores this module knows.
    """

    forms: tuple[str, ...]
    """The observation forms (``gym``, ``pettingzoo``) to try, then the one the policy
    reads; none for a random policy."""

    def __init__(self, policy: Any, name: str) -> None:
        t = _tianshou()
        if not isinstance(policy, t.Policy):
            raise ModelError(f"{name}: a {type(policy).__name__} is not a Tianshou policy")
        self.name = name
        self.policy = policy.to("cpu")
        self.policy.eval()
        self.policy.is_within_training_step = False
        action_space = policy.action_space
        actions = getattr(action_space, "n", None)
        observation_space = policy.observation_space
        if observation_space is not None or actions is None or int(actions) != NUM_ACTIONS:
            check_spaces(
                name,
                observation_space
                if observation_space is not None
                else SimpleNamespace(shape=(OBS_SIZE,)),
                action_space,
            )
        if isinstance(policy, (t.MARLRandom, t.RandomActionPolicy)):
            self.style, self.kind, self.mask_aware, self.forms = "random", "logits", True, ()
            return
        if isinstance(policy, t.DiscreteQLearningPolicy):
            self.style, self.kind = "values", "values"
            forms: tuple[str, ...] = ("pettingzoo", "gym")  # its forward reads obs.obs and the mask
        elif isinstance(policy, (t.ProbabilisticActorPolicy, t.DiscreteSACPolicy)):
            self.style, self.kind = "distribution", "logits"
            forms = ("gym", "pettingzoo")
        else:
            raise ModelError(
                f"{name}: Tianshou policy {type(policy).__name__} gives neither Q-values nor a "
                "categorical action distribution; supported: Q-learning policies (DQN, C51, "
                "QR-DQN, IQN, FQF, discrete BCQ), categorical actors (PPO, A2C, Reinforce, NPG, "
                "TRPO, discrete SAC) and multi-agent policies of these"
            )
        self.forms = forms
        self._probe()

    def _probe(self) -> None:
        """Find the observation form the policy reads, and check the shapes it gives."""
        observations = np.zeros((_PROBE_ROWS, OBS_SIZE), np.float32)
        masks = np.ones((_PROBE_ROWS, NUM_ACTIONS), bool)
        seats = np.arange(_PROBE_ROWS) % len(AGENTS)
        failure: BaseException | None = None
        for form in self.forms:
            try:
                scores = self._scores(form, observations, masks, seats)
            except Exception as error:  # noqa: BLE001 - the user's network fails its own way
                failure = failure or error
                continue
            self.forms = (form,)
            self.mask_aware = form == "pettingzoo" and self.style == "values"
            shape = tuple(scores.shape)
            if shape != (_PROBE_ROWS, NUM_ACTIONS):
                _spaces_error(self.name, OBS_SIZE, shape[-1] if len(shape) == 2 else None)
            return
        inputs = _first_linear_inputs(self.policy)
        if inputs is not None and inputs != OBS_SIZE:
            _spaces_error(self.name, inputs, int(self.policy.action_space.n))
        raise ModelError(
            f"{self.name}: calling the policy on observations of shape ({_PROBE_ROWS}, {OBS_SIZE}) "
            f"failed ({type(failure).__name__}: {first_line(failure) if failure else ''}); a "
            f"policy of this game reads observations of shape ({OBS_SIZE},) as JekyllHyde-v0 or "
            "PettingZooEnv gives them"
        )

    def _batch(
        self, form: str, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray
    ) -> Any:
        Batch = _tianshou().Batch
        if form == "gym":
            return Batch(obs=observations, info=Batch())
        agent_ids = np.array([AGENTS[int(seat)] for seat in seats], dtype=object)
        return Batch(obs=Batch(obs=observations, mask=masks, agent_id=agent_ids), info=Batch())

    def _scores(
        self, form: str, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray
    ) -> np.ndarray:
        import torch  # lazy: Tianshou's dependency, only for Tianshou policies

        policy = self.policy
        with torch.no_grad():
            out = policy(self._batch(form, observations, masks, seats))
            if self.style == "distribution":
                dist = out.get("dist", None)
                logits = getattr(dist, "logits", None)
                scores = logits if isinstance(logits, torch.Tensor) else out.logits
            else:
                scores = self._q_values(out, masks if form == "pettingzoo" else None)
        return torch.as_tensor(scores).detach().cpu().numpy()

    def _q_values(self, out: Any, masks: np.ndarray | None) -> Any:
        """The Q-values of a Q-learning policy's output, as its ``forward`` chooses by them."""
        import torch  # lazy: Tianshou's dependency, only for Tianshou policies

        t = _tianshou()
        policy = self.policy
        if isinstance(policy, t.DiscreteBCQPolicy):
            # Q-values among the actions its imitator allows, as its forward chooses
            ratio = out.imitation_logits - out.imitation_logits.max(dim=-1, keepdim=True).values
            q = out.q_value.masked_fill(ratio < policy._log_tau, torch.finfo(out.q_value.dtype).min)
            return t.DiscreteQLearningPolicy.compute_q_value(policy, q, masks)
        if isinstance(policy, t.FQFPolicy):
            taus = out.fractions.taus
            weighted = ((taus[:, 1:] - taus[:, :-1]).unsqueeze(1) * out.logits).sum(2)
            return t.DiscreteQLearningPolicy.compute_q_value(policy, weighted, masks)
        return policy.compute_q_value(out.logits, masks)

    def scores(self, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The policy's scores of a batch, without gradients.

        Args:
            observations: float32 (B, 327), a row per decision.
            masks: bool (B, 28), each row's legal actions; given to a policy that
                reads ``PettingZooEnv``'s form, which applies it.
            seats: (B,) the seat to act in each row (0 Jekyll, 1 Hyde); given as the
                ``agent_id`` of ``PettingZooEnv``'s form.

        Returns:
            (B, 28) scores: Q-values, the logits of the action distribution, or for a
            random policy tiny scores drawn from a hash of each row.
        """
        if self.style == "random":
            return _hashed_scores(observations, masks)
        return self._scores(self.forms[0], observations, masks, seats)


def _hashed_scores(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Tiny uniform scores drawn from a hash of each row: a random legal action that is the
    same whenever the same observation comes again (the games stay reproducible), and a
    softmax that is uniform to a millionth when sampling."""
    out = np.empty((len(observations), NUM_ACTIONS))
    for row, (observation, mask) in enumerate(zip(observations, masks, strict=True)):
        seed = zlib.crc32(
            np.asarray(observation, np.float32).tobytes() + np.asarray(mask, bool).tobytes()
        )
        out[row] = np.random.default_rng(seed).random(NUM_ACTIONS) * 1e-6
    return out


def tianshou_model(thing: Any, name: str) -> Any:
    """The ``ScoringModel`` of a Tianshou policy or algorithm (an algorithm plays its
    ``policy``; a multi-agent policy plays each seat's sub-policy, as a ``RoleModel``).

    Args:
        thing: a Tianshou policy, multi-agent policy or algorithm; used as it is.
        name: the model's name in reports and errors.

    Returns:
        A ``TianshouModel``, or a ``RoleModel`` of the ``jekyll`` and ``hyde``
        sub-policies of a multi-agent policy.

    Raises:
        ModelError: Tianshou is missing, ``thing`` is no Tianshou policy, or a
            policy cannot play this game; names ``name``.
    """
    try:
        t = _tianshou()
    except ImportError as error:
        raise ModelError(f"{name}: {NEEDS_TIANSHOU}") from error
    policy = thing.policy if isinstance(thing, t.Algorithm) else thing
    if isinstance(policy, t.MultiAgentPolicy):
        policies = dict(policy.policies)
        missing = [role for role in AGENTS if role not in policies]
        if missing:
            raise ModelError(
                f"{name}: the multi-agent policy has sub-policies for "
                f"{sorted(map(str, policies))}; this game's agents are {list(AGENTS)} "
                "(as PettingZooEnv(jekyll_hyde_v0.env()) names them)"
            )
        jekyll, hyde = (TianshouModel(policies[role], f"{name}[{role}]") for role in AGENTS)
        return RoleModel(jekyll, hyde)
    if not isinstance(policy, t.Policy):
        raise ModelError(
            f"{name}: a {type(thing).__module__}.{type(thing).__qualname__} is not a Tianshou "
            "policy or algorithm"
        )
    return TianshouModel(policy, name)


def load_tianshou(path: str, deterministic: bool = True) -> ModelAgent:
    """An agent playing the Tianshou policy or algorithm saved at ``path`` with
    ``torch.save(policy, path)`` (see the module docstring; loading runs code).

    Args:
        path: the file ``torch.save`` wrote; also the agent's name in reports.
        deterministic: play the best action (True) or sample from the softmax of the
            logits (not for Q-learning policies).

    Returns:
        The ``ModelAgent`` playing the policy.

    Raises:
        ModelError: torch or Tianshou is missing, not a ``torch.save`` file, a state
            dict or other data rather than a policy, a file torch cannot load, or a
            policy this game cannot play.
    """
    return tianshou_agent(_load_object(path), deterministic, name=path)


def tianshou_agent(thing: Any, deterministic: bool = True, name: str | None = None) -> ModelAgent:
    """An agent playing a Tianshou policy or algorithm held in memory: a copy of it, so
    that the caller's policy keeps its device and training mode.

    Args:
        thing: a Tianshou policy, multi-agent policy or algorithm.
        deterministic: play the best action (True) or sample from the softmax of the
            logits (not for Q-learning policies).
        name: the agent's name in reports (default: ``tianshou:`` and the class name).

    Returns:
        The ``ModelAgent`` playing a copy of the policy.

    Raises:
        ModelError: Tianshou is missing, ``thing`` is no Tianshou policy, or a policy
            cannot play this game.
    """
    label = name or f"tianshou:{type(thing).__name__}"
    return ModelAgent(tianshou_model(copy.deepcopy(thing), label), deterministic, label=label)
