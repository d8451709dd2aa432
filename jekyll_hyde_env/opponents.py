"""Opponents for the single-agent environment: objects, callables or names.

An opponent is anything with ``act(view, legal_actions) -> int`` (and, if it
has one, ``reset(seed)``), the interface every agent in ``jekyll_hyde_agents``
shares. A name such as ``"random"``, ``"heuristic"`` or ``"ismcts:200"``, the
path of a run folder, saved policy or model file, and any other object (a
function ``f(view, legal_actions)`` or ``f(observation, action_mask)``, an SB3
model, ...) resolve through the registry below, which the ``jekyll_hyde_agents``
package fills when it is imported (``jekyll_hyde_agents.sources``); this module
holds no agent code, and imports ``jekyll_hyde_agents`` only when it is asked for
something that is not an agent already. Without that package a plain callable is
wrapped as ``f(view, legal_actions)``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from jekyll_hyde_env.engine.state import PlayerView

_AGENTS_PACKAGE = "jekyll_hyde_agents"
_FACTORIES: dict[str, Callable[[str | None], Any]] = {}
_PATH_LOADERS: list[Callable[[str], Any]] = []
_OBJECT_ADAPTERS: list[Callable[[Any], Any]] = []


@runtime_checkable
class Opponent(Protocol):
    """The agent interface: choose a legal action from what the player knows."""

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """Choose the action of the player whose view this is.

        Args:
            view: what the player to act knows (``engine.player_view``).
            legal_actions: the legal action ids, ascending: card ids 0-24 and
                declarations 25-27.

        Returns:
            One of ``legal_actions``.
        """


def register_opponent(name: str, factory: Callable[[str | None], Any]) -> None:
    """Register ``factory(argument)`` under ``name``; ``"name:argument"`` passes the argument.

    Args:
        name: the agent name a spec starts with, e.g. ``"ismcts"``; non-empty,
            without ``":"``. Registering a name again replaces its factory.
        factory: makes the agent from the text after ``":"`` in the spec
            (``"200"`` for ``"ismcts:200"``), or from None when there is none.

    Raises:
        ValueError: ``name`` is empty or contains ``":"``.
    """
    if not name or ":" in name:
        raise ValueError(f"opponent name {name!r} must be non-empty and contain no ':'")
    _FACTORIES[name] = factory


def register_path_loader(loader: Callable[[str], Any]) -> None:
    """Resolve specs that are no registered name with ``loader(spec)``: paths (a run
    folder, a saved policy, a model file) and the other forms ``jekyll_hyde_agents``
    reads. The loader raises ``ValueError`` for a spec it does not know.

    Args:
        loader: returns the agent of a spec string; it replaces any loader
            registered before.
    """
    _PATH_LOADERS[:] = [loader]


def register_object_adapter(adapter: Callable[[Any], Any]) -> None:
    """Turn objects that are not agents (a library's model, a function) into agents with
    ``adapter(object)``; ``jekyll_hyde_agents`` registers its ``as_agent``.

    Args:
        adapter: returns an agent for an object that has no ``act``; it replaces
            any adapter registered before.
    """
    _OBJECT_ADAPTERS[:] = [adapter]


def registered_names() -> list[str]:
    """Names that ``resolve_opponent`` accepts (after importing ``jekyll_hyde_agents``).

    Returns:
        The registered agent names, sorted, without arguments (``"ismcts"``, not
        ``"ismcts:200"``).
    """
    _load_agents()
    return sorted(_FACTORIES)


def _load_agents() -> None:
    importlib.import_module(_AGENTS_PACKAGE)


def unknown_name_message(spec: str) -> str:
    """What to say of a spec that names no agent, with the names that do.

    Args:
        spec: the spec that was not found, a name or a path.

    Returns:
        The error message: for a spec that looks like a path (it contains a path
        separator or ends in ``.json``), that no such path exists; otherwise that
        the name is unknown. Both list the registered names.
    """
    if os.sep in spec or "/" in spec or spec.endswith(".json"):
        return (
            f"no such path {spec!r}: a run folder, saved policy or model file was expected "
            f"there; agent names are {sorted(_FACTORIES)}"
        )
    return (
        f"unknown agent name {spec!r}; known names: {sorted(_FACTORIES)} "
        "(with an argument as 'name:argument', e.g. 'ismcts:200'), "
        "or the path of a run folder, saved policy or model file"
    )


class CallableOpponent:
    """Gives a plain function ``f(view, legal_actions) -> int`` the agent interface.

    Args:
        function: called with the player's view and the legal action ids; returns
            the action id to play.
    """

    def __init__(self, function: Callable[[PlayerView, list[int]], int]):
        self.function = function

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The function's choice for this view.

        Args:
            view: what the player to act knows (``engine.player_view``).
            legal_actions: the legal action ids, ascending.

        Returns:
            What ``function(view, legal_actions)`` returns, unchecked.
        """
        return self.function(view, legal_actions)

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset: a plain function holds no state of ours.

        Args:
            seed: ignored.
        """


def resolve_opponent(spec: Any) -> Any:
    """An object with ``act(view, legal_actions)`` from an agent, a callable or a name.

    Args:
        spec: an agent (anything with ``act``), returned as it is; a string: a
            registered name, optionally with an argument (``"random"``,
            ``"ismcts:200"``), or a path the registered loader reads (a run folder,
            saved policy or model file); or any other object, such as a function
            ``f(view, legal_actions)`` or ``f(observation, action_mask)`` or an SB3
            model, which the registered adapter turns into an agent.

    Returns:
        The agent: ``spec`` itself when it has ``act``, otherwise a new agent.

    Raises:
        ValueError: an unknown name; the message lists the known names.
        TypeError: ``spec`` is none of the accepted kinds.
    """
    if isinstance(spec, str):
        name, _, argument = spec.partition(":")
        if name not in _FACTORIES:
            _load_agents()
        if name in _FACTORIES:
            return _FACTORIES[name](argument or None)
        if _PATH_LOADERS:
            return _PATH_LOADERS[0](spec)
        raise ValueError(unknown_name_message(spec))
    if hasattr(spec, "act"):
        return spec
    if not _OBJECT_ADAPTERS:
        _load_agents()
    if _OBJECT_ADAPTERS:
        return _OBJECT_ADAPTERS[0](spec)
    if callable(spec):
        return CallableOpponent(spec)
    raise TypeError(
        "an opponent must be a name, an object with act(view, legal_actions) -> int, "
        f"or a callable f(view, legal_actions) -> int; got {type(spec).__name__}"
    )
