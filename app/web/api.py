"""The JSON API of the web app: its request bodies, its routes, and every error as JSON.

Every error is a 4xx answer ``{"error": "..."}`` naming the problem, and the game it
concerns goes on; an unexpected failure is a 500 that says nothing of the code.

==========================================  =========================================
``GET  /api/agents``                        the opponents this server offers
``POST /api/games``                         new game: ``{"role", "opponent", "seed"}``
``GET  /api/games/{id}``                    the person's view of the game
``DELETE /api/games/{id}``                  end the game: its place and seed are free
``POST /api/games/{id}/play``               ``{"action": id}`` or ``{"actions": [ids]}``
``GET  /api/games/{id}/record``             the game record, once the game is over
``GET  /api/games/{id}/replay``             its replay frames, once the game is over
``POST /api/replay``                        replay frames of a posted game record
``POST /api/watch``                         new watched game: ``{"jekyll", "hyde", "seed"}``
``POST /api/watch/{id}/step``               one more decision of the watched game
==========================================  =========================================

A list of actions is one exchange's or Greed swap's cards, or a potion led and its
colour (``sessions.batch_problem``): never a list that runs on past the person's turn.

A new game's answer holds its ``token``, a secret that every later request for
that game sends in the ``X-Game-Token`` header (the record's download link may
give it as ``?token=`` instead: the game is over by then).

The routes share one ``Service`` per application (``app.state.service``): the games
kept, the opponents offered and the agents' thinking. Games and their views are
``sessions`` and ``views``; posted records are checked and replayed by ``records``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictInt
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from jekyll_hyde_app.web.limits import TOKEN_HEADER, GameRegistry, Refused, client_address
from jekyll_hyde_app.web.opponents import OpponentMenu, shown
from jekyll_hyde_app.web.records import record_problem, replay_frames
from jekyll_hyde_app.web.sessions import (
    MAX_SEED,
    Decide,
    Game,
    Watched,
    deal_key,
    deal_stream,
    draw_seed,
)
from jekyll_hyde_app.web.thinking import Thinker
from jekyll_hyde_env.engine.cards import AGENTS
from jekyll_hyde_env.engine.state import PlayerView

MAX_ACTIONS = 16  # the longest list a play request may hold; batch_problem allows 3 at most
ROLES = AGENTS


# --- request bodies ------------------------------------------------------------------------


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


# --- what the routes share -----------------------------------------------------------------


@dataclass
class Service:
    """What the routes of one application share: its games (played and watched, by id),
    the opponents it offers and the thinking of their agents, and how it knows a client."""

    games: GameRegistry
    opponents: OpponentMenu
    thinker: Thinker
    default_opponent: str
    max_think_seconds: float
    trust_proxy: bool

    def client(self, request: Request) -> str:
        return client_address(request.scope, self.trust_proxy)

    def decider(self, owner: str) -> Decide:
        """Decisions for the games of ``owner``, the client who created them, in the
        request that asks for this: they share the request's deadline from now on."""
        deadline = self.thinker.deadline()

        async def decide(agent: Any, view: PlayerView, legal: list[int]) -> tuple[int, str | None]:
            return await self.thinker.decide(owner, agent, view, legal, deadline)

        return decide

    def keep(self, item: Game | Watched, request: Request, kind: str) -> tuple[str, str]:
        """Keep a new game for the requesting client: its id and token (429 when full)."""
        try:
            return self.games.add(item, self.client(request), kind)
        except Refused as refusal:
            raise _error(429, str(refusal), {"Retry-After": "60"}) from None

    def find(self, request: Request, game_id: str, kind: str, token: str | None = None) -> Any:
        """The game ``game_id`` of ``kind``, for the request that holds its token."""
        return self.games.find(game_id, request.headers.get(TOKEN_HEADER) or token, kind)


async def _service(request: Request) -> Service:
    return request.app.state.service


ServiceDep = Annotated[Service, Depends(_service)]


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> HTTPException:
    return HTTPException(status_code=status, detail=message, headers=headers)


def checked_seed(seed: int | None) -> int:
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


# --- errors as JSON ------------------------------------------------------------------------


async def _http_error(request: Request, error: HTTPException) -> JSONResponse:
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


async def _malformed(request: Request, error: RequestValidationError) -> JSONResponse:
    problems = []
    for problem in error.errors():
        where = ".".join(str(part) for part in problem.get("loc", ()) if part != "body")
        problems.append(f"{where}: {problem.get('msg')}" if where else problem.get("msg"))
    message = "malformed request: " + "; ".join(problems)
    return JSONResponse({"error": message}, status_code=422)


async def _failed(request: Request, error: Exception) -> JSONResponse:
    return JSONResponse({"error": "the server failed on this request"}, status_code=500)


def answer_errors_as_json(app: FastAPI) -> None:
    """Make every error of ``app`` a JSON answer ``{"error": "..."}`` that names the problem:
    unknown paths and methods, bodies that are not JSON or do not fit their model, and
    (saying nothing of the code) unexpected failures."""
    # Starlette types a handler as taking any Exception, so that one taking the class it
    # is registered for does not fit (Kludex/starlette#2403): the two ignores below.
    app.add_exception_handler(HTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _malformed)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _failed)


# --- the routes ----------------------------------------------------------------------------

router = APIRouter(prefix="/api")


@router.get("/agents")
async def agent_list(service: ServiceDep) -> dict[str, Any]:
    return {
        "default": service.default_opponent,
        "suggested": service.opponents.allowed,
        "allowed": service.opponents.allowed,
        "max_think_seconds": service.max_think_seconds,
        "max_request_think_seconds": service.thinker.request_limit,
    }


@router.post("/games")
async def start(body: NewGame, request: Request, service: ServiceDep) -> dict[str, Any]:
    if body.role not in ROLES:
        raise _error(400, f"unknown role {shown(body.role)}: choose jekyll or hyde")
    spec = service.default_opponent if body.opponent is None else body.opponent
    seed = checked_seed(body.seed)
    games = service.games
    while games.deal_in_play(deal_key(deal_stream(seed))):
        if body.seed is not None:
            raise _error(
                409,
                f"seed {seed} deals a game in progress: choose another seed, or none "
                "(the server draws one); it is free again once that game is over",
            )
        seed = draw_seed()
    try:
        game = Game(ROLES.index(body.role), spec, seed, service.opponents)
    except ValueError as error:
        raise _error(400, f"opponent: {error}") from None
    game_id, token = service.keep(game, request, "game")
    async with game.lock:
        await game.take_turns(service.decider(games.owner(game_id)))
        view = game.view(game_id)
    view["token"] = token
    return view


@router.get("/games/{game_id}")
async def show(game_id: str, request: Request, service: ServiceDep) -> dict[str, Any]:
    game = service.find(request, game_id, "game")
    if not game.lock.locked():  # an agent's turn left by a request that was cut short
        async with game.lock:
            await game.take_turns(service.decider(service.games.owner(game_id)))
    return game.view(game_id)


@router.delete("/games/{game_id}")
async def end(game_id: str, request: Request, service: ServiceDep) -> dict[str, Any]:
    """End the game ``game_id`` for the client that holds its token, as ``play`` asks
    (401 without it; 404 for a wrong token, an unknown id or a game already ended, one
    answer for all three). The game is forgotten at once: its place among the client's
    games is free, and so is its seed once no other game in progress deals from it. A
    request already running on it (a play waiting for the agent) finishes and answers
    as before, on a game that no later request reaches. Nothing is told that the view
    did not tell: no record, no seed (a game ended early keeps its deals hidden)."""
    game = service.find(request, game_id, "game")
    service.games.remove(game_id)
    return {"game_id": game_id, "ended": True, "was_over": game.over}


@router.post("/games/{game_id}/play")
async def play(game_id: str, move: Move, request: Request, service: ServiceDep) -> dict[str, Any]:
    game = service.find(request, game_id, "game")
    if (move.action is None) == (move.actions is None):
        raise _error(422, 'send one of "action": id or "actions": [ids]')
    actions = [move.action] if move.action is not None else move.actions
    if not actions:
        raise _error(422, '"actions" is empty: send at least one action id')
    decide = service.decider(service.games.owner(game_id))
    async with game.lock:
        await game.take_turns(decide)  # an agent's turn left by a request that was cut short
        try:
            game.play(actions)
        except ValueError as error:
            raise _error(400, str(error)) from None
        service.games.touch(game_id)  # a move keeps the game from counting as idle
        await game.take_turns(decide)
        return game.view(game_id)


@router.get("/games/{game_id}/record")
async def record(
    game_id: str, request: Request, service: ServiceDep, token: str | None = None
) -> dict[str, Any]:
    # The token may come as ?token= here: the page's download link cannot send a header,
    # and the record is given only once the game is over.
    game = service.find(request, game_id, "game", token)
    if not game.over:
        raise _error(409, "the game is not over: its record shows every hand")
    return game.record()


@router.get("/games/{game_id}/replay")
async def replay_game(game_id: str, request: Request, service: ServiceDep) -> dict[str, Any]:
    game = service.find(request, game_id, "game")
    if not game.over:
        raise _error(409, "the game is not over: its replay shows every hand")
    return replay_frames(game.record())


@router.post("/replay")
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


@router.post("/watch")
async def watch(body: NewWatch, request: Request, service: ServiceDep) -> dict[str, Any]:
    jekyll = service.default_opponent if body.jekyll is None else body.jekyll
    hyde = service.default_opponent if body.hyde is None else body.hyde
    try:
        watched = Watched(jekyll, hyde, checked_seed(body.seed), service.opponents)
    except ValueError as error:
        raise _error(400, f"agent: {error}") from None
    watch_id, token = service.keep(watched, request, "watch")
    frame = watched.frame("The cards are dealt", [])
    frame["watch_id"] = watch_id
    frame["token"] = token
    return frame


@router.post("/watch/{watch_id}/step")
async def watch_step(watch_id: str, request: Request, service: ServiceDep) -> dict[str, Any]:
    watched = service.find(request, watch_id, "watch")
    decide = service.decider(service.games.owner(watch_id))
    service.games.touch(watch_id)  # a step keeps the watched game from counting as idle
    async with watched.lock:
        started = time.monotonic()
        frame = await watched.step(decide)
        frame["think_seconds"] = round(time.monotonic() - started, 3)
        frame["watch_id"] = watch_id
        return frame
