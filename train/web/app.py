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
``GET  /api/agents``                        agent names for the opponent field
``POST /api/games``                         new game: ``{"role", "opponent", "seed"}``
``GET  /api/games/{id}``                    the person's view of the game
``POST /api/games/{id}/play``               ``{"action": id}`` or ``{"actions": [ids]}``
``GET  /api/games/{id}/record``             the game record, once the game is over
``GET  /api/games/{id}/replay``             its replay frames, once the game is over
``POST /api/replay``                        replay frames of a posted game record
``POST /api/watch``                         new watched game: ``{"jekyll", "hyde", "seed"}``
``POST /api/watch/{id}/step``               one more decision of the watched game
==========================================  =========================================

Agents think in worker threads, so a slow agent holds up only its own game.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from importlib import resources
from typing import Annotated, Any

import numpy as np
from fastapi import Body, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from markdown_it import MarkdownIt
from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

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
from jekyll_hyde_env.engine.state import GameState, Trick
from jekyll_hyde_env.rulebook import rules_text

MAX_GAMES = 256  # games kept in memory; the least recently used one goes first
SUGGESTED_AGENTS = ("champion", "heuristic", "ismcts:200", "ismcts:1000", "pimc:50", "random")
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
    from train.play import _prompt as terminal_prompt

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


class Game:
    """A game between the person (``human``) and an agent, kept on the server."""

    def __init__(self, human: int, opponent_spec: str, seed: int | None) -> None:
        from agents import make_agent

        self.opponent = make_agent(opponent_spec)  # ValueError names the known agents
        self.human = human
        self.opponent_spec = opponent_spec
        self.seed = int(np.random.default_rng().integers(2**31)) if seed is None else seed
        rng = np.random.default_rng(self.seed)
        self.state = new_game(rng)
        self.opponent.reset(int(rng.integers(2**31)))
        self.log: list[dict[str, Any]] = []
        self.lock = asyncio.Lock()

    def advance(self) -> None:
        """Let the agent play until the person must act or the game is over."""
        state = self.state
        while state.to_act >= 0 and state.to_act != self.human:
            player = state.to_act
            action = self.opponent.act(player_view(state, player), legal_actions(state))
            self._apply(action)

    def play(self, actions: list[int]) -> None:
        """Apply the person's actions, all of them or none.

        Raises:
            ValueError: an action is not allowed; the message says why.
        """
        from train.play import refusal

        trial = self.state.clone()
        for number, action in enumerate(actions):
            where = f"action {number + 1} of {len(actions)}: " if len(actions) > 1 else ""
            if trial.to_act < 0:
                raise ValueError(f"{where}the game is over")
            if trial.to_act != self.human:
                raise ValueError(f"{where}it is {AGENTS[trial.to_act]}'s turn, not yours")
            if not 0 <= action < NUM_ACTIONS:
                raise ValueError(
                    f"{where}{action} is not an action: card ids are 0-24, colours 25-27"
                )
            reason = refusal(trial, action)
            if reason is not None:
                raise ValueError(f"{where}{action_name(action)} [{action}] is refused: {reason}")
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


class Watched:
    """Two agents playing each other, one decision per step."""

    def __init__(self, jekyll: str, hyde: str, seed: int | None) -> None:
        from agents import make_agent

        self.specs = (jekyll, hyde)
        self.agents = [make_agent(jekyll), make_agent(hyde)]
        self.seed = int(np.random.default_rng().integers(2**31)) if seed is None else seed
        rng = np.random.default_rng(self.seed)
        self.state = new_game(rng)
        for agent in self.agents:
            agent.reset(int(rng.integers(2**31)))
        self.lock = asyncio.Lock()

    def step(self) -> dict[str, Any]:
        """One decision of the agent to act; the frame after it."""
        state = self.state
        if state.to_act < 0:
            return self.frame("The game is over", [])
        player = state.to_act
        before = state.clone()
        action = self.agents[player].act(player_view(state, player), legal_actions(state))
        apply_action(state, action)
        if before.phase in _HANDOVER:
            said = f"{AGENTS[player]} chose a card for the {PHASE_NAMES[before.phase]}"
        elif before.phase == Phase.DECLARE:
            said = f"{AGENTS[player]} declares {COLOUR_NAMES[action - DECLARE_BASE]}"
        else:
            said = f"{AGENTS[player]} plays {card_name(action)}"
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
    opponent: str = "heuristic"
    seed: int | None = None


class Move(BaseModel):
    """``POST /api/games/{id}/play``: one action id, or several (exchange, Greed swap)."""

    model_config = ConfigDict(extra="forbid")
    action: int | None = None
    actions: list[int] | None = None


class NewWatch(BaseModel):
    """``POST /api/watch``: the two agents' specs and an optional seed."""

    model_config = ConfigDict(extra="forbid")
    jekyll: str = "heuristic"
    hyde: str = "champion"
    seed: int | None = None


def _error(status: int, message: str) -> HTTPException:
    return HTTPException(status_code=status, detail=message)


def create_app(default_opponent: str = "heuristic") -> FastAPI:
    """The web application; ``default_opponent`` fills the opponent field of the play page."""
    app = FastAPI(title="Jekyll vs Hyde", docs_url=None, redoc_url=None, openapi_url=None)
    games: OrderedDict[str, Game | Watched] = OrderedDict()
    app.state.games = games  # by id: a Game (play) or a Watched game

    def remember(item: Game | Watched) -> str:
        game_id = secrets.token_hex(8)
        games[game_id] = item
        while len(games) > MAX_GAMES:
            games.popitem(last=False)
        return game_id

    def find(game_id: str, kind: type) -> Any:
        item = games.get(game_id)
        if not isinstance(item, kind):
            what = "game" if kind is Game else "watched game"
            raise _error(404, f"no {what} with id {game_id!r} (games are kept in memory only)")
        games.move_to_end(game_id)
        return item

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        message = error.detail
        if error.status_code == 404 and message == "Not Found":
            message = f"no such page or API path: {request.url.path}"
        elif error.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}"
        return JSONResponse({"error": message}, status_code=error.status_code)

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = []
        for problem in error.errors():
            where = ".".join(str(part) for part in problem.get("loc", ()) if part != "body")
            problems.append(f"{where}: {problem.get('msg')}" if where else problem.get("msg"))
        message = "malformed request: " + "; ".join(problems)
        return JSONResponse({"error": message}, status_code=422)

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
        from agents import agent_names

        return {
            "default": default_opponent,
            "suggested": list(dict.fromkeys((default_opponent, *SUGGESTED_AGENTS))),
            "names": agent_names(),
        }

    @app.post("/api/games")
    async def start(body: NewGame) -> dict[str, Any]:
        if body.role not in ROLES:
            raise _error(400, f"unknown role {body.role!r}: choose jekyll or hyde")
        try:
            game = await run_in_threadpool(Game, ROLES.index(body.role), body.opponent, body.seed)
        except (ValueError, TypeError, OSError) as error:
            raise _error(400, f"opponent {body.opponent!r}: {error}") from None
        game_id = remember(game)
        async with game.lock:
            await run_in_threadpool(game.advance)
            return game.view(game_id)

    @app.get("/api/games/{game_id}")
    async def show(game_id: str) -> dict[str, Any]:
        game = find(game_id, Game)
        return game.view(game_id)

    @app.post("/api/games/{game_id}/play")
    async def play(game_id: str, move: Move) -> dict[str, Any]:
        game = find(game_id, Game)
        if (move.action is None) == (move.actions is None):
            raise _error(422, 'send one of "action": id or "actions": [ids]')
        actions = [move.action] if move.action is not None else move.actions
        if not actions:
            raise _error(422, '"actions" is empty: send at least one action id')
        async with game.lock:
            try:
                game.play(actions)
            except ValueError as error:
                raise _error(400, str(error)) from None
            await run_in_threadpool(game.advance)
            return game.view(game_id)

    @app.get("/api/games/{game_id}/record")
    async def record(game_id: str) -> dict[str, Any]:
        game = find(game_id, Game)
        if game.state.phase != Phase.GAME_OVER:
            raise _error(409, "the game is not over: its record shows every hand")
        return game.record()

    @app.get("/api/games/{game_id}/replay")
    async def replay_game(game_id: str) -> dict[str, Any]:
        return replay_frames(await record(game_id))

    @app.post("/api/replay")
    async def replay_posted(record: Annotated[Any, Body()]) -> dict[str, Any]:
        if not isinstance(record, dict):
            raise _error(400, "not a game record: expected a JSON object")
        try:
            return await run_in_threadpool(replay_frames, record)
        except (ValueError, TypeError, KeyError, IndexError) as error:
            raise _error(400, f"cannot replay this record: {error}") from None

    @app.post("/api/watch")
    async def watch(body: NewWatch) -> dict[str, Any]:
        try:
            watched = await run_in_threadpool(Watched, body.jekyll, body.hyde, body.seed)
        except (ValueError, TypeError, OSError) as error:
            raise _error(400, f"agent: {error}") from None
        watch_id = remember(watched)
        frame = watched.frame("The cards are dealt", [])
        frame["watch_id"] = watch_id
        return frame

    @app.post("/api/watch/{watch_id}/step")
    async def watch_step(watch_id: str) -> dict[str, Any]:
        watched = find(watch_id, Watched)
        async with watched.lock:
            started = time.monotonic()
            frame = await run_in_threadpool(watched.step)
            frame["think_seconds"] = round(time.monotonic() - started, 3)
            frame["watch_id"] = watch_id
            return frame

    app.mount("/static", StaticFiles(directory=str(_STATIC)), name="static")
    return app


def serve(host: str = "127.0.0.1", port: int = 8000, opponent: str = "heuristic") -> None:
    """Run the application with uvicorn until interrupted."""
    import uvicorn

    from agents import make_agent

    make_agent(opponent)  # a bad default opponent fails here, before the server starts
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: serving on {host}: other machines can reach this server")
    print(f"Jekyll vs Hyde: open http://{host}:{port}/ (Ctrl+C stops)")
    uvicorn.run(create_app(opponent), host=host, port=port, log_level="warning")
