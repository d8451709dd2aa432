"""Random playouts for search, on the fast C rules core when it is built.

``jekyll_hyde_agents._rollout`` runs search in C over the project's C rules core
(``jekyll_hyde_env/core/jh_rules.h``, shared with the batched environment), so
that search can play thousands of random games per second; the core is checked
against ``jekyll_hyde_env.engine`` by ``tests/test_rollout_core.py``. A state
crosses into C as a tuple of ints made by ``to_core``, a player's view as the
tuple made by ``search_spec``, from which ``_rollout.ismcts`` runs a whole
search (checked against the Python search by ``tests/test_ismcts_core.py``).
Without the compiled module, the same functions run on the Python engine,
only slower.
"""

from __future__ import annotations

import numpy as np

from jekyll_hyde_env.engine import rules
from jekyll_hyde_env.engine.cards import GREED_SWAP_SIZE, HYDE, Phase
from jekyll_hyde_env.engine.information import hidden_cards
from jekyll_hyde_env.engine.state import GameState, PlayerView
from jekyll_hyde_env.engine.variant import FULL

try:
    # a C extension (agents/_rollout.c): mypy reads no .so, and it has no stub
    from jekyll_hyde_agents import _rollout as _core  # type: ignore[attr-defined]
except ImportError:  # not compiled: fall back to the Python engine
    _core = None

GAME_OVER = int(Phase.GAME_OVER)
EXCHANGE = int(Phase.EXCHANGE)
SWAP = int(Phase.SWAP)
SEED_BOUND = 2**63
"""Seeds of the C searches are drawn below this bound (they are uint64 in C)."""
MOVE_POLICIES = {"random": 0, "lowest": 1, "heuristic": 2}
"""The fixed policies the C search can play a player's moves by (its ``TARGET_*``
kinds): a best-response target's moves, or the moves of a playout."""


def core_available() -> bool:
    """True when the compiled rules core is importable.

    Returns:
        Whether ``jekyll_hyde_agents._rollout`` was imported; without it the C
        searches are unavailable and playouts run on the Python engine.
    """
    return _core is not None


def core_ismcts(spec: tuple[int, ...], n: int, c: float, seed: int, budget: float):
    """``_rollout.ismcts``: (visits, wins, available by action, simulations run).

    Args:
        spec: the searching player's view in the core's form (``search_spec``).
        n: the most simulations to run.
        c: the UCT exploration constant.
        seed: seeds the search's generator, from 0 to ``SEED_BOUND`` (excluded).
        budget: the most seconds to search; 0 for no limit.

    Returns:
        The tuple ``(visits, wins, available, simulations)``: the first three are 28
        counts each, the root's statistics for each action (its visits, the root
        player's wins through it, and the simulations in which it was legal; 0 for
        an action never tried), and ``simulations`` the number run.
    """
    return _core.ismcts(spec, n, c, seed, budget)


def _pack_ranks(ranks) -> int:
    """Colour ranks, weakest first, as the core packs them: count * 64 + r0 + 4 r1 + 16 r2."""
    packed = len(ranks) << 6
    for i, colour in enumerate(ranks):
        packed |= colour << (2 * i)
    return packed


def to_core(state: GameState) -> tuple[int, ...]:
    """The core's tuple form of a state (``jekyll_hyde_env/core/jh_pystate.h`` lists the fields).

    Args:
        state: the full game state to convert; it is not changed.

    Returns:
        The state as 34 ints, in the order ``jh_pystate.h`` reads them, then, in a
        smaller variant, the variant's 8 (``Variant.core_fields``).
    """
    packed = _pack_ranks(state.ranks)
    (j0, h0), (j1, h1), (j2, h2) = (*state.deals, (0, 0), (0, 0))[:3]
    fields = (
        state.round,
        state.marker,
        state.phase,
        state.to_act,
        state.leader,
        state.hands[0],
        state.hands[1],
        state.picks[0],
        state.picks[1],
        state.picks_left[0],
        state.picks_left[1],
        int(state.potion_rule[0]),
        int(state.potion_rule[1]),
        state.lead_card,
        state.declared,
        packed,
        state.tricks[0],
        state.tricks[1],
        j0,
        h0,
        j1,
        h1,
        j2,
        h2,
        state.winner,
        state.played[0],
        state.played[1],
        state.exch_given[0],
        state.exch_given[1],
        state.swap_given[0],
        state.swap_given[1],
        state.void[0],
        state.void[1],
        len(state.trick_log),
    )
    return fields if state.variant == FULL else fields + state.variant.core_fields()


class PythonCore:
    """The core's functions over ``GameState`` objects, using the Python engine."""

    @staticmethod
    def legal_mask(state: GameState) -> int:
        """The legal actions of ``state``.

        Args:
            state: the game state.

        Returns:
            The legal action mask: bit ``i`` set when action id ``i`` is legal.
        """
        return rules.legal_action_mask(state)

    @staticmethod
    def apply(state: GameState, action: int) -> GameState:
        """The state after ``action``; ``state`` itself is not changed.

        Args:
            state: the game state.
            action: a legal action id of ``state`` (0-27).

        Returns:
            A new state, with ``action`` applied.
        """
        child = state.clone()
        rules.apply_action(child, action)
        return child

    @staticmethod
    def rollouts(state: GameState, seed: int, n: int) -> int:
        """Play ``n`` games from ``state`` to the end by uniformly random legal moves.

        Args:
            state: the game state the playouts start from; it is not changed.
            seed: seeds the playouts' generator.
            n: the number of playouts.

        Returns:
            The number of playouts Hyde won (0 to ``n``).
        """
        rng = np.random.default_rng(seed)
        hyde_wins = 0
        for _ in range(n):
            game = state.clone()
            while game.phase != GAME_OVER:
                moves = rules.legal_actions(game)
                rules.apply_action(game, moves[int(rng.integers(len(moves)))])
            hyde_wins += game.winner == HYDE
        return hyde_wins


def search_spec(view: PlayerView) -> tuple[int, ...]:
    """The core's form of a view for ``ismcts`` and ``determinise``.

    It carries the view's public state and the player's own side, and what
    ``sample_world`` needs to re-deal the rest: the opponent's known cards,
    the cards it may hold (``hidden_cards``), the cards it has been seen with,
    and its pending picks; then the round's public record (cards played,
    given and received, voids, tricks played). The fields are listed in ``_rollout.c``'s ``Spec``.

    Args:
        view: what the searching player knows.

    Returns:
        The view as 32 ints, in the order of ``Spec``, then, in a smaller variant, the
        variant's 8 (``Variant.core_fields``).
    """
    hidden = hidden_cards(view)
    if view.phase == EXCHANGE:
        required = view.variant.exchange[view.round - 1]
    elif view.phase == SWAP:
        required = min(GREED_SWAP_SIZE, view.opp_hand_size)
    else:
        required = 0
    fields = (
        view.player,
        view.round,
        view.marker,
        view.phase,
        view.to_act,
        view.leader,
        view.hand,
        view.dealt,
        view.picks,
        view.picks_left,
        view.lead_card,
        view.declared,
        _pack_ranks(view.ranks),
        view.tricks[0],
        view.tricks[1],
        view.winner,
        view.opp_known,
        hidden.allowed,
        hidden.opp_unknown_size,
        hidden.max_potions,
        view.opp_played | view.exch_received | view.swap_received,
        view.opp_picks_made if required else 0,
        required,
        view.played,
        view.opp_played,
        view.exch_given,
        view.exch_received,
        view.swap_given,
        view.swap_received,
        view.void,
        view.opp_void,
        len(view.trick_log),
    )
    return fields if view.variant == FULL else fields + view.variant.core_fields()


def core_for(state: GameState):
    """(module with legal_mask/apply/rollouts, state in that module's form).

    Args:
        state: the game state; it is not changed.

    Returns:
        core: the compiled core ``_rollout`` when it is built, else ``PythonCore``.
        core_state: ``state`` in that core's form: ``to_core(state)``'s tuple, or
            ``state`` itself for ``PythonCore``.
    """
    if _core is not None:
        return _core, to_core(state)
    return PythonCore, state


def core_phase(core_state) -> int:
    """Phase of a core state of either form.

    Args:
        core_state: a state from ``core_for``: the C core's tuple or a ``GameState``.

    Returns:
        The phase number (a ``Phase`` value, 0-5; 5 is the game's end).
    """
    return core_state[2] if isinstance(core_state, tuple) else core_state.phase


def core_to_act(core_state) -> int:
    """Player to act in a core state of either form (-1 when the game is over).

    Args:
        core_state: a state from ``core_for``: the C core's tuple or a ``GameState``.

    Returns:
        0 for Jekyll, 1 for Hyde, -1 when the game is over.
    """
    return core_state[3] if isinstance(core_state, tuple) else core_state.to_act


def core_winner(core_state) -> int:
    """Winner of a finished core state of either form.

    Args:
        core_state: a state from ``core_for``: the C core's tuple or a ``GameState``.

    Returns:
        0 for Jekyll, 1 for Hyde; -1 while the game is not over.
    """
    return core_state[24] if isinstance(core_state, tuple) else core_state.winner
