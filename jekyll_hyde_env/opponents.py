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

    def act(self, view: PlayerView, legal_actions: list[int]) -> int: ...


def register_opponent(name: str, factory: Callable[[str | None], Any]) -> None:
    """Register ``factory(argument)`` under ``name``; ``"name:argument"`` passes the argument."""
    if not name or ":" in name:
        raise ValueError(f"opponent name {name!r} must be non-empty and contain no ':'")
    _FACTORIES[name] = factory


def register_path_loader(loader: Callable[[str], Any]) -> None:
    """Resolve specs that are no registered name with ``loader(spec)``: paths (a run
    folder, a saved policy, a model file) and the other forms ``jekyll_hyde_agents``
    reads. The loader raises ``ValueError`` for a spec it does not know."""
    _PATH_LOADERS[:] = [loader]


def register_object_adapter(adapter: Callable[[Any], Any]) -> None:
    """Turn objects that are not agents (a library's model, a function) into agents with
    ``adapter(object)``; ``jekyll_hyde_agents`` registers its ``as_agent``."""
    _OBJECT_ADAPTERS[:] = [adapter]


def registered_names() -> list[str]:
    """Names that ``resolve_opponent`` accepts (after importing ``jekyll_hyde_agents``)."""
    _load_agents()
    return sorted(_FACTORIES)


def _load_agents() -> None:
    importlib.import_module(_AGENTS_PACKAGE)


def unknown_name_message(spec: str) -> str:
    """What to say of a spec that names no agent, with the names that do."""
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
    """Gives a plain function ``f(view, legal_actions) -> int`` the agent interface."""

    def __init__(self, function: Callable[[PlayerView, list[int]], int]):
        self.function = function

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        return self.function(view, legal_actions)

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset: a plain function holds no state of ours."""


def resolve_opponent(spec: Any) -> Any:
    """An object with ``act(view, legal_actions)`` from an agent, a callable or a name.

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
