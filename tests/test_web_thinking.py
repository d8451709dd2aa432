"""``jekyll-hyde serve`` against hostile clients: thinking is bounded in time.

docs/web/threat-model.md, 4: a decision past the limit is the fallback's, the decisions
one request waits for share one deadline, one client's thinking games do not slow
another client's answers, and two plays at once on one game leave it consistent. The
slow agents are ``Sleeper``s, which sleep as a search in C thinks, without holding
Python's interpreter lock.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx2", reason="the web extra (httpx2, the test client) is not installed")

from jekyll_hyde_agents import HeuristicAgent, RandomAgent  # noqa: E402
from jekyll_hyde_app.web.app import create_app  # noqa: E402
from jekyll_hyde_app.web.opponents import OpponentMenu  # noqa: E402
from jekyll_hyde_app.web.views import legal_gives  # noqa: E402
from jekyll_hyde_env.engine import game_record, new_game  # noqa: E402
from jekyll_hyde_env.engine.cards import JEKYLL, Phase  # noqa: E402
from jekyll_hyde_env.engine.rules import start_from_masks  # noqa: E402

from .web_helpers import TOKEN, Sleeper, first_give_move, game_at, proxied, raw_client  # noqa: E402


def test_a_decision_past_the_limit_is_the_fallbacks_and_the_game_goes_on():
    wake = threading.Event()
    sleeper = Sleeper(30, wake)
    menu = OpponentMenu({"sleeper": sleeper, "heuristic": HeuristicAgent()})
    app = create_app("heuristic", opponents=menu, max_think_seconds=0.3)
    try:
        with raw_client(app) as client:
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
        with raw_client(app) as client:
            path, headers, game = game_at(client, app, "jekyll", state, "slow")
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
    with raw_client(app) as client:
        other = client.post("/api/games", json={"role": "jekyll"}, headers=proxied("203.0.113.9"))
        other = other.json()
        token = {TOKEN: other["token"], **proxied("203.0.113.9")}
        slow = [
            threading.Thread(
                target=client.post,
                args=("/api/games",),
                kwargs={
                    "json": {"role": "hyde", "opponent": "slow"},
                    "headers": proxied("203.0.113.1"),
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
            f"/api/games/{other['game_id']}/play", json=first_give_move(other), headers=token
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
    with raw_client(app) as client:
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
