"""Search distillation: labelled ISMCTS self-play, resumable shards, the fit and its export."""

from __future__ import annotations

import io
import json
import pathlib
import shutil

import numpy as np
import pytest
import torch

from jekyll_hyde_agents import ISMCTSAgent, ISMCTSConfig, PolicyAgent, make_agent
from jekyll_hyde_app import cli
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.engine.information import player_view
from jekyll_hyde_env.engine.rules import apply_action, is_terminal, legal_actions, new_game
from jekyll_hyde_env.observation import OBS_SIZE, encode
from jekyll_hyde_train.common.files import atomic_write_bytes
from jekyll_hyde_train.expert_iteration.distill import (
    DATA_FOLDER,
    generate,
    label_game,
    load_data,
    write_shard,
)
from jekyll_hyde_train.expert_iteration.fit import (
    _schedule,
    fit,
    flushing_denormals,
    flushing_denormals_now,
)
from jekyll_hyde_train.expert_iteration.settings import DistillSettings
from tests.test_train_smoke import play_legal_games

SMALL = dict(teacher="ismcts:30", games=4, games_per_shard=2, hidden=(16,), epochs=2)


def shard_bytes(run_dir):
    return {p.name: p.read_bytes() for p in sorted((run_dir / DATA_FOLDER).glob("shard_*.npz"))}


def most_visited(legal, target):
    return max(legal, key=lambda a: (target[a], -a))


def retrace(labels, deal_seed, choose):
    """Play the deal again, ``choose(view, legal, target)`` picking each labelled
    decision's move, checking that every labelled row is that decision's; returns
    the finished state."""
    state = new_game(np.random.default_rng(deal_seed))
    row = 0
    while not is_terminal(state):
        legal = legal_actions(state)
        if len(legal) == 1:
            apply_action(state, legal[0])
            continue
        view = player_view(state, state.to_act)
        np.testing.assert_array_equal(labels["obs"][row], encode(view))
        assert sorted(np.flatnonzero(labels["mask"][row])) == legal
        assert labels["role"][row] == state.to_act
        apply_action(state, choose(view, legal, labels["target"][row]))
        row += 1
    assert row == len(labels["role"])
    return state


def test_labels_are_the_teachers_visit_shares_at_every_real_choice():
    teacher = ISMCTSAgent(ISMCTSConfig(num_simulations=40), seed=3)
    labels = label_game(teacher, deal_seed=11)
    assert labels["obs"].shape == (len(labels["role"]), OBS_SIZE)
    np.testing.assert_allclose(labels["target"].sum(axis=1), 1.0, rtol=1e-6)
    assert not (labels["target"][~labels["mask"]]).any()  # no share for an illegal action
    assert (labels["mask"].sum(axis=1) >= 2).all()  # forced moves teach nothing
    # Replaying the teacher's choices (the most visited action) retraces the game.
    state = retrace(labels, 11, lambda view, legal, target: most_visited(legal, target))
    won = labels["role"] == state.winner
    assert (labels["outcome"][won] == 1).all() and (labels["outcome"][~won] == -1).all()
    assert np.abs(labels["search_value"]).max() <= 1.0


def test_network_moves_follow_the_networks_own_choice_while_the_search_labels(tmp_path):
    from tests.test_az import value_policy

    value_policy(tmp_path)
    policy = PolicyAgent(tmp_path)
    teacher = make_agent(f"az:60,policy={tmp_path}", seed=4)
    labels = label_game(teacher, deal_seed=21, network_moves=True)
    by_search = label_game(make_agent(f"az:60,policy={tmp_path}", seed=4), deal_seed=21)
    # The network's greedy play retraces the game, each decision still labelled.
    moves = []  # (the network's move, the search's choice) at each labelled decision

    def network(view, legal, target):
        moves.append((policy.act(view, legal), most_visited(legal, target)))
        return moves[-1][0]

    retrace(labels, 21, network)
    disagreements = sum(mine != search for mine, search in moves)
    np.testing.assert_allclose(labels["target"].sum(axis=1), 1.0, rtol=1e-6)
    assert disagreements > 0  # the search's labels are not the network's moves
    assert len(by_search["role"]) != len(moves) or not np.array_equal(
        by_search["obs"], labels["obs"]
    )  # the search alone plays another game


def test_network_play_sets_the_share_of_games_the_network_plays(tmp_path):
    from jekyll_hyde_train.expert_iteration.distill import _shard_seeds
    from tests.test_az import value_policy

    value_policy(tmp_path)
    teacher = f"az:10,policy={tmp_path}"
    for share, expected in ((0.0, 0), (0.25, 5), (0.5, 10), (1.0, 20)):
        settings = DistillSettings(
            teacher=teacher, games=20, games_per_shard=20, network_play=share
        )
        moves = [network for _, _, network in _shard_seeds(settings, 0)]
        assert sum(moves) == expected
    half = DistillSettings(teacher=teacher, games=20, games_per_shard=20, network_play=0.5)
    assert [network for _, _, network in _shard_seeds(half, 0)][:4] == [False, True, False, True]


def test_a_playout_cap_keeps_only_the_decisions_searched_fully(tmp_path):
    from tests.test_az import value_policy

    value_policy(tmp_path)
    teacher = make_agent(f"az:40,policy={tmp_path}")
    budgets, search = [], teacher.search

    def spy(view, simulations=None):
        result = search(view, simulations)
        budgets.append(result.simulations)
        return result

    teacher.search = spy  # seen in the Python loop; the C loop is held to it in test_self_play.py
    full = fast = 0
    for deal in range(6):
        teacher.reset(deal)
        budgets.clear()
        labels = label_game(teacher, deal, full_search_share=0.3, fast_simulations=4, in_core=False)
        order = list(budgets)
        full, fast = full + order.count(40), fast + order.count(4)
        assert len(order) == order.count(40) + order.count(4)
        assert len(labels["role"]) == order.count(40)  # only full searches are kept rows
        np.testing.assert_allclose(labels["target"].sum(axis=1), 1.0, rtol=1e-6)
        teacher.reset(deal)
        again = label_game(teacher, deal, full_search_share=0.3, fast_simulations=4, in_core=False)
        assert all(np.array_equal(labels[k], again[k]) for k in labels)  # reproducible
        teacher.reset(deal + 100)  # other searches, so another game, but the same draws
        budgets.clear()
        label_game(teacher, deal, full_search_share=0.3, fast_simulations=4, in_core=False)
        shared = min(len(order), len(budgets))
        assert budgets[:shared] == order[:shared]  # the deal decides which are full
    assert 0.15 < full / (full + fast) < 0.45


def test_a_shard_is_labelled_with_the_playout_cap(tmp_path):
    from jekyll_hyde_train.expert_iteration.distill import _shard_seeds, read_shard
    from tests.test_az import value_policy

    value_policy(tmp_path / "net")
    settings = DistillSettings(
        teacher=f"az:30,policy={tmp_path / 'net'}",
        games=3,
        games_per_shard=3,
        full_search_share=0.4,
        fast_simulations=3,
    )
    assert generate(tmp_path / "run", settings, workers=1) == 1
    shard = read_shard(tmp_path / "run" / DATA_FOLDER / "shard_00000.npz")
    teacher, rows = make_agent(settings.teacher), []
    for deal_seed, search_seed, network_moves in _shard_seeds(settings, 0):
        teacher.reset(search_seed)
        rows.append(label_game(teacher, deal_seed, network_moves, 0.4, 3)["obs"])
    assert np.array_equal(shard["obs"], np.concatenate(rows)) and int(shard["games"]) == 3


def test_a_playout_cap_is_refused_without_a_fast_search_to_make(tmp_path):
    from tests.test_az import value_policy

    value_policy(tmp_path)
    teacher = f"az:10,policy={tmp_path}"
    cases = [
        ({"full_search_share": 0.0}, r"full_search_share must be in \(0, 1\], got 0.0"),
        ({"full_search_share": 0.5}, r"fast_simulations must be in \[1, 9\].*got 0"),
        ({"full_search_share": 0.5, "fast_simulations": 10}, r"\[1, 9\].*got 10"),
        ({"fast_simulations": 5}, "fast_simulations 5 would do nothing"),
        (
            {"full_search_share": 0.5, "fast_simulations": 1, "teacher": f"az:1,policy={tmp_path}"},
            "needs at least 2 simulations",
        ),
        (
            {"full_search_share": 0.5, "fast_simulations": 5, "teacher": "ismcts:30"},
            "full_search_share 0.5 needs a network-guided teacher with a simulation count",
        ),
        (
            {
                "full_search_share": 0.5,
                "fast_simulations": 5,
                "teacher": f"az:0.1s,policy={tmp_path}",
            },
            "needs a network-guided teacher with a simulation count",
        ),
    ]
    for change, message in cases:
        with pytest.raises(ValueError, match=message):
            DistillSettings(**{**SMALL, "teacher": teacher, **change})
    DistillSettings(
        **{**SMALL, "teacher": teacher, "full_search_share": 0.5, "fast_simulations": 9}
    )


def test_a_run_labelled_before_network_play_existed_still_resumes(tmp_path):
    settings = DistillSettings(**SMALL)
    generate(tmp_path, settings, workers=1)
    saved = json.loads((tmp_path / "distill.json").read_text())
    del saved["network_play"]  # as written by an older version
    (tmp_path / "distill.json").write_text(json.dumps(saved))
    assert generate(tmp_path, DistillSettings(**{**SMALL, "games": 6}), workers=1) == 1


def test_a_fit_stopped_before_network_play_existed_still_continues(tmp_path):
    from jekyll_hyde_train.expert_iteration.fit import FIT_STATE_FILE, _FitProgress

    settings = DistillSettings(**SMALL)
    progress = _FitProgress(settings)
    progress.role, progress.epoch = 1, 1
    progress.save(tmp_path)
    saved = torch.load(tmp_path / FIT_STATE_FILE, weights_only=False)
    del saved["settings"]["network_play"]  # as written by an older version
    torch.save(saved, tmp_path / FIT_STATE_FILE)
    loaded = _FitProgress.load(tmp_path, settings)
    assert (loaded.role, loaded.epoch) == (1, 1)
    other = DistillSettings(**{**SMALL, "epochs": 3})
    assert _FitProgress.load(tmp_path, other).role == 0  # another fit starts afresh


def test_the_search_value_leans_towards_the_winner():
    teacher = ISMCTSAgent(ISMCTSConfig(num_simulations=300), seed=5)
    values, outcomes = [], []
    for deal in range(4):
        labels = label_game(teacher, deal_seed=deal)
        values.append(labels["search_value"])
        outcomes.append(labels["outcome"])
    values, outcomes = np.concatenate(values), np.concatenate(outcomes)
    assert values[outcomes == 1].mean() > values[outcomes == -1].mean() + 0.2


def test_generation_is_deterministic_and_resumes_missing_or_grown_shards(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    settings = DistillSettings(**SMALL)
    assert generate(first, settings, workers=2) == 2
    assert generate(first, settings, workers=1) == 0  # nothing missing
    written = shard_bytes(first)
    (first / DATA_FOLDER / "shard_00001.npz").unlink()  # as if killed before it landed
    assert generate(first, settings, workers=1) == 1
    assert shard_bytes(first) == written
    generate(second, settings, workers=1)
    assert shard_bytes(second) == written  # same seeds, same data, whatever the workers

    grown = DistillSettings(**{**SMALL, "games": 5})  # a third, partial shard
    assert generate(first, grown, workers=1) == 1
    more = DistillSettings(**{**SMALL, "games": 6})  # which must now be completed
    assert generate(first, more, workers=1) == 1
    data, shard, games = load_data(first)
    assert games == 6 and sorted(set(shard.tolist())) == [0, 1, 2]


def test_a_run_folder_refuses_data_from_another_teacher(tmp_path):
    generate(tmp_path, DistillSettings(**SMALL), workers=1)
    other = DistillSettings(**{**SMALL, "teacher": "ismcts:31"})
    with pytest.raises(ValueError, match=r"teacher 'ismcts:30' \(given 'ismcts:31'\)"):
        generate(tmp_path, other, workers=1)
    with pytest.raises(ValueError, match="another --run-dir"):
        fit(tmp_path, other)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"teacher": "heuristic"}, "not a search agent; use 'ismcts:N'"),
        ({"teacher": "ismcts:x"}, "ismcts"),
        ({"games": 0}, "games must be positive, got 0"),
        ({"epochs": 0}, "epochs must be positive, got 0"),
        ({"hidden": ()}, "hidden must list positive layer sizes"),
        ({"activation": "gelu"}, r"activation 'gelu' is not one of \['tanh', 'relu'\]"),
        ({"learning_rate": 0.0}, r"learning_rate must be in \(0, 1\)"),
        ({"lr_schedule": "step"}, r"lr_schedule 'step' is not one of \['constant', 'cosine'\]"),
        ({"weight_decay": -0.1}, r"weight_decay must be in \[0, 1\)"),
        ({"validation_share": 1.0}, r"validation_share must be in \[0, 1\)"),
        ({"network_play": 1.5}, r"network_play must be in \[0, 1\]"),
        ({"network_play": 0.5}, r"network_play 0.5 needs a network-guided teacher"),
    ],
)
def test_bad_settings_are_refused_with_the_allowed_values(change, message):
    with pytest.raises(ValueError, match=message):
        DistillSettings(**{**SMALL, **change})


def test_fit_on_nothing_says_what_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="holds no shards"):
        fit(tmp_path, DistillSettings(**SMALL))
    with pytest.raises(ValueError, match="threads must be >= 1, got 0"):
        fit(tmp_path, DistillSettings(**SMALL), threads=0)


def test_a_corrupt_shard_is_named_and_labelled_again(tmp_path):
    settings = DistillSettings(**SMALL)
    generate(tmp_path, settings, workers=1)
    written = shard_bytes(tmp_path)
    path = tmp_path / DATA_FOLDER / "shard_00000.npz"
    path.write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match=r"shard_00000.npz: not a readable shard"):
        fit(tmp_path, settings)
    assert generate(tmp_path, settings, workers=1) == 1
    assert shard_bytes(tmp_path) == written


def synthetic_shard(run_dir, index, rng, rows=400):
    """Decisions whose right answer is the lowest legal action."""
    mask = rng.random((rows, NUM_ACTIONS)) < 0.3
    mask[:, 0] |= ~mask.any(axis=1)
    obs = np.zeros((rows, OBS_SIZE), dtype=np.int8)
    obs[:, :NUM_ACTIONS] = mask  # the network sees the legal actions
    target = np.zeros((rows, NUM_ACTIONS), dtype=np.float32)
    target[np.arange(rows), mask.argmax(axis=1)] = 1.0
    arrays = dict(
        obs=obs,
        mask=mask,
        target=target,
        role=np.arange(rows, dtype=np.uint8) % 2,
        outcome=np.ones(rows, dtype=np.int8),
        games=np.array(1),
    )
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write_bytes(run_dir / DATA_FOLDER / f"shard_{index:05d}.npz", buffer.getvalue())


def test_the_fit_learns_the_targets_and_exports_a_policy_for_both_roles(tmp_path):
    settings = DistillSettings(**{**SMALL, "hidden": (64,), "epochs": 40, "batch_size": 64})
    (tmp_path / DATA_FOLDER).mkdir()
    rng = np.random.default_rng(0)
    for index in range(10):
        synthetic_shard(tmp_path, index, rng)
    summary = fit(tmp_path, settings)
    assert summary["decisions"] == 4000 and summary["validation_decisions"] == 400
    last = {row["role"]: row for row in summary["history"] if row["epoch"] == 40}
    for role in AGENTS:
        assert last[role]["validation_agreement"] > 0.9
    agent = PolicyAgent(tmp_path)
    assert agent.roles == list(AGENTS)
    assert agent.metadata["training"]["method"] == "distillation"
    assert agent.metadata["training_steps"] == 4000
    observation, mask = np.zeros(OBS_SIZE, np.float32), np.zeros(NUM_ACTIONS, bool)
    mask[[5, 9, 20]] = True
    observation[:NUM_ACTIONS] = mask
    for role in AGENTS:  # the exported numpy network plays what the fit taught
        logits = agent.logits(observation, role)
        assert int(np.flatnonzero(mask)[np.argmax(logits[mask])]) == 5
    assert json.loads((tmp_path / "fit.json").read_text())["games"] == 10


def test_the_fit_flushes_denormals_and_restores_the_mode_after(tmp_path):
    (tmp_path / DATA_FOLDER).mkdir()
    synthetic_shard(tmp_path, 0, np.random.default_rng(1))
    flushes = torch.set_flush_denormal(True)  # False where the CPU cannot
    torch.set_flush_denormal(False)
    during = []
    assert not flushing_denormals_now()
    fit(tmp_path, DistillSettings(**SMALL), lambda row: during.append(flushing_denormals_now()))
    assert during and during == [flushes] * len(during)  # every epoch flushed, where it can
    assert not flushing_denormals_now()  # the search's float math after a fit is as before

    def interrupt(row):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fit(tmp_path, DistillSettings(**SMALL), interrupt)
    assert not flushing_denormals_now()  # restored however the fit ends
    try:
        torch.set_flush_denormal(True)  # and a caller's own choice survives one
        with flushing_denormals():
            pass
        assert flushing_denormals_now() == flushes
    finally:
        torch.set_flush_denormal(False)


@pytest.mark.parametrize("name", ["constant", "cosine"])
def test_the_step_size_schedule_over_all_the_fits_steps(name):
    settings = DistillSettings(**{**SMALL, "epochs": 3, "lr_schedule": name})
    optimiser = torch.optim.AdamW(torch.nn.Linear(2, 2).parameters(), lr=settings.learning_rate)
    schedule = _schedule(settings, optimiser, steps_per_epoch=5)
    rates = []
    for _ in range(15):
        rates.append(optimiser.param_groups[0]["lr"])
        optimiser.step()
        schedule.step()
    final = optimiser.param_groups[0]["lr"]
    if name == "constant":
        assert rates == [settings.learning_rate] * 15 and final == settings.learning_rate
    else:  # a half cosine: first step at the full rate, halfway at half, zero after the last
        assert rates[0] == settings.learning_rate
        assert rates[8] < settings.learning_rate / 2 < rates[7]
        assert all(a > b for a, b in zip(rates, rates[1:], strict=False))
        assert final == pytest.approx(0.0, abs=1e-12)


def test_command_line_labels_fits_and_the_policy_plays_legally(tmp_path, capsys):
    run = tmp_path / "run"
    argv = ["distill", "--run-dir", str(run), "--teacher", "ismcts:20", "--games", "4"]
    threads = torch.get_num_threads()
    try:
        assert cli.main([*argv, "--games-per-shard", "2", "--epochs", "1", "--hidden", "8,8"]) == 0
        assert torch.get_num_threads() == 1  # --threads defaults to one
    finally:
        torch.set_num_threads(threads)
    assert "from 4 games of ismcts:20" in capsys.readouterr().out
    agent = make_agent(str(run))
    assert agent.metadata["architecture"]["hidden"] == [8, 8]
    play_legal_games(agent, games=2)
    assert cli.main(["distill", "--run-dir", str(run), "--teacher", "random"]) == 2
    assert "not a search agent" in capsys.readouterr().err


def test_write_shard_holds_every_game_of_the_shard(tmp_path):
    settings = DistillSettings(**{**SMALL, "games": 3})
    (tmp_path / DATA_FOLDER).mkdir()
    decisions = write_shard(tmp_path, settings, 1)  # the last shard: one game
    with np.load(tmp_path / DATA_FOLDER / "shard_00001.npz") as archive:
        assert int(archive["games"]) == 1 and len(archive["role"]) == decisions


class _RunsCode:
    """An object whose unpickling would run code: a hostile fit state carries one."""

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(_RunsCode.marker),))


def test_a_fit_state_is_read_without_running_code_and_an_interrupted_fit_ends_the_same(tmp_path):
    from jekyll_hyde_train.expert_iteration.fit import FIT_STATE_FILE

    (tmp_path / DATA_FOLDER).mkdir()
    synthetic_shard(tmp_path, 0, np.random.default_rng(1))
    settings = DistillSettings(**{**SMALL, "epochs": 3})
    whole = tmp_path / "whole"
    shutil.copytree(tmp_path / DATA_FOLDER, whole / DATA_FOLDER)
    every = []
    fit(whole, settings, every.append)

    rows = []

    def stop_after_two(row):
        rows.append(row)
        if len(rows) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fit(tmp_path, settings, stop_after_two)
    later = []
    fit(tmp_path, settings, later.append)  # continues from the saved state, generator included
    assert len(rows) + len(later) == len(every)  # it went on from the third epoch, not afresh
    for name in ("policy.npz", "policy.json"):
        assert (tmp_path / "policy" / name).read_bytes() == (whole / "policy" / name).read_bytes()

    _RunsCode.marker = str(tmp_path / "code_ran")
    torch.save({"settings": _RunsCode()}, tmp_path / FIT_STATE_FILE)
    fit(tmp_path, settings)  # a state it cannot read safely: the fit starts afresh
    assert not (tmp_path / "code_ran").exists()
    assert (tmp_path / "policy" / "policy.npz").read_bytes() == (
        whole / "policy" / "policy.npz"
    ).read_bytes()
