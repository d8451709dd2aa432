"""``jekyll-hyde serve`` against hostile clients: the checks of docs/web/threat-model.md.

Each test plays one kind of attack on the web API: reading hidden cards through
seeds and endpoints combined, other clients' games, oversized and malformed
bodies, unlisted and unbounded opponents, agents that think too long, too many
games, two plays at once on one game, and the ``serve`` command's port and
shutdown. Agents that must be slow are test agents that sleep, as a search in C
does, without holding Python's interpreter lock.
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx2", reason="the web extra (httpx2, the test client) is not installed")

from fastapi.testclient import TestClient  # noqa: E402

from jekyll_hyde_agents import HeuristicAgent, RandomAgent  # noqa: E402
from jekyll_hyde_app import cli  # noqa: E402
from jekyll_hyde_app.web.app import MAX_SEED, create_app, legal_gives  # noqa: E402
from jekyll_hyde_app.web.limits import client_address  # noqa: E402
from jekyll_hyde_app.web.opponents import OpponentMenu  # noqa: E402
from jekyll_hyde_env.engine import (  # noqa: E402
    apply_action,
    game_record,
    legal_actions,
    new_game,
    player_view,
    sample_world,
)
from jekyll_hyde_env.engine.cards import (  # noqa: E402
    AGENTS,
    ALL_CARDS,
    DECLARE_BASE,
    FIRST_POTION,
    HYDE,
    JEKYLL,
    NUM_ACTIONS,
    NUM_CARDS,
    Phase,
    card_name,
    mask_to_ids,
)
from jekyll_hyde_env.engine.rules import start_from_masks  # noqa: E402

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


def _client(app) -> TestClient:
    return TestClient(app, raise_server_exceptions=False)


def _from(address: str) -> dict[str, str]:
    """Headers of a request a trusted proxy forwards for ``address``."""
    return {"X-Forwarded-For": address}


def _cards_in(node) -> set[int]:
    """Card ids of every card object ({"id", "name", ...}) anywhere in a JSON value."""
    if isinstance(node, dict):
        found = {node["id"]} if "id" in node and "name" in node else set()
        return found.union(*(_cards_in(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_cards_in(value) for value in node))
    return set()


def _keys_in(node) -> set[str]:
    if isinstance(node, dict):
        return set(node).union(*(_keys_in(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_keys_in(value) for value in node))
    return set()


def _choose(view: dict) -> dict:
    table = view["table"]
    if table["choose"]:
        gives = table.get("legal_gives")
        return {"actions": gives[0] if gives else table["legal_cards"][-table["choose"] :]}
    if table["declare"]:
        return {"action": table["declare"][0]["action"]}
    return {"action": table["legal_cards"][0]}


def _assert_view_hides(view: dict, game) -> None:
    """A running game's view shows no card of the opponent's hand the person does not
    know, no set-aside card, and no key that carries deals or the seed."""
    state, human = game.state, game.human
    if state.phase == Phase.GAME_OVER:
        return
    given = state.exch_given[human] | state.swap_given[human]
    dealt = state.deals[state.round - 1]
    hidden = (state.hands[1 - human] & ~given) | (ALL_CARDS ^ dealt[0] ^ dealt[1])
    assert not _cards_in(view["table"]) & set(mask_to_ids(hidden))
    assert not _keys_in(view) & FORBIDDEN_KEYS


def _hands_shown(frame: dict) -> set[frozenset[int]]:
    return {frozenset(card["id"] for card in cards) for cards in frame["hands"].values()}


# --- hidden cards ----------------------------------------------------------------------------


def test_no_answer_shows_a_hidden_card_whatever_the_seeds_and_endpoints_combined():
    """One seed for a played game, a watched game and a second played game, from the
    player and from another client: the watched game has deals of its own, the second game
    is refused while the first runs, and every answer about the running game hides what
    the player may not know. Once it is over, its seed deals it again (practice)."""
    app = create_app(allow=FAST, trust_proxy=True, max_think_seconds=5)
    seed = 7
    with _client(app) as client:
        mine, theirs = _from("198.51.100.1"), _from("198.51.100.2")
        created = client.post(
            "/api/games",
            json={"role": "jekyll", "opponent": "heuristic", "seed": seed},
            headers=mine,
        )
        assert created.status_code == 200, created.text
        view = created.json()
        game = app.state.games[view["game_id"]]
        game_hands = {frozenset(mask_to_ids(hand)) for deal in game.state.deals for hand in deal}

        frames = []
        watches = []
        for asker in (mine, theirs):
            watch = client.post(
                "/api/watch",
                json={"jekyll": "random", "hyde": "random", "seed": seed},
                headers=asker,
            )
            assert watch.status_code == 200
            frames.append(watch.json())
            watches.append((watch.json(), asker))
            assert not _hands_shown(frames[-1]) & game_hands, "a watched deal is the played one"
        for asker in (mine, theirs):
            for role in AGENTS:
                again = client.post(
                    "/api/games",
                    json={"role": role, "opponent": "random", "seed": seed},
                    headers=asker,
                )
                assert again.status_code == 409, again.text
                assert "in progress" in again.json()["error"] and not _cards_in(again.json())

        for watch, asker in watches:
            frame = watch
            while not frame["game_over"]:
                frame = client.post(
                    f"/api/watch/{watch['watch_id']}/step",
                    headers={TOKEN: watch["token"], **asker},
                ).json()
                frames.append(frame)
        assert len(frames) > 60 and all(frame["seed"] == seed for frame in frames)
        for frame in frames:
            assert not _hands_shown(frame) & game_hands, "a watched frame shows a played deal"
        for watch, _ in watches:
            assert app.state.games[watch["watch_id"]].state.deals != game.state.deals

        token = {TOKEN: view["token"], **mine}
        answers = 0
        while not view["game_over"]:
            _assert_view_hides(view, game)
            shown = client.get(f"/api/games/{view['game_id']}", headers=token)
            assert shown.status_code == 200
            _assert_view_hides(shown.json(), game)
            for path in ("record", "replay"):
                early = client.get(f"/api/games/{view['game_id']}/{path}", headers=token)
                assert early.status_code == 409 and not _cards_in(early.json())
            played = client.post(
                f"/api/games/{view['game_id']}/play", json=_choose(view), headers=token
            )
            assert played.status_code == 200, played.text
            view = played.json()
            answers += 1
        assert answers >= 11 and view["result"]["seed"] == seed

        record = client.get(f"/api/games/{view['game_id']}/record", headers=token).json()
        replayed = client.post("/api/replay", json=record)
        assert replayed.status_code == 200
        first = replayed.json()["frames"][0]
        assert _hands_shown(first) == {frozenset(mask_to_ids(h)) for h in game.state.deals[0]}
        practice = client.post(
            "/api/games",
            json={"role": "hyde", "opponent": "random", "seed": seed},
            headers=theirs,
        )
        assert practice.status_code == 200  # the seed is free again: the same deals
        assert app.state.games[practice.json()["game_id"]].state.deals == game.state.deals


def test_a_seed_the_server_draws_is_large_and_told_only_at_the_end():
    app = create_app(allow=FAST)
    with _client(app) as client:
        views = [client.post("/api/games", json={"opponent": "random"}).json() for _ in range(3)]
        seeds = [app.state.games[view["game_id"]].seed for view in views]
        assert len(set(seeds)) == 3 and all(0 <= seed <= MAX_SEED for seed in seeds)
        assert max(seeds) > 2**32  # drawn from 2**53 values, not a small range
        assert all(
            "seed" not in json.dumps(view["table"]) and view["result"] is None for view in views
        )


def test_a_bad_seed_is_refused_naming_the_seed():
    app = create_app(allow=FAST)
    with _client(app) as client:
        for seed in (-1, MAX_SEED + 1, 10**30):
            for path, body in (("/api/games", {"opponent": "random"}), ("/api/watch", {})):
                response = client.post(path, json={**body, "seed": seed})
                assert response.status_code == 400, (path, seed, response.text)
                error = response.json()["error"]
                assert f"seed {seed} is out of range" in error and "opponent" not in error
        for seed in ("5", 5.5, True):
            response = client.post("/api/games", json={"seed": seed})
            assert response.status_code == 422 and "seed" in response.json()["error"]


# --- batches of actions ----------------------------------------------------------------------


def _reached(condition):
    """The first state of seeded random games for which ``condition`` holds."""
    for seed in range(2000):
        rng = np.random.default_rng(seed)
        state = new_game(rng)
        while state.phase != Phase.GAME_OVER:
            if condition(state):
                return state
            apply_action(state, int(rng.choice(legal_actions(state))))
    raise AssertionError("no random game reached the state asked for")


def _game_at(client, app, role: str, state, opponent: str = "random"):
    """A game of ``role`` against ``opponent`` whose state is then set to a copy of
    ``state``; returns its play path, its headers and the server's game."""
    view = client.post("/api/games", json={"role": role, "opponent": opponent}).json()
    game = app.state.games[view["game_id"]]
    game.state = state.clone()
    return f"/api/games/{view['game_id']}/play", {TOKEN: view["token"]}, game


def _refusals(client, path, headers, game, batches) -> set[str]:
    """Send each batch: each is refused (400) with nothing applied; the messages given."""
    history = list(game.state.history)
    messages = set()
    for batch in batches:
        response = client.post(path, json={"actions": batch}, headers=headers)
        assert response.status_code == 400, (batch, response.text)
        assert game.state.history == history, batch
        messages.add(response.json()["error"])
    return messages


def _names_a_card(message: str, cards) -> list[int]:
    return [
        card for card in cards if re.search(rf"\b{re.escape(card_name(card))}(?![\d+])", message)
    ]


@pytest.mark.parametrize("handover", ["exchange", "swap"])
def test_a_batch_running_past_the_handover_tells_nothing_of_the_opponents_pending_picks(
    handover,
):
    """Hyde leads once the exchange (marker on space 5, R3) or the Greed swap (Hyde won the
    trick, T6b, T7) is done. A batch of Hyde's picks followed by a lead of X would play X
    if Jekyll's pending picks hold it: every such batch is refused, before anything is
    applied, in the same words whatever X is (RULES.md "What each player knows")."""
    if handover == "exchange":
        deals = new_game(np.random.default_rng(5)).deals
        state = start_from_masks(deals, round_number=2, marker=5)
        while state.to_act == JEKYLL:  # Jekyll's two picks, hidden from Hyde
            apply_action(state, legal_actions(state)[-1])
    else:
        state = _reached(
            lambda s: s.phase == Phase.SWAP and s.to_act == HYDE and s.trick_log[-1].winner == HYDE
        )
    assert state.to_act == HYDE and state.picks[JEKYLL]
    unknown = [card for card in range(NUM_CARDS) if not state.hands[HYDE] >> card & 1]
    assert set(mask_to_ids(state.picks[JEKYLL])) < set(unknown)
    give = legal_gives(state)[0]
    app = create_app(allow=FAST)
    with _client(app) as client:
        path, headers, game = _game_at(client, app, "hyde", state)
        for tail in (
            lambda x: [x],
            lambda x: [x, x],
            lambda x: [x, DECLARE_BASE],
            lambda x: [x, NUM_ACTIONS + 5],
        ):
            messages = _refusals(client, path, headers, game, [give + tail(x) for x in unknown])
            assert len(messages) == 1, sorted(messages)  # the same words for every X
            assert not _names_a_card(messages.pop(), unknown)
        played = client.post(path, json={"actions": give}, headers=headers)  # the game goes on
        assert played.status_code == 200, played.text
        assert game.state.phase == Phase.LEAD and game.state.to_act == HYDE


def test_a_batch_running_past_a_rounds_end_tells_nothing_of_the_next_deal():
    """Jekyll follows the tenth trick with the one card left, then would give the next
    round's first exchange card (R2.2): a batch that runs on past the trick is refused,
    before anything is applied, in the same words whatever card it names next."""
    state = _reached(
        lambda s: s.phase == Phase.FOLLOW
        and s.to_act == JEKYLL
        and s.hands[JEKYLL].bit_count() == 1
        and s.round < 3
    )
    last = legal_actions(state)[0]
    app = create_app(allow=FAST)
    with _client(app) as client:
        path, headers, game = _game_at(client, app, "jekyll", state)
        for tail in (lambda x: [x], lambda x: [x, x], lambda x: [x, 99]):
            batches = [[last, *tail(x)] for x in range(NUM_CARDS)]
            messages = _refusals(client, path, headers, game, batches)
            assert len(messages) == 1, sorted(messages)
            assert not _names_a_card(messages.pop(), set(range(NUM_CARDS)) - {last})
        played = client.post(path, json={"actions": [last]}, headers=headers)
        assert played.status_code == 200, played.text
        assert game.state.round == state.round + 1 or game.state.phase == Phase.GAME_OVER


def test_a_batch_is_one_exchanges_or_swaps_picks_or_a_potion_led_with_its_colour():
    """What a batch may be: up to ``picks_left`` cards of the exchange or Greed swap under
    way, each legal after the ones before it (R2.2's potion rule included), or a potion
    led and its colour (T1, T2). Anything else is refused whole, naming what is allowed."""
    state = start_from_masks(new_game(np.random.default_rng(8)).deals, round_number=3)
    app = create_app(allow=FAST)
    with _client(app) as client:
        path, headers, game = _game_at(client, app, "jekyll", state)
        give = legal_gives(state)[0]
        spare = next(c for c in mask_to_ids(state.hands[JEKYLL]) if c not in give)
        too_many = client.post(path, json={"actions": [*give, spare]}, headers=headers)
        assert too_many.status_code == 400
        error = too_many.json()["error"]
        assert "4 actions" in error and "at most 3" in error and "exchange" in error, error
        assert game.state.history == []
        assert client.post(path, json={"actions": give[:1]}, headers=headers).status_code == 200
        rest = client.post(path, json={"actions": give[1:]}, headers=headers)
        assert rest.status_code == 200, rest.text
        assert game.state.history[:3] == give

        leads = _reached(
            lambda s: s.phase == Phase.LEAD
            and s.to_act == JEKYLL
            and s.hands[JEKYLL] >> FIRST_POTION
            and s.hands[JEKYLL] & ((1 << FIRST_POTION) - 1)
        )
        path, headers, game = _game_at(client, app, "jekyll", leads)
        potion = mask_to_ids(leads.hands[JEKYLL] >> FIRST_POTION << FIRST_POTION)[0]
        colour = mask_to_ids(leads.hands[JEKYLL] & ((1 << FIRST_POTION) - 1))[0]
        for batch in (
            [colour, DECLARE_BASE],
            [potion, colour],
            [potion, DECLARE_BASE, DECLARE_BASE + 1],
            [DECLARE_BASE, potion],
        ):
            response = client.post(path, json={"actions": batch}, headers=headers)
            assert response.status_code == 400, batch
            error = response.json()["error"]
            assert "exchange or Greed swap" in error and "potion" in error, error
        assert game.state.history == leads.history
        response = client.post(path, json={"actions": [potion, DECLARE_BASE + 2]}, headers=headers)
        assert response.status_code == 200, response.text
        assert game.state.history[len(leads.history) : len(leads.history) + 2] == [
            potion,
            DECLARE_BASE + 2,
        ]


def _random_batch(state, rng) -> list[int]:
    """A batch to try at the person's decision: ids drawn at random, or a legal start
    (picks, a card, a potion and its colour) with random ids after it."""
    if rng.random() < 0.25:
        return [int(a) for a in rng.integers(-1, NUM_ACTIONS + 2, size=rng.integers(1, 5))]
    legal = legal_actions(state)
    potions = [a for a in legal if FIRST_POTION <= a < DECLARE_BASE]
    if state.phase in (Phase.EXCHANGE, Phase.SWAP):
        gives = legal_gives(state)
        give = gives[rng.integers(len(gives))]
        start = give[: rng.integers(1, len(give) + 1)]
    elif state.phase == Phase.LEAD and potions and rng.random() < 0.5:
        start = [int(rng.choice(potions)), DECLARE_BASE + int(rng.integers(3))]
    else:
        start = [int(rng.choice(legal))]
    return start + [int(a) for a in rng.integers(0, NUM_ACTIONS, size=rng.integers(0, 3))]


def _outcome(game, state, batch) -> str:
    """What ``Game.play(batch)`` says on a copy of ``game`` set to ``state``."""
    trial = copy.copy(game)
    trial.state, trial.log = state.clone(), []
    try:
        trial.play(batch)
    except ValueError as error:
        return str(error)
    return "accepted"


def test_no_refused_batch_tells_anything_hidden_over_whole_games():
    """Whole games with random batches at every decision of the person: a batch's answer
    is the same in worlds re-dealt from what the person knows (``sample_world`` re-deals
    the opponent's unknown cards, its pending picks, the set-aside cards and the later
    deals), so it depends on nothing hidden; and no refusal names a card the person
    neither holds, nor sent, nor has seen."""
    app = create_app(allow=FAST)
    rng = np.random.default_rng(2024)
    answers = {"accepted": 0, "refused": 0}
    with _client(app) as client:
        for seed in range(8):
            body = {"role": AGENTS[seed % 2], "opponent": "random", "seed": seed}
            view = client.post("/api/games", json=body).json()
            game = app.state.games[view["game_id"]]
            path, headers = f"/api/games/{view['game_id']}/play", {TOKEN: view["token"]}
            while not view["game_over"]:
                state, human = game.state.clone(), game.human
                seen = player_view(state, human)
                known = seen.hand | seen.picks | seen.opp_known | seen.played | seen.opp_played
                worlds = [sample_world(seen, rng) for _ in range(3)]
                batches = [_random_batch(state, rng) for _ in range(4)]
                for batch in batches:
                    outcome = _outcome(game, state, batch)
                    assert {_outcome(game, world, batch) for world in worlds} == {outcome}, batch
                    if outcome != "accepted":
                        named = _names_a_card(outcome, set(range(NUM_CARDS)) - set(batch))
                        assert not [card for card in named if not known >> card & 1], outcome
                outcome = _outcome(game, state, batches[0])
                response = client.post(path, json={"actions": batches[0]}, headers=headers)
                if outcome == "accepted":
                    assert response.status_code == 200, response.text
                    answers["accepted"] += 1
                else:
                    assert response.status_code == 400 and response.json()["error"] == outcome
                    assert game.state.history == state.history
                    answers["refused"] += 1
                    response = client.post(path, json=_choose(view), headers=headers)
                view = response.json()
    assert answers["accepted"] > 50 and answers["refused"] > 50, answers


# --- ids and tokens --------------------------------------------------------------------------


def test_every_later_request_for_a_game_needs_its_own_token():
    app = create_app(allow=FAST)
    with _client(app) as client:
        view = client.post("/api/games", json={"role": "jekyll", "opponent": "random"}).json()
        other = client.post("/api/games", json={"role": "hyde", "opponent": "random"}).json()
        watch = client.post("/api/watch", json={"jekyll": "random", "hyde": "random"}).json()
        assert re.fullmatch(r"[0-9a-f]{16}", view["game_id"])
        assert len(view["token"]) >= 22 and view["token"] != other["token"]  # 128 bits
        game = f"/api/games/{view['game_id']}"
        requests = [
            ("GET", game, None),
            ("POST", f"{game}/play", _choose(view)),
            ("GET", f"{game}/record", None),
            ("GET", f"{game}/replay", None),
        ]
        unknown = client.get("/api/games/0123456789abcdef", headers={TOKEN: view["token"]})
        assert unknown.status_code == 404
        for method, path, body in requests:
            missing = client.request(method, path, json=body)
            assert missing.status_code == 401 and TOKEN in missing.json()["error"], path
            for wrong in ("x", other["token"], watch["token"], view["token"] + "x"):
                refused = client.request(method, path, json=body, headers={TOKEN: wrong})
                assert refused.status_code == 404, (path, wrong)
                assert refused.json() == unknown.json()  # a wrong token tells nothing more
        step = f"/api/watch/{watch['watch_id']}/step"
        assert client.post(step).status_code == 401
        assert client.post(step, headers={TOKEN: view["token"]}).status_code == 404
        assert client.post(step, headers={TOKEN: watch["token"]}).status_code == 200
        # The record's download link may carry the token in the query; nothing else may.
        assert client.get(f"{game}?token={view['token']}").status_code == 401
        early = client.get(f"{game}/record?token={view['token']}")
        assert early.status_code == 409
        assert client.get(game, headers={TOKEN: view["token"]}).status_code == 200
        assert app.state.games[view["game_id"]].state.history == []  # no request moved it


# --- request bodies --------------------------------------------------------------------------


def _finished_record(client) -> dict:
    view = client.post("/api/games", json={"role": "jekyll", "opponent": "random"}).json()
    token = {TOKEN: view["token"]}
    while not view["game_over"]:
        view = client.post(
            f"/api/games/{view['game_id']}/play", json=_choose(view), headers=token
        ).json()
    return client.get(f"/api/games/{view['game_id']}/record", headers=token).json()


def test_bodies_over_the_size_limit_are_answered_413_by_length_or_as_they_stream():
    app = create_app(allow=FAST)
    with _client(app) as client:
        big = json.dumps({"role": "jekyll", "opponent": "x" * 20_000})
        response = client.post(
            "/api/games", content=big, headers={"content-type": "application/json"}
        )
        assert response.status_code == 413 and "at most 16384 bytes" in response.json()["error"]

        def chunks():  # no Content-Length: the size is counted as the body streams in
            yield b'{"role": "jekyll", "opponent": "'
            for _ in range(40):
                yield b"x" * 1000
            yield b'"}'

        response = client.post(
            "/api/games", content=chunks(), headers={"content-type": "application/json"}
        )
        assert response.status_code == 413 and "too large" in response.json()["error"]

        record = _finished_record(client)
        headers = {"content-type": "application/json"}

        def indented(size: int) -> str:  # the record pretty-printed to about ``size`` bytes
            text = json.dumps(record, indent=1)
            return text.replace("\n", "\n" + " " * (size // text.count("\n")))

        padded = indented(100_000)
        assert 64 * 1024 < len(padded) < 256 * 1024  # a record may be larger than a request
        assert client.post("/api/replay", content=padded, headers=headers).status_code == 200
        huge = indented(300_000)
        response = client.post("/api/replay", content=huge, headers=headers)
        assert response.status_code == 413 and "/api/replay" in response.json()["error"]
        assert len(app.state.games) == 1  # nothing was created by the refused bodies


def _malformed_records(record: dict) -> list[dict]:
    return [
        dict(record, actions=[[1]]),
        dict(record, actions=["x"]),
        dict(record, actions={"0": 1}),
        dict(record, actions=7),
        dict(record, actions=[{"agent": "jekyll", "action": "1"}]),
        dict(record, actions=[{"agent": ["jekyll"], "action": 1}]),
        dict(record, result=[]),
        dict(record, result={"winner": {}, "marker": 3}),
        dict(record, players=[]),
        dict(record, players={"jekyll": [[[["deep"]]]]}),
        dict(record, deals=[[1]] * 3),
        dict(record, deals={"jekyll": []}),
        dict(record, deals=[{"jekyll": ["x"], "hyde": []}] * 3),
        dict(record, version=[[1]]),
        {"format": "jekyll_hyde_record"},
    ]


def test_every_malformed_body_gets_a_4xx_with_a_message():
    app = create_app(allow=FAST)
    deep = "[" * 5000 + "]" * 5000
    with _client(app) as client:
        record = _finished_record(client)
        view = client.post("/api/games", json={"opponent": "random"}).json()
        play = f"/api/games/{view['game_id']}/play"
        cases: list[tuple[str, object]] = [
            (path, body)
            for path in ("/api/games", "/api/watch", play, "/api/replay")
            for body in (
                b"{not json",
                b"\xff\xfe",
                deep.encode(),
                ('{"seed": ' + deep + "}").encode(),
                b"[1, 2]",
                b'"text"',
                b"null",
                b'{"role": 1, "opponent": [], "seed": {}}',
                b'{"actions": "x", "action": [1]}',
                b'{"actions": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]}',
            )
        ]
        cases += [("/api/replay", json.dumps(bad).encode()) for bad in _malformed_records(record)]
        for path, body in cases:
            response = client.post(
                path,
                content=body,
                headers={"content-type": "application/json", TOKEN: view["token"]},
            )
            assert 400 <= response.status_code < 500, (path, body[:80], response.text[:200])
            assert response.json()["error"], (path, body[:80])
        assert app.state.games[view["game_id"]].state.history == []


# --- opponents and their budgets ------------------------------------------------------------


def test_only_listed_opponents_are_built_and_refusals_name_the_allowed_ones():
    app = create_app(allow=FAST, max_think_seconds=1)
    with _client(app) as client:
        answers = {}
        # Server paths first: the same answer whether the file exists or not.
        for spec in (
            "/etc/passwd",
            "/etc/nonexistent_file",
            "agents",
            "lowest",
            "champion",
            "ismcts:1000",
            "ismcts:5s",
            "az:1",
            "br:10,target=random",
            "pimc:3",
            "ismcts:2000000000",
            "ismcts:3000000000",
            "pimc:3000000000",
        ):
            for path, body in (("/api/games", {"opponent": spec}), ("/api/watch", {"hyde": spec})):
                response = client.post(path, json=body)
                assert response.status_code == 400, (spec, response.text)
                error = response.json()["error"]
                assert "not offered" in error and "heuristic, random" in error, error
                answers[spec, path] = error.replace(repr(spec), "SPEC")
        assert (
            answers["/etc/passwd", "/api/games"] == answers["/etc/nonexistent_file", "/api/games"]
        )
        assert client.get("/api/agents").json()["allowed"] == ["heuristic", "random"]
        assert len(app.state.games) == 0


def test_the_allow_list_refuses_unbounded_specs_and_bounds_the_rest():
    for allow, think, reason in (
        (["ismcts:2000000000"], 3, "at most 100000 simulations"),
        (["ismcts:3000000000"], 3, "at most 100000 simulations"),
        (["az:200000"], 3, "at most 100000 simulations"),
        (["ismcts:5s"], 2, "more than the server's limit of 2 s"),
        (["pimc:50"], 3, "does not offer pimc"),
        (["pimc:3000000000"], 3, "does not offer pimc"),
        (["br:10,target=random"], 3, "cannot bound"),
        (["/etc/passwd"], 3, "/etc/passwd"),
    ):
        with pytest.raises(ValueError, match=re.escape(reason)):
            create_app(allow=allow, max_think_seconds=think)
    app = create_app(allow=["ismcts:1000", "ismcts:0.2s", "az:50"], max_think_seconds=0.5)
    menu = app.state.opponents
    assert menu.build("ismcts:1000", 1).config.time_budget == pytest.approx(0.4)
    assert menu.build("ismcts:0.2s", 1).config.time_budget == pytest.approx(0.2)
    first, second = menu.build("az:50", 1), menu.build("az:50", 2)
    assert first.config.time_budget == pytest.approx(0.4)
    assert first.nets is second.nets  # the network is shared, not loaded per game


# --- thinking time ---------------------------------------------------------------------------


def test_a_decision_past_the_limit_is_the_fallbacks_and_the_game_goes_on():
    wake = threading.Event()
    sleeper = Sleeper(30, wake)
    menu = OpponentMenu({"sleeper": sleeper, "heuristic": HeuristicAgent()})
    app = create_app("heuristic", opponents=menu, max_think_seconds=0.3)
    try:
        with _client(app) as client:
            started = time.monotonic()
            response = client.post("/api/games", json={"role": "hyde", "opponent": "sleeper"})
            assert time.monotonic() - started < 3 and response.status_code == 200
            view = response.json()
            notes = [event["text"] for event in view["log"] if event["kind"] == "note"]
            assert notes and "did not decide within 0.3 s" in notes[0]
            assert view["table"]["your_turn"] and view["you"] == "hyde"
            game = app.state.games[view["game_id"]]
            assert len(game.state.history) == 1  # the fallback's legal exchange pick
    finally:
        wake.set()


def test_the_decisions_one_request_waits_for_share_one_deadline():
    """After Jekyll's round-3 exchange, Hyde's agent picks three cards and leads (marker on
    space 5, R3): four decisions in one play request. Together they get twice
    ``max_think_seconds``; the decisions left when it has passed are the fallback's."""
    wake = threading.Event()
    sleeper = Sleeper(1.0, wake)
    menu = OpponentMenu({"slow": sleeper, "heuristic": HeuristicAgent()})
    app = create_app("heuristic", opponents=menu, max_think_seconds=1.2)
    assert app.state.thinker.request_limit == pytest.approx(2.4)
    state = start_from_masks(new_game(np.random.default_rng(8)).deals, round_number=3, marker=5)
    try:
        with _client(app) as client:
            path, headers, game = _game_at(client, app, "jekyll", state, "slow")
            started = time.monotonic()
            played = client.post(path, json={"actions": legal_gives(state)[0]}, headers=headers)
            elapsed = time.monotonic() - started
            assert played.status_code == 200, played.text
            assert 1.9 < elapsed < 3.5, f"the request took {elapsed:.2f} s"
            assert game.state.phase == Phase.FOLLOW and game.state.to_act == JEKYLL  # Hyde led
            notes = [event["text"] for event in played.json()["log"] if event["kind"] == "note"]
            assert len(notes) >= 2 and "2.4 s one request" in notes[-1], notes
            assert len(sleeper.calls) < 4  # the last decision was not even asked for
    finally:
        wake.set()


def test_one_clients_thinking_games_do_not_slow_another_clients_answers():
    menu = OpponentMenu({"slow": Sleeper(1.2), "heuristic": HeuristicAgent()})
    app = create_app(
        "heuristic", opponents=menu, max_think_seconds=2.5, workers=2, trust_proxy=True
    )
    with _client(app) as client:
        other = client.post("/api/games", json={"role": "jekyll"}, headers=_from("203.0.113.9"))
        other = other.json()
        token = {TOKEN: other["token"], **_from("203.0.113.9")}
        slow = [
            threading.Thread(
                target=client.post,
                args=("/api/games",),
                kwargs={
                    "json": {"role": "hyde", "opponent": "slow"},
                    "headers": _from("203.0.113.1"),
                },
            )
            for _ in range(3)
        ]
        for thread in slow:
            thread.start()
        time.sleep(0.3)  # three decisions of one client asked for: one thinks, two wait
        started = time.monotonic()
        shown = client.get(f"/api/games/{other['game_id']}", headers=token)
        played = client.post(
            f"/api/games/{other['game_id']}/play", json=_choose(other), headers=token
        )
        elapsed = time.monotonic() - started
        for thread in slow:
            thread.join(10)
        assert shown.status_code == 200 and played.status_code == 200
        assert elapsed < 0.6, f"another client's answers took {elapsed:.2f} s"
        assert not [event for event in played.json()["log"] if event["kind"] == "note"]
        assert all(not thread.is_alive() for thread in slow)


def test_two_simultaneous_plays_on_one_game_leave_it_consistent():
    menu = OpponentMenu({"slow": Sleeper(1.0), "random": RandomAgent()})
    app = create_app("random", opponents=menu, max_think_seconds=3)
    with _client(app) as client:
        view = client.post("/api/games", json={"role": "jekyll", "opponent": "slow", "seed": 3})
        view = view.json()
        token = {TOKEN: view["token"]}
        game = app.state.games[view["game_id"]]
        card = view["table"]["legal_cards"][0]
        answers = []

        def play():
            answers.append(
                client.post(
                    f"/api/games/{view['game_id']}/play", json={"action": card}, headers=token
                )
            )

        threads = [threading.Thread(target=play) for _ in range(2)]
        for thread in threads:
            thread.start()
        time.sleep(0.1)  # the first play's agent is thinking, the game's lock held
        started = time.monotonic()
        during = client.get(f"/api/games/{view['game_id']}", headers=token)
        assert time.monotonic() - started < 0.5 and during.status_code == 200
        for thread in threads:
            thread.join(10)
        statuses = sorted(answer.status_code for answer in answers)
        assert statuses == [200, 400], [answer.text for answer in answers]
        refused = next(answer for answer in answers if answer.status_code == 400)
        assert "is refused" in refused.json()["error"]
        assert game.state.history.count(card) == 1 and game.state.history[0] == card
        record = game_record(game.state)  # the history replays to the state
        assert record["actions"][0] == {
            "agent": "jekyll",
            "action": card,
            "phase": "exchange",
            "round": 1,
        }


# --- games per client and in all -------------------------------------------------------------


def test_games_are_capped_per_client_and_in_all_and_no_active_game_is_evicted():
    app = create_app(
        allow=FAST, trust_proxy=True, max_games=5, max_games_per_client=2, idle_seconds=2
    )
    with _client(app) as client:
        tokens = {}

        def new(address, kind="games", role="jekyll"):
            body = {"role": role, "opponent": "random"} if kind == "games" else {}
            response = client.post(f"/api/{kind}", json=body, headers=_from(address))
            if response.status_code == 200:
                data = response.json()
                tokens[data.get("game_id") or data.get("watch_id")] = (kind, data["token"])
            return response

        assert new("192.0.2.1").status_code == 200
        assert new("192.0.2.1", "watch").status_code == 200  # watched games count too
        refused = new("192.0.2.1")
        assert refused.status_code == 429 and "too many games" in refused.json()["error"]
        assert refused.headers["retry-after"] == "60"
        for address in ("192.0.2.2", "192.0.2.2", "192.0.2.3"):
            assert new(address).status_code == 200
        full = new("192.0.2.4")
        assert full.status_code == 429 and "server is full" in full.json()["error"]
        assert len(app.state.games) == 5

        def alive(game_id):
            """Whether the game is still kept: a played game's view, which is no move."""
            kind, token = tokens[game_id]
            if kind == "watch":
                return step(game_id)
            return client.get(f"/api/games/{game_id}", headers={TOKEN: token}).status_code == 200

        def step(game_id):
            """A watched game's step, or a move in a played game: what keeps a game."""
            kind, token = tokens[game_id]
            if kind == "watch":
                path = f"/api/watch/{game_id}/step"
                return client.post(path, headers={TOKEN: token}).status_code == 200
            view = client.get(f"/api/games/{game_id}", headers={TOKEN: token}).json()
            played = client.post(
                f"/api/games/{game_id}/play", json=_choose(view), headers={TOKEN: token}
            )
            return played.status_code == 200

        assert all(alive(game_id) for game_id in tokens)
        time.sleep(2.1)  # every game idle now; keep all but the first one active
        first, *rest = list(tokens)
        assert all(step(game_id) for game_id in rest)
        first_token = {TOKEN: tokens[first][1]}
        for path in ("", "/record", "/replay"):  # looking at a game does not keep it
            assert client.get(f"/api/games/{first}{path}", headers=first_token).status_code in (
                200,
                409,
            )
        assert new("192.0.2.4").status_code == 200  # takes the idle game's place
        assert not alive(first) and all(alive(game_id) for game_id in rest)
        assert new("192.0.2.5").status_code == 429  # no other game is idle or over

        # A finished game gives its place at once.
        finished = next(key for key in rest if tokens[key][0] == "games")
        view = client.get(f"/api/games/{finished}", headers={TOKEN: tokens[finished][1]}).json()
        while not view["game_over"]:
            view = client.post(
                f"/api/games/{finished}/play",
                json=_choose(view),
                headers={TOKEN: tokens[finished][1]},
            ).json()
        assert new("192.0.2.5").status_code == 200
        assert finished not in app.state.games
        assert all(alive(key) for key in tokens if key not in (first, finished))


def test_many_games_share_the_agents_network_in_memory():
    app = create_app(
        "champion",
        allow=["champion"],
        max_games=64,
        max_games_per_client=64,
        max_watches=20,
        max_watches_per_client=20,
    )
    with _client(app) as client:
        views = [client.post("/api/games", json={"role": "hyde"}).json() for _ in range(20)]
        watched = [client.post("/api/watch", json={}).json() for _ in range(20)]
        agents = [app.state.games[view["game_id"]].opponent for view in views]
        agents += [agent for w in watched for agent in app.state.games[w["watch_id"]].agents]
        assert len(agents) == 60
        assert len({id(agent) for agent in agents}) == 60  # each game its own agent
        assert len({id(agent._layers) for agent in agents}) == 1  # one copy of the weights


def test_watched_games_take_a_quarter_of_the_server_two_per_client_and_idle_sooner():
    """32 addresses asking for 8 watched games each would fill 256 places: watched games
    get a quarter of them, two per client, and a watched game nobody steps for
    ``watch_idle_seconds`` gives its place to a new one; played games keep the rest."""
    app = create_app(allow=FAST, trust_proxy=True)
    with _client(app) as client:
        taken: dict[str, int] = {}
        for host in range(32):
            address = f"198.51.100.{host + 1}"
            for _ in range(8):
                answer = client.post("/api/watch", json={}, headers=_from(address))
                if answer.status_code == 200:
                    taken[address] = taken.get(address, 0) + 1
                else:
                    assert answer.status_code == 429, answer.text
                    assert "watched games" in answer.json()["error"], answer.text
        assert sum(taken.values()) == 64 and max(taken.values()) == 2
        for _ in range(8):  # a new client's played games still find room
            answer = client.post("/api/games", json={}, headers=_from("203.0.113.77"))
            assert answer.status_code == 200, answer.text

    app = create_app(allow=FAST, trust_proxy=True, watch_idle_seconds=0.5)
    with _client(app) as client:
        me = _from("192.0.2.8")
        first, second = (client.post("/api/watch", json={}, headers=me).json() for _ in "12")
        third = client.post("/api/watch", json={}, headers=me)
        assert third.status_code == 429 and "2 watched games" in third.json()["error"]
        time.sleep(0.6)  # neither is stepped: both idle
        step = f"/api/watch/{second['watch_id']}/step"
        assert client.post(step, headers={TOKEN: second["token"], **me}).status_code == 200
        assert client.post("/api/watch", json={}, headers=me).status_code == 200
        gone = f"/api/watch/{first['watch_id']}/step"
        assert client.post(gone, headers={TOKEN: first["token"], **me}).status_code == 404
        assert client.post(step, headers={TOKEN: second["token"], **me}).status_code == 200
        assert client.post("/api/watch", json={}, headers=me).status_code == 429


def test_a_client_is_an_ipv4_address_or_an_ipv6_64_network():
    """One host is commonly given a whole IPv6 /64: its addresses are one client, for the
    game limits and for the agents' worker threads alike."""
    def scope(address: str, forwarded: str | None = None) -> dict:
        headers = [(b"x-forwarded-for", forwarded.encode())] if forwarded else []
        return {"client": (address, 5000), "headers": headers}

    network = client_address(scope("2001:db8:1:2::5"), trust_proxy=False)
    assert network == "2001:db8:1:2::/64"
    assert client_address(scope("2001:db8:1:2:ffff:ffff:ffff:ffff"), False) == network
    assert client_address(scope("2001:DB8:1:2:0:0:0:9"), False) == network
    assert client_address(scope("2001:db8:1:3::5"), False) != network
    assert client_address(scope("::ffff:198.51.100.7"), False) == "198.51.100.7"
    assert client_address(scope("10.0.0.5", "2001:db8:9::1"), True) == "2001:db8:9::/64"

    app = create_app(allow=FAST, trust_proxy=True, max_games_per_client=2)
    with _client(app) as client:
        for address in ("2001:db8::1", "2001:db8::2:3"):
            assert client.post("/api/games", json={}, headers=_from(address)).status_code == 200
        refused = client.post("/api/games", json={}, headers=_from("2001:db8::ffff:1"))
        assert refused.status_code == 429 and "too many games" in refused.json()["error"]
        other = client.post("/api/games", json={}, headers=_from("2001:db8:0:1::1"))
        assert other.status_code == 200


def test_one_ipv6_64_network_holds_one_worker_at_a_time():
    sleeper = Sleeper(1.0)
    menu = OpponentMenu({"slow": sleeper, "heuristic": HeuristicAgent()})
    app = create_app(
        "heuristic", opponents=menu, max_think_seconds=3, workers=2, trust_proxy=True
    )
    with _client(app) as client:

        def start(address: str) -> None:
            body = {"role": "hyde", "opponent": "slow"}  # the agent gives Jekyll's first pick
            client.post("/api/games", json=body, headers=_from(address))

        gaps = []
        for pair in (("2001:db8::1", "2001:db8::2"), ("2001:db8::3", "2001:db8:0:1::3")):
            sleeper.calls.clear()
            threads = [threading.Thread(target=start, args=(address,)) for address in pair]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(10)
            assert len(sleeper.calls) == 2
            gaps.append(abs(sleeper.calls[1] - sleeper.calls[0]))
        same_network, two_networks = gaps
        assert same_network >= 0.9, "one /64's second decision started before the first ended"
        assert two_networks < 0.5, "two /64s did not think side by side"


def test_a_client_is_its_address_and_a_proxy_only_when_trusted():
    scope = {
        "client": ("10.0.0.5", 5000),
        "headers": [(b"x-forwarded-for", b"203.0.113.50, 198.51.100.7")],
    }
    assert client_address(scope, trust_proxy=False) == "10.0.0.5"
    assert client_address(scope, trust_proxy=True) == "198.51.100.7"  # the hop the proxy added
    spoofed = dict(scope, headers=[(b"x-forwarded-for", b"not-an-address")])
    assert client_address(spoofed, trust_proxy=True) == "10.0.0.5"
    app = create_app(allow=FAST, max_games_per_client=1)
    with _client(app) as client:
        assert client.post("/api/games", json={}, headers=_from("192.0.2.1")).status_code == 200
        # Without --trust-proxy the header is the client's word, and changes nothing.
        assert client.post("/api/games", json={}, headers=_from("192.0.2.2")).status_code == 429


# --- the serve command -----------------------------------------------------------------------


def test_serve_refuses_a_port_out_of_range_in_one_line(capsys):
    for port in ("99999", "65536", "-1"):
        assert cli.main(["serve", "--port", port]) == 2
        out, err = capsys.readouterr()
        assert "open http" not in out
        assert err.strip().count("\n") == 0 and f"--port {port} is not a port" in err
        assert "0 to 65535" in err


def test_serve_help_offers_only_what_the_server_accepts(capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.main(["serve", "--help"])
    assert stopped.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    offered = text[text.index("the only agents clients may") :].split("(default:")[0]
    assert "pimc:N" not in offered and "pimc is refused" in offered
    for spec in ("ismcts:200", "az:50", "heuristic", "champion"):  # what it names is accepted
        create_app(allow=[spec])
    with pytest.raises(ValueError, match="does not offer pimc"):
        create_app(allow=["pimc:10"])
    assert "twice this" in text  # one request's decisions together (thinking.Thinker)


def _no_proxy():
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _start_serve(tmp_path, *arguments: str) -> tuple[subprocess.Popen, int]:
    """``python -m jekyll_hyde_app.cli serve --port 0 ...`` with the test agent ``sleeper`` (a
    ``sitecustomize`` on PYTHONPATH registers it); returns the process and its port."""
    (tmp_path / "sitecustomize.py").write_text(
        textwrap.dedent(
            f"""
            import pathlib, time
            import jekyll_hyde_agents

            class Sleeper(jekyll_hyde_agents.HeuristicAgent):
                def act(self, view, legal):
                    pathlib.Path({str(tmp_path / "thinking")!r}).touch()
                    time.sleep(30)
                    return legal[0]

            jekyll_hyde_agents.register_agent("sleeper", lambda argument: Sleeper())
            """
        )
    )
    environment = dict(
        os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "jekyll_hyde_app.cli", "serve", "--port", "0", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    line = process.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if match is None or match.group(1) == "0":
        process.kill()
        pytest.fail(f"serve did not print the port it listens on: {line!r} {process.stderr.read()}")
    return process, int(match.group(1))


@pytest.mark.slow
def test_serve_on_port_0_prints_the_port_it_listens_on_and_sigterm_stops_it_while_an_agent_thinks(
    tmp_path,
):
    process, port = _start_serve(
        tmp_path,
        "--opponent",
        "sleeper",
        "--allow-opponents",
        "random",
        "--max-think-seconds",
        "60",
    )
    try:
        agents = _no_proxy().open(f"http://127.0.0.1:{port}/api/agents", timeout=10)
        assert json.load(agents)["allowed"] == ["sleeper", "random"]
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/games",
            data=json.dumps({"role": "hyde", "opponent": "sleeper"}).encode(),
            headers={"content-type": "application/json"},
        )
        answer = {}

        def ask():
            try:
                answer["status"] = _no_proxy().open(request, timeout=40).status
            except (urllib.error.URLError, ConnectionError) as error:
                answer["error"] = error

        asking = threading.Thread(target=ask, daemon=True)
        asking.start()
        deadline = time.monotonic() + 15
        while not (tmp_path / "thinking").exists():
            assert time.monotonic() < deadline, "the agent never started thinking"
            time.sleep(0.05)
        time.sleep(0.2)
        assert "status" not in answer  # still thinking
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=2)
        assert time.monotonic() - started < 2
        assert process.returncode in (-signal.SIGTERM, 0, 130)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_serve_on_a_port_in_use_says_so_in_one_line_and_never_announces_it(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "jekyll_hyde_app.cli", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1 and "open http" not in result.stdout
    assert result.stderr.strip().count("\n") == 0 and "the port is in use" in result.stderr
