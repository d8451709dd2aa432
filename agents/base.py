"""The agent interface and the factory that builds agents from names.

Every player, from random play to search and trained policies, is an
``Agent``: ``act(view, legal_actions) -> int`` chooses one of the legal action
ids from what the player knows (an engine ``PlayerView``, never the full
state), and ``reset(seed)`` starts a new game with its own seeded randomness.
Names resolve through the registry in ``jekyll_hyde_env.opponents``, so the
Gym environment accepts the same names as ``make_agent``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.opponents import register_opponent, registered_names, resolve_opponent


@runtime_checkable
class Agent(Protocol):
    """A player of Jekyll vs Hyde."""

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """One of ``legal_actions``, chosen from ``view``.

        Args:
            view: what the player to act knows: its hand, the table and the
                history it saw (an engine ``PlayerView``, never the full state).
            legal_actions: the ids of the actions legal now (cards 0-24, declared
                colours 25-27), in increasing order.

        Returns:
            The chosen action id, one of ``legal_actions``.
        """
        ...

    def reset(self, seed: int | None = None) -> None:
        """Prepare for a new game; ``seed`` fixes the agent's own randomness.

        Args:
            seed: seeds the agent's own randomness for the games to come; None
                keeps the randomness it has.
        """
        ...


def register_agent(name: str, factory: Any) -> None:
    """Make ``make_agent(name)`` (and ``"name:argument"``) build ``factory(argument)``.

    Args:
        name: the agent's name, non-empty and without ``:``; a name registered
            already is replaced.
        factory: called with the text after ``name:`` (None when there is none);
            returns the agent, or raises ``ValueError`` for an argument it refuses.

    Raises:
        ValueError: an empty name, or one holding ``:``.
    """
    register_opponent(name, factory)


def make_agent(spec: str | Agent, seed: int | None = None) -> Agent:
    """Build an agent from a name (``random``, ``heuristic``, ``ismcts:1000``, ...).

    Args:
        spec: a registered name, with its argument as ``name:argument``; any other
            spec string ``load_agent`` reads (a path, ``jekyll=A,hyde=B``, ...); or
            an agent, used as it is.
        seed: passed to the agent's ``reset``.

    Returns:
        The agent, reset with ``seed``.

    Raises:
        ValueError: an unknown name or a bad argument, listing what is accepted.
        TypeError: ``spec`` gives an object without ``act()`` and ``reset()``.
    """
    agent = resolve_opponent(spec)
    if not isinstance(agent, Agent):
        raise TypeError(f"{spec!r} does not give an agent with act() and reset()")
    agent.reset(seed)
    return agent


def agent_names() -> list[str]:
    """The names ``make_agent`` accepts.

    Returns:
        The registered names, sorted: the agents' (``random``, ``ismcts``, ...)
            and the prefixes of the file kinds (``sb3``, ``onnx``, ...).
    """
    return registered_names()


def no_argument(argument: str | None, name: str) -> None:
    """Refuse ``name:argument`` for agents that take no argument.

    Args:
        argument: the text after ``name:`` in the agent spec, or None when there is none.
        name: the agent's registered name, quoted in the error.

    Raises:
        ValueError: ``argument`` is not None.
    """
    if argument is not None:
        raise ValueError(f"'{name}:{argument}': agent '{name}' takes no argument")


def parse_budget(argument: str | None, name: str, default: int) -> tuple[int | None, float | None]:
    """Read ``name:N`` (N per decision) or ``name:Xs`` (X seconds per decision).

    Args:
        argument: the text after ``name:``: a positive integer, a positive finite
            number of seconds followed by ``s`` (``0.05s``), or None for no argument.
        name: the agent's registered name, quoted in the error.
        default: the count to use when there is no argument.

    Returns:
        count: the number per decision (simulations, worlds...), or None when the
            argument gives seconds; ``default`` when there is no argument.
        seconds: the time budget per decision in seconds, or None when the argument
            gives a count.

    Raises:
        ValueError: the argument is neither a positive integer nor a positive finite
            number of seconds.
    """
    if argument is None:
        return default, None
    try:
        if argument.endswith("s"):
            seconds = float(argument[:-1])
            if 0 < seconds < float("inf"):
                return None, seconds
        elif int(argument) > 0:
            return int(argument), None
    except ValueError:
        pass
    raise ValueError(
        f"'{name}:{argument}': the argument must be a positive integer (per decision) "
        f"or a positive number of seconds per decision, such as '{name}:0.05s'"
    )
