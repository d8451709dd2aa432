"""Where agents come from: names, files of any library, and objects in memory.

Everything that accepts an agent (the arena, ``exploit``, ``play``, ``serve``'s
allow list, the Gym env's ``opponent=``, the vector envs and the self-play
pool) reads it through this module, so each accepts the same things:

- **a name**: ``random``, ``heuristic``, ``ismcts:1000``, ``champion``, ... (``make_agent``);
- **a file**, its kind detected from the file (a tabular strategy of a small variant,
  ``tabular.npz`` from ``jekyll-hyde solve``, among them), or named by a prefix where
  detection cannot decide (``KINDS``): a saved policy or run folder, an SB3
  ``.zip`` (``sb3:``), an RLlib checkpoint folder (``rllib:``), a Tianshou policy
  saved with ``torch.save`` (``tianshou:``), a TorchScript ``.pt``
  (``torchscript:``), an ONNX ``.onnx`` (``onnx:``), a Python function or object
  (``python:module:name`` or ``python:file.py:name``);
- **two of these by role**: ``jekyll=A,hyde=B``;
- **a typed spec**: an ``AZSpec`` or ``BRSpec`` (a search agent not built yet);
- **from Python**: an ``Agent``, a function ``f(observation, action_mask)`` (or
  ``f(view, legal_actions)``), an SB3 model, an RLlib ``Algorithm`` or
  ``RLModule``, a Tianshou policy, an RLCard agent, an OpenSpiel ``policy.Policy``
  or bot (``as_agent``).

``AgentSource`` is what the arena hands its workers: a label and a picklable
recipe that builds the agent again in each worker process.

Trust: SB3 zips, RLlib checkpoints, Tianshou files, TorchScript modules and
Python files run code when they are loaded, so they are for the user's own files
and commands. ``policy.npz`` and ONNX files are data only.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import pickle
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jekyll_hyde_agents.az import AZSpec
from jekyll_hyde_agents.base import Agent, make_agent
from jekyll_hyde_agents.best_response import BRSpec
from jekyll_hyde_agents.external import (
    exchange,
    openspiel_policy,
    python_agent,
    rllib,
    sb3,
    tianshou,
)
from jekyll_hyde_agents.model_agent import ModelAgent, ModelError, RoleModel
from jekyll_hyde_agents.policy_agent import PolicyAgent
from jekyll_hyde_agents.policy_format import METADATA_FILE
from jekyll_hyde_agents.tabular import TABULAR_FILE, TabularAgent
from jekyll_hyde_env.engine.cards import AGENTS
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.opponents import registered_names, unknown_name_message


class AgentTypeError(TypeError, ValueError):
    """An object that cannot be played as an agent; the message lists what can. A
    ``ValueError`` too, so that the command line reports it in one line."""


@dataclass(frozen=True)
class Kind:
    """A kind of agent file: its prefix, its loader (``module:function``, imported when
    used) and whether loading it runs code."""

    prefix: str
    loader: str
    runs_code: bool
    what: str


_PACKAGE = "jekyll_hyde_agents.external"
KINDS: dict[str, Kind] = {
    kind.prefix: kind
    for kind in (
        Kind("sb3", f"{_PACKAGE}.sb3:load_sb3", True, "an SB3 or sb3-contrib .zip"),
        Kind("rllib", f"{_PACKAGE}.rllib:load_rllib", True, "an RLlib checkpoint folder"),
        Kind(
            "tianshou",
            f"{_PACKAGE}.tianshou:load_tianshou",
            True,
            "a Tianshou policy saved with torch.save",
        ),
        Kind(
            "torchscript",
            f"{_PACKAGE}.exchange:load_torchscript",
            True,
            "a TorchScript module (.pt)",
        ),
        Kind("onnx", f"{_PACKAGE}.exchange:load_onnx", False, "an ONNX model (.onnx)"),
        Kind(
            "python",
            f"{_PACKAGE}.python_agent:python_agent",
            True,
            "a Python function or object, module:name or file.py:name",
        ),
    )
}
"""The kinds named by a prefix (``sb3:PATH``); saved policies need none."""

ACCEPTED = (
    "an agent name (random, heuristic, ismcts:N, champion, ...), a saved policy or run "
    "folder, an SB3 .zip, an RLlib checkpoint folder, a .pt (TorchScript or Tianshou), an "
    ".onnx, python:module:name or python:file.py:name, or jekyll=A,hyde=B; a prefix ("
    + ", ".join(f"{prefix}:" for prefix in KINDS)
    + ") names a file's kind where it is not detected"
)


SPECS = (AZSpec, BRSpec)
"""The typed specs of agents: each builds its agent with ``build(seed=None)``."""


def _loader(kind: str) -> Callable[..., Any]:
    module, _, function = KINDS[kind].loader.partition(":")
    return getattr(importlib.import_module(module), function)


def load_kind(kind: str, path: str, deterministic: bool = True) -> Any:
    """The agent of ``path`` read as ``kind`` (a key of ``KINDS``).

    Args:
        kind: a key of ``KINDS``: ``sb3``, ``rllib``, ``tianshou``, ``torchscript``,
            ``onnx`` or ``python``.
        path: the file or folder (for ``python``, ``module:name`` or ``file.py:name``).
        deterministic: models play their best action (True) or sample from their
            policy.

    Returns:
        The agent the kind's loader reads from ``path``.

    Raises:
        ValueError: no such file (kinds other than ``python``), or a file that is not
            of that kind; the message names the file.
    """
    if not path:
        raise ValueError(
            f"{kind}: name the file after the prefix, as {kind}:PATH ({KINDS[kind].what})"
        )
    if kind != "python" and not os.path.exists(path):
        raise ValueError(f"{kind}:{path}: no such file or folder")
    return _loader(kind)(path, deterministic)


def detect_kind(path: str) -> str | None:
    """The kind of the existing file or folder ``path`` ("policy" for a saved policy or
    run folder), or None when it cannot be told from the file.

    Args:
        path: an existing file or folder.

    Returns:
        ``"tabular"`` (a tabular strategy from ``jekyll-hyde solve``, ``tabular.npz`` or
        a folder holding it), ``"policy"`` (a folder holding the metadata file, directly
        or in ``policy/``, the metadata file itself or an ``.npz``), ``"rllib"`` (a
        checkpoint folder),
        ``"onnx"``, ``"sb3"``, ``"torchscript"`` or ``"tianshou"``; None for a file or
        folder of none of these.
    """
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, TABULAR_FILE)):
            return "tabular"
        if any(
            os.path.isfile(os.path.join(path, *parts, METADATA_FILE)) for parts in ((), ("policy",))
        ):
            return "policy"
        return "rllib" if rllib.is_rllib_checkpoint(path) else None
    lower = path.lower()
    if os.path.basename(lower) == TABULAR_FILE:
        return "tabular"
    if (
        lower.endswith(".json")
        and os.path.basename(lower) == METADATA_FILE
        or lower.endswith(".npz")
    ):
        return "policy"
    if lower.endswith(".onnx"):
        return "onnx"
    if sb3.is_sb3_zip(path) or lower.endswith(".zip"):
        return "sb3"
    if exchange.is_torchscript(path):
        return "torchscript"
    if tianshou.is_tianshou_file(path):
        return "tianshou"
    return None


def spec_path(spec: str) -> str | None:
    """The file or folder a spec string reads (a model file, a checkpoint, a Python file),
    or None for a name, a module target or a role pair.

    Args:
        spec: an agent spec string, with or without a kind's prefix.

    Returns:
        The ``.py`` file of a ``file.py:name`` target, else the spec (without its
        prefix) when it names an existing file or folder, else None.
    """
    prefix, colon, rest = spec.partition(":")
    if colon and prefix in KINDS:
        spec = rest
    if python_agent.looks_like_python_target(spec):
        return spec.rpartition(":")[0]
    return spec if os.path.exists(spec) else None


def names_an_agent(spec: str) -> bool:
    """Whether ``spec`` has the form of an agent without building it: a registered name,
    a prefixed kind, an existing file or folder, ``file.py:name`` or ``jekyll=A,hyde=B``
    (so that a config can be checked without loading its models).

    Args:
        spec: an agent spec string.

    Returns:
        True when ``spec`` has one of these forms (a role pair naming each role once
        and both sides naming agents); nothing is loaded, so the agent may still fail
        to load.
    """
    pair = _ROLE_PAIR.match(spec)
    if pair:
        return pair[1] != pair[3] and names_an_agent(pair[2]) and names_an_agent(pair[4])
    prefix = spec.partition(":")[0]
    return prefix in KINDS or prefix in registered_names() or spec_path(spec) is not None


_ROLE_PAIR = re.compile(r"^(jekyll|hyde)=(.+),(jekyll|hyde)=(.+)$")


def load_agent(spec: str, deterministic: bool = True) -> Agent:
    """The agent a spec string names (see the module docstring).

    Args:
        spec: a name, a path, a prefixed path or ``jekyll=A,hyde=B``.
        deterministic: models play their best action (True) or sample from their
            policy; agents of other kinds keep their own play.

    Returns:
        The agent (a name's as ``make_agent`` builds it, a file's as its kind's loader
            reads it, a role pair as one agent).

    Raises:
        ValueError: an unknown name, a missing file, a file of no known kind or a
            model that cannot play this game; the message names the spec.
    """
    prefix, colon, rest = spec.partition(":")
    if colon and prefix in KINDS:
        return load_kind(prefix, rest, deterministic)
    if prefix in registered_names():
        agent = make_agent(spec)
        if not deterministic and isinstance(agent, PolicyAgent):
            agent.deterministic = False
        return agent
    return load_unnamed(spec, deterministic)


def load_unnamed(spec: str, deterministic: bool = True) -> Agent:
    """A spec that is no registered name: ``jekyll=A,hyde=B``, ``file.py:name`` or a path
    (the opponents registry resolves such specs with this).

    Args:
        spec: the spec string.
        deterministic: models play their best action (True) or sample from their
            policy.

    Returns:
        The agent: a role pair as one agent (``role_pair``), a Python target's, a
        saved policy's ``PolicyAgent``, or a file's as its detected kind's loader
        reads it.

    Raises:
        ValueError: none of these, a pair naming a role twice, or a file or folder of
            no known kind; the message lists the names and kinds there are.
    """
    pair = _ROLE_PAIR.match(spec)
    if pair:
        if pair[1] == pair[3]:
            raise ValueError(f"{spec!r}: name each role once, as jekyll=A,hyde=B")
        by_role = {pair[1]: pair[2], pair[3]: pair[4]}
        return role_pair(
            load_agent(by_role["jekyll"], deterministic), load_agent(by_role["hyde"], deterministic)
        )
    if python_agent.looks_like_python_target(spec):
        return load_kind("python", spec, deterministic)
    if not os.path.exists(spec):
        raise ValueError(unknown_name_message(spec))
    kind = detect_kind(spec)
    if kind == "policy":
        return PolicyAgent(spec, deterministic=deterministic)
    if kind == "tabular":  # a mixed strategy, played as it is (jekyll_hyde_agents.tabular)
        return TabularAgent(spec)
    if kind is None and os.path.isdir(spec):
        raise ValueError(
            f"{spec}: no saved policy here (a policy folder holds {METADATA_FILE} and "
            "policy.npz; a run folder holds one in policy/ once its training has ended), "
            "and no RLlib checkpoint"
        )
    if kind is None:
        raise ValueError(
            f"{spec}: cannot tell what kind of agent this file is; name its kind with a "
            f"prefix ({', '.join(f'{p}:{spec}' for p in KINDS if p != 'python')}), or give "
            f"{ACCEPTED}"
        )
    return load_kind(kind, spec, deterministic)


# --- objects in memory ------------------------------------------------------------


_LIBRARIES = ("stable_baselines3", "sb3_contrib", "ray", "tianshou", "open_spiel", "rlcard")


def _module_root(thing: Any) -> str:
    """The library ``thing`` comes from: the first of ``_LIBRARIES`` among the packages of
    its class and base classes (a user's subclass of an RLlib module is RLlib's), else
    ``torch`` or ``onnxruntime`` for a module or session of those, else its own package."""
    roots = [cls.__module__.split(".")[0] for cls in type(thing).__mro__]
    for library in _LIBRARIES:
        if library in roots:
            return library
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(thing, (torch.nn.Module, torch.jit.ScriptModule)):
        return "torch"
    return roots[0]


def as_agent(thing: Any, deterministic: bool = True, name: str | None = None) -> Agent:
    """An agent from anything the arena accepts from Python (see the module docstring).

    Args:
        thing: a spec string (``load_agent``), an ``AgentSource`` or typed spec
            (built), a library's model, an agent, or a function ``f(observation,
            action_mask)`` or ``f(view, legal_actions)``.
        deterministic: models play their best action (True) or sample from their
            policy; agents of other kinds keep their own play.
        name: the agent's name in reports, for a library's model, a foreign agent
            or a function (default: one taken from the object).

    Returns:
        The agent; an agent of this package is returned as it is.

    Raises:
        TypeError: an object of no accepted kind, naming its type and the kinds
            (``AgentTypeError``, a ``ValueError`` too).
        ValueError: a spec string that names no agent (``load_agent``).
    """
    if isinstance(thing, str):
        return load_agent(thing, deterministic)
    if isinstance(thing, AgentSource):
        return thing.build()
    if isinstance(thing, SPECS):
        return thing.build()
    root = _module_root(thing)
    if root in ("stable_baselines3", "sb3_contrib"):
        return sb3.sb3_agent(thing, deterministic, name)
    if root == "ray":
        return rllib.rllib_agent(thing, deterministic, name)
    if root == "tianshou":
        return tianshou.tianshou_agent(thing, deterministic, name)
    if root == "open_spiel" or _is_openspiel_policy(thing):
        return openspiel_policy.openspiel_agent(thing, deterministic, name)
    if root == "rlcard" or (
        callable(getattr(thing, "eval_step", None)) and not hasattr(thing, "act")
    ):
        from jekyll_hyde_agents.rlcard_agent import RLCardAgent  # lazy: RLCard's env module

        return RLCardAgent(thing, name=name or "rlcard")
    if root == "torch" or root == "onnxruntime":
        return exchange.module_agent(thing, deterministic, name)
    if hasattr(thing, "act"):
        if _is_ours(thing):
            return thing
        return python_agent.CheckedAgent(thing, name or _name_of(thing))
    if callable(thing):
        return python_agent.FunctionAgent(thing, name)
    raise AgentTypeError(
        f"cannot play {type(thing).__module__}.{type(thing).__qualname__} as an agent: an "
        "agent or opponent must be an Agent (act(view, legal_actions)), a function "
        "f(observation, action_mask), an SB3 model, an RLlib Algorithm or RLModule, a "
        "Tianshou policy, an RLCard agent, an OpenSpiel policy or bot, or a spec string: "
        f"{ACCEPTED}"
    )


def _is_openspiel_policy(thing: Any) -> bool:
    return callable(getattr(thing, "action_probabilities", None))


def _is_ours(thing: Any) -> bool:
    return type(thing).__module__.startswith("jekyll_hyde_")


def _name_of(thing: Any) -> str:
    return getattr(thing, "name", None) or type(thing).__name__


def role_pair(jekyll: Agent, hyde: Agent) -> Agent:
    """One agent playing ``jekyll`` in the Jekyll seat and ``hyde`` in the Hyde seat.

    Two models become one model (``RoleModel``), so the arena still asks each once
    per batch.

    Args:
        jekyll: the agent of the Jekyll seat.
        hyde: the agent of the Hyde seat.

    Returns:
        A ``ModelAgent`` on a ``RoleModel`` when both are ``ModelAgent``s, else a
        ``RoleAgent``.

    Raises:
        ModelError: two models of which one plays deterministically and the other
            samples.
    """
    if isinstance(jekyll, ModelAgent) and isinstance(hyde, ModelAgent):
        if jekyll.deterministic != hyde.deterministic:
            raise ModelError("jekyll=A,hyde=B: both models play deterministically, or both sample")
        return ModelAgent(RoleModel(jekyll.model, hyde.model), jekyll.deterministic)
    return RoleAgent(jekyll, hyde)


class RoleAgent:
    """Two agents as one: each decision goes to the agent of the seat to act.

    Args:
        jekyll: the agent of the Jekyll seat.
        hyde: the agent of the Hyde seat.
    """

    def __init__(self, jekyll: Agent, hyde: Agent) -> None:
        self.agents = (jekyll, hyde)
        self.name = f"jekyll={_name_of(jekyll)},hyde={_name_of(hyde)}"

    def reset(self, seed: int | None = None) -> None:
        """Reset both agents with the same seed.

        Args:
            seed: passed to each agent's ``reset``.
        """
        for agent in self.agents:
            agent.reset(seed)

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The move of the agent of the seat to act.

        Args:
            view: what the player to act knows; ``view.player`` picks the agent.
            legal_actions: the ids of the legal actions.

        Returns:
            That agent's action id.
        """
        return self.agents[view.player].act(view, legal_actions)

    @property
    def replacements(self) -> int:
        """The illegal choices the two agents' models had replaced (see ``ModelAgent``)."""
        return sum(int(getattr(agent, "replacements", 0)) for agent in self.agents)

    @property
    def roles(self) -> list[str]:
        return list(AGENTS)


# --- what the arena hands its workers ----------------------------------------------


@dataclass(frozen=True)
class AgentSource:
    """A side of a match: its label in reports, and a recipe that builds its agent.

    Each worker process of the arena calls ``build`` to build its own agent; where
    ``rebuildable`` is False the recipe hands out one object built in this process,
    and ``note`` says why (the match then plays in this process, one game at a time).
    """

    label: str
    build: Callable[[], Any]
    rebuildable: bool = True
    note: str = ""


def _unpickled(data: bytes) -> Any:
    return pickle.loads(data)  # noqa: S301 - bytes this process pickled itself


def _same(agent: Any) -> Any:
    return agent


def source_of(thing: Any, deterministic: bool = True, label: str | None = None) -> AgentSource:
    """The ``AgentSource`` of anything the arena accepts.

    A spec string is rebuilt from the string, a typed spec (``AZSpec``, ``BRSpec``)
    from the spec; an SB3 model from its saved bytes;
    a function of no arguments is a builder, called in each worker; any other
    object from a pickled copy, or, when it cannot be pickled, not at all (the
    match then plays in one process, and ``note`` says so).

    Args:
        thing: anything ``as_agent`` takes, a function of no arguments that builds
            an agent, or an ``AgentSource`` (returned as it is).
        deterministic: models play their best action (True) or sample from their
            policy.
        label: the side's label in reports (default: the spec string, the typed
            spec's ``name``, the builder's name or the agent's name).

    Returns:
        The ``AgentSource``; only an object other than a string, typed spec, SB3
            model or builder is built here (to be copied).

    Raises:
        TypeError: an object of no accepted kind (``AgentTypeError``, a
            ``ValueError`` too).
    """
    if isinstance(thing, AgentSource):
        return thing
    if isinstance(thing, str):
        return AgentSource(label or thing, functools.partial(load_agent, thing, deterministic))
    if isinstance(thing, SPECS):  # callable, but built by its own build()
        return AgentSource(label or thing.name, functools.partial(_build_spec, thing))
    is_sb3 = _module_root(thing) in ("stable_baselines3", "sb3_contrib")
    if is_sb3 and hasattr(thing, "policy") and hasattr(thing, "save"):  # an algorithm
        name = label or f"sb3:{type(thing).__name__}"
        return AgentSource(
            name, functools.partial(sb3.load_sb3_bytes, sb3.sb3_bytes(thing), name, deterministic)
        )
    if _is_builder(thing):
        name = label or getattr(thing, "__name__", None) or _name_of(thing)
        return AgentSource(str(name), functools.partial(_built_agent, thing, deterministic))
    agent = as_agent(thing, deterministic)
    name = label or _name_of(agent)
    try:
        data = pickle.dumps(agent)
    except Exception as error:  # noqa: BLE001 - any object may refuse pickling its own way
        return AgentSource(
            name,
            functools.partial(_same, agent),
            rebuildable=False,
            note=f"{name} cannot be copied into worker processes ({type(error).__name__}: "
            f"{error}); it plays in this process only",
        )
    return AgentSource(name, functools.partial(_unpickled, data))


def _build_spec(spec: AZSpec | BRSpec) -> Agent:
    """The agent of ``spec`` (a module function, so that the recipe pickles by name)."""
    return spec.build()


_POLICY_PARAMETERS = ("observation", "obs", "view", "action_mask", "mask", "legal")


def _is_builder(thing: Any) -> bool:
    """A function, bound method or ``functools.partial`` that needs no argument and builds
    an agent (``functools.partial(make_agent, "heuristic")``). Objects that happen to be
    callable (a torch module, a policy) are not, nor is a policy function whose
    parameters have defaults (``f(observation=None, action_mask=None)``)."""
    if not (
        inspect.isfunction(thing) or inspect.ismethod(thing) or isinstance(thing, functools.partial)
    ):
        return False
    try:
        parameters = list(inspect.signature(thing).parameters.values())
    except (TypeError, ValueError):
        return False
    needs_none = all(
        p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in parameters
    )
    return needs_none and not any(p.name.startswith(_POLICY_PARAMETERS) for p in parameters)


def _built_agent(builder: Callable[[], Any], deterministic: bool) -> Any:
    """What ``builder`` returns, as an agent (a builder may return a model or a function)."""
    return as_agent(builder(), deterministic)
