"""``jekyll-hyde serve`` against hostile clients: no answer shows a hidden card.

docs/web/threat-model.md, 1 (views and seeds): one seed played, watched by two clients
and played again, with every answer of a whole game checked; the seeds the server draws;
seeds out of range. Batches of actions are tests/test_web_batches.py.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx2", reason="the web extra (httpx2, the test client) is not installed")

from jekyll_hyde_app.web.app import create_app  # noqa: E402
from jekyll_hyde_app.web.sessions import MAX_SEED  # noqa: E402
from jekyll_hyde_env.engine.cards import AGENTS, ALL_CARDS, Phase, mask_to_ids  # noqa: E402

from .web_helpers import (  # noqa: E402
    FAST,
    FORBIDDEN_KEYS,
    TOKEN,
    cards_in,
    first_give_move,
    keys_in,
    proxied,
    raw_client,
)


def _assert_view_hides(view: dict, game) -> None:
    """A running game's view shows no card of the opponent's hand the person does not
    know, no set-aside card, and no key that carries deals or the seed."""
    state, human = game.state, game.human
    if state.phase == Phase.GAME_OVER:
        return
    given = state.exch_given[human] | state.swap_given[human]
    dealt = state.deals[state.round - 1]
    hidden = (state.hands[1 - human] & ~given) | (ALL_CARDS ^ dealt[0] ^ dealt[1])
    assert not cards_in(view["table"]) & set(mask_to_ids(hidden))
    assert not keys_in(view) & FORBIDDEN_KEYS


def _hands_shown(frame: dict) -> set[frozenset[int]]:
    return {frozenset(card["id"] for card in cards) for cards in frame["hands"].values()}


def test_no_answer_shows_a_hidden_card_whatever_the_seeds_and_endpoints_combined():
    """One seed for a played game, a watched game and a second played game, from the
    player and from another client: the watched game has deals of its own, the second game
    is refused while the first runs, and every answer about the running game hides what
    the player may not know. Once it is over, its seed deals it again (practice)."""
    app = create_app(allow=FAST, trust_proxy=True, max_think_seconds=5)
    seed = 7
    with raw_client(app) as client:
        mine, theirs = proxied("198.51.100.1"), proxied("198.51.100.2")
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
                assert "in progress" in again.json()["error"] and not cards_in(again.json())

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
                assert early.status_code == 409 and not cards_in(early.json())
            played = client.post(
                f"/api/games/{view['game_id']}/play", json=first_give_move(view), headers=token
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
    with raw_client(app) as client:
        views = [client.post("/api/games", json={"opponent": "random"}).json() for _ in range(3)]
        seeds = [app.state.games[view["game_id"]].seed for view in views]
        assert len(set(seeds)) == 3 and all(0 <= seed <= MAX_SEED for seed in seeds)
        assert max(seeds) > 2**32  # drawn from 2**53 values, not a small range
        assert all(
            "seed" not in json.dumps(view["table"]) and view["result"] is None for view in views
        )


def test_a_bad_seed_is_refused_naming_the_seed():
    app = create_app(allow=FAST)
    with raw_client(app) as client:
        for seed in (-1, MAX_SEED + 1, 10**30):
            for path, body in (("/api/games", {"opponent": "random"}), ("/api/watch", {})):
                response = client.post(path, json={**body, "seed": seed})
                assert response.status_code == 400, (path, seed, response.text)
                error = response.json()["error"]
                assert f"seed {seed} is out of range" in error and "opponent" not in error
        for seed in ("5", 5.5, True):
            response = client.post("/api/games", json={"seed": seed})
            assert response.status_code == 422 and "seed" in response.json()["error"]
