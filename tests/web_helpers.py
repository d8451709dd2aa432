"""What the web tests share: clients of the API, moves to send, and looks into answers.

The tests of ``jekyll-hyde serve`` (tests/test_web*.py) play games through FastAPI's
test client. ``TokenClient`` sends each game's token as the pages do (the ``client``
fixture of tests/conftest.py); ``raw_client`` sends only what a test gives it. The moves
are legal ones read from a view; ``cards_in`` and ``keys_in`` look anywhere in an answer
for what it must not hold. The browser tests (tests/test_web_browser.py,
tests/test_web_access.py) serve an app with ``served`` and open Debian's chromium
(``chromium``, ``BROWSER_ARGS``). Test modules import this after skipping when the web
extra is missing.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from jekyll_hyde_app.web.sessions import Game
from jekyll_hyde_env.engine.cards import ALL_CARDS, POTIONS, Phase, card_name, mask_to_ids

TOKEN = "X-Game-Token"
FAST = ("heuristic", "random")
# Keys that would carry hidden cards or the seed that deals them (RULES.md "What each
# player knows"), in any answer about a game that is not over.
FORBIDDEN_KEYS = {"hands", "deals", "set_aside", "opponent_hand", "history", "seed"}


class Sleeper:
    """Thinks ``seconds`` (sleeping: no interpreter lock held, as a search in C), or until
    ``wake`` is set, then plays the first legal action. Counts its decisions in ``calls``."""

    def __init__(self, seconds: float, wake: threading.Event | None = None) -> None:
        self.seconds = seconds
        self.wake = wake or threading.Event()
        self.calls: list[float] = []

    def reset(self, seed=None) -> None:
        pass

    def act(self, view, legal):
        self.calls.append(time.monotonic())
        self.wake.wait(self.seconds)
        return legal[0]


class TokenClient(TestClient):
    """Sends each game's token (from the answer that created it) with the later requests
    for that game, as the pages do; tests/test_web_tokens.py checks the tokens."""

    tokens: dict[str, str]

    def request(self, method, url, **kwargs):
        match = re.match(r"/api/(?:games|watch)/([^/?]+)", str(url))
        if match and match.group(1) in self.tokens:
            headers = {"X-Game-Token": self.tokens[match.group(1)]}
            kwargs["headers"] = {**headers, **(kwargs.get("headers") or {})}
        response = super().request(method, url, **kwargs)
        if response.headers.get("content-type") == "application/json":
            data = response.json()
            if isinstance(data, dict) and "token" in data:
                self.tokens[data.get("game_id") or data.get("watch_id")] = data["token"]
        return response


def raw_client(app) -> TestClient:
    """A client that sends only what a test gives it, no token of its own, and answers a
    server error with its 500 instead of raising it."""
    return TestClient(app, raise_server_exceptions=False)


def proxied(address: str) -> dict[str, str]:
    """Headers of a request a trusted proxy forwards for ``address``."""
    return {"X-Forwarded-For": address}


def cards_in(node) -> set[int]:
    """Card ids of every card object ({"id", "name", ...}) anywhere in a JSON value."""
    if isinstance(node, dict):
        found = {node["id"]} if "id" in node and "name" in node else set()
        return found.union(*(cards_in(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(cards_in(value) for value in node))
    return set()


def keys_in(node) -> set[str]:
    """Every key of every object anywhere in a JSON value."""
    if isinstance(node, dict):
        return set(node).union(*(keys_in(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(keys_in(value) for value in node))
    return set()


def first_give_move(view: dict) -> dict:
    """A legal move for the view: the first of the legal gives of an exchange or swap, the
    first colour to declare, the first legal card."""
    table = view["table"]
    if table["choose"]:
        gives = table.get("legal_gives")
        return {"actions": gives[0] if gives else table["legal_cards"][-table["choose"] :]}
    if table["declare"]:
        return {"action": table["declare"][0]["action"]}
    return {"action": table["legal_cards"][0]}


def top_cards_move(view: dict) -> dict:
    """A legal move for the view: the highest legal cards for an exchange or swap (potions,
    which R2.2's potion rule asks for), the first colour to declare, the first legal card."""
    table = view["table"]
    if table["choose"]:
        return {"actions": table["legal_cards"][-table["choose"] :]}
    if table["declare"]:
        return {"action": table["declare"][0]["action"]}
    return {"action": table["legal_cards"][0]}


def assert_nothing_hidden(view: dict, game: Game) -> None:
    """The view shows no card the person cannot know: the opponent's hand (less the cards
    the person gave it), the set-aside cards, or a later round's deal."""
    state, human = game.state, game.human
    opp = 1 - human
    if state.phase == Phase.GAME_OVER:
        return
    given = state.exch_given[human] | state.swap_given[human]
    hidden = state.hands[opp] & ~given
    dealt = state.deals[state.round - 1]
    hidden |= ALL_CARDS ^ dealt[0] ^ dealt[1]  # the set-aside cards (R2.1)
    hidden_ids = set(mask_to_ids(hidden))
    assert hidden_ids, "the opponent holds unknown cards until the round's last trick"
    assert not cards_in(view["table"]) & hidden_ids
    this_round = [event for event in view["log"] if event["round"] == state.round]
    assert not cards_in(this_round) & hidden_ids
    assert not keys_in(view) & FORBIDDEN_KEYS
    assert view["result"] is None
    text = json.dumps(view["table"])
    for card in hidden_ids:  # not even as a name
        assert f'"{card_name(card)}"' not in text


def play_out(client, app, view: dict) -> dict:
    """Play the game of ``view`` to its end through the API, checking every answer."""
    game = app.state.games[view["game_id"]]
    answers = 0
    while not view["game_over"]:
        assert_nothing_hidden(view, game)
        assert view["table"]["your_turn"] and view["table"]["prompt"]
        response = client.post(f"/api/games/{view['game_id']}/play", json=top_cards_move(view))
        assert response.status_code == 200, response.json()
        view = response.json()
        answers += 1
    # One exchange and ten cards a round at least (R2.2, R2.3).
    assert answers >= 11 * len(game.state.round_log)
    return view


def game_at(client, app, role: str, state, opponent: str = "random"):
    """A game of ``role`` against ``opponent`` whose state is then set to a copy of
    ``state``; returns its play path, its headers and the server's game."""
    view = client.post("/api/games", json={"role": role, "opponent": opponent}).json()
    game = app.state.games[view["game_id"]]
    game.state = state.clone()
    return f"/api/games/{view['game_id']}/play", {TOKEN: view["token"]}, game


def potion_rule_seed(opponent: str) -> int:
    """The first seed whose deals give Jekyll two or more potions in round 2, so the potion
    rule (R2.2) binds Jekyll's round-2 exchange, in a game that reaches round 2 when
    Jekyll plays as ``top_cards_move`` does against ``opponent``."""
    for seed in range(100):
        game = Game(0, opponent, seed)
        if (game.state.deals[1][0] & POTIONS).bit_count() < 2:
            continue
        while game.state.round == 1 and game.state.phase != Phase.GAME_OVER:
            move = top_cards_move(game.view("trial"))
            game.play(move["actions"] if "actions" in move else [move["action"]])
            game.advance()
        if game.state.round == 2:
            return seed
    raise AssertionError("no seed in 0-99 reaches a round-2 exchange under the potion rule")


# --- the browser tests ------------------------------------------------------------------

# Flags that let Debian's chromium run headless in a container, with no network of its own.
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}


def chromium() -> str:
    """The system's chromium, or the test is skipped with the advice to install it."""
    path = shutil.which("chromium")
    if path is None:
        pytest.skip(
            "chromium is not installed: run `make browser` as root, or apt-get install chromium"
        )
    return path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def served(app) -> Iterator[str]:
    """``app`` served by uvicorn on a free loopback port, in a thread of this process,
    until the block ends; yields its address."""
    uvicorn = pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed")
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not instance.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        instance.should_exit = True
        thread.join(10)
