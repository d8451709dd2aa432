"""``jekyll-hyde serve`` against hostile clients: games are capped per client and in all.

docs/web/threat-model.md, 5: a client (an IPv4 address or an IPv6 /64, behind a proxy
only when trusted) keeps a few games, ends its own to make room (and a script that never
does is still capped), watched games take a smaller share, no active game is evicted for
another client, one client holds one worker at a time, and games share their agent's
network in memory.
"""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx2", reason="the web extra (httpx2, the test client) is not installed")

from jekyll_hyde_agents import HeuristicAgent  # noqa: E402
from jekyll_hyde_app.web.app import create_app  # noqa: E402
from jekyll_hyde_app.web.limits import client_address  # noqa: E402
from jekyll_hyde_app.web.opponents import OpponentMenu  # noqa: E402

from .web_helpers import (  # noqa: E402
    FAST,
    FORBIDDEN_KEYS,
    TOKEN,
    Sleeper,
    cards_in,
    first_give_move,
    keys_in,
    proxied,
    raw_client,
)


def test_games_are_capped_per_client_and_in_all_and_no_active_game_is_evicted():
    app = create_app(
        allow=FAST, trust_proxy=True, max_games=5, max_games_per_client=2, idle_seconds=2
    )
    with raw_client(app) as client:
        tokens = {}

        def new(address, kind="games", role="jekyll"):
            body = {"role": role, "opponent": "random"} if kind == "games" else {}
            response = client.post(f"/api/{kind}", json=body, headers=proxied(address))
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
                f"/api/games/{game_id}/play", json=first_give_move(view), headers={TOKEN: token}
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
                json=first_give_move(view),
                headers={TOKEN: tokens[finished][1]},
            ).json()
        assert new("192.0.2.5").status_code == 200
        assert finished not in app.state.games
        assert all(alive(key) for key in tokens if key not in (first, finished))


def test_a_client_ends_its_own_games_to_make_room_and_a_script_that_never_does_is_capped():
    """``DELETE /api/games/{id}`` with the game's token ends it: ten games in a row with
    one seed all start when each ends the one before (the page's "New game"), while a
    script that opens games without ending them is still refused at the client's cap.
    Ending twice, a wrong token and an unknown id get one 404; no token, 401; the answer
    tells nothing the view did not."""
    app = create_app(allow=FAST, trust_proxy=True, max_games_per_client=8)
    with raw_client(app) as client:
        me = proxied("192.0.2.10")

        def new(seed=None):
            body = {"role": "jekyll", "opponent": "random"}
            if seed is not None:
                body["seed"] = seed
            return client.post("/api/games", json=body, headers=me)

        def end(view, token=None):
            headers = {**me, TOKEN: token or view["token"]}
            return client.delete(f"/api/games/{view['game_id']}", headers=headers)

        for _ in range(10):  # the same seed: refused (409) while a game deals from it
            view = new(seed=7)
            assert view.status_code == 200, view.text
            view = view.json()
            ended = end(view)
            assert ended.status_code == 200, ended.text
            assert ended.json() == {"game_id": view["game_id"], "ended": True, "was_over": False}
            assert view["game_id"] not in app.state.games
        assert len(app.state.games) == 0

        unknown = client.delete("/api/games/0123456789abcdef", headers={**me, TOKEN: "x" * 22})
        assert unknown.status_code == 404
        again = end(view)  # ending twice: the game is gone, the same answer as an unknown id
        assert again.status_code == 404 and again.json() == unknown.json()
        gone = client.get(f"/api/games/{view['game_id']}", headers={**me, TOKEN: view["token"]})
        assert gone.status_code == 404

        # A script that never ends its games: eight, then 429 at the cap.
        views = [new().json() for _ in range(8)]
        refused = new()
        assert refused.status_code == 429 and "too many games" in refused.json()["error"]
        first, second = views[0], views[1]
        path = f"/api/games/{first['game_id']}"
        assert client.delete(path, headers=me).status_code == 401  # no token
        for wrong in (second["token"], first["token"] + "x"):  # another game's, or none's
            assert end(first, wrong).status_code == 404
            assert end(first, wrong).json() == unknown.json()
        assert first["game_id"] in app.state.games  # refused: nothing ended
        assert new().status_code == 429
        answer = end(first).json()
        assert not keys_in(answer) & FORBIDDEN_KEYS and not cards_in(answer)
        assert new().status_code == 200  # the ended game's place, for exactly one more
        assert new().status_code == 429

        # A finished game may be ended too: its place is then free at once.
        view, play = second, f"/api/games/{second['game_id']}/play"
        while not view["game_over"]:
            move = first_give_move(view)
            view = client.post(play, json=move, headers={**me, TOKEN: second["token"]}).json()
        assert end(second).json()["was_over"] is True


def test_ending_a_game_while_its_agent_thinks_lets_that_move_finish_and_waits_for_nothing():
    """The end of a game is answered at once, even while a play request waits for the
    game's agent: that request finishes with its answer, and the game is gone after it."""
    sleeper = Sleeper(0.6)
    menu = OpponentMenu({"slow": sleeper, "heuristic": HeuristicAgent()})
    app = create_app("heuristic", opponents=menu, max_think_seconds=3)
    with raw_client(app) as client:
        view = client.post("/api/games", json={"role": "jekyll", "opponent": "slow"}).json()
        headers = {TOKEN: view["token"]}
        game_path = f"/api/games/{view['game_id']}"
        answers = {}

        def play():
            answers["play"] = client.post(
                f"{game_path}/play", json=first_give_move(view), headers=headers
            )

        thread = threading.Thread(target=play)
        thread.start()
        deadline = time.monotonic() + 5
        while not sleeper.calls:  # the agent thinks about its own exchange pick
            assert time.monotonic() < deadline, "the agent was never asked"
            time.sleep(0.01)
        started = time.monotonic()
        ended = client.delete(game_path, headers=headers)
        assert ended.status_code == 200 and time.monotonic() - started < 0.4
        thread.join(10)
        assert answers["play"].status_code == 200, answers["play"].text
        assert client.get(game_path, headers=headers).status_code == 404
        assert len(app.state.games) == 0


def test_many_games_share_the_agents_network_in_memory():
    app = create_app(
        "champion",
        allow=["champion"],
        max_games=64,
        max_games_per_client=64,
        max_watches=20,
        max_watches_per_client=20,
    )
    with raw_client(app) as client:
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
    with raw_client(app) as client:
        taken: dict[str, int] = {}
        for host in range(32):
            address = f"198.51.100.{host + 1}"
            for _ in range(8):
                answer = client.post("/api/watch", json={}, headers=proxied(address))
                if answer.status_code == 200:
                    taken[address] = taken.get(address, 0) + 1
                else:
                    assert answer.status_code == 429, answer.text
                    assert "watched games" in answer.json()["error"], answer.text
        assert sum(taken.values()) == 64 and max(taken.values()) == 2
        for _ in range(8):  # a new client's played games still find room
            answer = client.post("/api/games", json={}, headers=proxied("203.0.113.77"))
            assert answer.status_code == 200, answer.text

    app = create_app(allow=FAST, trust_proxy=True, watch_idle_seconds=0.5)
    with raw_client(app) as client:
        me = proxied("192.0.2.8")
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
    with raw_client(app) as client:
        for address in ("2001:db8::1", "2001:db8::2:3"):
            assert client.post("/api/games", json={}, headers=proxied(address)).status_code == 200
        refused = client.post("/api/games", json={}, headers=proxied("2001:db8::ffff:1"))
        assert refused.status_code == 429 and "too many games" in refused.json()["error"]
        other = client.post("/api/games", json={}, headers=proxied("2001:db8:0:1::1"))
        assert other.status_code == 200


def test_one_ipv6_64_network_holds_one_worker_at_a_time():
    sleeper = Sleeper(1.0)
    menu = OpponentMenu({"slow": sleeper, "heuristic": HeuristicAgent()})
    app = create_app("heuristic", opponents=menu, max_think_seconds=3, workers=2, trust_proxy=True)
    with raw_client(app) as client:

        def start(address: str) -> None:
            body = {"role": "hyde", "opponent": "slow"}  # the agent gives Jekyll's first pick
            client.post("/api/games", json=body, headers=proxied(address))

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
    with raw_client(app) as client:
        assert client.post("/api/games", json={}, headers=proxied("192.0.2.1")).status_code == 200
        # Without --trust-proxy the header is the client's word, and changes nothing.
        refused = client.post("/api/games", json={}, headers=proxied("192.0.2.2"))
        assert refused.status_code == 429
        # One game, one minute: no "1 games", no "1 minutes".
        message = refused.json()["error"]
        assert "already has 1 game in progress" in message, message
        assert "10 minutes" in message and "for 1 minute)" in message, message
