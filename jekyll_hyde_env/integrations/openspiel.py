"""Jekyll vs Hyde as an OpenSpiel game: ``pyspiel.load_game("python_jekyll_hyde")``.

Importing this module registers the game with OpenSpiel (``pip install
'jekyll-hyde-env[openspiel]'``). The rules are the project's engine
(``jekyll_hyde_env.engine``); this module only adds what OpenSpiel asks for.

| fact | value |
|---|---|
| dynamics, chance | sequential; explicit stochastic chance (the deals, R2.1) |
| information, utility | imperfect; zero-sum, terminal rewards -1/+1 (R4) |
| players | 2: player 0 is Jekyll, player 1 is Hyde |
| actions | the 28 of RULES.md "Decision points": 0-24 a card, 25-27 declare a colour |
| chance outcomes | card ids 0-24 (at most 25 at a node) |
| ``max_game_length`` | 132 decisions (OpenSpiel counts decisions only) |
| ``max_chance_nodes_in_history`` | 60 deals of a card |
| ``max_move_number()`` | 192: the longest game, chance moves included |

**Chance: each round is dealt card by card, each hand in ascending order.** At
the start of every round (R2.1) twenty chance nodes deal Jekyll's ten cards and
then Hyde's ten; the five cards left are set aside. A hand is dealt as its
cards in ascending id order: the outcome of a node is the smallest card of the
hand still to come, with probability ``C(n - i - 1, k - 1) / C(n, k)`` for the
``i``-th of the ``n`` cards that may still come when ``k`` cards remain to be
dealt. Each hand is then uniform over all hands, as a shuffle makes it (every
deal has probability ``1 / (C(25, 10) C(15, 10))``), and:

- a node has at most 25 outcomes, few enough for OpenSpiel's tools that
  enumerate or sample chance (one node per deal would have about 10^10);
- every deal has exactly one chance history, where dealing cards in any order
  would give each deal 10!^2 histories, so trees and serialized histories are
  that much smaller.

Rounds 2 and 3 are dealt only when they are reached, as at the table; a game
that Hyde wins in round 1 or 2 has no chance nodes for later rounds.

**Longest game.** Per round ``r``: ``2 r`` exchange picks (R2.2), 10 leads and
10 answers (T1, T3), at most 4 declarations (T2: one per potion led) and at
most 4 Greed swaps of 2 cards per player (T6b: one per trick with exactly one
potion), so ``44 + 2 r`` decisions; all three rounds give 132. Each bound is
reached together: four potions led early, each answered with a Greed card.

**Information state and observation.** Both are the player's view
(``engine.player_view``, RULES.md "What each player knows"): the tensors are
``jekyll_hyde_env.observation.encode`` of that view, laid out as its ``LAYOUT``
says (the observer's ``dict`` holds the named pieces of ``LAYOUT``), and the
strings spell the same view out in words. The view keeps the current round
whole (every trick in order, the exchange and swap cards, the potion rule) and
earlier rounds only through the marker, since every round is dealt anew, so
the information state does not recall a player's choices of earlier rounds.
At chance nodes the view shows the round being dealt with empty hands: a
player sees the new hand once it is dealt.

**Search.** ``resample_from_infostate`` draws a world consistent with a
player's view with ``engine.sample_world``, so OpenSpiel's Python ``ISMCTSBot``
(``open_spiel.python.algorithms.ismcts``) plays the game; OpenSpiel's C++ bots
cannot search Python games (see ``jekyll_hyde_agents.openspiel_bots``). A resampled state
has no OpenSpiel history (``history()`` is empty): only what the player knows
is kept.

**Errors.** An illegal action or chance outcome raises ``pyspiel.SpielError``
naming it and the legal ones. ``serialize`` / ``game.deserialize_state`` round
trip every state (OpenSpiel's serialization of Python states).
"""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "jekyll_hyde_env.integrations.openspiel needs OpenSpiel: install the 'openspiel' extra, "
        "pip install 'jekyll-hyde-env[openspiel]'"
    ) from error

from jekyll_hyde_env.engine.cards import (
    AGENTS,
    COLOUR_NAMES,
    GREED_SWAP_SIZE,
    HAND_SIZE,
    MAX_ROUNDS,
    NUM_ACTIONS,
    NUM_CARDS,
    NUM_POTIONS,
    PHASE_NAMES,
    TRICKS_PER_ROUND,
    action_name,
    card_name,
    ids_to_mask,
    mask_to_ids,
)
from jekyll_hyde_env.engine.information import player_view, sample_world
from jekyll_hyde_env.engine.render import cards_line, ranks_line, track_line, trick_line
from jekyll_hyde_env.engine.rules import (
    IllegalActionError,
    apply_action,
    is_terminal,
    legal_actions,
    returns,
    start_from_masks,
)
from jekyll_hyde_env.engine.state import GameState, PlayerView
from jekyll_hyde_env.engine.variant import Variant, parse_variant
from jekyll_hyde_env.observation import LAYOUT, OBS_SIZE, OFFSETS, encode

GAME_NAME = "python_jekyll_hyde"
DEAL_SIZE = 2 * HAND_SIZE  # chance nodes per round: Jekyll's hand, then Hyde's (R2.1)
MAX_CHANCE_NODES = MAX_ROUNDS * DEAL_SIZE
# Per round r: 2r exchange picks (R2.2), a lead and an answer per trick (T1, T3), a
# declaration per potion led (T2) and a swap of 2 cards each per Greed effect (T6b).
MAX_DECISIONS = sum(
    2 * r + 2 * TRICKS_PER_ROUND + NUM_POTIONS + NUM_POTIONS * 2 * GREED_SWAP_SIZE
    for r in range(1, MAX_ROUNDS + 1)
)
_UNDEALT = (0, 0)  # the (Jekyll, Hyde) hands of a round not dealt yet

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Jekyll vs Hyde",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=len(AGENTS),
    min_num_players=len(AGENTS),
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"variant": "full"},
)


def _max_decisions(variant: Variant) -> int:
    """The longest game of ``variant``, in decisions (``MAX_DECISIONS`` for the full game):
    per round, both players' exchange picks, a lead and an answer per trick, a
    declaration per potion led and a swap of two cards each per Greed effect."""
    potions = len(variant.potions)
    return sum(
        2 * given + 2 * variant.hand_size + potions + potions * 2 * GREED_SWAP_SIZE
        for given in variant.exchange
    )


def _game_info(variant: Variant) -> pyspiel.GameInfo:
    return pyspiel.GameInfo(
        num_distinct_actions=NUM_ACTIONS,
        max_chance_outcomes=NUM_CARDS,
        num_players=len(AGENTS),
        min_utility=-1.0,
        max_utility=1.0,
        utility_sum=0.0,
        max_game_length=_max_decisions(variant),
    )


class _World:
    """Holds the engine state; copying it copies the state with ``GameState.clone``.

    OpenSpiel clones a Python state by deep-copying its attributes; ``clone``
    is the one copy the engine needs, and much faster than a deep copy.
    """

    __slots__ = ("state",)

    def __init__(self, state: GameState):
        self.state = state

    def __deepcopy__(self, memo: dict) -> _World:
        return _World(self.state.clone())

    def __getstate__(self) -> GameState:
        return self.state

    def __setstate__(self, state: GameState) -> None:
        self.state = state


def _round_to_deal(state: GameState, deal: tuple[int, int] = _UNDEALT) -> GameState:
    """``state``'s current round started afresh with ``deal``; later rounds undealt.

    The history and the finished rounds carry over; everything else is what the
    engine sets at the start of a round (R2.1, R2.2, R3).
    """
    variant = state.variant
    deals = list(state.deals[: state.round - 1]) + [deal]
    deals += [_UNDEALT] * (variant.rounds - len(deals))
    fresh = start_from_masks(deals, state.round, state.marker, variant)
    fresh.history = state.history
    fresh.round_log = state.round_log
    return fresh


class JekyllHydeGame(pyspiel.Game):
    """Jekyll vs Hyde for OpenSpiel (see the module docstring for its facts).

    Args:
        params: OpenSpiel game parameters: ``{"variant": NAME}``, a preset (``full``,
            the default, ``small``, ``tiny``) or ``key=value`` pairs
            (``engine.variant.parse_variant``), as in
            ``pyspiel.load_game("python_jekyll_hyde", {"variant": "tiny"})``.

    Raises:
        pyspiel.SpielError: an unknown or impossible variant, naming it.
    """

    def __init__(self, params: dict[str, Any] | None = None):
        params = dict(params or {})
        try:
            self.variant = parse_variant(str(params.get("variant", "full")))
        except ValueError as error:
            raise pyspiel.SpielError(str(error)) from None
        params["variant"] = self.variant.name
        super().__init__(_GAME_TYPE, _game_info(self.variant), params)

    def new_initial_state(self) -> JekyllHydeState:
        """The start of a game: a chance node dealing round 1.

        Returns:
            A new state whose ``current_player()`` is ``pyspiel.PlayerId.CHANCE``
            (-1), about to deal Jekyll's first card.
        """
        return JekyllHydeState(self)

    def max_chance_nodes_in_history(self) -> int:
        """Twenty card deals per round, three rounds at most (R1, R2.1; V2, V3).

        Returns:
            60 in the full game, the most chance nodes a game's history holds; a
            variant's rounds times twice its hand size.
        """
        return self.variant.rounds * 2 * self.variant.hand_size

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> JekyllHydeObserver:
        """An observer of one player's view (see ``JekyllHydeObserver``).

        Args:
            iig_obs_type: OpenSpiel's ``IIGObservationType``, or None; only one
                player's private and public information is supported.
            params: observer parameters; there are none, so None or empty.

        Returns:
            A new ``JekyllHydeObserver``.

        Raises:
            ValueError: parameters were given, or another observation type.
        """
        return JekyllHydeObserver(iig_obs_type, params)

    def state_from_world(self, world: GameState) -> JekyllHydeState:
        """An OpenSpiel state at the decision node of the engine state ``world``.

        ``world`` may come from ``engine.sample_world``: it needs no history. The
        returned state's OpenSpiel ``history()`` is empty. ``world`` is not copied.

        Args:
            world: an engine state, at a decision node or over; the new state
                holds it and changes it as actions are applied.

        Returns:
            A state of this game at ``world``, with no deal under way.
        """
        state = self.new_initial_state()
        state._world = _World(world)
        state._deal = None
        return state


class JekyllHydeState(pyspiel.State):
    """A game in progress: the engine state, and the cards of a deal under way.

    Args:
        game: the game this state belongs to. A new state is the chance node
            that deals round 1.
    """

    def __init__(self, game: JekyllHydeGame):
        super().__init__(game)
        variant = game.variant
        self._hand_size = variant.hand_size
        self._deck = mask_to_ids(variant.deck)
        self._world = _World(start_from_masks([_UNDEALT] * variant.rounds, variant=variant))
        # Card ids dealt so far in the current round (Jekyll's ascending, then
        # Hyde's), or None when no deal is under way.
        self._deal: tuple[int, ...] | None = ()

    @property
    def engine_state(self) -> GameState:
        """The engine's state of this game (not a copy)."""
        return self._world.state

    def current_player(self) -> int:
        """The player to act (0 Jekyll, 1 Hyde), ``CHANCE`` while dealing, or ``TERMINAL``.

        Returns:
            0 (Jekyll) or 1 (Hyde) at a decision node, ``pyspiel.PlayerId.CHANCE``
            (-1) while a hand is dealt, ``pyspiel.PlayerId.TERMINAL`` (-4) once
            the game is over.
        """
        if self._deal is not None:
            return pyspiel.PlayerId.CHANCE
        if is_terminal(self._world.state):
            return pyspiel.PlayerId.TERMINAL
        return self._world.state.to_act

    def _legal_actions(self, player: int) -> list[int]:
        """The engine's legal actions of the player to act, ascending."""
        return legal_actions(self._world.state)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The next card of the hand being dealt, ascending, with its probability.

        With ``k`` cards of the hand still to deal and ``n`` undealt cards above
        the hand's last card, the ``i``-th of them is the next card with
        probability ``C(n - i - 1, k - 1) / C(n, k)`` (the smallest card of a
        uniform ``k``-card subset), so every hand is uniform (R2.1).

        Returns:
            ``(card id, probability)`` pairs, ascending by card id; the
            probabilities sum to 1.

        Raises:
            pyspiel.SpielError: at a decision or terminal node.
        """
        deal = self._deal
        if deal is None:
            raise pyspiel.SpielError("chance_outcomes called at a decision or terminal node")
        size = self._hand_size
        in_hand = deal[size:] if len(deal) >= size else deal
        low = in_hand[-1] + 1 if in_hand else 0
        taken = ids_to_mask(deal)
        cards = [c for c in self._deck if c >= low and not taken >> c & 1]
        n = len(cards)
        k = size - len(in_hand)
        total = comb(n, k)
        return [(c, comb(n - i - 1, k - 1) / total) for i, c in enumerate(cards[: n - k + 1])]

    def _apply_action(self, action: int) -> None:
        """Deal a card at a chance node, or apply a decision with the engine."""
        if self._deal is not None:
            self._deal_card(self._deal, action)
            return
        state = self._world.state
        round_number = state.round
        try:
            apply_action(state, action)
        except IllegalActionError as error:
            raise pyspiel.SpielError(str(error)) from error
        if state.round != round_number:  # R2.4: a new round starts with a deal
            self._world.state = _round_to_deal(state)
            self._deal = ()

    def _deal_card(self, dealt: tuple[int, ...], card: int) -> None:
        """Deal ``card`` after the cards ``dealt`` so far (``self._deal``)."""
        outcomes = [c for c, _ in self.chance_outcomes()]
        if card not in outcomes:
            hand = AGENTS[0] if len(dealt) < self._hand_size else AGENTS[1]
            raise pyspiel.SpielError(
                f"illegal chance outcome {card} while dealing {hand}'s hand in ascending "
                f"order; legal outcomes are {outcomes}"
            )
        deal = dealt + (card,)
        size = self._hand_size
        if len(deal) < 2 * size:
            self._deal = deal
            return
        hands = (ids_to_mask(deal[:size]), ids_to_mask(deal[size:]))
        self._world.state = _round_to_deal(self._world.state, hands)
        self._deal = None

    def _action_to_string(self, player: int, action: int) -> str:
        """A card dealt (``Deal wrath 5``), a card played or chosen, or a declaration."""
        if player == pyspiel.PlayerId.CHANCE:
            return f"Deal {card_name(action)}"
        return action_name(action)

    def is_terminal(self) -> bool:
        """True once a player has won (R2.4).

        Returns:
            Whether the game is over; False while a hand is dealt.
        """
        return self._deal is None and is_terminal(self._world.state)

    def returns(self) -> list[float]:
        """R4: +1 to the winner and -1 to the loser at the end, 0 before.

        Returns:
            ``[Jekyll's, Hyde's]`` return as floats: ``[1.0, -1.0]`` or
            ``[-1.0, 1.0]`` once the game is over, ``[0.0, 0.0]`` before.
        """
        return [float(r) for r in returns(self._world.state)]

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> JekyllHydeState:
        """A state drawn uniformly among those ``player_id`` cannot tell from this one.

        Args:
            player_id: whose information state to keep (0 Jekyll, 1 Hyde).
            probability_sampler: a callable returning numbers in [0, 1), such as
                ``pyspiel.UniformProbabilitySampler``; it seeds the draw, which
                ``engine.sample_world`` makes.

        Returns:
            A new state (from ``JekyllHydeGame.state_from_world``) with the same
            view for ``player_id``, the hidden cards dealt anew, and an empty
            OpenSpiel ``history()``.

        Raises:
            pyspiel.SpielError: at a chance node, or for a player id other than 0 or 1.
        """
        if self._deal is not None:
            raise pyspiel.SpielError(
                "resample_from_infostate is defined at decision and terminal nodes, "
                "not while cards are dealt"
            )
        if player_id not in (0, 1):
            raise pyspiel.SpielError(f"player_id must be 0 or 1, got {player_id}")
        rng = np.random.default_rng(int(probability_sampler() * 2**53))
        world = sample_world(player_view(self._world.state, player_id), rng)
        world.round_log = list(self._world.state.round_log)  # public: every card played
        return self.get_game().state_from_world(world)

    def __str__(self) -> str:
        """The whole state, hidden cards included (for debugging, not for players)."""
        state = self._world.state
        if self._deal is not None:
            return (
                f"Round {state.round}/{state.variant.rounds}: dealing, marker on "
                f"{state.marker}\n"
                f"Dealt  {', '.join(card_name(c) for c in self._deal) or '(nothing yet)'}"
            )
        lines = [view_string(player_view(state, p)) for p in range(len(AGENTS))]
        lines.append(f"Set aside: {cards_line(state.set_aside)}")
        if state.picks[0] | state.picks[1]:
            lines.append(f"Chosen: jekyll {state.picks[0]:#x}, hyde {state.picks[1]:#x}")
        return "\n".join(lines)


def view_string(view: PlayerView, dealing: bool = False) -> str:
    """Everything a player knows (a ``PlayerView``), in words; equal views, equal strings.

    ``dealing`` says the round's cards are being dealt (a chance node).

    Args:
        view: what one player knows (``engine.player_view``).
        dealing: True at a chance node: the heading says the cards are being
            dealt instead of naming the phase and the player to act.

    Returns:
        Several lines of text: the player, round, phase, track, ranks, trick
        counts, hands and cards seen, then the current trick and the tricks
        of the round so far.
    """
    me, opp = AGENTS[view.player], AGENTS[1 - view.player]
    if view.winner >= 0:
        head = f"Game over: {AGENTS[view.winner]} wins"
    elif dealing:
        head = "the cards are being dealt"
    else:
        head = f"phase {PHASE_NAMES[view.phase]}, {AGENTS[view.to_act]} to act"
    gave = {None: "not yet", True: "yes", False: "no"}[view.opp_gave_potion]
    lines = [
        f"I am {me}. Round {view.round}/{view.variant.rounds}, {head}",
        "Track  " + track_line(view.marker, view.variant.track_end),
        "Ranks  " + ranks_line(view.ranks),
        f"Tricks mine {view.tricks[0]}, {opp}'s {view.tricks[1]}",
        f"Hand   {cards_line(view.hand)}",
        f"Dealt  {cards_line(view.dealt)}",
        f"Chosen {cards_line(view.picks)}; {view.picks_left} to choose; "
        f"{opp} has chosen {view.opp_picks_made}",
        f"Exchange gave {cards_line(view.exch_given)}; received {cards_line(view.exch_received)}",
        f"Swaps gave {cards_line(view.swap_given)}; received {cards_line(view.swap_received)}",
        f"{opp} holds {view.opp_hand_size} cards, known: {cards_line(view.opp_known)}",
        f"Played mine {cards_line(view.played)}; {opp}'s {cards_line(view.opp_played)}",
        f"Voids mine {_colours(view.void)}; {opp}'s {_colours(view.opp_void)}",
        f"{opp} was dealt {view.opp_dealt_potions_seen} potions I saw; "
        f"gave a potion in the exchange: {gave}",
        f"Leader {AGENTS[view.leader]}",
    ]
    if view.lead_card >= 0:
        lead = f"Trick  {AGENTS[view.leader]} led {card_name(view.lead_card)}"
        if view.declared >= 0:
            lead += f", declaring {COLOUR_NAMES[view.declared]}"
        lines.append(lead)
    lines += [f"{i + 1:>2}. {trick_line(t)}" for i, t in enumerate(view.trick_log)]
    return "\n".join(lines)


def _colours(bits: int) -> str:
    return ", ".join(COLOUR_NAMES[c] for c in range(len(COLOUR_NAMES)) if bits >> c & 1) or "none"


class JekyllHydeObserver:
    """OpenSpiel's Python observer of one player's view.

    ``tensor`` is ``observation.encode(view)`` as float32, and ``dict`` maps each
    piece name of ``observation.LAYOUT`` to its slice of ``tensor``. Both the
    information state and the observation use it (see the module docstring).

    Args:
        iig_obs_type: OpenSpiel's ``IIGObservationType``, or None for the default;
            it must ask for public information and one player's private
            information (``perfect_recall`` True or False: the view is the same).
        params: observer parameters; there are none, so None or empty.

    Raises:
        ValueError: parameters were given, or an observation type other than one
            player's private and public information was asked for.
    """

    def __init__(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None):
        if params:
            raise ValueError(f"{GAME_NAME} observers take no parameters, got {params}")
        if iig_obs_type is not None and (
            not iig_obs_type.public_info
            or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError(
                f"{GAME_NAME} observes one player's view: IIGObservationType with "
                "public_info=True and private_info=SINGLE_PLAYER (perfect_recall True or "
                f"False) is supported, got public_info={iig_obs_type.public_info}, "
                f"private_info={iig_obs_type.private_info}"
            )
        self.tensor = np.zeros(OBS_SIZE, np.float32)
        self.dict = {name: self.tensor[OFFSETS[name]] for name, _, _ in LAYOUT}

    def set_from(self, state: JekyllHydeState, player: int) -> None:
        """Write ``player``'s view of ``state`` into ``tensor``.

        Args:
            state: the OpenSpiel state to observe.
            player: 0 Jekyll, 1 Hyde.
        """
        self.tensor[:] = encode(player_view(state._world.state, player))

    def string_from(self, state: JekyllHydeState, player: int) -> str:
        """``player``'s view of ``state`` in words (``view_string``).

        Args:
            state: the OpenSpiel state to observe.
            player: 0 Jekyll, 1 Hyde.

        Returns:
            ``view_string`` of the player's view, the same text as the state's
            information state and observation strings.
        """
        return view_string(player_view(state._world.state, player), state._deal is not None)


pyspiel.register_game(_GAME_TYPE, JekyllHydeGame)
