"""Perfect-information Monte Carlo (PIMC): sample worlds, solve each, vote.

For each decision, ``sample_world`` deals a full state consistent with the
player's view (as ISMCTS does), and the C rules core solves it as a game of
perfect information to the end of the current round: minimax with alpha-beta
and a transposition table (``jekyll_hyde_agents._rollout.solve_round``). Where the round
ends with the game going on, the position is worth Hyde's chance of winning
from the start of the next round with the marker where it stands, a table
estimated once by random playouts on the same core (``marker_values``). Each
solved world votes for its best actions; the action with the most votes wins,
ties going to the higher mean value.

PIMC pays for perfect information with strategy fusion: in each world it
plays as if it knew every card. Worlds that need more than ``max_nodes``
search nodes are given up. Early in a round (and always in the exchange,
where both players' card choices multiply the tree) the first world is
usually too big; then the decision falls back to ``HeuristicAgent`` at once,
and ``last_fallback`` says so.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np

from jekyll_hyde_agents.heuristic import HeuristicAgent
from jekyll_hyde_agents.rollout import SEED_BOUND, core_available, to_core
from jekyll_hyde_env.engine.cards import HYDE, MAX_ROUNDS, TRACK_END
from jekyll_hyde_env.engine.information import sample_world
from jekyll_hyde_env.engine.rules import deal_from_rng, start_from_masks
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.engine.variant import FULL

try:
    # a C extension (agents/_rollout.c): mypy reads no .so, and it has no stub
    from jekyll_hyde_agents import _rollout as _core  # type: ignore[attr-defined]
except ImportError:  # reported by PIMCAgent when it is built
    _core = None

AGGREGATES = ("vote", "mean")
# Under a time budget, a world's node allowance is the time left times the
# search speed, measured as it goes from this cautious start (the C search
# does several million nodes per second on one core).
_INITIAL_NODES_PER_SECOND = 2_000_000
_MIN_NODES = 10_000


@dataclass(frozen=True)
class PIMCConfig:
    """Search settings.

    Attributes:
        num_worlds: worlds sampled and solved per decision (at most).
        max_nodes: search nodes allowed per world; a world needing more is
            given up.
        time_budget: seconds per decision; sampling stops at whichever budget
            comes first (at least one world is always tried), and no world may
            search for longer than the time left. None: worlds only.
        aggregate: ``"vote"`` (each world votes for its best actions) or
            ``"mean"`` (highest mean value over the worlds).
    """

    num_worlds: int = 50
    max_nodes: int = 2_000_000
    time_budget: float | None = None
    aggregate: str = "vote"

    def __post_init__(self) -> None:
        if self.num_worlds < 1:
            raise ValueError(f"num_worlds must be >= 1, got {self.num_worlds}")
        if self.max_nodes < 1:
            raise ValueError(f"max_nodes must be >= 1, got {self.max_nodes}")
        if self.time_budget is not None and self.time_budget <= 0:
            raise ValueError(f"time_budget must be positive or None, got {self.time_budget}")
        if self.aggregate not in AGGREGATES:
            raise ValueError(f"aggregate {self.aggregate!r} is not one of {AGGREGATES}")


@functools.lru_cache(maxsize=4)
def marker_values(deals: int = 200, playouts: int = 20, seed: int = 0) -> tuple[float, ...]:
    """Hyde's chance of winning from the start of round r with the marker on m.

    Estimated by uniformly random playouts on the C core, ``deals`` random deals
    times ``playouts`` playouts for each round 1..3 and space 0..9; space 10 is
    Hyde's win (1.0). Returned flat, index ``11 * r + m`` (row 0 unused), the
    form ``solve_round`` takes.

    Args:
        deals: random deals played out for each round and marker space.
        playouts: uniformly random playouts of each deal.
        seed: seeds the generator of the deals and the playouts, so equal arguments
            give an equal table (the result is cached).

    Returns:
        The 44 chances, flat: ``11 * r + m`` for round r (1-3) and marker space m
        (0-10); row 0 is all zeros and space 10 is 1.0.

    Raises:
        RuntimeError: the compiled rules core ``jekyll_hyde_agents._rollout`` is
            missing.
    """
    if _core is None:
        raise RuntimeError(
            "marker_values needs the compiled rules core jekyll_hyde_agents._rollout"
        )
    rng = np.random.default_rng(seed)
    width = TRACK_END + 1
    table = [0.0] * ((MAX_ROUNDS + 1) * width)
    for round_number in range(1, MAX_ROUNDS + 1):
        table[round_number * width + TRACK_END] = 1.0
        for marker in range(TRACK_END):
            wins = 0
            for _ in range(deals):
                later = [deal_from_rng(rng) for _ in range(MAX_ROUNDS)]
                state = start_from_masks(later, round_number, marker)
                wins += _core.rollouts(to_core(state), int(rng.integers(SEED_BOUND)), playouts)
            table[round_number * width + marker] = wins / (deals * playouts)
    return tuple(table)


class PIMCAgent:
    """Plays the action most often best over sampled, perfectly solved worlds.

    Args:
        config: how many worlds, how big and how long (default: ``PIMCConfig()``).
        seed: seeds the generator the worlds are dealt with.

    Raises:
        RuntimeError: the compiled rules core ``jekyll_hyde_agents._rollout`` is
            missing.
    """

    def __init__(self, config: PIMCConfig | None = None, seed: int | None = None):
        if not core_available():
            raise RuntimeError(
                "PIMCAgent needs the compiled rules core jekyll_hyde_agents._rollout "
                "(built by `pip install jekyll-hyde-env` or `make`)"
            )
        self.config = config or PIMCConfig()
        self._rng = np.random.default_rng(seed)
        self._fallback = HeuristicAgent()
        self.last_worlds = 0
        self.last_given_up = 0
        self.last_fallback = False
        self._nodes_per_second: float = _INITIAL_NODES_PER_SECOND

    @property
    def name(self) -> str:
        budget = self.config.time_budget
        return f"pimc:{budget:g}s" if budget else f"pimc:{self.config.num_worlds}"

    def reset(self, seed: int | None = None) -> None:
        """Reseed the generator the worlds are dealt with.

        Args:
            seed: the new seed; None keeps the generator as it is.
        """
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._fallback.reset(seed)

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The action the solved worlds favour, or ``HeuristicAgent``'s when none was solved.

        Args:
            view: what the player to act knows; the worlds are dealt from it.
            legal_actions: the ids of the legal actions.

        Returns:
            The legal action with the most votes (ties to the higher summed value,
                then the lower id), or the highest summed value with
                ``aggregate="mean"``; a single legal action is played without search.

        Raises:
            ValueError: a view of a smaller variant (this agent plays the full game).
        """
        self.last_worlds = self.last_given_up = 0
        self.last_fallback = False
        if view.variant != FULL:
            raise ValueError(
                "pimc plays the full game only: its round values (the chances at the start "
                "of each round by the marker) are the full game's; on variant "
                f"{view.variant.name} "
                "use ismcts:N, random, heuristic or a tabular strategy from jekyll-hyde solve"
            )
        if len(legal_actions) == 1:
            return legal_actions[0]
        votes, totals = self.evaluate(view, legal_actions)
        if self.last_worlds == 0:
            self.last_fallback = True
            return self._fallback.act(view, legal_actions)
        if self.config.aggregate == "mean":
            return max(legal_actions, key=lambda a: (totals[a], -a))
        return max(legal_actions, key=lambda a: (votes[a], totals[a], -a))

    def _measure_speed(self, nodes: int, seconds: float) -> None:
        """Track search nodes per second from searches long enough to time."""
        if nodes >= _MIN_NODES and seconds > 0:
            self._nodes_per_second = 0.8 * self._nodes_per_second + 0.2 * nodes / seconds

    def evaluate(self, view: PlayerView, legal_actions: list[int]) -> tuple[dict, dict]:
        """Votes and summed values (for the player to act) of each legal action.

        Args:
            view: what the player to act knows; the worlds are dealt from it.
            legal_actions: the ids of the legal actions.

        Returns:
            votes: legal action -> its votes: each solved world gives one vote,
                shared among its best actions.
            totals: legal action -> its win chances for the player to act, summed
                over the solved worlds (worlds given up count in neither).
        """
        config = self.config
        table = marker_values()
        deadline = None if config.time_budget is None else time.perf_counter() + config.time_budget
        votes = dict.fromkeys(legal_actions, 0.0)
        totals = dict.fromkeys(legal_actions, 0.0)
        hyde = view.player == HYDE
        for i in range(config.num_worlds):
            max_nodes = config.max_nodes
            if deadline is not None:
                left = deadline - time.perf_counter()
                if i and left <= 0:
                    break
                # A world may use what is left of the budget at the measured search speed.
                max_nodes = min(max_nodes, max(_MIN_NODES, int(left * self._nodes_per_second)))
            world = sample_world(view, self._rng)
            start = time.perf_counter()
            values, nodes = _core.solve_round(to_core(world), table, max_nodes)
            self._measure_speed(nodes, time.perf_counter() - start)
            if values is None:
                self.last_given_up += 1
                if self.last_worlds == 0:  # the first world is too big: so are the rest
                    break
                continue
            self.last_worlds += 1
            mine = {a: values[a] if hyde else 1.0 - values[a] for a in legal_actions}
            best = max(mine.values())
            winners = [a for a, v in mine.items() if v >= best - 1e-9]
            for a in legal_actions:
                totals[a] += mine[a]
            for a in winners:
                votes[a] += 1.0 / len(winners)
        return votes, totals
