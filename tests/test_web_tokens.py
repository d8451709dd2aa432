"""``jekyll-hyde serve`` against hostile clients: each client's games are its own.

docs/web/threat-model.md, 2: every later request for a game (its view, a move, its end,
its record and replay) sends the token its creation answered with; a missing token is
401, and a wrong token or an unknown id the same 404.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx2", reason="the web extra (httpx2, the test client) is not installed")

from jekyll_hyde_app.web.app import create_app  # noqa: E402

from .web_helpers import FAST, TOKEN, first_give_move, raw_client  # noqa: E402


def test_every_later_request_for_a_game_needs_its_own_token():
    app = create_app(allow=FAST)
    with raw_client(app) as client:
        view = client.post("/api/games", json={"role": "jekyll", "opponent": "random"}).json()
        other = client.post("/api/games", json={"role": "hyde", "opponent": "random"}).json()
        watch = client.post("/api/watch", json={"jekyll": "random", "hyde": "random"}).json()
        assert re.fullmatch(r"[0-9a-f]{16}", view["game_id"])
        assert len(view["token"]) >= 22 and view["token"] != other["token"]  # 128 bits
        game = f"/api/games/{view['game_id']}"
        requests = [
            ("GET", game, None),
            ("DELETE", game, None),  # ending a game takes its token as playing it does
            ("POST", f"{game}/play", first_give_move(view)),
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
