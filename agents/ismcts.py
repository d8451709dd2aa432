"""Single-observer information-set MCTS (Cowling, Powley and Whitehouse, 2012).

Each simulation determinises: ``sample_world`` deals a full state consistent
with the searching player's view, so the search never sees hidden cards. One
tree, keyed by action, holds both players' moves; a child is selected by UCT
among the actions legal in the current determinisation, with the parent's
visit count replaced by the child's availability count (how often it was
legal when its parent was reached). Rollouts play uniformly random legal
actions to the end of the game on the C rules core (``jekyll_hyde_agents.rollout``), or
follow ``HeuristicAgent`` on the Python engine (``rollout="heuristic"``). With
random rollouts the whole loop runs in C (``_rollout.ismcts``); the Python
loop here is its reference and the fallback without the compiled core. A
result counts 1 for the player who won, 0 for the other, from the point of
view of the player who made each move.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np

from jekyll_hyde_agents.heuristic import HeuristicAgent
from jekyll_hyde_agents.rollout import (
    GAME_OVER,
    SEED_BOUND,
    PythonCore,
    core_available,
    core_for,
    core_ismcts,
    core_phase,
    core_to_act,
    core_winner,
    search_spec,
)
from jekyll_hyde_env.engine.cards import mask_to_ids
from jekyll_hyde_env.engine.information import info_key, player_view, sample_world
from jekyll_hyde_env.engine.rules import apply_action, legal_actions
from jekyll_hyde_env.engine.state import GameState, PlayerView

FINAL_POLICIES = ("most_visited", "max_value")
ROLLOUT_POLICIES = ("random", "heuristic")
_CHUNK = 1024


@dataclass(frozen=True)
class ISMCTSConfig:
    """Search settings.

    Attributes:
        num_simulations: simulations per decision (at most).
        uct_c: exploration constant of UCT, for results in [0, 1].
        time_budget: seconds per decision; the search stops at whichever of the
            two budgets comes first. None: simulations only.
        final_policy: ``"most_visited"`` (robust child) or ``"max_value"``.
        rollout: ``"random"`` playouts on the C core (fast), or ``"heuristic"``
            playouts by ``HeuristicAgent`` for both players on the Python engine
            (about two orders of magnitude fewer simulations per second).
        verify_worlds: check that every sampled world gives back the searching
            player's view (a guard on ``sample_world``; costs about 5%).
    """

    num_simulations: int = 1000
    uct_c: float = 0.7
    time_budget: float | None = None
    final_policy: str = "most_visited"
    rollout: str = "random"
    verify_worlds: bool = False

    def __post_init__(self) -> None:
        if self.num_simulations < 1:
            raise ValueError(f"num_simulations must be >= 1, got {self.num_simulations}")
        if self.uct_c < 0:
            raise ValueError(f"uct_c must be >= 0, got {self.uct_c}")
        if self.time_budget is not None and self.time_budget <= 0:
            raise ValueError(f"time_budget must be positive or None, got {self.time_budget}")
        if self.final_policy not in FINAL_POLICIES:
            raise ValueError(f"final_policy {self.final_policy!r} is not one of {FINAL_POLICIES}")
        if self.rollout not in ROLLOUT_POLICIES:
            raise ValueError(f"rollout {self.rollout!r} is not one of {ROLLOUT_POLICIES}")


_PLAYOUT_AGENT = HeuristicAgent()


def _heuristic_playout(state: GameState) -> int:
    """Both players follow ``HeuristicAgent`` to the end; returns the winner."""
    game = state.clone()
    while game.phase != GAME_OVER:
        player = game.to_act
        apply_action(game, _PLAYOUT_AGENT.act(player_view(game, player), legal_actions(game)))
    return game.winner


@functools.lru_cache(maxsize=8)
def _uct_tables(size: int) -> tuple[list[float], list[float]]:
    """sqrt(log(n)) and 1 / sqrt(n) for n < size: UCT's terms, looked up, not computed."""
    sqrt_log = [0.0] + [math.sqrt(math.log(k)) for k in range(1, size)]
    inv_sqrt = [0.0] + [1 / math.sqrt(k) for k in range(1, size)]
    return sqrt_log, inv_sqrt


class _Node:
    """Statistics of one action in the tree, for the player who took it."""

    __slots__ = ("player", "visits", "wins", "available", "children", "child_mask")

    def __init__(self, player: int):
        self.player = player
        self.visits = 0
        self.wins = 0
        self.available = 1
        self.children: dict[int, _Node] = {}
        self.child_mask = 0


class ISMCTSAgent:
    """Plays the action most visited by SO-ISMCTS from its own view.

    Args:
        config: how the search runs (default: ``ISMCTSConfig()``).
        seed: seeds the generator each search draws its random numbers from.
    """

    def __init__(self, config: ISMCTSConfig | None = None, seed: int | None = None):
        self.config = config or ISMCTSConfig()
        self._rng = np.random.default_rng(seed)
        self.last_simulations = 0

    @property
    def name(self) -> str:
        budget = self.config.time_budget
        return f"ismcts:{budget:g}s" if budget else f"ismcts:{self.config.num_simulations}"

    def reset(self, seed: int | None = None) -> None:
        """Reseed the generator the searches draw from.

        Args:
            seed: the new seed; None keeps the generator as it is.
        """
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    @property
    def search_rng(self) -> np.random.Generator:
        """The generator each search draws its seed from (``reset`` replaces it)."""
        return self._rng

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The legal action the search from ``view`` prefers (``config.final_policy``).

        Args:
            view: what the player to act knows; the worlds searched are dealt
                from it.
            legal_actions: the ids of the legal actions.

        Returns:
            The most visited legal action (ties to the lower id), or with
                ``final_policy="max_value"`` the one with the highest win rate; a
                single legal action is played without search.
        """
        if len(legal_actions) == 1:
            self.last_simulations = 0
            return legal_actions[0]
        root = self.search(view)
        stats = root.children
        if self.config.final_policy == "most_visited":
            return max(
                legal_actions, key=lambda a: (stats[a].visits, -a) if a in stats else (-1, 0)
            )
        return max(
            legal_actions,
            key=lambda a: stats[a].wins / stats[a].visits if a in stats else -1.0,
        )

    def search(self, view: PlayerView) -> _Node:
        """Run the simulations from ``view``; returns the root of the tree.

        With random rollouts and the C core built, the whole search runs in C
        (``_rollout.ismcts``, the same algorithm, several times faster);
        otherwise, and when ``verify_worlds`` asks for the check of every
        world, it runs here in Python.

        Args:
            view: what the player to act knows; each simulation deals a world
                consistent with it.

        Returns:
            The root of the tree: its ``children`` map each action tried to that
                action's statistics (``visits``, ``wins`` for the player who took
                it, ``available``).

        Raises:
            AssertionError: with ``verify_worlds``, a dealt world that does not
                match ``view``.
        """
        config = self.config
        if config.rollout == "random" and not config.verify_worlds and core_available():
            return self._search_in_core(view)
        return self._search_in_python(view)

    def _search_in_core(self, view: PlayerView) -> _Node:
        config = self.config
        visits, wins, available, done = core_ismcts(
            search_spec(view),
            config.num_simulations,
            config.uct_c,
            int(self._rng.integers(SEED_BOUND)),
            config.time_budget or 0.0,
        )
        root = _Node(-1)
        for action, count in enumerate(visits):
            if count:
                child = _Node(view.player)
                child.visits, child.wins, child.available = count, wins[action], available[action]
                root.children[action] = child
                root.child_mask |= 1 << action
        self.last_simulations = done
        return root

    def _search_in_python(self, view: PlayerView) -> _Node:
        config = self.config
        rng = self._rng
        deadline = None if config.time_budget is None else time.perf_counter() + config.time_budget
        n = config.num_simulations
        key = info_key(view) if config.verify_worlds else None
        root = _Node(-1)
        c = config.uct_c
        sqrt_log, inv_sqrt = _uct_tables(n + 2)
        heuristic_rollouts = config.rollout == "heuristic"
        done = 0
        for i in range(n):
            if i % _CHUNK == 0:  # random numbers drawn in chunks: a time budget may stop early
                if deadline is not None and i and time.perf_counter() > deadline:
                    break
                size = min(_CHUNK, n - i)
                uniforms = rng.random(size).tolist()
                seeds = rng.integers(SEED_BOUND, size=size).tolist()
            elif deadline is not None and i & 31 == 0 and time.perf_counter() > deadline:
                break
            u, seed = uniforms[i % _CHUNK], seeds[i % _CHUNK]
            world = sample_world(view, rng)
            if key is not None and info_key(player_view(world, view.player)) != key:
                raise AssertionError("sample_world returned a world that does not match the view")
            core, state = (PythonCore, world) if heuristic_rollouts else core_for(world)
            node = root
            path = []
            while core_phase(state) != GAME_OVER:
                mask = core.legal_mask(state)
                player = core_to_act(state)
                untried = mask & ~node.child_mask
                if untried:
                    ids = mask_to_ids(untried)
                    action = ids[int(u * len(ids))]
                    child = _Node(player)
                    node.children[action] = child
                    node.child_mask |= 1 << action
                    state = core.apply(state, action)
                    path.append(child)
                    break
                best: int | None = None
                best_score = -1.0
                children = node.children
                for action in mask_to_ids(mask):
                    child = children[action]
                    child.available += 1
                    visits = child.visits
                    score = child.wins / visits + c * sqrt_log[child.available] * inv_sqrt[visits]
                    if score > best_score:
                        best_score = score
                        best = action
                assert best is not None  # a score is at least 0: the first action beats -1
                node = children[best]
                state = core.apply(state, best)
                path.append(node)
            if core_phase(state) == GAME_OVER:
                winner = core_winner(state)
            elif heuristic_rollouts:
                winner = _heuristic_playout(state)
            else:
                winner = core.rollouts(state, seed, 1)  # 1 when Hyde won the playout
            for child in path:
                child.visits += 1
                if child.player == winner:
                    child.wins += 1
            done += 1
        self.last_simulations = done
        return root
