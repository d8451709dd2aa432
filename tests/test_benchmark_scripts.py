"""The benchmark scripts' own logic: recipe_levers.py's statistics of the labels
(on shards written as the labelling writes them) and exploitability.py's checks."""

from __future__ import annotations

import importlib.util
import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from jekyll_hyde_agents import AZConfig, AZSpec
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE
from jekyll_hyde_train.expert_iteration.distill import DATA_FOLDER, shard_bytes

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _script(name: str, monkeypatch):
    """benchmarks/NAME.py as a module (its folder on the path for its own imports)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(
        f"benchmark_{name}", ROOT / "benchmarks" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def levers(monkeypatch):
    return _script("recipe_levers", monkeypatch)


def _write_shard(
    folder: pathlib.Path,
    targets: list[list[float]],
    legal: list[int],
    values: list[float] | None = None,
    outcomes: list[int] | None = None,
) -> None:
    rows = len(targets)
    mask = np.zeros((rows, NUM_ACTIONS), dtype=bool)
    target = np.zeros((rows, NUM_ACTIONS), dtype=np.float32)
    for row, (shares, count) in enumerate(zip(targets, legal, strict=True)):
        mask[row, :count] = True
        target[row, : len(shares)] = shares
    arrays = {
        "obs": np.zeros((rows, OBS_SIZE), dtype=np.int8),
        "mask": mask,
        "target": target,
        "role": np.zeros(rows, dtype=np.uint8),
        "outcome": np.array(outcomes or [1] * rows, dtype=np.int8),
        "search_value": np.array(values or [0.0] * rows, dtype=np.float32),
        "games": np.array(1),
    }
    (folder / DATA_FOLDER).mkdir(parents=True)
    (folder / DATA_FOLDER / "shard_00000.npz").write_bytes(shard_bytes(arrays))


def test_label_statistics_read_the_searched_generations_decisions_with_a_choice(tmp_path, levers):
    # generation 0 (plain ISMCTS, the same for every variant) is left out
    _write_shard(tmp_path / "generation_00", [[1.0, 0.0]], [2])
    # generation 1: a one-hot target on 2 legal actions, a uniform one on 4, and a
    # forced move (one legal action) that teaches nothing and is left out
    _write_shard(
        tmp_path / "generation_01",
        [[0.0, 1.0], [0.25, 0.25, 0.25, 0.25], [1.0]],
        [2, 4, 1],
        values=[0.5, -0.5, 1.0],
        outcomes=[1, -1, -1],
    )
    labels = levers.label_statistics(tmp_path)
    assert labels["top_share"] == pytest.approx((1.0 + 0.25) / 2)
    assert labels["entropy"] == pytest.approx((0.0 + 1.0) / 2)
    assert labels["value_outcome_correlation"] == pytest.approx(1.0)  # the forced move is out

    _write_shard(tmp_path / "generation_02", [[0.5, 0.5, 0.0]], [3], values=[-0.5], outcomes=[1])
    labels = levers.label_statistics(tmp_path)
    assert labels["top_share"] == pytest.approx((1.0 + 0.25 + 0.5) / 3)
    assert labels["entropy"] == pytest.approx((0.0 + 1.0 + math.log(2) / math.log(3)) / 3)
    expected = np.corrcoef([0.5, -0.5, -0.5], [1, -1, 1])[0, 1]
    assert labels["value_outcome_correlation"] == pytest.approx(expected)


def test_label_statistics_of_a_run_without_searched_generations_are_none(tmp_path, levers):
    _write_shard(tmp_path / "generation_00", [[1.0, 0.0]], [2])
    assert set(levers.label_statistics(tmp_path).values()) == {None}


def test_exploitability_writes_its_page_only_over_three_responder_seeds_or_more():
    """A maximum and spread over one or two responder trainings would be read as a bound."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "exploitability.py"), "random"]
        + ["--seeds", "0", "1", "--write-page"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert "--write-page needs at least 3 --seeds" in done.stderr and "got 2" in done.stderr


@pytest.mark.parametrize(
    "label", ["heuristic=the heuristic", "random", "random="], ids=["not a target", "no =", "empty"]
)
def test_exploitability_refuses_a_label_of_no_target(label):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "exploitability.py"), "random"]
        + ["--label", label],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 2 and "--label must be TARGET=TEXT" in done.stderr


def test_exploitability_reads_a_label_of_a_target_that_holds_an_equals_sign():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "exploitability.py"), "az:5,c=1.5"]
        + ["--label", "az:5,c=1.5=a small search", "--seeds", "0", "--write-page"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )  # the label is accepted, so the next check (too few seeds) is the one that stops it
    assert done.returncode == 2 and "--write-page needs at least 3 --seeds" in done.stderr


def test_exploitability_table_names_a_labelled_target_by_its_label(monkeypatch):
    module = _script("exploitability", monkeypatch)
    seed = {"seed": 0, "abr_score": 0.6, "ci": [0.58, 0.62], "failed": False}
    row = {"target": "/tmp/run/policy", "seeds": [seed], "max": 0.6, "mean": 0.6}
    row |= {"spread": 0.0, "steps_per_seat": 3_000_000}
    table = module.markdown([{**row, "label": "the long recipe"}, {**row, "target": "random"}])
    assert "| the long recipe | seed 0: 0.600 [0.580, 0.620]" in table
    assert "| `random` |" in table and "/tmp/run/policy" not in table


def _levers_results(names_scores: dict[str, float]) -> dict:
    """recipe_levers results of two generations a variant, the final one scored as given."""
    return {
        name: {
            "overrides": [f"expert_iteration.games={100 + index}"],
            "cpu_hours": 0.5,
            "final": {"score": score, "ci": [score - 0.02, score + 0.02], "pairs": 1000},
            "labels": {"top_share": 0.5, "entropy": 0.8, "value_outcome_correlation": 0.5},
            "generations": [
                {
                    "generation": g,
                    "cpu_hours": 0.25 * (g + 1),
                    "score": score - 0.1 * (1 - g),
                    "ci": [0.0, 1.0],
                    "pairs": 200,
                    "exploiter_before": None,
                }
                for g in (0, 1)
            ],
        }
        for index, (name, score) in enumerate(names_scores.items())
    }


def _levers_args(**changes):
    import argparse

    settings = {"config": "default", "pairs": 200, "final_pairs": 1000, "seed": 2063}
    return argparse.Namespace(**(settings | changes))


def test_levers_page_keeps_the_rows_of_variants_not_measured_again(levers):
    page = levers.markdown(_levers_results({"a": 0.40, "b": 0.45}), _levers_args())
    table = levers.markdown(_levers_results({"b": 0.55, "c": 0.60}), _levers_args())
    merged = levers.merge_with_page(table, page).splitlines()
    variants = [line for line in merged if line.startswith(("| a |", "| b |", "| c |"))]
    finals = [line for line in variants if "**" in line]
    # the page's order, b replaced by this run's measurement, then the new variant
    assert [line.split("|")[1].strip() for line in finals] == ["a", "b", "c"]
    assert "**0.400**" in finals[0] and "**0.550**" in finals[1] and "**0.600**" in finals[2]
    assert not any("**0.450**" in line for line in merged)  # the page's b is gone
    curve = [line.split("|")[1:3] for line in variants if "**" not in line]
    assert [(n.strip(), g.strip()) for n, g in curve] == [
        ("a", "0"),
        ("a", "1"),
        ("b", "0"),
        ("b", "1"),
        ("c", "0"),
        ("c", "1"),
    ]
    assert levers.merge_with_page(table, "Not measured yet.") == table


def test_levers_page_refuses_rows_measured_on_other_deals(levers):
    page = levers.markdown(_levers_results({"a": 0.40}), _levers_args(seed=2062))
    table = levers.markdown(_levers_results({"b": 0.55}), _levers_args())
    with pytest.raises(SystemExit, match="other settings"):
        levers.merge_with_page(table, page)


def test_levers_variant_name_may_not_hold_a_cell_separator(levers):
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match="'\\|'"):
        levers.parse_variant("a|b=expert_iteration.games=10")
    assert levers.parse_variant(" gumbel =x=1; y=2") == ("gumbel", ["x=1", "y=2"])


@pytest.fixture
def az_strength(monkeypatch):
    return _script("az_strength", monkeypatch)


@pytest.mark.parametrize(
    "text, problem",
    [("", "one or more"), ("4000,0", "at least 1"), ("4k", "whole numbers"), ("10,10", "twice")],
)
def test_az_strength_refuses_budgets_that_are_not_positive_whole_numbers_once(
    az_strength, text, problem
):
    with pytest.raises(ValueError, match=problem):
        az_strength.parse_budgets(text)
    assert az_strength.parse_budgets(" 4000, 6000") == [4000, 6000]


def test_az_strength_names_the_champion_by_leaving_the_policy_out(az_strength):
    options = "value_weight=0.5,playouts=heuristic"
    spec = az_strength.az_spec("6000", None, options)
    assert spec == AZSpec(None, AZConfig(6000, value_weight=0.5, playouts="heuristic"))
    assert spec.name == f"az:6000,{options}"
    timed = az_strength.az_spec("0.01s", "runs/x", "")
    assert timed.config.time_budget == 0.01 and timed.name == "az:0.01s,policy=runs/x"
    assert az_strength.az_spec("100", "runs/a,b", "c=2").policy == "runs/a,b"


def test_az_strength_budget_table_has_one_row_a_budget_with_time_score_and_command(az_strength):
    def row(agent, ms, score):
        timing = {"mean_ms": ms, "p95_ms": 2 * ms, "games": 8}
        roles = {"jekyll": {"win_rate": score - 0.05}, "hyde": {"win_rate": score + 0.05}}
        report = {"score": score, "score_ci": [score - 0.01, score + 0.01], "by_role": roles}
        return {"agent": agent, "timing": timing, "report": {**report, "pairs": 1000}}

    command = az_strength.page_command([4000, 6000], "c=2", 1000, 8, 7)
    assert command == (
        "python benchmarks/az_strength.py --simulations 4000,6000 --az-options c=2 "
        "--pairs 1000 --games 8 --seed 7 --write-page"
    )
    rows = [row("az:4000", 29.6, 0.872), row("az:6000", 44.0, 0.9)]
    lines = az_strength.budget_table(rows, 7, command).splitlines()
    assert (
        lines[2] == "| `az:4000` | 29.6 (59.2) | 0.872 | [0.862, 0.882] | 0.822 | 0.922 | 1,000 |"
    )
    assert lines[3].startswith("| `az:6000` | 44.0 (88.0) | 0.900 |")
    assert "seed 7" in lines[-1] and "8 self-play games" in lines[-1] and command in lines[-1]


@pytest.mark.parametrize(
    "arguments, problem",
    [
        (["--az-options", "value_weight=2"], "value_weight must be in [0, 1]"),
        (["--az-options", "gumbel=8"], "gumbel needs a number of simulations"),
        (["--az-options", "policy=runs/x"], "give the policy as --policy"),
        (["--seconds", "inf"], "positive, finite seconds"),
        (["--seconds", "0.01,0.01"], "names a budget twice"),
        (["--write-page"], "--write-page needs --seed"),
        (["--write-page", "--seed", "5", "--policy", "agents"], "leave --policy out"),
        (["--equal-pairs", "0"], "--equal-pairs must be at least 1, got 0"),
    ],
    ids=["option value", "option on a clock", "policy option", "seconds", "seconds twice",
         "page seed", "page policy", "pairs"],
)  # fmt: skip
def test_az_strength_checks_every_option_before_any_game(arguments, problem):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "az_strength.py"), "--simulations", "100"]
        + arguments,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 2 and problem in done.stderr


@pytest.fixture
def calibration(monkeypatch):
    return _script("abr_calibration", monkeypatch)


def _row(exact: float, abr: list[float]) -> dict:
    return {
        "target": "random",
        "exact_score": exact,
        "abr_scores": abr,
        "abr_max": max(abr),
        "abr_spread": max(abr) - min(abr),
        "shortfall": exact - max(abr),
        "stronger_responders": [["search", "rl"]] * len(abr),
    }


def test_abr_calibration_counts_the_pairs_its_maximum_orders_as_the_exact_scores(calibration):
    rows = [_row(0.5, [0.45, 0.48]), _row(0.6, [0.55]), _row(0.7, [0.52]), _row(0.7, [0.6])]
    # five pairs differ in exact score (the two at 0.7 do not count); (0.6, 0.7 at 0.52)
    # is ordered the other way
    assert calibration.order_agreement(rows) == (4, 5)
    data = {"variant": "small", "steps_per_seat": 1000, "seeds": 2, "targets": {}}
    data["budget_scale"] = {
        "decisions_per_game": 4.0,
        "full_decisions_per_game": 40.0,
        "full_default_steps": 3_000_000,
    }
    data["targets"] = {f"t{i}": row for i, row in enumerate(rows)}
    table = calibration.variant_table(data)
    assert "1,000 responder steps per seat" in table
    assert (
        "about 250 games, where the full game's default of 3,000,000 steps is about 75,000" in table
    )
    assert calibration.about(9265.4) == 9300 and calibration.about(73962.0) == 74000
    assert "by +0.020 to +0.180 (median +0.075)" in table
    assert "in 4 of 5 pairs" in table
    assert "| 0.500 | 0.450, 0.480 | 0.480 | 0.030 | +0.020 | search, RL |" in table
    assert calibration.stronger([["rl", "rl"], ["search", "rl"]]) == "RL, RL; search, RL"


def test_abr_calibration_counts_a_seats_decisions_per_game(calibration):
    from jekyll_hyde_env.engine.variant import FULL, SMALL

    small = calibration.decisions_per_game(SMALL, games=200)
    full = calibration.decisions_per_game(FULL, games=200)
    assert 3 <= small < 6 < 30 < full  # one round of a 3-card hand; three rounds
    assert calibration.decisions_per_game(SMALL, games=200) == small  # seeded


def test_abr_calibration_pins_every_file_a_target_names(calibration, tmp_path):
    policy = tmp_path / "policy.npz"
    policy.write_bytes(b"one")
    pair = f"jekyll={policy},hyde=random"
    before = calibration.pin(pair)
    assert calibration.pin(pair) == before
    assert calibration.pin("random") != calibration.pin("heuristic")
    policy.write_bytes(b"two")  # the exact score of the old file no longer holds
    assert calibration.pin(pair) != before
