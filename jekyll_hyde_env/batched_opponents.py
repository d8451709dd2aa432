"""The opponent seats of batched games: each game's opponent played by a member of a pool.

``OpponentSeats`` plays, in every game of a ``BatchedGames``, the seat that is
not the learner's, until the learner is to act or the game is over. Each game
draws one member of the opponent pool per episode from the game's own stream
(``BatchedGames.integers``; a single opponent is a pool of one, drawn without a
draw), and the member plays the whole episode.
A member is played the fastest way it allows:

- **in C**: an agent marked ``uniform_random`` (``"random"``) plays inside the
  C games, with no Python per decision;
- **batched**: an agent with ``act_batch(observations, masks, seats)`` (a saved
  policy) chooses for all the games where it is to act with one matrix
  product per layer, from the observations the C code wrote;
- **per game**: any other agent (``heuristic``, ``ismcts:N``, a callable) gets
  a ``PlayerView`` from a Python engine game kept in lockstep with that C game
  (the fallback; as fast as the single-agent environment).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from jekyll_hyde_env.engine.cards import AGENTS, Phase
from jekyll_hyde_env.engine.information import player_view
from jekyll_hyde_env.engine.rules import (
    IllegalActionError,
    apply_action,
    legal_actions,
    start_from_masks,
)
from jekyll_hyde_env.engine.state import GameState
from jekyll_hyde_env.opponents import resolve_opponent
from jekyll_hyde_env.vector import BatchedGames

IN_C, BATCHED, PER_GAME = 0, 1, 2
_NO_SEAT = 2  # a seat number no game ever has to act: play_random skips the game
_DRAW_BOUND = 1 << 30
_GAME_OVER = int(Phase.GAME_OVER)


@dataclass
class Member:
    """One opponent of the pool: its spec, weight, agent and how it is played."""

    spec: Any
    weight: float
    agent: Any
    kind: int


def _kind_of(agent: Any) -> int:
    if getattr(agent, "uniform_random", False):
        return IN_C
    if hasattr(agent, "act_batch"):
        return BATCHED
    return PER_GAME


def pool_members(opponent: Any) -> list[Member]:
    """The members of an opponent given as a pool, a list of (spec, weight) or one spec.

    A pool is any object with ``members`` (a list of (spec, weight)) and
    ``agent_for(spec)`` (the self-play pool of ``train``); a single opponent is
    anything ``resolve_opponent`` accepts.

    Args:
        opponent: a pool object; a non-empty list of ``(spec, weight)`` tuples, each
            spec anything ``resolve_opponent`` accepts; or one such spec (weight 1).

    Returns:
        The members with a positive weight, in the given order, each with its
        agent and how it is played (``IN_C``, ``BATCHED`` or ``PER_GAME``).
        Weights are kept as given (as floats), not normalised.

    Raises:
        ValueError: a negative weight, weights that sum to zero or less, or a
            spec that names no agent.
        TypeError: a spec of no kind ``resolve_opponent`` accepts.
    """
    if hasattr(opponent, "members") and hasattr(opponent, "agent_for"):
        pairs = [(spec, weight, opponent.agent_for(spec)) for spec, weight in opponent.members]
    elif (
        isinstance(opponent, list)
        and opponent
        and all(isinstance(item, tuple) and len(item) == 2 for item in opponent)
    ):
        pairs = [(spec, weight, resolve_opponent(spec)) for spec, weight in opponent]
    else:
        pairs = [(opponent, 1.0, resolve_opponent(opponent))]
    weights = [float(weight) for _, weight, _ in pairs]
    if any(weight < 0 for weight in weights) or sum(weights) <= 0:
        raise ValueError(f"opponent pool weights must be >= 0 with a positive sum, got {weights}")
    return [
        Member(spec, weight, agent, _kind_of(agent))
        for (spec, _, agent), weight in zip(pairs, weights, strict=True)
        if weight > 0
    ]


class OpponentSeats:
    """Plays the non-learner seat of every game of ``games`` (see the module doc).

    Args:
        games: the batched C games whose opponent seats this plays.
        opponent: the first pool, anything ``pool_members`` accepts.

    Raises:
        ValueError: bad pool weights, or a spec that names no agent.
        TypeError: a spec of no kind ``resolve_opponent`` accepts.
    """

    def __init__(self, games: BatchedGames, opponent: Any):
        self.games = games
        n = games.num_games
        self.slot = np.zeros(n, np.int64)  # each game's member, an index into self.slots
        self.kind = np.zeros(n, np.int8)
        self.slots: list[Member | None] = []
        self.pool: list[int] = []
        self.mirrors: dict[int, GameState] = {}
        self._actions = np.zeros(n, np.int64)
        self._draws = np.zeros(n, np.int64)
        self._seed = 0
        self.set_opponent(opponent)

    def reseed(self, seed: int) -> None:
        """Seed every member's own randomness from ``seed`` (at each reset of the games).

        Members with randomness of their own (a sampling policy, a search)
        then play the same games again for the same seed; member ``k`` of the
        slots gets the seed ``(seed, k)``.

        Args:
            seed: an integer; each member with ``reset`` is reset with a seed
                derived from ``(seed, k)`` by ``numpy.random.SeedSequence``.
        """
        self._seed = int(seed)
        for slot, member in enumerate(self.slots):
            if member is not None:
                self._seed_member(slot, member)

    def _seed_member(self, slot: int, member: Member) -> None:
        if hasattr(member.agent, "reset"):
            state = np.random.SeedSequence([self._seed, slot]).generate_state(1)
            member.agent.reset(int(state[0]))

    def set_opponent(self, opponent: Any) -> None:
        """New members for the episodes that start from now on (games under way keep theirs).

        Args:
            opponent: anything ``pool_members`` accepts.

        Raises:
            ValueError: bad pool weights, or a spec that names no agent.
            TypeError: a spec of no kind ``resolve_opponent`` accepts.
        """
        members = pool_members(opponent)
        start = len(self.slots)
        self._retired = start > 0  # slots of earlier pools, dropped once no game plays them
        self.slots.extend(members)
        self.pool = list(range(start, start + len(members)))
        self._pool_slots = np.array(self.pool, np.int64)
        self._pool_kinds = np.array([member.kind for member in members], np.int8)
        for slot, member in zip(self.pool, members, strict=True):  # self.slots[slot] is member
            self._seed_member(slot, member)
        weights = np.array([m.weight for m in members])
        self._cumulative = np.cumsum(weights / weights.sum())
        self._cumulative[-1] = 1.0
        # Whether the single-agent env would reseed this opponent each episode (it
        # draws the seed from its np_random when the opponent has ``reset``).
        self.reseeded = any(hasattr(member.agent, "reset") for member in members)

    def assign(self, where: np.ndarray) -> None:
        """Draw a member for the games in ``where``, at the start of their episodes.

        Args:
            where: bool array of shape ``(num_games,)``, True for the games whose
                episode starts now (their deals are already drawn).
        """
        if not where.any():
            return
        games = np.flatnonzero(where)
        if len(self.pool) == 1:
            index = np.zeros(games.size, np.intp)
        else:
            self.games.integers(_DRAW_BOUND, where, self._draws)
            draws = self._draws[games] / _DRAW_BOUND
            chosen = np.searchsorted(self._cumulative, draws, side="right")
            index = np.minimum(chosen, len(self.pool) - 1)
        self.slot[games] = self._pool_slots[index]
        kinds = self._pool_kinds[index]
        self.kind[games] = kinds
        if self.mirrors or (kinds == PER_GAME).any():
            deals = self.games.deals
            for i, kind in zip(games.tolist(), kinds.tolist(), strict=True):
                self.mirrors.pop(i, None)
                if kind == PER_GAME:
                    variant = self.games.variant
                    rounds = [(int(j), int(h)) for j, h in deals[i][: variant.rounds]]
                    self.mirrors[i] = start_from_masks(rounds, variant=variant)
        if self._retired:
            self._forget_unused_slots()

    def _forget_unused_slots(self) -> None:
        used = set(np.unique(self.slot).tolist()) | set(self.pool)
        for s, member in enumerate(self.slots):
            if member is not None and s not in used:
                self.slots[s] = None
        self._retired = any(
            member is not None for s, member in enumerate(self.slots) if s not in self.pool
        )

    def note_actions(self, actions: np.ndarray, where: np.ndarray) -> None:
        """Apply actions just taken in the C games (by the learner) to the engine mirrors.

        Args:
            actions: the action id of each game, shape ``(num_games,)``.
            where: bool array of shape ``(num_games,)``, True for the games in which
                ``actions`` was just stepped; an action that ended its game as
                illegal is not applied, as the C game did not apply it.
        """
        winners = self.games.winner
        terminated = self.games.terminated
        for i, mirror in self.mirrors.items():
            if where[i] and mirror.phase != _GAME_OVER:
                if terminated[i] and winners[i] < 0:
                    continue  # ended by an illegal action: the C game did not apply it
                apply_action(mirror, int(actions[i]))

    def play(self, opponent_seat: np.ndarray) -> None:
        """Let each game's opponent act until its learner is to act or the game is over.

        Args:
            opponent_seat: the opponent's seat in each game (0 Jekyll, 1 Hyde),
                shape ``(num_games,)``.

        Raises:
            IllegalActionError: an opponent played per game chose an action that is
                not legal; the message names the game, the opponent and the legal ids.
        """
        games = self.games
        while True:
            to_act = (games.current_player == opponent_seat) & ~games.terminated
            if not to_act.any():
                return
            in_c = to_act & (self.kind == IN_C)
            if in_c.any():
                games.play_random(np.where(in_c, opponent_seat, _NO_SEAT).astype(np.int8))
                to_act &= ~in_c
                if not to_act.any():
                    continue
            actions = self._actions
            for s in np.unique(self.slot[to_act]).tolist():
                rows = np.flatnonzero(to_act & (self.slot == s))
                member = self.slots[s]
                if member.kind == BATCHED:
                    actions[rows] = member.agent.act_batch(
                        games.observation[rows], games.action_mask[rows], opponent_seat[rows]
                    )
                else:
                    for i in rows.tolist():
                        actions[i] = self._act_per_game(member, i, int(opponent_seat[i]))
            games.step(actions, where=to_act)
            for i in np.flatnonzero(to_act & (self.kind == PER_GAME)).tolist():
                apply_action(self.mirrors[i], int(actions[i]))

    def _act_per_game(self, member: Member, game: int, seat: int) -> int:
        mirror = self.mirrors[game]
        legal = legal_actions(mirror)
        action = member.agent.act(player_view(mirror, seat), legal)
        if action not in legal:
            raise IllegalActionError(
                f"game {game}: the opponent {member.spec!r} chose {action!r} as "
                f"{AGENTS[seat]}; legal actions are {legal}"
            )
        return int(action)
