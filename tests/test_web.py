"""``jekyll-hyde serve``: the HTTP API, played through FastAPI's test client.

Whole games are played over HTTP, and every answer is checked: the person's view holds
nothing of the opponent's hand beyond what RULES.md "What each player knows" allows (the
cards the person gave it). Replays, watched games, bad requests and a slow agent are
here too. The pages are tests/test_web_pages.py, a real browser
tests/test_web_browser.py, the ``serve`` command tests/test_web_serve.py, and the
checks of docs/web/threat-model.md the other tests/test_web_*.py files.
"""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx2", reason="the web extra (httpx2, the test client) is not installed")

from jekyll_hyde_app.web.app import create_app  # noqa: E402
from jekyll_hyde_app.web.opponents import OpponentMenu  # noqa: E402
from jekyll_hyde_env.engine.cards import AGENTS, DECLARE_BASE, card_name  # noqa: E402

from .web_helpers import TokenClient, play_out, top_cards_move  # noqa: E402


@pytest.mark.parametrize("role", AGENTS)
def test_a_whole_game_over_the_api_shows_only_the_players_view(client, app, role):
    response = client.post("/api/games", json={"role": role, "opponent": "heuristic", "seed": 4})
    assert response.status_code == 200
    view = response.json()
    assert view["you"] == role and view["opponent_agent"] == "heuristic"
    assert view["table"]["phase"] == "exchange" and view["table"]["choose"] == 1  # R2.2, round 1
    assert len(view["table"]["hand"]) == 10 and view["table"]["opponent_hand_size"] == 10
    final = play_out(client, app, view)
    game = app.state.games[final["game_id"]]
    result = final["result"]
    assert result["winner"] == AGENTS[game.state.winner]
    assert result["you_won"] == (game.state.winner == game.human)
    assert result["seed"] == 4 and result["reason"]
    kinds = [event["kind"] for event in final["log"]]
    assert kinds[-1] == "game" and kinds.count("round") == len(game.state.round_log)
    assert kinds.count("trick") == 10 * len(game.state.round_log)  # R2.3
    tricks = [event for event in final["log"] if event["kind"] == "trick"]
    assert all(event["reason"].endswith(")") for event in tricks)  # a rule tag, e.g. (T5a)
    assert final["last_trick"] == tricks[-1]


def test_the_same_seed_deals_the_same_game(client, app):
    first = client.post("/api/games", json={"role": "jekyll", "seed": 11}).json()
    play_out(client, app, first)  # a seed is free again once its game is over
    second = client.post("/api/games", json={"role": "jekyll", "seed": 11}).json()
    assert first["table"]["hand"] == second["table"]["hand"]
    assert first["game_id"] != second["game_id"]


def test_bad_requests_get_a_4xx_json_error_naming_the_problem_and_the_game_goes_on(client, app):
    view = client.post("/api/games", json={"role": "jekyll", "seed": 2}).json()
    game_id = view["game_id"]
    game = app.state.games[game_id]
    play = f"/api/games/{game_id}/play"
    not_held = next(c for c in range(DECLARE_BASE) if not game.state.hands[0] >> c & 1)
    cases = [
        ({"action": not_held}, 400, f"{card_name(not_held)} [{not_held}] is refused"),
        ({"action": 99}, 400, "99 is not an action"),
        ({"action": DECLARE_BASE}, 400, "declaring a colour comes only after leading a potion"),
        ({"actions": view["table"]["legal_cards"][:2]}, 400, "takes 1 more card from you"),
        ({"action": "wrath 5"}, 422, "action"),
        ({"action": 1, "actions": [1]}, 422, 'send one of "action"'),
        ({"actions": []}, 422, '"actions" is empty'),
        ({"card": 3}, 422, "card"),
        ([1, 2], 422, "malformed request"),
    ]
    for body, status, message in cases:
        response = client.post(play, json=body)
        assert response.status_code == status, (body, response.json())
        assert message in response.json()["error"], (body, response.json())
    response = client.post(play, content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 422 and "malformed request" in response.json()["error"]
    # Nothing was applied: the game waits for the same decision.
    assert client.get(f"/api/games/{game_id}").json()["table"] == view["table"]
    assert game.state.history == []
    response = client.get(f"/api/games/{game_id}/record")
    assert response.status_code == 409 and "not over" in response.json()["error"]

    token = {"X-Game-Token": "a-token"}
    response = client.post("/api/games/0123456789abcdef/play", json={"action": 1}, headers=token)
    assert response.status_code == 404 and "no game with this id" in response.json()["error"]
    assert client.get("/api/games/nope", headers=token).status_code == 404
    response = client.post("/api/games", json={"role": "lanyon"})
    assert response.status_code == 400 and "jekyll or hyde" in response.json()["error"]
    response = client.post("/api/games", json={"opponent": "nobody"})
    assert response.status_code == 400 and "not offered" in response.json()["error"]
    response = client.get("/api/nothing")
    assert response.status_code == 404 and "/api/nothing" in response.json()["error"]

    legal = client.post(play, json=top_cards_move(view))  # the game goes on
    assert legal.status_code == 200 and len(game.state.history) >= 1


def test_exchange_and_swap_take_several_cards_at_once(client, app):
    """A round-2 exchange gives two cards (R2.2); one request carries both."""
    view = client.post("/api/games", json={"role": "hyde", "opponent": "lowest", "seed": 3}).json()
    game = app.state.games[view["game_id"]]
    while not view["game_over"] and not (view["table"]["round"] == 2 and view["table"]["choose"]):
        view = client.post(f"/api/games/{view['game_id']}/play", json=top_cards_move(view)).json()
    if view["game_over"]:
        pytest.fail("the game ended before round 2's exchange")
    assert view["table"]["choose"] == 2
    before = game.state.hands[1]
    cards = view["table"]["legal_cards"][:2]
    response = client.post(f"/api/games/{view['game_id']}/play", json={"actions": cards})
    assert response.status_code == 200, response.json()
    assert all(before >> c & 1 for c in cards)
    assert game.state.exch_given[1] == sum(1 << c for c in cards)
    exchange = [e for e in response.json()["log"] if e["kind"] == "exchange"][-1]
    assert exchange["round"] == 2 and all(card_name(c) in exchange["text"] for c in cards)


def test_replay_of_a_finished_game_and_of_a_posted_record(client, app):
    view = client.post("/api/games", json={"role": "hyde", "opponent": "heuristic", "seed": 8})
    final = play_out(client, app, view.json())
    game_id = final["game_id"]
    record = client.get(f"/api/games/{game_id}/record").json()
    assert record["players"] == {"hyde": "you", "jekyll": "heuristic"}
    replay = client.get(f"/api/games/{game_id}/replay").json()
    frames = replay["frames"]
    rounds = len(record["rounds"])
    assert frames[0]["title"] == "Round 1: the deal"
    assert all(len(frames[0]["hands"][agent]) == 10 for agent in AGENTS)
    tricks = [f for f in frames if f["trick"] is not None]
    assert len(tricks) == 10 * rounds
    assert frames[-1]["game_over"] and frames[-1]["winner"] == final["result"]["winner"]
    assert frames[-1]["marker"] == record["result"]["marker"]
    exchanges = [f for f in frames if f["title"].endswith("exchange")]
    assert len(exchanges) == rounds
    # Each trick frame shows the recorded trick.
    recorded = [t for r in record["rounds"] for t in r["tricks"]]
    for frame, trick in zip(tricks, recorded, strict=True):
        shown = {who: card["id"] for who, card in frame["trick"]["cards"].items()}
        assert shown == trick["cards"] and frame["trick"]["winner"] == trick["winner"]

    posted = client.post("/api/replay", json=record)
    assert posted.status_code == 200 and posted.json()["frames"] == frames
    broken = dict(record, actions=record["actions"][:5] + record["actions"][6:])
    response = client.post("/api/replay", json=broken)
    assert response.status_code == 400 and "cannot replay" in response.json()["error"]
    response = client.post("/api/replay", json={"format": "chess"})
    assert response.status_code == 400 and "not a game record" in response.json()["error"]


def test_watch_two_agents_step_by_step(client, app):
    frame = client.post("/api/watch", json={"jekyll": "random", "hyde": "heuristic", "seed": 5})
    assert frame.status_code == 200
    frame = frame.json()
    watch_id = frame["watch_id"]
    assert frame["players"] == {"jekyll": "random", "hyde": "heuristic"}
    steps = 0
    said = []
    while not frame["game_over"]:
        frame = client.post(f"/api/watch/{watch_id}/step").json()
        said.append(frame["said"])
        steps += 1
    watched = app.state.games[watch_id]
    assert steps == len(watched.state.history)
    assert frame["winner"] == AGENTS[watched.state.winner] and frame["reason"]
    assert any(text.startswith("jekyll plays ") for text in said)
    assert client.post(f"/api/watch/{watch_id}/step").json()["said"] == "The game is over"
    response = client.post("/api/watch/feedfeed/step", headers={"X-Game-Token": "a-token"})
    assert response.status_code == 404 and "no watched game" in response.json()["error"]
    response = client.post("/api/watch", json={"jekyll": "ismcts:zero"})
    assert response.status_code == 400 and "ismcts:zero" in response.json()["error"]


def test_a_slow_agent_does_not_block_other_games():
    """An agent thinks in a worker thread: while it is busy, other clients' games are
    answered."""
    from jekyll_hyde_agents import HeuristicAgent

    release = threading.Event()
    thinking = threading.Event()

    class SlowAgent:
        def reset(self, seed=None):
            pass

        def act(self, view, legal):
            thinking.set()
            release.wait(10)
            return legal[0]

    menu = OpponentMenu({"heuristic": HeuristicAgent(), "slow": SlowAgent()})
    app = create_app(opponents=menu, max_think_seconds=30, trust_proxy=True)
    client = TokenClient(app).__enter__()
    client.tokens = {}
    other = client.post("/api/games", json={"role": "jekyll", "seed": 1}).json()
    answers = {}

    def start_slow_game():
        answers["slow"] = client.post(
            "/api/games",
            json={"role": "hyde", "opponent": "slow"},
            headers={"X-Forwarded-For": "192.0.2.7"},  # another client
        )

    worker = threading.Thread(target=start_slow_game)
    worker.start()
    try:
        assert thinking.wait(10), "the slow agent never started thinking"
        started = time.monotonic()
        response = client.get(f"/api/games/{other['game_id']}")
        moved = client.post(f"/api/games/{other['game_id']}/play", json=top_cards_move(other))
        assert time.monotonic() - started < 5
        assert response.status_code == 200 and moved.status_code == 200
        assert "slow" not in answers  # the slow agent was still thinking
    finally:
        release.set()
        worker.join(20)
        client.__exit__(None, None, None)
    assert answers["slow"].status_code == 200
