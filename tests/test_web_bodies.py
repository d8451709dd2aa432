"""``jekyll-hyde serve`` against hostile clients: request bodies are bounded and checked.

docs/web/threat-model.md, 6: bodies over the size limit are answered 413, whether their
length is announced or counted as they stream in, and every malformed body (not JSON,
not UTF-8, nested too deeply, of the wrong shape, a broken game record) gets a 4xx
answer with a message.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx2", reason="the web extra (httpx2, the test client) is not installed")

from jekyll_hyde_app.web.app import create_app  # noqa: E402

from .web_helpers import FAST, TOKEN, first_give_move, raw_client  # noqa: E402


def _finished_record(client) -> dict:
    view = client.post("/api/games", json={"role": "jekyll", "opponent": "random"}).json()
    token = {TOKEN: view["token"]}
    while not view["game_over"]:
        view = client.post(
            f"/api/games/{view['game_id']}/play", json=first_give_move(view), headers=token
        ).json()
    return client.get(f"/api/games/{view['game_id']}/record", headers=token).json()


def test_bodies_over_the_size_limit_are_answered_413_by_length_or_as_they_stream():
    app = create_app(allow=FAST)
    with raw_client(app) as client:
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
    with raw_client(app) as client:
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


@pytest.mark.parametrize(
    "variant", ["tiny", {"values": "7"}, {"potions": [2, 2]}, [1, 2], "x" * 5000]
)
def test_a_record_of_a_smaller_variant_is_refused_naming_why(client, variant):
    """The app plays and replays the full game: a record naming a variant, well formed or
    not, gets a 400 that says so, never a 500."""
    import numpy as np

    from jekyll_hyde_env.engine import (
        apply_action,
        game_record,
        is_terminal,
        legal_actions,
        new_game,
    )
    from jekyll_hyde_env.engine.variant import TINY

    rng = np.random.default_rng(0)
    state = new_game(rng, variant=TINY)
    while not is_terminal(state):
        apply_action(state, int(rng.choice(legal_actions(state))))
    record = {**game_record(state), "variant": variant}
    if variant == "tiny":
        record["variant"] = game_record(state)["variant"]
    response = client.post("/api/replay", json=record)
    assert response.status_code == 400
    assert "this app replays games of the full game" in response.json()["error"]
