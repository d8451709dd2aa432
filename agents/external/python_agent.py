"""Python functions and objects as agents: ``python:package.module:name``, ``python:file.py:name``.

The named attribute is one of:

- a function ``f(observation, action_mask) -> action``, called as the Gym env
  gives them: ``observation`` int8 (327,), ``action_mask`` int8 (28,) with 1
  for a legal action; the answer must be an integer action id;
- a function ``f(view, legal_actions) -> action`` of the engine's
  ``PlayerView`` (its first parameter named ``view`` or annotated
  ``PlayerView``), as the Gym env's ``opponent=`` takes;
- an object with ``act(view, legal_actions)`` (the ``Agent`` protocol), or a
  class of one (built with no arguments);
- any other object the arena takes (an SB3 model, an RLlib module, a Tianshou
  policy, an RLCard agent, an OpenSpiel policy), built in the file;
- a function of no arguments that returns one of these (for example a function
  that builds a Tianshou policy and loads its ``state_dict``).

A function that raises, or answers with something that is not an integer,
stops the match with an ``AgentError`` naming the function and what went
wrong. Importing a module or running a file runs its code: name only your own.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import numbers
import os
import pathlib
import pickle
import re
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from jekyll_hyde_agents.model_agent import mask_of
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.observation import encode

_TARGET = re.compile(r"^(?P<source>.+):(?P<attribute>[A-Za-z_][A-Za-z0-9_.]*)$")


class AgentError(ValueError):
    """An agent that failed while playing: it raised, or answered with no action."""


def looks_like_python_target(text: str) -> bool:
    """Whether ``text`` has the form ``file.py:name`` of an existing file.

    Args:
        text: an agent spec, without the ``python:`` prefix.

    Returns:
        True when ``text`` is ``path.py:attribute`` (a dotted attribute allowed) and
        the ``.py`` file exists; False otherwise, ``module:name`` targets included.
    """
    match = _TARGET.match(text)
    return match is not None and match["source"].endswith(".py") and os.path.isfile(match["source"])


def load_python_object(target: str) -> Any:
    """The object ``target`` names: ``package.module:attribute`` or ``path/file.py:attribute``.

    The module is imported, or the file run (as a module kept in ``sys.modules``).

    Args:
        target: ``package.module:attribute`` or ``path/file.py:attribute``; the
            attribute may be dotted (``module:Class.method``).

    Returns:
        The attribute's value, as it is (nothing is called).

    Raises:
        ValueError: a malformed target, a module or file that cannot be imported,
            or no such attribute; the message names the target.
    """
    match = _TARGET.match(target)
    if not match:
        raise ValueError(
            f"python:{target}: name a function or object as python:package.module:name "
            "or python:path/to/file.py:name"
        )
    source, attribute = match["source"], match["attribute"]
    if source.endswith(".py"):
        path = pathlib.Path(source)
        if not path.is_file():
            raise ValueError(f"python:{target}: no such file {source!r}")
        try:
            module = _run_file(path, _file_module_name(path))
        except Exception as error:  # noqa: BLE001 - the user's file: report what it raised
            raise ValueError(
                f"python:{target}: running {source} raised {type(error).__name__}: {error}"
            ) from None
    else:
        try:
            module = importlib.import_module(source)
        except ImportError as error:
            raise ValueError(f"python:{target}: cannot import {source!r}: {error}") from None
        except Exception as error:  # noqa: BLE001 - the user's module: report what it raised
            raise ValueError(
                f"python:{target}: importing {source} raised {type(error).__name__}: {error}"
            ) from None
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise ValueError(f"python:{target}: {source} has no attribute {attribute!r}")
        value = getattr(value, part)
    return value


_FILE_MODULE_PREFIX = "_jekyll_hyde_user_"


def _file_module_name(path: pathlib.Path) -> str:
    """The module name a user's file runs under: the same in every process."""
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    return f"{_FILE_MODULE_PREFIX}{digest}"


def _run_file(path: pathlib.Path, module_name: str) -> Any:
    """Run the file ``path`` as the module ``module_name`` (kept in ``sys.modules``: dataclasses
    and pickling look modules up by name); what the file raises propagates."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None  # a .py file's: a source loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def _from_file(path: str, module_name: str, data: bytes) -> Any:
    """Unpickle ``data``, a function or object defined in the user's file ``path``, first
    running the file where this process has not (a worker process the arena spawned)."""
    if module_name not in sys.modules:
        _run_file(pathlib.Path(path), module_name)
    return pickle.loads(data)  # noqa: S301 - bytes this program pickled itself


class _FileBound:
    """Pickles a function or object of a user's file (``python:file.py:name``) so that
    another process runs the file before it unpickles it: the file's module exists only in
    the processes that ran it, and spawned workers did not."""

    def __init__(self, thing: Any, path: str, module_name: str) -> None:
        self.thing, self.path, self.module_name = thing, path, module_name

    def __reduce__(self) -> tuple[Any, ...]:
        return (_from_file, (self.path, self.module_name, pickle.dumps(self.thing)))


def _portable(thing: Any) -> Any:
    """``thing`` itself, or wrapped in ``_FileBound`` when a user's file defines it (a
    function of the file, or an object of one of its classes)."""
    if inspect.isfunction(thing) or inspect.isclass(thing):
        module_name = getattr(thing, "__module__", None) or ""
    elif inspect.ismethod(thing):  # pickled as getattr(its object, its name)
        module_name = getattr(thing.__func__, "__module__", None) or ""
    else:
        module_name = type(thing).__module__
    module = sys.modules.get(module_name) if module_name.startswith(_FILE_MODULE_PREFIX) else None
    path = getattr(module, "__file__", None)
    return _FileBound(thing, path, module_name) if path else thing


def _takes_view(function: Callable[..., Any]) -> bool:
    """Whether ``function`` reads a ``PlayerView`` and the legal actions (its first
    parameter named ``view`` or annotated ``PlayerView``, or its second named
    ``legal...``, as in ``lambda view, legal: legal[0]``) rather than the Gym
    observation and action mask."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return False
    if not parameters:
        return False
    first = parameters[0]
    annotation = first.annotation
    if first.name == "view" or annotation is PlayerView or annotation == "PlayerView":
        return True
    return len(parameters) > 1 and parameters[1].name.startswith("legal")


def _checked_action(answer: Any, name: str, legal_actions: list[int]) -> int:
    """``answer`` as an int action id, or an ``AgentError`` naming ``name``. Legality is the
    arena's to check (it may score the game as forfeited)."""
    if isinstance(answer, np.ndarray) and answer.size == 1:
        answer = answer.reshape(()).item()
    if isinstance(answer, bool) or not isinstance(answer, numbers.Integral):
        raise AgentError(
            f"{name} returned {answer!r} ({type(answer).__name__}), not an integer action id; "
            f"legal actions were {legal_actions}"
        )
    return int(answer)


class FunctionAgent:
    """A plain function as an agent (see the module docstring).

    Args:
        function: ``f(observation, action_mask)`` or ``f(view, legal_actions)``; which
            one is told from its parameters (a first one named ``view`` or annotated
            ``PlayerView``, or a second one named ``legal...``).
        name: the agent's name in reports and errors (default: ``python:`` and the
            function's qualified name).
    """

    def __init__(self, function: Callable[..., Any], name: str | None = None) -> None:
        self.function = function
        self.name = name or f"python:{getattr(function, '__qualname__', type(function).__name__)}"
        self._view_style = _takes_view(function)

    def reset(self, seed: int | None = None) -> None:
        """A plain function keeps no state of ours to reset.

        Args:
            seed: ignored.
        """

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The function's answer for this decision.

        Args:
            view: what the player to act knows; the function gets it as it is, or
                encoded as the Gym observation (int8, 327 entries).
            legal_actions: the ids of the legal actions; the function gets them as a
                list, or as the Gym action mask (int8, 28 entries, 1 for legal).

        Returns:
            The function's answer as an int; its legality is not checked here.

        Raises:
            AgentError: the function raised, or answered with something that is not
                an integer.
        """
        try:
            if self._view_style:
                answer = self.function(view, list(legal_actions))
            else:
                mask = mask_of(legal_actions).astype(np.int8)
                answer = self.function(encode(view), mask)
        except Exception as error:  # noqa: BLE001 - the user's code: report what it raised
            raise AgentError(f"{self.name} raised {type(error).__name__}: {error}") from error
        return _checked_action(answer, self.name, legal_actions)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FunctionAgent, (_portable(self.function), self.name))


class CheckedAgent:
    """An object with ``act`` whose answers are checked: an exception or a non-integer
    becomes an ``AgentError`` naming the agent.

    Args:
        agent: an object with ``act(view, legal_actions)``, and ``reset(seed)`` if it
            has randomness to seed.
        name: the agent's name in reports and errors.
    """

    def __init__(self, agent: Any, name: str) -> None:
        self.agent = agent
        self.name = name

    def reset(self, seed: int | None = None) -> None:
        """Pass ``seed`` to the agent's ``reset``, when it has one.

        Args:
            seed: the agent's seed for the games to come.
        """
        if hasattr(self.agent, "reset"):
            self.agent.reset(seed)

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The agent's answer for this decision, checked to be an integer.

        Args:
            view: what the player to act knows.
            legal_actions: the ids of the legal actions.

        Returns:
            The agent's answer as an int; its legality is not checked here.

        Raises:
            AgentError: the agent raised, or answered with something that is not an
                integer.
        """
        try:
            answer = self.agent.act(view, legal_actions)
        except Exception as error:  # noqa: BLE001 - the user's code: report what it raised
            raise AgentError(f"{self.name} raised {type(error).__name__}: {error}") from error
        return _checked_action(answer, self.name, legal_actions)

    def __reduce__(self) -> tuple[Any, ...]:
        return (CheckedAgent, (_portable(self.agent), self.name))


def python_agent(target: str, deterministic: bool = True) -> Any:
    """The agent that ``python:target`` names (see the module docstring).

    A class is built with no arguments and a function of no arguments called, then
    the value is played: an agent of this package as it is, another object with
    ``act`` checked (``CheckedAgent``), a function as a ``FunctionAgent``, any other
    object through ``as_agent``.

    Args:
        target: ``package.module:name`` or ``path/file.py:name``.
        deterministic: a model found there plays its best action (True) or samples
            from its policy.

    Returns:
        The agent, named ``python:target``.

    Raises:
        ValueError: the target cannot be loaded, or building the class or calling
            the function of no arguments raised; ``as_agent``'s errors for an object
            of no accepted kind.
    """
    from jekyll_hyde_agents.sources import as_agent  # lazy: a cycle, sources imports this module

    value = load_python_object(target)
    name = f"python:{target}"
    if inspect.isclass(value):
        try:
            value = value()
        except Exception as error:  # noqa: BLE001 - the user's class
            raise ValueError(
                f"{name}: building {target} raised {type(error).__name__}: {error}"
            ) from None
    if inspect.isfunction(value) and not _parameters(value):
        try:  # a function of no arguments builds the agent (a policy loading its weights)
            value = value()
        except Exception as error:  # noqa: BLE001 - the user's function
            raise ValueError(
                f"{name}: building the agent raised {type(error).__name__}: {error}"
            ) from None
    if hasattr(value, "act"):
        if type(value).__module__.startswith("jekyll_hyde_"):
            return value  # one of ours (a model, a saved policy): batching and counts kept
        return CheckedAgent(value, name)
    if inspect.isfunction(value) or inspect.isbuiltin(value) or inspect.ismethod(value):
        return FunctionAgent(value, name)
    return as_agent(value, deterministic=deterministic, name=name)


def _parameters(function: Callable[..., Any]) -> list[str]:
    """The names of ``function``'s parameters (["?"] when they cannot be read)."""
    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return ["?"]
