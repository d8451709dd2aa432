"""The arena: duplicate pairs, statistics, reproducibility, interruption and the CLI."""

from __future__ import annotations

import functools
import json
import re

import numpy as np
import pytest

import jekyll_hyde_arena as arena
import jekyll_hyde_arena.duplicate as arena_duplicate
from jekyll_hyde_agents import make_agent
from jekyll_hyde_app import cli
from jekyll_hyde_arena import GameResult, PairResult
from jekyll_hyde_env.engine import replay_record


def test_results_do_not_depend_on_the_number_of_workers():
    one = arena.evaluate("heuristic", "random", pairs=40, seed=3, workers=1)
    two = arena.evaluate("heuristic", "random", pairs=40, seed=3, workers=2)
    assert one.pair_scores == two.pair_scores and one.by_role == two.by_role
    other_seed = arena.evaluate("heuristic", "random", pairs=40, seed=4, workers=1)
    assert other_seed.pair_scores != one.pair_scores


def test_independent_mode_deals_each_game_anew(tmp_path):
    duplicate = arena.evaluate("heuristic", "random", pairs=30, seed=1)
    independent = arena.evaluate("heuristic", "random", pairs=30, seed=1, duplicate=False)
    assert duplicate.pair_scores != independent.pair_scores
    arena.evaluate(
        "heuristic", "random", pairs=1, seed=1, duplicate=False, save_games=str(tmp_path)
    )
    first = json.loads((tmp_path / "pair00000_a_jekyll.json").read_text())
    second = json.loads((tmp_path / "pair00000_a_hyde.json").read_text())
    assert first["deals"] != second["deals"]


def test_a_pair_plays_both_roles_on_the_same_deals():
    from jekyll_hyde_agents import make_agent

    a, b = make_agent("heuristic"), make_agent("heuristic")
    result = arena.play_pair(a, b, seed=0, index=5)
    # Identical deterministic agents on identical deals: the same seat wins both games.
    assert result.a_as_jekyll.winner == result.a_as_hyde.winner
    assert result.a_wins == 1


def test_return_match_scoring_follows_the_variant():
    def pair(marker_when_a_is_jekyll, rounds_1, marker_when_a_is_hyde, rounds_2):
        return PairResult(
            0,
            GameResult(int(marker_when_a_is_jekyll == 10), marker_when_a_is_jekyll, rounds_1),
            GameResult(int(marker_when_a_is_hyde == 10), marker_when_a_is_hyde, rounds_2),
        )

    assert pair(4, 3, 7, 3).return_match == 1.0  # A as Hyde moved the marker further
    assert pair(7, 3, 4, 3).return_match == 0.0
    assert pair(10, 3, 10, 2).return_match == 1.0  # both 10: fewer rounds wins
    assert pair(10, 2, 10, 3).return_match == 0.0
    assert pair(10, 2, 10, 2).return_match == 0.5
    assert pair(6, 3, 6, 3).return_match == 0.5


def test_statistics():
    mean, (lo, hi) = arena.mean_ci([1.0, 0.5, 0.5, 0.0] * 50)
    assert mean == 0.5 and lo < 0.5 < hi and hi - lo < 0.2
    lo, hi = arena.wilson_ci(90, 100)
    assert 0.82 < lo < 0.9 < hi < 0.95
    wins = np.array([[0, 80, 95], [20, 0, 70], [5, 30, 0]], float)
    elo = arena.elo_from_log_strength(arena.bradley_terry(wins))
    assert elo[0] > elo[1] > elo[2] and abs(elo.mean()) < 1e-6


def test_a_side_built_by_a_function_plays_as_its_name_does_on_spawned_workers():
    """A match side may be a picklable builder (an agent that loads its own models);
    spawned workers build it there and play the same games as the named agent."""
    builder = functools.partial(make_agent, "heuristic")

    def outcomes(results):
        return sorted(
            (r.index, r.a_as_jekyll.winner, r.a_as_hyde.winner, r.a_as_jekyll.marker)
            for r in results
        )

    by_name = outcomes(arena.run_pairs("heuristic", "random", 6, seed=5, workers=2))
    built = outcomes(arena.run_pairs(builder, "random", 6, seed=5, workers=2, start_method="spawn"))
    assert built == by_name and len(built) == 6
    assert outcomes(arena.run_pairs(builder, "random", 6, seed=5, workers=1)) == by_name


def test_interrupted_evaluation_reports_what_it_has(monkeypatch):
    real = arena.run_pairs

    def interrupted(*args, **kwargs):
        for count, result in enumerate(real(*args, **kwargs)):
            if count == 7:
                raise KeyboardInterrupt
            yield result

    monkeypatch.setattr(arena_duplicate, "run_pairs", interrupted)
    report = arena.evaluate("heuristic", "random", pairs=50, seed=0)
    assert report.interrupted and report.pairs == 7 and report.requested_pairs == 50
    assert "interrupted after 7 of 50" in arena.format_report(report)


def _interrupt_pairing(monkeypatch, pairing: int, after: int) -> None:
    """Ctrl-C in the ``pairing``-th match (from 1) once ``after`` pairs are finished."""
    real = arena.run_pairs
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(args)
        for count, result in enumerate(real(*args, **kwargs)):
            if len(calls) == pairing and count == after:
                raise KeyboardInterrupt
            yield result

    monkeypatch.setattr(arena_duplicate, "run_pairs", interrupted)


def test_an_interrupted_tournament_says_so_and_rates_what_was_played(monkeypatch, tmp_path):
    _interrupt_pairing(monkeypatch, pairing=2, after=3)
    out = tmp_path / "t.json"
    cli.main(["tournament", "random", "heuristic", "lowest", "--pairs", "10", "--workers", "1",
              "--no-progress", "--out", str(out)])  # fmt: skip
    result = json.loads(out.read_text())
    assert result["interrupted"] and result["pairings"] == 3
    assert [m["pairs"] for m in result["matches"]] == [10, 3]
    assert all(np.isfinite(row["elo"]) for row in result["ratings"])
    text = arena.format_tournament(result)
    assert text.startswith(
        "interrupted: 1 of 3 pairings played in full, one in part (3 of 10 pairs)"
    )


def test_an_agent_that_played_no_game_before_ctrl_c_has_no_rating(monkeypatch):
    _interrupt_pairing(monkeypatch, pairing=1, after=4)
    result = arena.tournament(["random", "heuristic", "lowest"], pairs=10)
    ratings = {row["agent"]: row for row in result["ratings"]}
    assert ratings["lowest"]["elo"] is None and ratings["lowest"]["ci"] is None
    assert ratings["heuristic"]["elo"] > ratings["random"]["elo"]  # finite, from 4 pairs
    text = arena.format_tournament(result)
    assert "0 of 3 pairings played in full, one in part (4 of 10 pairs)" in text
    assert re.search(r"lowest +- +\(no game played\)", text) and "nan" not in text
    _interrupt_pairing(monkeypatch, pairing=1, after=0)  # nothing played at all
    result = arena.tournament(["random", "heuristic"], pairs=10)
    assert result["matches"] == [] and all(row["elo"] is None for row in result["ratings"])
    assert "nan" not in arena.format_tournament(result)


def test_cli_eval_writes_json_and_saves_replayable_games(tmp_path, capsys):
    out = tmp_path / "results.json"
    games = tmp_path / "games"
    code = cli.main(
        [
            "eval",
            "heuristic",
            "random",
            "--pairs",
            "6",
            "--seed",
            "2",
            "--workers",
            "1",
            "--out",
            str(out),
            "--save-games",
            str(games),
            "--no-progress",
        ]
    )
    assert code == 0
    data = json.loads(out.read_text())
    for key in ("score", "score_ci", "by_role", "pairs", "agents", "seed", "return_match"):
        assert key in data
    assert data["agents"] == {"A": "heuristic", "B": "random"} and data["pairs"] == 6
    assert "A score" in capsys.readouterr().out
    saved = sorted(games.glob("*.json"))
    assert len(saved) == 12
    record = json.loads((games / "pair00000_a_jekyll.json").read_text())
    assert record["players"] == {"jekyll": "heuristic", "hyde": "random"}
    swapped = json.loads((games / "pair00000_a_hyde.json").read_text())
    assert swapped["players"] == {"jekyll": "random", "hyde": "heuristic"}
    assert swapped["deals"] == record["deals"]  # the same deals, roles swapped
    assert replay_record(record).winner in (0, 1)


def test_cli_refuses_bad_agents_and_arguments(capsys):
    assert cli.main(["eval", "heuristic", "nobody", "--pairs", "2"]) == 2
    assert "known names" in capsys.readouterr().err
    assert cli.main(["eval", "heuristic", "random", "--pairs", "0"]) == 2
    assert cli.main(["tournament", "random", "--pairs", "2"]) == 2


def test_cli_tournament_ranks_agents(tmp_path, capsys):
    out = tmp_path / "t.json"
    code = cli.main(
        [
            "tournament",
            "random",
            "heuristic",
            "--pairs",
            "60",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    ratings = json.loads(out.read_text())["ratings"]
    assert [row["agent"] for row in ratings] == ["heuristic", "random"]
    assert ratings[0]["ci"][0] > ratings[1]["ci"][1]  # intervals apart
    printed = capsys.readouterr().out
    match = re.search(r"random\s+vs heuristic\s+(\d\.\d{3})  \[(\d\.\d{3}), (\d\.\d{3})\]", printed)
    assert match, printed  # the head-to-head table
    assert float(match.group(2)) <= float(match.group(1)) <= float(match.group(3)) < 0.5


@pytest.mark.parametrize("bad", ["ismcts:0", "ismcts:x"])
def test_bad_agent_arguments_are_named(bad, capsys):
    assert cli.main(["eval", bad, "random", "--pairs", "1"]) == 2
    assert bad in capsys.readouterr().err


class BlasProbe:
    """Plays the first legal action and notes its process's BLAS threads in a folder."""

    def __init__(self, folder):
        self.folder = folder

    def reset(self, seed=None):
        pass

    def act(self, view, legal_actions):
        import os
        import pathlib

        from threadpoolctl import threadpool_info

        threads = {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}
        (pathlib.Path(self.folder) / str(os.getpid())).write_text(json.dumps(sorted(threads)))
        return legal_actions[0]


@pytest.mark.parametrize("workers", [1, 2])
def test_games_run_with_blas_on_one_thread(tmp_path, monkeypatch, workers):
    from threadpoolctl import threadpool_info

    from jekyll_hyde_env import opponents

    monkeypatch.setitem(opponents._FACTORIES, "blasprobe", BlasProbe)
    before = [lib["num_threads"] for lib in threadpool_info()]
    arena.evaluate(f"blasprobe:{tmp_path}", "random", pairs=4, seed=0, workers=workers)
    notes = [json.loads(path.read_text()) for path in tmp_path.iterdir()]
    assert notes and all(note == [1] for note in notes)
    assert [lib["num_threads"] for lib in threadpool_info()] == before  # restored afterwards


def test_few_pairs_all_won_give_a_wide_interval_said_in_words():
    """Four pairs all won: the pairs' normal interval would be [1, 1]; the report gives
    Wilson's over the eight games instead and says why, in words."""
    scores = [1.0, 1.0, 1.0, 1.0]
    mean, (lo, hi), few = arena.report.score_interval(scores)
    assert mean == 1.0 and few and hi == 1.0 and lo < 0.7
    assert (lo, hi) == arena.wilson_ci(8, 8)
    many = [1.0, 0.5, 0.5, 0.0] * 10
    _, ci, few = arena.report.score_interval(many)
    assert not few and ci == arena.mean_ci(many)[1]  # enough pairs: the duplicate interval


def test_eval_says_what_its_interval_means_and_when_pairs_are_too_few():
    report = arena.evaluate("heuristic", "random", pairs=4, seed=0, workers=1)
    text = arena.report.format_report(report)
    lo, hi = report.score_ci
    assert report.few_pairs and hi - lo > 0.2
    assert "with 95% confidence its" in text and f"{lo:.1%}" in text
    assert "4 pairs are few" in text and "Wilson's over the 8 games" in text
    assert ("cannot tell which agent is stronger" in text) == (lo <= 0.5 <= hi)
    wide = arena.evaluate("heuristic", "random", pairs=40, seed=0, workers=1)
    assert not wide.few_pairs and "pairs are few" not in arena.report.format_report(wide)
