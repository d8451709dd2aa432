"""The games the web server keeps: a person's game against an agent, and two agents watched.

A ``Game`` applies the person's actions (all of a request's, or none: ``batch_problem``
says which lists may go together) and lets its agent take its turns; a ``Watched`` game
moves one agent's decision per step. Both deal from a seed (``deal_stream``), which the
client may choose or the server draws, and keep their agents' decisions to a ``Decide``
function, which the routes (``api``) give them with the request's time limit. What they
answer is built by ``views``.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np

from jekyll_hyde_app.narration import HANDOVER_PHASES, move
from jekyll_hyde_app.play import refusal
from jekyll_hyde_app.web.opponents import OpponentMenu
from jekyll_hyde_app.web.thinking import MAX_THINK_SECONDS
from jekyll_hyde_app.web.views import (
    spectator_frame,
    step_events_json,
    table_json,
)
from jekyll_hyde_env.engine import (
    apply_action,
    game_record,
    legal_actions,
    new_game,
    player_view,
)
from jekyll_hyde_env.engine.cards import (
    AGENTS,
    DECLARE_BASE,
    NUM_ACTIONS,
    PHASE_NAMES,
    Phase,
    action_name,
    is_potion,
)
from jekyll_hyde_env.engine.render import game_end_reason
from jekyll_hyde_env.engine.state import GameState, PlayerView

MAX_SEED = 2**53 - 1  # seeds a page's JavaScript numbers hold exactly
WATCH_STREAM = 1  # watched games draw their deals from their own seed stream
FALLBACK_NOTE = "the heuristic's choice was played instead"

# An agent's decision for a view and its legal actions, and why the fallback's action was
# played instead, if it was (``Thinker.decide``).
Decide = Callable[[Any, PlayerView, list[int]], Awaitable[tuple[int, str | None]]]


def deal_stream(seed: int, stream: int = 0) -> np.random.SeedSequence:
    """The seed sequence a game's deals come from: ``seed`` itself for a played game (the
    deals of ``jekyll-hyde play --seed``), ``seed`` on stream ``WATCH_STREAM`` for a watched
    one, so that a watched game never shows the deals of a played game's seed."""
    return np.random.SeedSequence(seed, spawn_key=(stream,) if stream else ())


def deal_key(sequence: np.random.SeedSequence) -> tuple[int, ...]:
    """What names a deal stream: the generator state it seeds (the same key, the same deals)."""
    return tuple(int(word) for word in sequence.generate_state(4, np.uint64))


def draw_seed() -> int:
    """A seed for a game the client gave none: one of 2**53, unguessable from one's cards."""
    return secrets.randbelow(MAX_SEED + 1)


class Game:
    """A game between the person (``human``) and an agent, kept on the server.

    ``seed`` fixes the deals and the agent's randomness (None: one is drawn);
    ``opponents`` builds the agent (None: a menu of ``opponent_spec`` alone).
    """

    def __init__(
        self,
        human: int,
        opponent_spec: str,
        seed: int | None = None,
        opponents: OpponentMenu | None = None,
    ) -> None:
        if opponents is None:
            opponents = OpponentMenu.from_specs([opponent_spec], MAX_THINK_SECONDS)
        self.seed = draw_seed() if seed is None else seed
        sequence = deal_stream(self.seed)
        rng = np.random.default_rng(sequence)
        self.human = human
        self.opponent_spec = opponent_spec
        self.deal_key = deal_key(sequence)
        self.state = new_game(rng)
        self.opponent = opponents.build(opponent_spec, int(rng.integers(2**31)))
        self.log: list[dict[str, Any]] = []
        self.lock = asyncio.Lock()

    @property
    def over(self) -> bool:
        return self.state.phase == Phase.GAME_OVER

    def advance(self) -> None:
        """Let the agent play until the person must act or the game is over, in this
        thread and with no time limit (the server uses ``take_turns``)."""
        state = self.state
        while state.to_act >= 0 and state.to_act != self.human:
            player = state.to_act
            self._apply(self.opponent.act(player_view(state, player), legal_actions(state)))

    async def take_turns(self, decide: Decide) -> None:
        """Let the agent play until the person must act or the game is over, each decision
        by ``decide``. A decision the agent did not make in time is the fallback's, and
        the log says so."""
        state = self.state
        while state.to_act >= 0 and state.to_act != self.human:
            player = state.to_act
            view = player_view(state, player)
            action, missed = await decide(self.opponent, view, legal_actions(state))
            if missed:
                text = f"{AGENTS[player]} ({self.opponent_spec}) {missed}: {FALLBACK_NOTE}"
                self.log.append({"kind": "note", "round": state.round, "text": text})
            self._apply(action)

    def play(self, actions: list[int]) -> None:
        """Apply the person's actions, all of them or none.

        Several actions go together only as ``batch_problem`` allows: each of them is then
        checked while it is still the person's turn in the same exchange, Greed swap or
        trick, so a refusal's message depends on what the person knows and nothing else.

        Raises:
            ValueError: the batch or one of its actions is not allowed; the message says why.
        """
        state = self.state
        if state.to_act < 0:
            raise ValueError("the game is over")
        if state.to_act != self.human:
            raise ValueError(f"it is {AGENTS[state.to_act]}'s turn, not yours")
        for number, action in enumerate(actions):
            if not 0 <= action < NUM_ACTIONS:
                raise ValueError(
                    f"{_where(number, actions)}{action} is not an action: card ids are 0-24, "
                    "colours 25-27"
                )
        problem = batch_problem(state, actions)
        if problem is not None:
            raise ValueError(problem)
        trial = state.clone()
        for number, action in enumerate(actions):
            reason = refusal(trial, action)
            if reason is not None:
                raise ValueError(
                    f"{_where(number, actions)}{action_name(action)} [{action}] is refused: "
                    f"{reason}"
                )
            apply_action(trial, action)
        for action in actions:
            self._apply(action)

    def _apply(self, action: int) -> None:
        before = self.state.clone()
        apply_action(self.state, action)
        self.log.extend(step_events_json(before, self.state, self.human))

    def view(self, game_id: str) -> dict[str, Any]:
        """What the person's player knows now (``views.table_json``), and the game's log."""
        state, human = self.state, self.human
        over = state.phase == Phase.GAME_OVER
        table = table_json(state, human)
        tricks = [event for event in self.log if event["kind"] == "trick"]
        result = None
        if over:
            result = {
                "winner": AGENTS[state.winner],
                "you_won": state.winner == human,
                "reason": game_end_reason(state),
                "seed": self.seed,
            }
        return {
            "game_id": game_id,
            "you": AGENTS[human],
            "opponent": AGENTS[1 - human],
            "opponent_agent": self.opponent_spec,
            "table": table,
            "last_trick": tricks[-1] if tricks else None,
            "log": self.log,
            "game_over": over,
            "result": result,
        }

    def record(self) -> dict[str, Any]:
        record = game_record(self.state)
        record["players"] = {AGENTS[self.human]: "you", AGENTS[1 - self.human]: self.opponent_spec}
        return record


def _where(number: int, actions: list[int]) -> str:
    return f"action {number + 1} of {len(actions)}: " if len(actions) > 1 else ""


def batch_problem(state: GameState, actions: list[int]) -> str | None:
    """Why the person to act may not send ``actions`` together, or None when they may.

    A batch is either the cards the person gives in the exchange or Greed swap under way,
    at most the ``picks_left`` still to choose (R2.2, T6b), or a potion led and the colour
    declared for it (T1, T2). Every action of such a batch is decided before the turn
    passes on. A batch that would run past it (past a handover of picks, a trick's end or
    a round's end) could tell, by where it is refused, what the opponent is about to hand
    over or what the next deal holds: it is refused whole, from its length, the phase and
    the person's own picks left, before any action is tried, and the message names none
    of its cards.
    """
    count = len(actions)
    if count <= 1:
        return None
    phase = state.phase
    if phase in HANDOVER_PHASES:
        left = state.picks_left[state.to_act]
        if count <= left:
            return None
        what = "exchange" if phase == Phase.EXCHANGE else "Greed swap"
        cards = "card" if left == 1 else "cards"
        return (
            f"{count} actions at once, but the {what} takes {left} more {cards} from you: "
            f"send at most {left}; what comes after it is sent once it is asked for"
        )
    first, second = actions[0], actions[1]
    if (
        phase == Phase.LEAD
        and count == 2
        and is_potion(first)
        and first < DECLARE_BASE
        and second >= DECLARE_BASE
    ):
        return None
    return (
        f"{count} actions at once: actions go together only as the cards you give in an "
        "exchange or Greed swap, or as a potion you lead and its colour "
        f"([potion, {DECLARE_BASE}-{NUM_ACTIONS - 1}]); send this "
        f"{PHASE_NAMES[phase]} action on its own"
    )


class Watched:
    """Two agents playing each other, one decision per step, on deals of its own."""

    def __init__(
        self,
        jekyll: str,
        hyde: str,
        seed: int | None = None,
        opponents: OpponentMenu | None = None,
    ) -> None:
        if opponents is None:
            opponents = OpponentMenu.from_specs([jekyll, hyde], MAX_THINK_SECONDS)
        self.seed = draw_seed() if seed is None else seed
        sequence = deal_stream(self.seed, WATCH_STREAM)
        rng = np.random.default_rng(sequence)
        self.specs = (jekyll, hyde)
        self.deal_key = deal_key(sequence)
        self.state = new_game(rng)
        self.agents = [opponents.build(spec, int(rng.integers(2**31))) for spec in self.specs]
        self.lock = asyncio.Lock()

    @property
    def over(self) -> bool:
        return self.state.phase == Phase.GAME_OVER

    async def step(self, decide: Decide) -> dict[str, Any]:
        """One decision of the agent to act; the frame after it."""
        state = self.state
        if state.to_act < 0:
            return self.frame("The game is over", [])
        player = state.to_act
        before = state.clone()
        view = player_view(state, player)
        action, missed = await decide(self.agents[player], view, legal_actions(state))
        apply_action(state, action)
        said = move(before, action).text()
        if missed:
            said += f" ({self.specs[player]} {missed}: {FALLBACK_NOTE})"
        return self.frame(said, step_events_json(before, state, None))

    def frame(self, said: str, events: list[dict[str, Any]]) -> dict[str, Any]:
        frame = spectator_frame(self.state)
        frame.update(
            said=said,
            events=events,
            players={"jekyll": self.specs[0], "hyde": self.specs[1]},
            seed=self.seed,
        )
        if frame["game_over"]:
            frame["reason"] = game_end_reason(self.state)
        return frame
