"""The web application behind ``jekyll-hyde serve``: play, replay and watch games.

Pages (``static/``): ``/`` plays a game against an agent, ``/replay`` steps
through a game record trick by trick, ``/watch`` shows two agents playing each
other, ``/rules`` shows the players' rules.

Every game lives on the server. The play API answers with what the person's
player knows (RULES.md, "What each player knows", through ``player_view``):
the opponent's hand, the set-aside cards, the later deals and the opponent's
pending exchange or swap choices never leave the server while the game runs.
The game record, which shows every deal, is given once the game is over.

This module builds the application from its parts and serves it:

- ``pages``: the HTML pages and the rules;
- ``api``: the JSON API (its paths are listed there), its request bodies and errors;
- ``sessions``: the games kept on the server, played and watched, and their seeds;
- ``views``: what the pages are sent, as JSON;
- ``records``: posted game records checked, and records as replay frames.

What the server guards and how, with the tests that check it, is
``docs/web/threat-model.md``: opponents come from an allow list with bounded thinking
(``opponents``), agents think on a bounded pool of worker threads within a time limit
(``thinking``), and games, clients and request bodies have limits (``limits``).
"""

from __future__ import annotations

import contextlib
import errno
import socket
from collections.abc import AsyncIterator, Iterable

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from jekyll_hyde_app.web import api, pages
from jekyll_hyde_app.web.limits import MAX_BODY, MAX_RECORD_BODY, BodyLimit, GameRegistry
from jekyll_hyde_app.web.opponents import DEFAULT_OPPONENTS, OpponentMenu
from jekyll_hyde_app.web.thinking import MAX_THINK_SECONDS, Thinker, ThinkPool, default_workers

MAX_GAMES = 256  # games in memory, played and watched, of all clients
MAX_GAMES_PER_CLIENT = 8  # of one client (an IPv4 address or an IPv6 /64)
IDLE_SECONDS = 600.0  # a game without a move this long may give its place to a new one
MAX_WATCHES_PER_CLIENT = 2  # watched games of one client, among its MAX_GAMES_PER_CLIENT
WATCH_IDLE_SECONDS = 60.0  # a watched game unstepped this long may give its place
MAX_THINK_LIMIT = 60.0  # the largest --max-think-seconds
MAX_CONNECTIONS = 512  # open connections; more are answered 503
LISTEN_BACKLOG = 2048  # connections the listening socket queues
SHUTDOWN_SECONDS = 0.5  # given to requests still running when the server is told to stop


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

    Returns:
        The FastAPI application: the pages, the JSON API and the static files, with the
        body limit; its thread pool closes when the application shuts down.

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
    app.state.service = api.Service(
        games, opponents, thinker, default_opponent, max_think_seconds, trust_proxy
    )
    app.state.games = games  # by id: a Game (play) or a Watched game
    app.state.opponents = opponents
    app.state.thinker = thinker
    api.answer_errors_as_json(app)
    app.include_router(pages.router)
    app.include_router(api.router)
    app.mount("/static", StaticFiles(directory=str(pages.STATIC)), name="static")
    return app


class ServeError(Exception):
    """The server cannot listen where it was asked to; the message says why, in one line."""


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` and listening (port 0: any free port).

    Args:
        host: the host name or address to listen on (``"127.0.0.1"``, ``"::"``).
        port: the TCP port, 0 for any free one.

    Returns:
        The listening socket (``SO_REUSEADDR`` set, a backlog of ``LISTEN_BACKLOG``);
        ``getsockname()`` gives the port it got.

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

    Args:
        host: the host name or address to listen on; any but ``127.0.0.1``,
            ``localhost`` and ``::1`` is warned about, as other machines can reach it.
        port: the TCP port, 0-65535 (0: any free port).
        opponent: the agent spec the play page offers first; always allowed.
        allow: the agent specs clients may choose as opponents.
        max_think_seconds: the most an agent's decision may take, in seconds: more than
            0 and at most ``MAX_THINK_LIMIT`` (60).
        trust_proxy: behind a reverse proxy, take the client's address from
            ``X-Forwarded-For`` (for the per-client game limits).

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
        # uvicorn annotates int seconds, but hands them to asyncio.wait_for, which takes a float
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,  # type: ignore[arg-type]
        limit_concurrency=MAX_CONNECTIONS,
        server_header=False,
    )
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: serving on {host}: other machines can reach this server")
    where = f"[{host}]" if ":" in host else host
    print(f"Jekyll vs Hyde: open http://{where}:{bound}/ (Ctrl+C stops)", flush=True)
    uvicorn.Server(config).run(sockets=[listener])
