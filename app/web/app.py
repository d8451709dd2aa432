"""The web application behind ``jekyll-hyde serve``: play, replay and watch games.

Pages (``static/``): ``/`` plays a game against an agent, ``/replay`` steps
through a game record trick by trick, ``/watch`` shows two agents playing each
other, ``/rules`` shows the players' rules.

Every game lives on the server. The play API answers with what the person's
player knows (RULES.md, "What each player knows", through ``player_view``):
the opponent's hand, the set-aside cards, the later deals and the opponent's
pending exchange or swap choices never leave the server while the game runs.
The game record, which shows every deal, is given once the game is over.

API (JSON; every error is a 4xx answer ``{"error": "..."}`` naming the problem,
and the game it concerns goes on):

==========================================  =========================================
``GET  /api/agents``                        the opponents this server offers
``POST /api/games``                         new game: ``{"role", "opponent", "seed"}``
``GET  /api/games/{id}``                    the person's view of the game
``POST /api/games/{id}/play``               ``{"action": id}`` or ``{"actions": [ids]}``
``GET  /api/games/{id}/record``             the game record, once the game is over
``GET  /api/games/{id}/replay``             its replay frames, once the game is over
``POST /api/replay``                        replay frames of a posted game record
``POST /api/watch``                         new watched game: ``{"jekyll", "hyde", "seed"}``
``POST /api/watch/{id}/step``               one more decision of the watched game
==========================================  =========================================

A list of actions is one exchange's or Greed swap's cards, or a potion led and its
colour (``batch_problem``): never a list that runs on past the person's turn.

A new game's answer holds its ``token``, a secret that every later request for
that game sends in the ``X-Game-Token`` header (the record's download link may
give it as ``?token=`` instead: the game is over by then). What the server
guards and how, with the tests that check it, is ``docs/web/threat-model.md``:
opponents come from an allow list with bounded thinking (``opponents``), agents
think on a bounded pool of worker threads within a time limit (``thinking``),
and games, clients and request bodies have limits (``limits``).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import secrets
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from importlib import resources
from typing import Annotated, Any

import numpy as np
from fastapi import Body, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from markdown_it import MarkdownIt
from pydantic import BaseModel, ConfigDict, Field, StrictInt
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from jekyll_hyde_app.play import prompt as terminal_prompt
from jekyll_hyde_app.play import refusal
from jekyll_hyde_app.web.limits import (
    MAX_BODY,
    MAX_RECORD_BODY,
    TOKEN_HEADER,
    BodyLimit,
    GameRegistry,
    Refused,
    client_address,
)
from jekyll_hyde_app.web.opponents import DEFAULT_OPPONENTS, OpponentMenu, shown
from jekyll_hyde_app.web.thinking import MAX_THINK_SECONDS, Thinker, ThinkPool, default_workers
from jekyll_hyde_env.engine import (
    apply_action,
    game_record,
    legal_actions,
    new_game,
    player_view,
    replay_record,
)
from jekyll_hyde_env.engine.cards import (
    AGENTS,
    COLOUR_NAMES,
    DECLARE_BASE,
    EFFECT_NAMES,
    MAX_ROUNDS,
    NUM_ACTIONS,
    PHASE_NAMES,
    TRACK_END,
    Phase,
    action_name,
    card_name,
    colour_of,
    is_potion,
    mask_to_ids,
    value_of,
)
from jekyll_hyde_env.engine.render import (
    effect_note,
    game_end_reason,
    marker_move,
    trick_plays,
    trick_reason,
)
from jekyll_hyde_env.engine.state import GameState, PlayerView, Trick
from jekyll_hyde_env.rulebook import rules_text

MAX_GAMES = 256  # games in memory, played and watched, of all clients
MAX_GAMES_PER_CLIENT = 8  # of one client (an IPv4 address or an IPv6 /64)
IDLE_SECONDS = 600.0  # a game without a move this long may give its place to a new one
MAX_WATCHES_PER_CLIENT = 2  # watched games of one client, among its MAX_GAMES_PER_CLIENT
WATCH_IDLE_SECONDS = 60.0  # a watched game unstepped this long may give its place
MAX_THINK_LIMIT = 60.0  # the largest --max-think-seconds
MAX_SEED = 2**53 - 1  # seeds a page's JavaScript numbers hold exactly
MAX_ACTIONS = 16  # the longest list a play request may hold; batch_problem allows 3 at most
MAX_RECORD_ACTIONS = 400  # actions in a posted record (a game has about 150 at most)
MAX_NAME = 200  # characters of a player's name in a posted record
MAX_CONNECTIONS = 512  # open connections; more are answered 503
LISTEN_BACKLOG = 2048  # connections the listening socket queues
WATCH_STREAM = 1  # watched games draw their deals from their own seed stream
FALLBACK_NOTE = "the heuristic's choice was played instead"
SHUTDOWN_SECONDS = 0.5  # given to requests still running when the server is told to stop
ROLES = AGENTS
_STATIC = resources.files(__package__).joinpath("static")
_HANDOVER = (int(Phase.EXCHANGE), int(Phase.SWAP))
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")


# --- what the pages draw -------------------------------------------------------------------


def card_json(card: int) -> dict[str, Any]:
    """A card for the page: id, name, colour name (or ``potion``), value, potion flag."""
    potion = is_potion(card)
    return {
        "id": card,
        "name": card_name(card),
        "colour": "potion" if potion else COLOUR_NAMES[colour_of(card)],
        "value": value_of(card),
        "potion": potion,
    }


def cards_json(mask: int) -> list[dict[str, Any]]:
    return [card_json(card) for card in mask_to_ids(mask)]


def trick_json(trick: Trick, round_number: int, number: int, hands_empty: bool) -> dict[str, Any]:
    """A finished trick: who played what, who won and why (T5), what the potion did (T6)."""
    follower = 1 - trick.leader
    note = effect_note(trick, hands_empty)
    text = (
        f"Trick {number}: {trick_plays(trick)}; {AGENTS[trick.winner]} wins: "
        f"{trick_reason(trick)}"
    )
    return {
        "kind": "trick",
        "round": round_number,
        "number": number,
        "leader": AGENTS[trick.leader],
        "cards": {
            AGENTS[trick.leader]: card_json(trick.lead_card),
            AGENTS[follower]: card_json(trick.follow_card),
        },
        "declared": COLOUR_NAMES[trick.declared] if trick.declared >= 0 else None,
        "winner": AGENTS[trick.winner],
        "reason": trick_reason(trick),
        "effect": EFFECT_NAMES[trick.effect],
        "effect_note": note,
        "text": text + (f". {note}" if note else ""),
    }


def step_events(before: GameState, after: GameState, seen_by: int | None) -> list[dict[str, Any]]:
    """What happened between two states: a finished exchange or Greed swap (as ``seen_by``
    saw it, or both sides when None), trick, round (R2.4) and game."""
    events: list[dict[str, Any]] = []
    if before.phase in _HANDOVER and after.phase == Phase.LEAD and after.round == before.round:
        kind = "Exchange" if before.phase == Phase.EXCHANGE else "Greed swap"
        if before.phase == Phase.EXCHANGE:
            given = list(after.exch_given)
        else:
            given = [after.swap_given[p] & ~before.swap_given[p] for p in range(2)]
        if seen_by is None:
            text = f"{kind}: jekyll gave {_names(given[0])}; hyde gave {_names(given[1])}"
        else:
            text = (
                f"{kind}: you gave {_names(given[seen_by])} and received "
                f"{_names(given[1 - seen_by])}"
            )
        events.append({"kind": kind.lower().replace(" ", "_"), "round": after.round, "text": text})
    round_over = after.round != before.round or after.phase == Phase.GAME_OVER
    if round_over and after.round_log:
        result = after.round_log[-1]
        number = len(after.round_log)
        if result.tricks:
            events.append(trick_json(result.tricks[-1], number, len(result.tricks), True))
        text = (
            f"Round {number} over: jekyll {result.tricks_jekyll} tricks, hyde "
            f"{result.tricks_hyde}; {marker_move(before.marker, result.marker)} (R2.4)"
        )
        events.append({"kind": "round", "round": number, "marker": result.marker, "text": text})
    elif len(after.trick_log) > len(before.trick_log):
        trick = after.trick_log[-1]
        events.append(trick_json(trick, after.round, len(after.trick_log), False))
    if after.phase == Phase.GAME_OVER and before.phase != Phase.GAME_OVER:
        text = f"Game over: {AGENTS[after.winner]} wins: {game_end_reason(after)}"
        events.append({"kind": "game", "round": after.round, "text": text})
    return events


def _names(mask: int) -> str:
    return ", ".join(card_name(card) for card in mask_to_ids(mask)) or "nothing"


def _current_trick(state: GameState) -> dict[str, Any] | None:
    """The trick being played: its leader and lead card (T1) and a declared colour (T2)."""
    if state.lead_card < 0:
        return None
    return {
        "leader": AGENTS[state.leader],
        "lead": card_json(state.lead_card),
        "declared": COLOUR_NAMES[state.declared] if state.declared >= 0 else None,
    }


def _rounds(state: GameState) -> list[dict[str, Any]]:
    return [
        {"round": i + 1, "jekyll": r.tricks_jekyll, "hyde": r.tricks_hyde, "marker": r.marker}
        for i, r in enumerate(state.round_log)
    ]


def _prompt(state: GameState) -> str:
    """What the player to act must do; for the exchange and swaps, how many cards."""
    return terminal_prompt(state).rstrip(": ")


def markdown_html(text: str) -> str:
    """Markdown (CommonMark and tables) as HTML for a page. Raw HTML in the text is shown
    escaped, never passed through, and links are limited to safe schemes."""
    return _MARKDOWN.render(text)


def legal_gives(state: GameState) -> list[list[int]]:
    """Every set of cards the player to act may give to finish an exchange or a Greed swap:
    ``picks_left`` more cards beside the picks already made (R2.2, whose potion rule asks
    for a potion unless one is picked already; T6b), each listed in an order the engine
    accepts.

    The page lets the person choose only cards that still belong to one of these sets.
    They follow from the player's own hand, picks and deal alone. Empty in other phases.
    """
    if state.phase not in _HANDOVER or state.to_act < 0:
        return []
    gives: dict[int, list[int]] = {}  # by mask of the cards: the order they were applied in
    reached: set[int] = set()

    def extend(trial: GameState, chosen: list[int], mask: int, left: int) -> None:
        for action in legal_actions(trial):
            give = mask | 1 << action
            if left == 1:
                gives.setdefault(give, [*chosen, action])
            elif give not in reached:  # the same picks in another order: the same state
                reached.add(give)
                after = trial.clone()
                apply_action(after, action)
                extend(after, [*chosen, action], give, left - 1)

    extend(state, [], 0, state.picks_left[state.to_act])
    return sorted(gives.values())


def spectator_frame(state: GameState) -> dict[str, Any]:
    """The whole table, both hands included, for replays and watched games."""
    return {
        "round": state.round,
        "marker": state.marker,
        "track_end": TRACK_END,
        "phase": PHASE_NAMES[state.phase],
        "to_act": AGENTS[state.to_act] if state.to_act >= 0 else None,
        "ranks": [COLOUR_NAMES[c] for c in state.ranks],
        "tricks": {"jekyll": state.tricks[0], "hyde": state.tricks[1]},
        "hands": {agent: cards_json(state.hands[p]) for p, agent in enumerate(AGENTS)},
        "current_trick": _current_trick(state),
        "rounds": _rounds(state),
        "game_over": state.phase == Phase.GAME_OVER,
        "winner": AGENTS[state.winner] if state.winner >= 0 else None,
    }


# --- games on the server -------------------------------------------------------------------

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
        self.log.extend(step_events(before, self.state, self.human))

    def view(self, game_id: str) -> dict[str, Any]:
        """What the person's player knows now (``player_view``), and the game's log."""
        state, human = self.state, self.human
        view = player_view(state, human)
        your_turn = state.to_act == human
        legal = legal_actions(state) if your_turn else []
        over = state.phase == Phase.GAME_OVER
        table = {
            "round": view.round,
            "marker": view.marker,
            "track_end": TRACK_END,
            "phase": PHASE_NAMES[view.phase],
            "to_act": AGENTS[view.to_act] if view.to_act >= 0 else None,
            "your_turn": your_turn,
            "prompt": _prompt(state) if your_turn else None,
            "legal_cards": [a for a in legal if a < DECLARE_BASE],
            "declare": [
                {"action": a, "colour": COLOUR_NAMES[a - DECLARE_BASE]}
                for a in legal
                if a >= DECLARE_BASE
            ],
            "choose": view.picks_left if view.phase in _HANDOVER and your_turn else 0,
            "legal_gives": legal_gives(state) if your_turn else [],
            "ranks": [COLOUR_NAMES[c] for c in view.ranks],
            "tricks": {"you": view.tricks[0], "opponent": view.tricks[1]},
            "hand": cards_json(view.hand),
            "picks": cards_json(view.picks),
            "opponent_hand_size": view.opp_hand_size,
            "opponent_known": cards_json(view.opp_known),
            "current_trick": _current_trick(state),
            "round_tricks": [
                trick_json(t, view.round, i + 1, False) for i, t in enumerate(view.trick_log)
            ],
            "rounds": _rounds(state),
        }
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
    if phase in _HANDOVER:
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
        if before.phase in _HANDOVER:
            said = f"{AGENTS[player]} chose a card for the {PHASE_NAMES[before.phase]}"
        elif before.phase == Phase.DECLARE:
            said = f"{AGENTS[player]} declares {COLOUR_NAMES[action - DECLARE_BASE]}"
        else:
            said = f"{AGENTS[player]} plays {card_name(action)}"
        if missed:
            said += f" ({self.specs[player]} {missed}: {FALLBACK_NOTE})"
        return self.frame(said, step_events(before, state, None))

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


def replay_frames(record: dict[str, Any]) -> dict[str, Any]:
    """A recorded game as frames, one per step of play: each deal, each exchange, each
    trick (with the round's end) and each Greed swap, both hands shown, with what each
    player knows of the other's hand (``known``) and how many of the record's actions
    lead to the frame (``actions_applied``).

    Raises:
        ValueError: the record is not a valid game record (``replay_record``'s reason).
    """
    final = replay_record(record)
    state = new_game(None, [dict(deal) for deal in record["deals"]])
    frames = [_frame(state, "Round 1: the deal", [], 0)]
    for applied, item in enumerate(record["actions"], start=1):
        before = state.clone()
        apply_action(state, item["action"])
        events = step_events(before, state, None)
        if not events:
            continue
        kinds = {event["kind"] for event in events}
        trick = next((event for event in events if event["kind"] == "trick"), None)
        if "round" in kinds:
            result = state.round_log[-1]
            title = f"Round {len(state.round_log)}, trick {trick['number']}: round over"
            frame = _frame(before, title, events, applied)
            frame.update(
                hands={agent: [] for agent in AGENTS},
                known={agent: [] for agent in AGENTS},
                tricks={"jekyll": result.tricks_jekyll, "hyde": result.tricks_hyde},
                marker=result.marker,
                rounds=_rounds(state),
                trick=trick,
                current_trick=None,
            )
            if state.phase == Phase.GAME_OVER:
                frame.update(game_over=True, winner=AGENTS[state.winner])
                frame["reason"] = game_end_reason(state)
                frame["title"] = f"Round {state.round} over: the game is over"
            frames.append(frame)
            if state.phase != Phase.GAME_OVER:
                frames.append(_frame(state, f"Round {state.round}: the deal", [], applied))
            continue
        if trick is not None:
            title = f"Round {state.round}, trick {trick['number']}"
        else:
            title = f"Round {state.round}: {events[0]['kind'].replace('_', ' ')}"
        frame = _frame(state, title, events, applied)
        frame["trick"] = trick
        frames.append(frame)
    players = record.get("players", {})
    return {
        "players": {agent: players.get(agent, agent) for agent in AGENTS},
        "winner": AGENTS[final.winner] if final.winner >= 0 else None,
        "frames": frames,
    }


def _frame(
    state: GameState, title: str, events: list[dict[str, Any]], applied: int
) -> dict[str, Any]:
    """A replay frame: the whole table, and for each player the ids of the cards of the
    other's hand that player knows (``player_view``'s ``opp_known``: the cards it gave)."""
    frame = spectator_frame(state)
    frame.update(
        title=title,
        events=events,
        trick=None,
        known={
            agent: mask_to_ids(player_view(state, player).opp_known)
            for player, agent in enumerate(AGENTS)
        },
        actions_applied=applied,
    )
    return frame


# --- HTTP ----------------------------------------------------------------------------------


class NewGame(BaseModel):
    """``POST /api/games``: the person's role, the opponent's agent spec, an optional seed."""

    model_config = ConfigDict(extra="forbid")
    role: str = "jekyll"
    opponent: str | None = None  # None: the server's default opponent
    seed: StrictInt | None = None


class Move(BaseModel):
    """``POST /api/games/{id}/play``: one action id, or several: an exchange's or Greed
    swap's cards, or a potion led and its colour (``batch_problem``)."""

    model_config = ConfigDict(extra="forbid")
    action: StrictInt | None = None
    actions: Annotated[list[StrictInt], Field(max_length=MAX_ACTIONS)] | None = None


class NewWatch(BaseModel):
    """``POST /api/watch``: the two agents' specs and an optional seed."""

    model_config = ConfigDict(extra="forbid")
    jekyll: str | None = None  # None: the server's default opponent
    hyde: str | None = None
    seed: StrictInt | None = None


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> HTTPException:
    return HTTPException(status_code=status, detail=message, headers=headers)


def _seed(seed: int | None) -> int:
    """The client's seed, checked, or a seed the server draws."""
    if seed is None:
        return draw_seed()
    if not 0 <= seed <= MAX_SEED:
        raise _error(
            400,
            f"seed {seed} is out of range: a seed is a whole number from 0 to {MAX_SEED}, "
            "or none (the server draws one)",
        )
    return seed


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def record_problem(record: Any) -> str | None:
    """What keeps ``record`` from having a game record's shape (``game_record``), or None.

    Only the shape that replaying needs is checked here (types, sizes, ranges);
    whether the game it tells follows the rules is for ``replay_record`` to say.
    """
    if not isinstance(record, dict):
        return "not a game record: expected a JSON object"
    for key in ("format", "version"):
        if not isinstance(record.get(key), (str, int)) or isinstance(record.get(key), bool):
            return f'not a game record: "{key}" is missing or not a string or number'
    deals = record.get("deals")
    if not isinstance(deals, list) or len(deals) != MAX_ROUNDS:
        return f'"deals": expected a list of the {MAX_ROUNDS} rounds\' deals'
    for number, deal in enumerate(deals, start=1):
        for agent in AGENTS:
            cards = deal.get(agent) if isinstance(deal, dict) else None
            if not isinstance(cards, list) or not all(_is_int(card) for card in cards):
                return f'"deals" round {number}: expected {{"jekyll": [ids], "hyde": [ids]}}'
    actions = record.get("actions")
    if not isinstance(actions, list):
        return '"actions": expected a list of {"agent": name, "action": id}'
    if len(actions) > MAX_RECORD_ACTIONS:
        return f'"actions": {len(actions)} actions; a game has fewer than {MAX_RECORD_ACTIONS}'
    for number, item in enumerate(actions):
        if not isinstance(item, dict):
            return f'"actions" item {number}: expected {{"agent": name, "action": id}}'
        if not isinstance(item.get("agent"), str) or item.get("agent") not in AGENTS:
            return f'"actions" item {number}: "agent" must be jekyll or hyde'
        action = item.get("action")
        if not _is_int(action) or not 0 <= action < NUM_ACTIONS:
            return f'"actions" item {number}: "action" must be an action id from 0 to 27'
    result = record.get("result")
    if result is not None:
        if not isinstance(result, dict):
            return '"result": expected {"winner": name, "marker": space} or null'
        if not (result.get("winner") is None or isinstance(result.get("winner"), str)):
            return '"result": "winner" must be jekyll, hyde or null'
        if not _is_int(result.get("marker")):
            return '"result": "marker" must be a space of the track, a whole number'
    players = record.get("players")
    if players is not None and not (
        isinstance(players, dict)
        and all(isinstance(name, str) and len(name) <= MAX_NAME for name in players.values())
    ):
        return (
            f'"players": expected {{"jekyll": name, "hyde": name}}, names of at most '
            f"{MAX_NAME} characters"
        )
    return None


def create_app(
    default_opponent: str = "heuristic",
    *,
    allow: Iterable[str] = DEFAULT_OPPONENTS,
    max_think_seconds: float = MAX_THINK_SECONDS,
    max_request_think_seconds: float | None = None,
    opponents: OpponentMenu | None = None,
    trust_proxy: bool = False,
    max_games: int = MAX_GAMES,
    max_games_per_client: int = MAX_GAMES_PER_CLIENT,
    idle_seconds: float = IDLE_SECONDS,
    max_watches: int | None = None,
    max_watches_per_client: int = MAX_WATCHES_PER_CLIENT,
    watch_idle_seconds: float = WATCH_IDLE_SECONDS,
    workers: int | None = None,
    max_body: int = MAX_BODY,
    max_record_body: int = MAX_RECORD_BODY,
) -> FastAPI:
    """The web application.

    Args:
        default_opponent: fills the opponent field of the play page; always allowed.
        allow: the agent specs clients may choose (``opponents.OpponentMenu``).
        max_think_seconds: the most an agent's decision may take, waiting included.
        max_request_think_seconds: the most the decisions one request waits for may take
            together (None: ``thinking.REQUEST_DECISIONS`` times ``max_think_seconds``).
        opponents: a menu built beforehand, used instead of ``allow``.
        trust_proxy: take the client's address from ``X-Forwarded-For`` (``limits``).
        max_games: games in memory, played and watched (``limits.GameRegistry``).
        max_games_per_client: games of one client (an IPv4 address or an IPv6 /64).
        idle_seconds: how long a played game must go without a move before a new game may
            take its place (looking at it does not count).
        max_watches: watched games in all, among ``max_games`` (None: a quarter of them).
        max_watches_per_client: watched games of one client, among its games.
        watch_idle_seconds: how long a watched game must go unstepped before a new game may
            take its place.
        workers: threads agents think on (default: one per core).
        max_body: the largest request body in bytes (``limits.BodyLimit``).
        max_record_body: the largest game record posted to ``/api/replay``, in bytes.

    Raises:
        ValueError: an opponent spec that is unknown or cannot be bounded, or a limit
            out of range; the message names it.
    """
    if opponents is None:
        opponents = OpponentMenu.from_specs([default_opponent, *allow], max_think_seconds)
    if default_opponent not in opponents.allowed:
        raise ValueError(f"the default opponent {default_opponent!r} is not on the allow list")
    games = GameRegistry(
        max_games,
        max_games_per_client,
        idle_seconds,
        max_watches=max_watches,
        max_watches_per_client=max_watches_per_client,
        watch_idle_seconds=watch_idle_seconds,
    )
    pool = ThinkPool(workers or default_workers())
    thinker = Thinker(pool, max_think_seconds, max_request_think_seconds)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        pool.close()

    app = FastAPI(
        title="Jekyll vs Hyde", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.add_middleware(BodyLimit, limit=max_body, record_limit=max_record_body)
    app.state.games = games  # by id: a Game (play) or a Watched game
    app.state.opponents = opponents
    app.state.thinker = thinker

    def client(request: Request) -> str:
        return client_address(request.scope, trust_proxy)

    def decider(owner: str) -> Decide:
        """Decisions for the games of ``owner``, the client who created them, in the
        request that asks for this: they share the request's deadline from now on."""
        deadline = thinker.deadline()

        async def decide(agent: Any, view: PlayerView, legal: list[int]) -> tuple[int, str | None]:
            return await thinker.decide(owner, agent, view, legal, deadline)

        return decide

    def keep(item: Game | Watched, request: Request, kind: str) -> tuple[str, str]:
        try:
            return games.add(item, client(request), kind)
        except Refused as refusal:
            raise _error(429, str(refusal), {"Retry-After": "60"}) from None

    def find(request: Request, game_id: str, kind: str, token: str | None = None) -> Any:
        return games.find(game_id, request.headers.get(TOKEN_HEADER) or token, kind)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        message = error.detail
        if error.status_code == 404 and message == "Not Found":
            message = f"no such page or API path: {request.url.path}"
        elif error.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}"
        elif error.status_code == 400 and message == "There was an error parsing the body":
            message = (
                "malformed request: the body is not JSON this server reads "
                "(not UTF-8, or nested too deeply)"
            )
        headers = getattr(error, "headers", None)
        return JSONResponse({"error": message}, status_code=error.status_code, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = []
        for problem in error.errors():
            where = ".".join(str(part) for part in problem.get("loc", ()) if part != "body")
            problems.append(f"{where}: {problem.get('msg')}" if where else problem.get("msg"))
        message = "malformed request: " + "; ".join(problems)
        return JSONResponse({"error": message}, status_code=422)

    @app.exception_handler(Exception)
    async def failed(request: Request, error: Exception) -> JSONResponse:
        return JSONResponse({"error": "the server failed on this request"}, status_code=500)

    @app.get("/", include_in_schema=False)
    async def play_page() -> FileResponse:
        return FileResponse(str(_STATIC.joinpath("index.html")))

    @app.get("/replay", include_in_schema=False)
    async def replay_page() -> FileResponse:
        return FileResponse(str(_STATIC.joinpath("replay.html")))

    @app.get("/watch", include_in_schema=False)
    async def watch_page() -> FileResponse:
        return FileResponse(str(_STATIC.joinpath("watch.html")))

    @app.get("/rules", include_in_schema=False)
    async def rules_page() -> HTMLResponse:
        return HTMLResponse(
            "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            "<title>Rules: Jekyll vs Hyde</title><link rel='icon' href='data:,'>"
            "<link rel='stylesheet' href='/static/style.css'></head><body><nav>"
            "<span class='title'>Jekyll vs Hyde</span><a href='/'>Play</a>"
            "<a href='/replay'>Replay</a><a href='/watch'>Watch</a>"
            "<a href='/rules' class='here'>Rules</a></nav>"
            f"<main class='rules'>{markdown_html(rules_text())}</main></body></html>"
        )

    @app.get("/api/agents")
    async def agent_list() -> dict[str, Any]:
        return {
            "default": default_opponent,
            "suggested": opponents.allowed,
            "allowed": opponents.allowed,
            "max_think_seconds": max_think_seconds,
            "max_request_think_seconds": thinker.request_limit,
        }

    @app.post("/api/games")
    async def start(body: NewGame, request: Request) -> dict[str, Any]:
        if body.role not in ROLES:
            raise _error(400, f"unknown role {shown(body.role)}: choose jekyll or hyde")
        spec = default_opponent if body.opponent is None else body.opponent
        seed = _seed(body.seed)
        while games.deal_in_play(deal_key(deal_stream(seed))):
            if body.seed is not None:
                raise _error(
                    409,
                    f"seed {seed} deals a game in progress: choose another seed, or none "
                    "(the server draws one); it is free again once that game is over",
                )
            seed = draw_seed()
        try:
            game = Game(ROLES.index(body.role), spec, seed, opponents)
        except ValueError as error:
            raise _error(400, f"opponent: {error}") from None
        game_id, token = keep(game, request, "game")
        async with game.lock:
            await game.take_turns(decider(games.owner(game_id)))
            view = game.view(game_id)
        view["token"] = token
        return view

    @app.get("/api/games/{game_id}")
    async def show(game_id: str, request: Request) -> dict[str, Any]:
        game = find(request, game_id, "game")
        if not game.lock.locked():  # an agent's turn left by a request that was cut short
            async with game.lock:
                await game.take_turns(decider(games.owner(game_id)))
        return game.view(game_id)

    @app.post("/api/games/{game_id}/play")
    async def play(game_id: str, move: Move, request: Request) -> dict[str, Any]:
        game = find(request, game_id, "game")
        if (move.action is None) == (move.actions is None):
            raise _error(422, 'send one of "action": id or "actions": [ids]')
        actions = [move.action] if move.action is not None else move.actions
        if not actions:
            raise _error(422, '"actions" is empty: send at least one action id')
        decide = decider(games.owner(game_id))
        async with game.lock:
            await game.take_turns(decide)  # an agent's turn left by a request that was cut short
            try:
                game.play(actions)
            except ValueError as error:
                raise _error(400, str(error)) from None
            games.touch(game_id)  # a move keeps the game from counting as idle
            await game.take_turns(decide)
            return game.view(game_id)

    @app.get("/api/games/{game_id}/record")
    async def record(game_id: str, request: Request, token: str | None = None) -> dict[str, Any]:
        # The token may come as ?token= here: the page's download link cannot send a header,
        # and the record is given only once the game is over.
        game = find(request, game_id, "game", token)
        if not game.over:
            raise _error(409, "the game is not over: its record shows every hand")
        return game.record()

    @app.get("/api/games/{game_id}/replay")
    async def replay_game(game_id: str, request: Request) -> dict[str, Any]:
        game = find(request, game_id, "game")
        if not game.over:
            raise _error(409, "the game is not over: its replay shows every hand")
        return replay_frames(game.record())

    @app.post("/api/replay")
    async def replay_posted(record: Annotated[Any, Body()]) -> dict[str, Any]:
        problem = record_problem(record)
        if problem is not None:
            raise _error(400, f"cannot replay this record: {problem}")
        try:
            return await run_in_threadpool(replay_frames, record)
        except (
            ValueError,
            TypeError,
            KeyError,
            IndexError,
            AttributeError,
            RecursionError,
        ) as error:
            raise _error(400, f"cannot replay this record: {error}") from None

    @app.post("/api/watch")
    async def watch(body: NewWatch, request: Request) -> dict[str, Any]:
        jekyll = default_opponent if body.jekyll is None else body.jekyll
        hyde = default_opponent if body.hyde is None else body.hyde
        try:
            watched = Watched(jekyll, hyde, _seed(body.seed), opponents)
        except ValueError as error:
            raise _error(400, f"agent: {error}") from None
        watch_id, token = keep(watched, request, "watch")
        frame = watched.frame("The cards are dealt", [])
        frame["watch_id"] = watch_id
        frame["token"] = token
        return frame

    @app.post("/api/watch/{watch_id}/step")
    async def watch_step(watch_id: str, request: Request) -> dict[str, Any]:
        watched = find(request, watch_id, "watch")
        decide = decider(games.owner(watch_id))
        games.touch(watch_id)  # a step keeps the watched game from counting as idle
        async with watched.lock:
            started = time.monotonic()
            frame = await watched.step(decide)
            frame["think_seconds"] = round(time.monotonic() - started, 3)
            frame["watch_id"] = watch_id
            return frame

    app.mount("/static", StaticFiles(directory=str(_STATIC)), name="static")
    return app


class ServeError(Exception):
    """The server cannot listen where it was asked to; the message says why, in one line."""


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` and listening (port 0: any free port).

    Raises:
        ServeError: the host is unknown, the port is in use or not allowed.
    """
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise ServeError(f"cannot listen on host {host!r}: {error.strerror}") from None
    family, kind, protocol, _, address = found[0]
    listener = socket.socket(family, kind, protocol)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(LISTEN_BACKLOG)
    except OSError as error:
        listener.close()
        reason = error.strerror or str(error)
        if error.errno == errno.EADDRINUSE:
            reason = "the port is in use; choose another --port, or 0 for any free port"
        raise ServeError(f"cannot listen on {host}:{port}: {reason}") from None
    return listener


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    opponent: str = "heuristic",
    *,
    allow: Iterable[str] = DEFAULT_OPPONENTS,
    max_think_seconds: float = MAX_THINK_SECONDS,
    trust_proxy: bool = False,
) -> None:
    """Run the application with uvicorn until stopped (Ctrl+C or SIGTERM).

    The address is printed once the socket listens, with the port it got (``port`` 0
    asks for any free one). Requests still running when the server is told to stop
    are cut short after ``SHUTDOWN_SECONDS``; an agent still thinking is not waited for.

    Raises:
        ValueError: a port outside 0-65535, a thinking limit outside (0, 60] seconds,
            or an opponent that is unknown or cannot be bounded.
        ServeError: the port cannot be listened on.
    """
    import uvicorn  # lazy: the web extra's server; create_app and its tests do without it

    if not 0 <= port <= 65535:
        raise ValueError(f"--port {port} is not a port: choose 0 to 65535 (0: any free port)")
    if not 0 < max_think_seconds <= MAX_THINK_LIMIT:
        raise ValueError(
            f"--max-think-seconds {max_think_seconds:g}: choose more than 0 and at most "
            f"{MAX_THINK_LIMIT:g} seconds"
        )
    app = create_app(
        opponent, allow=allow, max_think_seconds=max_think_seconds, trust_proxy=trust_proxy
    )
    listener = listening_socket(host, port)
    bound = listener.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        proxy_headers=False,  # the client's address is the peer's, or --trust-proxy's rule
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,
        limit_concurrency=MAX_CONNECTIONS,
        server_header=False,
    )
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: serving on {host}: other machines can reach this server")
    where = f"[{host}]" if ":" in host else host
    print(f"Jekyll vs Hyde: open http://{where}:{bound}/ (Ctrl+C stops)", flush=True)
    uvicorn.Server(config).run(sockets=[listener])
