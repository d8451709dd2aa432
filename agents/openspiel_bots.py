"""OpenSpiel's search bots as arena agents: ``openspiel-ismcts:N`` and ``openspiel-mcts:N``.

Both search the OpenSpiel game of ``jekyll_hyde_env.integrations.openspiel`` with N
simulations per decision, each simulation ending in one random rollout, with
OpenSpiel's Python bots (``open_spiel.python.algorithms``):

- ``openspiel-ismcts:N``: OpenSpiel's ``ISMCTSBot`` (information-set MCTS). Each
  simulation starts from a world drawn from the player's view by the game's
  ``resample_from_infostate`` (``engine.sample_world``), seeded by the agent.
- ``openspiel-mcts:N``: OpenSpiel's ``MCTSBot``, a perfect-information search,
  run on one world drawn from the player's view at each decision (a single
  determinisation): it never sees the real hidden cards, and it plans as if the
  drawn world were true.

OpenSpiel's C++ bots do not serve here: in OpenSpiel 2.0.2 the C++ ``MCTSBot``
and ``ISMCTSBot`` end Python with a segmentation fault on any Python game
(OpenSpiel's own ``python_tic_tac_toe`` included), and the C++ ``ISMCTSBot`` has
no way to call a Python game's resampler.
OpenSpiel is imported when an agent is built, so ``agents`` imports without it;
building one without OpenSpiel raises ``OpenSpielMissingError`` naming the extra.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jekyll_hyde_agents.base import parse_budget
from jekyll_hyde_env.engine.information import sample_world
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.engine.variant import FULL, Variant

DEFAULT_SIMULATIONS = 100
UCT_C = 2.0  # exploration constant of OpenSpiel's examples; returns are -1/+1 (R4)
KINDS = ("ismcts", "mcts")


class OpenSpielMissingError(ImportError, ValueError):
    """OpenSpiel is not installed; the message names the extra that installs it.

    A ``ValueError`` too, so the command line reports it like any bad agent name.
    """


def load_game(variant: Variant = FULL) -> Any:
    """``pyspiel.load_game("python_jekyll_hyde")``, registering the game first.

    Args:
        variant: the version of the game (RULES.md V1-V7), its ``variant`` parameter.

    Returns:
        The OpenSpiel game of ``jekyll_hyde_env.integrations.openspiel``.

    Raises:
        OpenSpielMissingError: OpenSpiel (``open_spiel``) is not installed.
    """
    try:
        import pyspiel  # lazy: the openspiel extra

        from jekyll_hyde_env.integrations import openspiel  # lazy: it imports pyspiel
    except ImportError as error:
        raise OpenSpielMissingError(
            "the openspiel-* agents need OpenSpiel, which is not installed: install the "
            "'openspiel' extra, pip install 'jekyll-hyde-env[openspiel]'"
        ) from error
    if variant == FULL:
        return pyspiel.load_game(openspiel.GAME_NAME)
    return pyspiel.load_game(openspiel.GAME_NAME, {"variant": variant.name})


class OpenSpielBotAgent:
    """An OpenSpiel search bot behind the ``Agent`` interface.

    Args:
        kind: ``"ismcts"`` or ``"mcts"`` (see the module docstring).
        simulations: simulations per decision.
        uct_c: the UCT exploration constant.

    Raises:
        ValueError: an unknown kind or a simulation count below 1.
        OpenSpielMissingError: OpenSpiel is not installed.
    """

    def __init__(self, kind: str, simulations: int = DEFAULT_SIMULATIONS, uct_c: float = UCT_C):
        if kind not in KINDS:
            raise ValueError(f"unknown OpenSpiel bot {kind!r}; known: {list(KINDS)}")
        if simulations < 1:
            raise ValueError(f"simulations must be at least 1, got {simulations}")
        self.kind = kind
        self.simulations = simulations
        self.uct_c = uct_c
        self.name = f"openspiel-{kind}:{simulations}"
        self._game = load_game()
        self.reset(None)

    def reset(self, seed: int | None = None) -> None:
        """Seed the world draws and the bot's own randomness (tree policy, rollouts).

        Args:
            seed: seeds the world draws, and through them the bot; None draws fresh
                randomness.
        """
        from open_spiel.python.algorithms import ismcts, mcts  # lazy: the openspiel extra

        self._rng = np.random.default_rng(seed)
        random_state = np.random.RandomState(self._rng.integers(2**31))
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state)
        if self.kind == "ismcts":
            self._bot = ismcts.ISMCTSBot(
                self._game, evaluator, self.uct_c, self.simulations, random_state=random_state
            )
            sampler = self._rng.random
            self._bot.set_resampler(
                lambda state, player: state.resample_from_infostate(player, sampler)
            )
        else:
            self._bot = mcts.MCTSBot(
                self._game, self.uct_c, self.simulations, evaluator, random_state=random_state
            )

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The bot's move from a world drawn from ``view`` (the real hidden cards are unseen).

        Args:
            view: what the player to act knows; the hidden cards are re-dealt from it.
            legal_actions: the ids of the legal actions.

        Returns:
            The bot's action id; the only legal one, unsearched, when there is a
            single one.

        Raises:
            RuntimeError: the bot chose an action that is not legal.
        """
        if len(legal_actions) == 1:
            return legal_actions[0]
        state = self._game.state_from_world(sample_world(view, self._rng))
        action = int(self._bot.step(state))
        if action not in legal_actions:
            raise RuntimeError(
                f"{self.name} chose action {action}, which is not legal; legal: {legal_actions}"
            )
        return action


def _parse(kind: str, argument: str | None) -> OpenSpielBotAgent:
    name = f"openspiel-{kind}"
    simulations, seconds = parse_budget(argument, name, DEFAULT_SIMULATIONS)
    if seconds is not None:
        raise ValueError(
            f"'{name}:{argument}': OpenSpiel's bots take a number of simulations per "
            f"decision, such as '{name}:100', not a time"
        )
    assert simulations is not None  # parse_budget gives a count or seconds
    return OpenSpielBotAgent(kind, simulations)


def openspiel_ismcts(argument: str | None) -> OpenSpielBotAgent:
    """``openspiel-ismcts:N``: OpenSpiel's ISMCTS with N simulations per decision.

    Args:
        argument: the text after ``openspiel-ismcts:``: a positive whole number of
            simulations, or None for ``DEFAULT_SIMULATIONS``.

    Returns:
        The agent, with fresh randomness until ``reset(seed)`` seeds it.

    Raises:
        ValueError: the argument is not a positive whole number (seconds are refused).
        OpenSpielMissingError: OpenSpiel is not installed.
    """
    return _parse("ismcts", argument)


def openspiel_mcts(argument: str | None) -> OpenSpielBotAgent:
    """``openspiel-mcts:N``: OpenSpiel's MCTS on one world drawn from the view, N simulations.

    Args:
        argument: the text after ``openspiel-mcts:``: a positive whole number of
            simulations, or None for ``DEFAULT_SIMULATIONS``.

    Returns:
        The agent, with fresh randomness until ``reset(seed)`` seeds it.

    Raises:
        ValueError: the argument is not a positive whole number (seconds are refused).
        OpenSpielMissingError: OpenSpiel is not installed.
    """
    return _parse("mcts", argument)
