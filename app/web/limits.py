"""What one client may take of the server: games, request bodies, and who a client is.

- ``client_address``: a client is its remote address; behind a reverse proxy
  (``--trust-proxy``), the last ``X-Forwarded-For`` entry, the one the proxy itself
  appended, since any entry before it is whatever the client chose to send.
- ``BodyLimit``: an ASGI middleware that answers 413 to a request whose body is
  larger than its path allows, by its ``Content-Length`` before anything is read,
  or by counting the bytes as they stream in.
- ``GameRegistry``: the games in memory (played and watched), each with a secret
  token, at most ``max_games`` in all and ``max_per_client`` per client. A full
  registry makes room only by dropping a finished game or one idle longer than
  ``idle_seconds``, the least recently used first; it never ends a game someone is
  playing or watching: it refuses the new one (``Refused``, answered 429).
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.exceptions import HTTPException

MAX_BODY = 16 * 1024  # bytes of a request body: the API's requests are a few dozen bytes
MAX_RECORD_BODY = 256 * 1024  # bytes of a posted game record: over ten times the longest game's
RECORD_PATHS = ("/api/replay",)
TOKEN_HEADER = "x-game-token"


def client_address(scope: dict[str, Any], trust_proxy: bool) -> str:
    """Who sent the request: see the module docstring."""
    peer = scope.get("client")
    address = str(peer[0]) if peer else "unknown"
    if not trust_proxy:
        return address
    forwarded = [
        value.decode("latin-1")
        for name, value in scope.get("headers", [])
        if name == b"x-forwarded-for"
    ]
    if not forwarded:
        return address
    last = forwarded[-1].rsplit(",", 1)[-1].strip()
    try:
        return str(ipaddress.ip_address(last))
    except ValueError:  # not an address: the proxy did not write it
        return address


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
    """The games in memory: see the module docstring."""

    def __init__(
        self,
        max_games: int = 256,
        max_per_client: int = 8,
        idle_seconds: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_games < 1 or max_per_client < 1 or idle_seconds <= 0:
            raise ValueError(
                "the game limits must be positive: "
                f"max_games={max_games}, max_per_client={max_per_client}, "
                f"idle_seconds={idle_seconds}"
            )
        self.max_games = max_games
        self.max_per_client = max_per_client
        self.idle_seconds = idle_seconds
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
        """Keep ``item`` for ``client``; returns its id and its secret token.

        Raises:
            Refused: the client has ``max_per_client`` games, or the server
                ``max_games``, and none of them is finished or idle.
        """
        now = self._clock()
        minutes = f"{self.idle_seconds / 60:g} minutes"
        mine = [key for key, e in self._entries.items() if e.client == client]
        if len(mine) >= self.max_per_client and not self._drop_one(mine, now):
            raise Refused(
                f"too many games: this client already has {len(mine)} games in progress, the "
                f"most one client may have here; finish one, or leave one idle {minutes}"
            )
        if len(self._entries) >= self.max_games and not self._drop_one(list(self._entries), now):
            raise Refused(
                f"the server is full: {len(self._entries)} games in progress, the most it "
                f"holds; try again when one is over or has been idle {minutes}"
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
        entry.used = self._clock()
        return entry.item

    def _drop_one(self, keys: list[str], now: float) -> bool:
        """Drop the least recently used finished or idle game among ``keys``, if any."""
        free = [
            key
            for key in keys
            if self._entries[key].item.over or now - self._entries[key].used > self.idle_seconds
        ]
        if not free:
            return False
        del self._entries[min(free, key=lambda key: self._entries[key].used)]
        return True
