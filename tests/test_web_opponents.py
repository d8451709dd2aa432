"""``jekyll-hyde serve`` against hostile clients: opponents come from an allow list.

docs/web/threat-model.md, 3: only listed agent specs are built, and a refusal names the
allowed ones in the same words whatever was sent; unbounded specs are refused and the
rest get time budgets within the server's limit; ``serve --help`` offers only what the
server accepts.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx2", reason="the web extra (httpx2, the test client) is not installed")

from jekyll_hyde_app import cli  # noqa: E402
from jekyll_hyde_app.web.app import create_app  # noqa: E402

from .web_helpers import FAST, raw_client  # noqa: E402


def test_only_listed_opponents_are_built_and_refusals_name_the_allowed_ones():
    app = create_app(allow=FAST, max_think_seconds=1)
    with raw_client(app) as client:
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
