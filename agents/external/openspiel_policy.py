"""OpenSpiel policies and bots as agents, on the OpenSpiel game ``python_jekyll_hyde``.

Two kinds of OpenSpiel objects choose moves, and both play here:

- **policies** (``open_spiel.python.policy.Policy``: ``TabularPolicy``,
  ``UniformRandomPolicy``, the policies of CFR, NFSP, PSRO, ..., or any object with
  ``action_probabilities(state, player)``): at each decision the agent asks for
  the acting player's action probabilities and plays the most probable legal
  action (``deterministic``; equally probable ones are drawn among, so that a
  uniform policy still plays at random) or samples one, with the agent's own
  seeded generator;
- **bots** (``pyspiel.Bot``, or any object with ``step(state)``, as OpenSpiel's
  Python ``MCTSBot`` and ``ISMCTSBot``): the agent plays what ``step`` returns.
  ``reset`` restarts the bot and, where it keeps its randomness in a NumPy
  ``_random_state`` or ``_rng`` (and its evaluator's), reseeds it, so that games
  are reproducible. A bot bound to one player (``player_id()``) plays that seat
  only; give two as ``jekyll=A,hyde=B`` by role. OpenSpiel's C++ bots cannot
  search this Python game (see ``jekyll_hyde_agents.openspiel_bots``): use its
  Python ones.

The state they are shown is built from the acting player's view only
(``game.state_from_world(sample_world(view, rng))``): its information state is
the real one, and what the player cannot see is drawn anew, so no hidden card
leaks to a policy that looks at the whole state. A policy of another game, an
action that is not legal or probabilities that give no legal action a chance
raise a ``ValueError`` naming the agent.

OpenSpiel is imported when an agent is built (the ``openspiel`` extra).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from jekyll_hyde_agents.openspiel_bots import load_game
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS, action_name
from jekyll_hyde_env.engine.information import sample_world
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.engine.variant import FULL


class OpenSpielAgentError(ValueError):
    """An OpenSpiel policy or bot that cannot play here; the message names the agent."""


def _game_name(game: Any) -> str | None:
    try:
        return str(game.get_type().short_name)
    except AttributeError:
        return None


def _reseed(random_state: Any, seed: int) -> None:
    """Reseed a NumPy ``RandomState`` or ``Generator`` in place (objects shared by a bot and
    its evaluator stay shared); anything else is left alone."""
    if isinstance(random_state, np.random.RandomState):
        random_state.seed(seed)
    elif isinstance(random_state, np.random.Generator):
        random_state.bit_generator.state = type(random_state.bit_generator)(seed).state


class OpenSpielAgent:
    """An OpenSpiel policy or bot behind the ``Agent`` interface (see the module docstring).

    Args:
        thing: the policy or bot.
        deterministic: policies play their most probable legal action (True) or
            sample; bots play as they do.
        name: the agent's name in reports.

    Raises:
        OpenSpielAgentError: neither a policy nor a bot, or a policy of another game.
        OpenSpielMissingError: OpenSpiel is not installed.
    """

    def __init__(self, thing: Any, deterministic: bool = True, name: str | None = None) -> None:
        self.name = name or f"openspiel:{type(thing).__name__}"
        if callable(getattr(thing, "action_probabilities", None)):
            self.kind = "policy"
        elif callable(getattr(thing, "step", None)):
            self.kind = "bot"
        else:
            raise OpenSpielAgentError(
                f"{self.name}: a {type(thing).__qualname__} is neither an OpenSpiel policy "
                "(action_probabilities(state, player)) nor a bot (step(state))"
            )
        self._game = load_game()
        self._games = {FULL: self._game}  # the game of each variant played, loaded once
        own_game = getattr(thing, "game", None)
        if own_game is None:
            own_game = getattr(thing, "_game", None)
        own_name = _game_name(own_game) if own_game is not None else None
        expected = _game_name(self._game)
        if own_name is not None and own_name != expected:
            raise OpenSpielAgentError(
                f"{self.name}: this {self.kind} is for the OpenSpiel game {own_name!r}; this "
                f"game is {expected!r} (pyspiel.load_game({expected!r}) after importing "
                "jekyll_hyde_env.integrations.openspiel)"
            )
        self.thing = thing
        self.deterministic = deterministic
        self._rng = np.random.default_rng()

    def reset(self, seed: int | None = None) -> None:
        """Reseed the world draws and the sampling; restart (and reseed) a bot.

        Args:
            seed: seeds the agent's generator and, when not None, a bot's NumPy
                random states and its evaluator's; None draws fresh randomness for
                the agent and leaves the bot's own as it is.
        """
        self._rng = np.random.default_rng(seed)
        if self.kind != "bot":
            return
        restart = getattr(self.thing, "restart", None)
        if callable(restart):
            restart()
        if seed is not None:
            holders = [self.thing] + [
                getattr(self.thing, attribute, None) for attribute in ("evaluator", "_evaluator")
            ]
            for offset, holder in enumerate(h for h in holders if h is not None):
                for attribute in ("_random_state", "_rng"):
                    _reseed(getattr(holder, attribute, None), (seed + 7919 * offset) % 2**32)

    def state_for(self, view: PlayerView) -> Any:
        """An OpenSpiel state at ``view``'s decision: the acting player's information state
        is ``view``; what the player cannot see is drawn with the agent's generator.

        Args:
            view: what the player to act knows.

        Returns:
            A state of the OpenSpiel game ``python_jekyll_hyde`` at that decision.
        """
        game = self._games.get(view.variant)
        if game is None:
            game = self._games[view.variant] = load_game(view.variant)
        return game.state_from_world(sample_world(view, self._rng))

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The policy's or bot's move at ``view``'s decision (see the module docstring).

        Args:
            view: what the player to act knows; the state shown is drawn from it.
            legal_actions: the ids of the legal actions.

        Returns:
            The chosen action id, a legal one.

        Raises:
            OpenSpielAgentError: a policy with no entry for this information state,
                with probability on an illegal action or none on any legal one, or a
                bot that chose an action that is not legal.
        """
        state = self.state_for(view)
        if self.kind == "policy":
            return self._from_policy(state, view.player, legal_actions)
        return self._from_bot(state, view.player, legal_actions)

    def action_probabilities(self, view: PlayerView, legal_actions: list[int]) -> np.ndarray:
        """The probability that this agent plays each legal action at ``view``, as ``act``
        plays: the policy's probabilities when sampling, its most probable action (ties
        shared equally, as they are drawn) when deterministic.

        Args:
            view: what the player to act knows.
            legal_actions: the ids of the legal actions.

        Returns:
            float64 array, one probability per legal action.

        Raises:
            OpenSpielAgentError: a bot (its moves come from a search and cannot be
                enumerated), or a policy whose probabilities ``act`` would refuse.
        """
        if self.kind != "policy":
            raise OpenSpielAgentError(
                f"{self.name}: a bot's moves come from its search and cannot be enumerated; "
                "only OpenSpiel policies give their action probabilities"
            )
        weights = self._policy_weights(self.state_for(view), view.player, legal_actions)
        if self.deterministic:
            best = weights >= weights.max() * (1 - 1e-9)
            return best / best.sum()
        return weights / weights.sum()

    def _from_policy(self, state: Any, player: int, legal_actions: list[int]) -> int:
        weights = self._policy_weights(state, player, legal_actions)
        if self.deterministic:  # the most probable; ties drawn, so a uniform policy stays random
            best = np.flatnonzero(weights >= weights.max() * (1 - 1e-9))
            return int(legal_actions[best[0] if len(best) == 1 else self._rng.choice(best)])
        return int(legal_actions[self._rng.choice(len(legal_actions), p=weights / weights.sum())])

    def _policy_weights(self, state: Any, player: int, legal_actions: list[int]) -> np.ndarray:
        """The policy's weight of each legal action, checked (see ``act``'s errors)."""
        try:
            probabilities = dict(self.thing.action_probabilities(state, player))
        except KeyError as error:
            raise OpenSpielAgentError(
                f"{self.name} playing {AGENTS[player]}: the policy has no entry for this "
                f"information state ({type(error).__name__}: {error})"
            ) from None
        except (TypeError, ValueError) as error:
            raise OpenSpielAgentError(
                f"{self.name}: action_probabilities gave no mapping of action to probability "
                f"({type(error).__name__}: {error})"
            ) from None
        illegal = {
            int(a): float(p)
            for a, p in probabilities.items()
            if int(a) not in legal_actions and p > 0
        }
        if illegal:
            raise OpenSpielAgentError(
                f"{self.name} playing {AGENTS[player]} gave probability to illegal action(s) "
                f"{sorted(illegal)}; legal: {legal_actions}"
            )
        weights = np.array([float(probabilities.get(a, 0.0)) for a in legal_actions])
        if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
            raise OpenSpielAgentError(
                f"{self.name} playing {AGENTS[player]} gave no probability to any legal action "
                f"(legal: {legal_actions}; it gave {dict(sorted(probabilities.items()))})"
            )
        return weights

    def _from_bot(self, state: Any, player: int, legal_actions: list[int]) -> int:
        answer = self.thing.step(state)
        try:
            action = operator.index(answer)
        except TypeError:
            action = None
        if action in legal_actions:
            return int(action)
        said = f"action {answer!r}"
        if action is not None and 0 <= action < NUM_ACTIONS:
            said = f"action {action} ({action_name(action)})"
        raise OpenSpielAgentError(
            f"{self.name} playing {AGENTS[player]} chose {said}, which is not a legal action; "
            f"legal: {legal_actions}{self._seat_note(player)}"
        )

    def _seat_note(self, player: int) -> str:
        """Why a bot bound to the other seat gives no legal action, when it is so."""
        try:
            bound = int(self.thing.player_id())
        except Exception:  # noqa: BLE001 - no player_id, or the bot's own accessor failing
            return ""
        if bound == player or bound not in range(len(AGENTS)):
            return ""
        return (
            f"; this bot is bound to player {bound} ({AGENTS[bound]}) and plays that seat only: "
            "give one bot per role as jekyll=A,hyde=B"
        )


def openspiel_agent(
    thing: Any, deterministic: bool = True, name: str | None = None
) -> OpenSpielAgent:
    """An agent playing an OpenSpiel policy or bot held in memory (see the module docstring).

    Args:
        thing: an OpenSpiel policy (``action_probabilities(state, player)``) or bot
            (``step(state)``), used as it is.
        deterministic: policies play their most probable legal action (True) or
            sample; bots play as they do.
        name: the agent's name in reports (default: ``openspiel:`` and the class
            name).

    Returns:
        The ``OpenSpielAgent``.

    Raises:
        OpenSpielAgentError: neither a policy nor a bot, or a policy of another game.
        OpenSpielMissingError: OpenSpiel is not installed.
    """
    return OpenSpielAgent(thing, deterministic, name)
