"""What one client may take of the server: games, request bodies, and who a client is.

- ``client_address``: a client is its remote address; behind a reverse proxy
  (``--trust-proxy``), the last ``X-Forwarded-For`` entry, the one the proxy itself
  appended, since any entry before it is whatever the client chose to send. An IPv4
  address is one client; an IPv6 address counts as its whole /64 network
  (``client_of``), since one host or home is commonly given a /64 and may send from
  any address in it.
- ``BodyLimit``: an ASGI middleware that answers 413 to a request whose body is
  larger than its path allows, by its ``Content-Length`` before anything is read,
  or by counting the bytes as they stream in.
- ``GameRegistry``: the games in memory (played and watched), each with a secret
  token, at most ``max_games`` in all and ``max_per_client`` per client; of these,
  watched games at most ``max_watches`` in all and ``max_watches_per_client`` per
  client. A game is active while it moves: a played game when its person plays,
  a watched game when it is stepped (``touch``); looking at a game does not count.
  A full registry makes room only by dropping a finished game or one idle (not
  moved for ``idle_seconds``, or ``watch_idle_seconds`` for a watched game), the
  least recently moved first; it never ends an active game: it refuses the new one
  (``Refused``, answered 429). A client ends its own game with the game's token
  (``remove``, ``DELETE /api/games/{id}``), which frees its place at once.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.exceptions import HTTPException

MAX_BODY = 16 * 1024  # bytes of a request body: the API's requests are a few dozen bytes
MAX_RECORD_BODY = 256 * 1024  # bytes of a posted game record: over ten times the longest game's
RECORD_PATHS = ("/api/replay",)
WATCH_SHARE = 4  # watched games may take 1/WATCH_SHARE of the server's places by default
TOKEN_HEADER = "x-game-token"
IPV6_CLIENT_PREFIX = 64  # an IPv6 client is its /64 network


def client_address(scope: Mapping[str, Any], trust_proxy: bool) -> str:
    """Who sent the request, as ``client_of`` names it: see the module docstring."""
    peer = scope.get("client")
    address = str(peer[0]) if peer else "unknown"
    if trust_proxy:
        forwarded = [
            value.decode("latin-1")
            for name, value in scope.get("headers", [])
            if name == b"x-forwarded-for"
        ]
        if forwarded:
            last = forwarded[-1].rsplit(",", 1)[-1].strip()
            try:
                ipaddress.ip_address(last)
            except ValueError:  # not an address: the proxy did not write it
                pass
            else:
                address = last
    return client_of(address)


def client_of(address: str) -> str:
    """The client ``address`` belongs to: an IPv4 address itself (also when written as
    an IPv4-mapped IPv6 address), an IPv6 address's /64 network, anything else (not an
    address) as it is."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(ip), IPV6_CLIENT_PREFIX), strict=False))
    return str(ip)


class BodyLimit:
    """Answer 413 to request bodies over ``limit`` bytes (``record_limit`` on ``RECORD_PATHS``)."""

    def __init__(self, app: Any, limit: int = MAX_BODY, record_limit: int = MAX_RECORD_BODY):
        self.app = app
        self.limit = limit
        self.record_limit = record_limit

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.record_limit if scope.get("path") in RECORD_PATHS else self.limit
        message = (
            f"request body too large: at most {limit} bytes on {scope.get('path')} "
            f"({self.record_limit} for a game record posted to /api/replay)"
        )
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > limit:
                await _send_error(send, 413, message)
                return
        received = 0

        async def limited() -> dict[str, Any]:
            nonlocal received
            event = await receive()
            if event["type"] == "http.request":
                received += len(event.get("body", b""))
                if received > limit:
                    raise HTTPException(status_code=413, detail=message)
            return event

        await self.app(scope, limited, send)


async def _send_error(send: Callable, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Refused(Exception):
    """A new game the registry has no room for; the message says which limit and why."""


class Held(Protocol):
    """What the registry holds: a played or watched game."""

    @property
    def over(self) -> bool: ...

    @property
    def deal_key(self) -> tuple[int, ...]: ...


@dataclass
class Entry:
    item: Any
    token: str
    client: str
    kind: str
    used: float


class GameRegistry:
    """The games in memory: see the module docstring.

    ``max_watches`` None gives watched games a quarter of ``max_games`` (at least one).
    """

    def __init__(
        self,
        max_games: int = 256,
        max_per_client: int = 8,
        idle_seconds: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
        *,
        max_watches: int | None = None,
        max_watches_per_client: int = 2,
        watch_idle_seconds: float = 60.0,
    ) -> None:
        if max_watches is None:
            max_watches = max(1, max_games // WATCH_SHARE)
        if (
            max_games < 1
            or max_per_client < 1
            or max_watches < 1
            or max_watches_per_client < 1
            or not idle_seconds > 0
            or not watch_idle_seconds > 0
        ):
            raise ValueError(
                "the game limits must be positive: "
                f"max_games={max_games}, max_per_client={max_per_client}, "
                f"max_watches={max_watches}, max_watches_per_client={max_watches_per_client}, "
                f"idle_seconds={idle_seconds}, watch_idle_seconds={watch_idle_seconds}"
            )
        self.max_games = max_games
        self.max_per_client = max_per_client
        self.max_watches = max_watches
        self.max_watches_per_client = max_watches_per_client
        self.idle_seconds = idle_seconds
        self.watch_idle_seconds = watch_idle_seconds
        self._clock = clock
        self._entries: dict[str, Entry] = {}

    # Read access for the server's own code and tests (no token): by id, the game.
    def __getitem__(self, game_id: str) -> Any:
        return self._entries[game_id].item

    def __contains__(self, game_id: object) -> bool:
        return game_id in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def owner(self, game_id: str) -> str:
        return self._entries[game_id].client

    def deal_in_play(self, key: tuple[int, ...]) -> bool:
        """Whether a game not yet over draws its deals from the stream ``key`` names."""
        return any(e.item.deal_key == key and not e.item.over for e in self._entries.values())

    def add(self, item: Held, client: str, kind: str) -> tuple[str, str]:
        """Keep ``item`` for ``client``; returns its id and its secret token. ``kind`` is
        ``"game"`` (played) or ``"watch"`` (watched).

        Raises:
            Refused: the client has ``max_per_client`` games, or the server
                ``max_games``, or, for a watched game, the client
                ``max_watches_per_client`` watched games or the server ``max_watches``,
                and none of them is finished or idle.
        """
        now = self._clock()
        quiet = (
            f"without a move for {_duration(self.idle_seconds)} (a watched game: "
            f"unstepped for {_duration(self.watch_idle_seconds)})"
        )
        mine = self._keys(client=client)
        if len(mine) >= self.max_per_client and not self._drop_one(mine, now):
            raise Refused(
                f"too many games: this client already has {_count(len(mine), 'game')} in "
                f"progress, the most one client may have here; finish or end one, or leave "
                f"one {quiet}"
            )
        if kind == "watch":
            watch_idle = f"unstepped for {_duration(self.watch_idle_seconds)}"
            watching = self._keys(client=client, kind="watch")
            if len(watching) >= self.max_watches_per_client and not self._drop_one(watching, now):
                raise Refused(
                    "too many watched games: this client already has "
                    f"{_count(len(watching), 'watched game')} in progress, the most one "
                    f"client may watch here; let one finish, or leave one {watch_idle}"
                )
            watching = self._keys(kind="watch")
            if len(watching) >= self.max_watches and not self._drop_one(watching, now):
                raise Refused(
                    f"no room for more watched games: {_count(len(watching), 'watched game')} "
                    "in progress, the most the server keeps for watching; try again when one is "
                    f"over or has been {watch_idle}"
                )
        if len(self._entries) >= self.max_games and not self._drop_one(self._keys(), now):
            raise Refused(
                f"the server is full: {_count(len(self._entries), 'game')} in progress, the "
                f"most it holds; try again when one is over or has been {quiet}"
            )
        game_id = secrets.token_hex(8)
        while game_id in self._entries:
            game_id = secrets.token_hex(8)
        token = secrets.token_urlsafe(16)
        self._entries[game_id] = Entry(item, token, client, kind, now)
        return game_id, token

    def find(self, game_id: str, token: str | None, kind: str) -> Any:
        """The game ``game_id`` of ``kind``, if ``token`` is its token.

        Raises:
            HTTPException: 401 without a token; 404 for an unknown id or a wrong token,
                the same answer for both, so that ids cannot be probed.
        """
        what = "game" if kind == "game" else "watched game"
        if not token:
            raise HTTPException(
                status_code=401,
                detail=f"this {what} needs its token: send the X-Game-Token header with the "
                "token given when it was created",
            )
        entry = self._entries.get(game_id)
        expected = entry.token if entry is not None and entry.kind == kind else "-"
        if not secrets.compare_digest(token.encode(), expected.encode()) or entry is None:
            raise HTTPException(
                status_code=404,
                detail=f"no {what} with this id and token (games are kept in memory only)",
            )
        return entry.item

    def remove(self, game_id: str) -> None:
        """Forget the game ``game_id`` (its client ended it): its place is free at once, and
        so is its seed once no other game in progress deals from it."""
        self._entries.pop(game_id, None)

    def touch(self, game_id: str) -> None:
        """The game ``game_id`` moved (a play, a watched game's step): it is active now."""
        entry = self._entries.get(game_id)
        if entry is not None:
            entry.used = self._clock()

    def _keys(self, client: str | None = None, kind: str | None = None) -> list[str]:
        return [
            key
            for key, e in self._entries.items()
            if (client is None or e.client == client) and (kind is None or e.kind == kind)
        ]

    def _drop_one(self, keys: list[str], now: float) -> bool:
        """Drop the least recently moved finished or idle game among ``keys``, if any."""
        free = []
        for key in keys:
            entry = self._entries[key]
            limit = self.watch_idle_seconds if entry.kind == "watch" else self.idle_seconds
            if entry.item.over or now - entry.used > limit:
                free.append(key)
        if not free:
            return False
        del self._entries[min(free, key=lambda key: self._entries[key].used)]
        return True


def _count(number: float, noun: str) -> str:
    """``number`` and ``noun``, the noun plural unless the number is exactly one:
    ``1 game``, ``2 games``, ``1.5 minutes``."""
    return f"{number:g} {noun}" + ("" if number == 1 else "s")


def _duration(seconds: float) -> str:
    """``1 minute``, ``10 minutes``, ``1.5 minutes``, ``1 second``, ``30 seconds``."""
    if seconds >= 60:
        return _count(seconds / 60, "minute")
    return _count(seconds, "second")
