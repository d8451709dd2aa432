"""Expert iteration: the smoke run, resumption after kill -9, the fit's epoch resume, configs."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from jekyll_hyde_agents import AZAgent, AZSpec, PolicyAgent
from jekyll_hyde_agents.policy_file import read_policy
from jekyll_hyde_app import cli
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE
from jekyll_hyde_train.common.config import ConfigError, load_config, read_algorithm
from jekyll_hyde_train.expert_iteration.config import EITrainConfig, start_policy_path
from jekyll_hyde_train.expert_iteration.distill import generate
from jekyll_hyde_train.expert_iteration.fit import FIT_STATE_FILE, fit
from jekyll_hyde_train.expert_iteration.loop import check_start_copy, settings_for
from jekyll_hyde_train.expert_iteration.settings import DistillSettings
from jekyll_hyde_train.ppo.config import TrainConfig
from tests.test_train_smoke import play_legal_games

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "expert_iteration" / "smoke.yaml")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> pathlib.Path:
    """One smoke run for the tests that read it (or copy it to change it)."""
    run = tmp_path_factory.mktemp("smoke") / "run"
    assert cli.main(["train", "--config", SMOKE, "--run-dir", str(run)]) == 0
    return run


def test_the_smoke_run_iterates_and_reports(smoke_run):
    run = smoke_run
    with open(run / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["generation"] for row in rows] == ["0", "1"]
    assert rows[0]["teacher"] == "ismcts:30"
    assert rows[1]["teacher"].startswith("az:20,policy=")  # guided by generation 0
    assert int(rows[1]["train_games"]) == 8  # its own games and generation 0's
    assert all(0 <= float(row["score_vs_random"]) <= 1 for row in rows)
    saved = read_policy(run / "policy")
    assert saved.metadata["value_head"] and saved.metadata["training"]["generation"] == 1
    assert saved.metadata["provenance"]["seed"] == 0
    agent = PolicyAgent(run)
    play_legal_games(agent, games=2)
    AZAgent(run)  # the value head serves the network-guided search
    report = (run / "report.md").read_text()
    assert "## Final arena" in report and "--seed 777" in report
    table = report.split("## Generations")[1].split("\n\n")[1].splitlines()
    header, generations = table[0], table[2:]
    assert "train_decisions" in header and len(generations) == 2
    for line in generations:  # every column the table names is filled from metrics.csv
        assert all(cell.strip() for cell in line.strip("|").split("|")), line
    assert (run / "score_curve.png").exists() and any((run / "tensorboard").iterdir())
    assert json.loads((run / "state.json").read_text())["finished"]
    assert cli.main(["train", "--config", SMOKE, "--run-dir", str(run)]) == 2  # not overwritten


def _start(run: pathlib.Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jekyll_hyde_app.cli",
            "train",
            "--config",
            SMOKE,
            "--run-dir",
            str(run),
            "--set",
            "expert_iteration.games=12",
            "--set",
            "expert_iteration.generations=3",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def test_resume_after_kill_9_keeps_the_labelled_shards(tmp_path, capsys):
    run = tmp_path / "run"
    process = _start(run)
    deadline = time.time() + 120
    shard = run / "generation_01" / "data" / "shard_00000.npz"
    while not shard.exists():
        assert process.poll() is None, process.stderr.read().decode()
        assert time.time() < deadline, "no shard of generation 1 appeared"
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    kept = {p: p.read_bytes() for p in (run / "generation_00" / "data").glob("*.npz")}
    assert json.loads((run / "state.json").read_text())["generation"] == 1
    capsys.readouterr()
    assert cli.main(["train", "--resume", str(run)]) == 0
    assert capsys.readouterr().out.startswith(f"resuming {run} at generation 1\n")
    assert {p: p.read_bytes() for p in kept} == kept  # generation 0 was not labelled again
    state = json.loads((run / "state.json").read_text())
    assert state["finished"] and state["generation"] == 3
    with open(run / "metrics.csv", newline="") as handle:
        assert [row["generation"] for row in csv.DictReader(handle)] == ["0", "1", "2"]


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path):
    run = tmp_path / "run"
    process = _start(run)
    deadline = time.time() + 120
    while not (run / "generation_00" / "data" / "shard_00000.npz").exists():
        assert process.poll() is None and time.time() < deadline
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    status, stderr = process.wait(timeout=60), process.stderr.read().decode()
    assert status == 130, stderr
    assert f"--resume {run}" in stderr
    assert cli.main(["train", "--resume", str(run)]) == 0


def test_an_interrupted_fit_resumes_to_the_same_weights(tmp_path):
    settings = DistillSettings(
        teacher="ismcts:20", games=6, games_per_shard=2, hidden=(16,), epochs=3, batch_size=32
    )
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    for folder in (whole, cut):
        generate(folder, settings, workers=1)
    fit(whole, settings)

    def stop_after_one_epoch(row: dict) -> None:
        if row["role"] == "hyde" and row["epoch"] == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fit(cut, settings, stop_after_one_epoch)
    assert (cut / FIT_STATE_FILE).exists()
    seen = []
    fit(cut, settings, seen.append)
    assert [(row["role"], row["epoch"]) for row in seen] == [("hyde", 2), ("hyde", 3)]
    assert not (cut / FIT_STATE_FILE).exists()
    a, b = read_policy(whole / "policy"), read_policy(cut / "policy")
    for group in a.groups:
        for (wa, ba), (wb, bb) in zip(a.groups[group], b.groups[group], strict=True):
            np.testing.assert_array_equal(wa, wb)
            np.testing.assert_array_equal(ba, bb)
        np.testing.assert_array_equal(a.values[group][0], b.values[group][0])


def test_a_shared_policy_is_fit_on_both_roles_decisions(tmp_path):
    settings = DistillSettings(
        teacher="ismcts:20", games=4, games_per_shard=2, hidden=(16,), epochs=2, batch_size=32
    )
    generate(tmp_path, settings, workers=1)
    shared = dataclasses.replace(settings, shared_policy=True)
    summary = fit(tmp_path, shared)
    assert [row["role"] for row in summary["history"]] == ["shared", "shared"]
    saved = read_policy(tmp_path / "policy")
    assert saved.metadata["roles"] == {"jekyll": "shared", "hyde": "shared"}
    assert list(saved.groups) == ["shared"] and saved.values["shared"] is not None
    recorded = json.loads((tmp_path / "fit.json").read_text())
    assert recorded["settings"]["shared_policy"] is True
    fit(tmp_path, settings)  # one network per role, on its own role's decisions
    assert sorted(read_policy(tmp_path / "policy").groups) == ["hyde", "jekyll"]
    play_legal_games(PolicyAgent(tmp_path), games=1)


def test_a_warm_start_begins_from_the_previous_policy(tmp_path):
    settings = DistillSettings(
        teacher="ismcts:20", games=4, games_per_shard=2, hidden=(16,), epochs=2, batch_size=32
    )
    first, second = tmp_path / "first", tmp_path / "second"
    generate(first, settings, workers=1)
    fit(first, settings)
    still = dataclasses.replace(settings, seed=1, learning_rate=1e-12)  # steps too small to move
    generate(second, still, workers=1)
    fit(second, still, init_from=first / "policy")
    before, after = read_policy(first / "policy"), read_policy(second / "policy")
    for group in before.groups:
        for (wa, _), (wb, _) in zip(before.groups[group], after.groups[group], strict=True):
            np.testing.assert_allclose(wa, wb, atol=1e-6)
        np.testing.assert_allclose(before.values[group][0], after.values[group][0], atol=1e-6)
    fit(second, still)  # a cold start is somewhere else
    cold = read_policy(second / "policy")
    assert not np.allclose(cold.groups["jekyll"][0][0], before.groups["jekyll"][0][0])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("algorithm: expert_iteration\nppo: {n_steps: 64}\n", "mixes expert_iteration and"),
        ("algorithm: alphazero\n", "is not one of"),
        ("expert_iteration: {first_teacher: 'az:100'}\n", "must be 'ismcts:N'"),
        ("expert_iteration: {simulations: 0}\n", "simulations must be positive"),
        ("expert_iteration: {value_loss_weight: 0.0}\n", "needs a value head"),
        ("expert_iteration: {eval_opponents: [nobody]}\n", "unknown agent 'nobody'"),
        ("expert_iteration: {leaf_playouts: greedy}\n", "leaf_playouts 'greedy' is not one of"),
        (
            "expert_iteration: {leaf_playouts: heuristic, leaf_value_weight: 1.0}\n",
            "needs leaf_value_weight < 1",
        ),
        (
            "expert_iteration: {stages: [{from_generation: 2, activation: tanh}]}\n",
            r"stages\[0\]: unknown keys \['activation'\]; a stage changes some of",
        ),
        (
            "expert_iteration: {stages: [{from_generation: 2, hidden: [8, 0]}]}\n",
            r"stages\[0\] \(from generation 2\): .*hidden must list positive layer sizes",
        ),
        (
            "expert_iteration: {generations: 4, stages: [{from_generation: 4, games: 9}]}\n",
            "before expert_iteration.generations",
        ),
        (
            "expert_iteration: {stages: [{from_generation: 2, games: 9}, "
            "{from_generation: 2, games: 8}]}\n",
            r"stages\[1\].from_generation must be after the previous stage's \(2\)",
        ),
        (
            "expert_iteration: {stages: [{from_generation: 1, simulations: 0}]}\n",
            r"stages\[0\] \(from generation 1\): .*simulations must be positive",
        ),
        ("expert_iteration: {network_play: 2}\n", r"network_play must be in \[0, 1\], got 2"),
        (
            "expert_iteration: {fast_simulations: 50}\n",
            "fast_simulations 50 would do nothing",
        ),
        (
            "expert_iteration: {simulations: 1, full_search_share: 0.5, fast_simulations: 1}\n",
            "full_search_share below 1 needs at least 2 simulations",
        ),
        (
            "expert_iteration: {full_search_share: 0}\n",
            r"full_search_share must be in \(0, 1\], got 0",
        ),
        (
            "expert_iteration: {simulations: 300, full_search_share: 0.25}\n",
            r"fast_simulations must be in \[1, 299\] \(fewer than the search's 300\).* got 0",
        ),
        (
            "expert_iteration: {full_search_share: 0.25, fast_simulations: 50, "
            "stages: [{from_generation: 1, simulations: 50}]}\n",
            r"stages\[0\] \(from generation 1\): .*fast_simulations must be in \[1, 49\]",
        ),
        (
            "expert_iteration: {gumbel_actions: 29}\n",
            r"gumbel_actions must be 0 \(PUCT at the root\) or .* from 1 to 28, got 29",
        ),
        (
            "expert_iteration: {stages: [{from_generation: 2, gumbel_actions: -1}]}\n",
            r"stages\[0\] \(from generation 2\): .*gumbel_actions must be 0",
        ),
        ("expert_iteration: {stages: [{from_generation: 1}]}\n", "no setting"),
        ("expert_iteration: {stages: [[1, 2]]}\n", r"stages\[0\] must be of type dict"),
        ("expert_iteration: {stages: [{games: 9}]}\n", "must be a mapping with from_generation"),
        (
            "expert_iteration: {stages: [{from_generation: 1, games: many}]}\n",
            r"stages\[0\].games must be of type int",
        ),
    ],
)
def test_bad_expert_iteration_configs_are_refused(tmp_path, text, message):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path, schema=ALGORITHM_SCHEMA[read_algorithm(path)])


ALGORITHM_SCHEMA = {"expert_iteration": EITrainConfig, "ppo": TrainConfig}


def test_the_algorithm_is_named_or_implied(tmp_path):
    configs = ROOT / "configs"
    assert read_algorithm(configs / "expert_iteration" / "default.yaml") == "expert_iteration"
    assert read_algorithm(ROOT / "configs" / "ppo" / "default.yaml") == "ppo"
    legacy = tmp_path / "legacy.yaml"
    legacy.write_text("ppo: {n_steps: 64}\n")  # an older PPO config, without the key
    assert read_algorithm(legacy) == "ppo"
    ppo = tmp_path / "ppo.yaml"
    ppo.write_text("algorithm: ppo\nexpert_iteration: {games: 3}\n")
    with pytest.raises(ConfigError, match="mixes ppo and"):
        load_config(ppo, schema=TrainConfig)
    assert cli.main(["train", "--config", str(ppo)]) == 2


def test_the_teacher_plays_out_leaves_as_the_config_says(tmp_path):
    from jekyll_hyde_train.expert_iteration.loop import teacher_for

    config = EITrainConfig()
    assert teacher_for(config, tmp_path, 0) == config.expert_iteration.first_teacher
    plain = teacher_for(config, tmp_path, 1)
    assert isinstance(plain, AZSpec)
    assert plain.config.playouts == "random"  # the search's default
    assert plain.policy == str(tmp_path / "generation_00" / "policy")
    config.expert_iteration.leaf_playouts = "heuristic"
    teacher = teacher_for(config, tmp_path, 2)
    assert teacher.config.playouts == "heuristic" and "generation_01" in teacher.policy
    assert teacher.config.gumbel == 0  # PUCT at the root unless asked
    config.expert_iteration.gumbel_actions = 8
    assert teacher_for(config, tmp_path, 2).config.gumbel == 8
    assert teacher_for(config, tmp_path, 2).name.endswith(",playouts=heuristic,gumbel=8")


def test_stages_change_the_settings_from_their_generation_on(tmp_path):
    from jekyll_hyde_train.expert_iteration.loop import settings_for, teacher_for

    path = tmp_path / "config.yaml"
    path.write_text(
        "expert_iteration:\n  generations: 6\n  simulations: 300\n  games: 100\n"
        "  stages:\n    - {from_generation: 2, simulations: 1000, games: 2e3}\n"
        "    - {from_generation: 4, games: 50, replay_generations: 1}\n"
    )
    config = load_config(path, schema=EITrainConfig)
    assert config.expert_iteration.stages[0]["games"] == 2000  # coerced as the key's type
    ei = config.expert_iteration
    assert [ei.at(g).simulations for g in range(6)] == [300, 300, 1000, 1000, 1000, 1000]
    assert [ei.at(g).games for g in range(6)] == [100, 100, 2000, 2000, 50, 50]
    assert ei.at(5).replay_generations == 1 and ei.at(3).replay_generations == 3
    assert teacher_for(config, tmp_path, 1).config.num_simulations == 300
    assert teacher_for(config, tmp_path, 2).config.num_simulations == 1000
    assert settings_for(config, tmp_path, 0).games == 100


def _settings_by_generation(folder: pathlib.Path, expert_iteration: str, generations: int):
    """Each generation's settings under an ``expert_iteration:`` config section (YAML),
    with a saved network in ``folder`` to guide every generation after the first."""
    from jekyll_hyde_train.expert_iteration.loop import settings_for
    from jekyll_hyde_train.expert_iteration.progress import generation_dir
    from tests.test_az import value_policy

    for generation in range(generations - 1):
        value_policy(generation_dir(folder, generation) / "policy")
    path = folder / "config.yaml"
    path.write_text(f"expert_iteration:\n  generations: {generations}\n{expert_iteration}")
    config = load_config(path, schema=EITrainConfig)
    return [settings_for(config, folder, g) for g in range(generations)]


def test_a_stage_changes_the_fit_from_its_generation_on(tmp_path):
    fits = _settings_by_generation(
        tmp_path,
        "  value_loss_weight: 0.5\n  stages:\n    - {from_generation: 2, value_loss_weight: 0.1, "
        "weight_decay: 0.05, lr_schedule: constant}\n",
        generations=3,
    )
    assert [f.value_loss_weight for f in fits] == [0.5, 0.5, 0.1]
    assert [f.weight_decay for f in fits] == [0.0, 0.0, 0.05]
    assert [f.lr_schedule for f in fits] == ["cosine", "cosine", "constant"]
    path = tmp_path / "config.yaml"
    path.write_text(  # the search of the next generation needs a value head
        "expert_iteration:\n  stages: [{from_generation: 1, value_loss_weight: 0}]\n"
    )
    with pytest.raises(
        ConfigError, match=r"stages\[0\] \(from generation 1\): .*value_loss_weight"
    ):
        load_config(path, schema=EITrainConfig)


def test_a_generations_best_epoch_is_chosen_by_its_own_value_weight():
    from jekyll_hyde_train.expert_iteration.loop import _best_epochs

    history = [  # epoch 2 has the better policy, epoch 1 the better value
        {
            "role": "jekyll",
            "epoch": 1,
            "train_loss": 1.0,
            "validation_loss": 1.10,
            "validation_value_loss": 0.20,
            "validation_agreement": 0.5,
        },
        {
            "role": "jekyll",
            "epoch": 2,
            "train_loss": 0.9,
            "validation_loss": 1.08,
            "validation_value_loss": 0.26,
            "validation_agreement": 0.6,
        },
    ]
    assert _best_epochs(history, 0.5)["validation_agreement"] == 0.5
    assert _best_epochs(history, 0.1)["validation_agreement"] == 0.6


def test_network_play_starts_once_there_is_a_network(tmp_path):
    settings = _settings_by_generation(
        tmp_path,
        "  network_play: 0.25\n  stages: [{from_generation: 2, network_play: 0.5}]\n",
        generations=3,
    )
    shares = [s.network_play for s in settings]
    assert shares == [0.0, 0.25, 0.5]  # generation 0's ISMCTS has no network to play


def test_a_playout_cap_starts_once_there_is_a_network(tmp_path):
    caps = _settings_by_generation(
        tmp_path,
        "  simulations: 400\n  full_search_share: 0.25\n  fast_simulations: 50\n",
        generations=2,
    )
    assert [(c.full_search_share, c.fast_simulations) for c in caps] == [(1.0, 0), (0.25, 50)]


def test_a_finished_run_is_extended_by_resume_with_a_stage(smoke_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(smoke_run, run)
    made = (run / "generation_01" / "policy" / "policy.npz").read_bytes()
    config = (run / "config.yaml").read_text()
    refused = {
        "expert_iteration.simulations=25": "simulations would change generation 1, already "
        r"made \(20 -> 25\); change the generations to come with a stage",
        "expert_iteration.hidden=[8, 8]": "hidden would change generation 0, already made "
        r"\(\[16, 16\] -> \[8, 8\]\); change the generations to come with a stage",
        "expert_iteration.activation=tanh": "activation would change generation 0, already "
        r"made \(relu -> tanh\); it cannot change",
        "run.seed=3": "run.seed cannot change on --resume",
        "expert_iteration.weight_decay=0.1": "weight_decay would change generation 0, already "
        r"made \(0.0 -> 0.1\); change the generations to come with a stage",
        "expert_iteration.generations=1": "generations 1 is below the 2 generations",
    }
    for change, message in refused.items():
        capsys.readouterr()
        assert cli.main(["train", "--resume", str(run), "--set", change]) == 2
        assert re.search(message, capsys.readouterr().err), change
    assert (run / "config.yaml").read_text() == config  # nothing recorded
    capsys.readouterr()
    extend = [
        "--set",
        "expert_iteration.generations=3",
        "--set",
        "expert_iteration.stages=[{from_generation: 2, simulations: 25, games: 2, "
        "value_loss_weight: 0.05, gumbel_actions: 4}]",
    ]
    assert cli.main(["train", "--resume", str(run), *extend]) == 0
    assert "extending" in capsys.readouterr().out
    with open(run / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["generation"] for row in rows] == ["0", "1", "2"]
    assert rows[2]["teacher"].startswith("az:25,") and rows[2]["games"] == "2"
    assert rows[2]["teacher"].endswith(",gumbel=4")
    shards = sorted((run / "generation_02" / "data").glob("shard_*.npz"))
    assert shards
    for shard in shards:
        with np.load(shard) as labels:  # Gumbel's improved policy: mass on every legal action
            assert np.all(labels["target"][labels["mask"]] > 0)
            assert np.all(labels["target"][~labels["mask"]] == 0)
    assert (run / "generation_01" / "policy" / "policy.npz").read_bytes() == made
    saved = load_config(run / "config.yaml", schema=EITrainConfig)  # the run's record
    assert saved.expert_iteration.generations == 3
    assert saved.expert_iteration.at(2).simulations == 25
    fit = json.loads((run / "generation_02" / "fit.json").read_text())
    assert fit["settings"]["value_loss_weight"] == 0.05
    assert json.loads((run / "state.json").read_text()) | {"wall_time": 0} == {
        "generation": 3,
        "wall_time": 0,
        "finished": True,
    }
    assert read_policy(run / "policy").metadata["training"]["generation"] == 2


def test_a_stage_that_widens_or_shares_the_network_fits_it_from_fresh_weights(
    smoke_run, tmp_path, capsys
):
    run = tmp_path / "run"
    shutil.copytree(smoke_run, run)
    extend = [
        "--set",
        "expert_iteration.generations=4",
        "--set",
        "expert_iteration.stages=[{from_generation: 2, hidden: [24]}, "
        "{from_generation: 3, shared_policy: true}]",
    ]
    assert cli.main(["train", "--resume", str(run), *extend]) == 0
    out = capsys.readouterr().out
    assert (
        "generation 2: a 24 network per role where generation 1 had a 16x16 network per "
        "role: fit from fresh weights" in out
    )
    assert (
        "generation 3: a 24 network for both roles where generation 2 had a 24 network per "
        "role: fit from fresh weights" in out
    )
    for generation, widths, groups in ((1, [16, 16], 2), (2, [24], 2), (3, [24], 1)):
        saved = read_policy(run / f"generation_{generation:02d}" / "policy")
        assert len(saved.groups) == groups
        for role in ("jekyll", "hyde"):
            layers = saved.groups[saved.metadata["roles"][role]]
            assert [w.shape[0] for w, _ in layers[:-1]] == widths
    rows = list(csv.DictReader((run / "metrics.csv").open(newline="")))
    assert rows[3]["teacher"].startswith(f"az:20,policy={run / 'generation_02' / 'policy'}")
    AZAgent(run)  # the widened network, value head included, guides a search


def test_a_run_starts_from_its_copy_of_a_saved_policy(smoke_run, tmp_path, capsys):
    source = tmp_path / "source"  # a policy folder that goes away once the run has begun
    shutil.copytree(smoke_run / "policy", source)
    run = tmp_path / "run"
    options = ["--set", f"expert_iteration.start_policy={source}"]
    options += ["--set", "expert_iteration.generations=1"]
    still = ["--set", "expert_iteration.learning_rate=1e-12"]  # steps too small to move
    assert cli.main(["train", "--config", SMOKE, "--run-dir", str(run), *options, *still]) == 0
    copy = run / "start_policy"
    assert (copy / "policy.npz").read_bytes() == (source / "policy.npz").read_bytes()
    rows = list(csv.DictReader((run / "metrics.csv").open(newline="")))
    assert rows[0]["teacher"].startswith(f"az:20,policy={copy},")  # not first_teacher
    before, after = read_policy(source), read_policy(run / "policy")
    for group in before.groups:  # generation 0 is fit from the start policy's weights
        for (wa, _), (wb, _) in zip(before.groups[group], after.groups[group], strict=True):
            np.testing.assert_allclose(wa, wb, atol=1e-6)
    config = load_config(run / "config.yaml", schema=EITrainConfig)
    config.expert_iteration.network_play = 0.5
    assert settings_for(config, run, 0).network_play == 0.5  # a network plays from generation 0

    shutil.rmtree(source)
    for change, problem in (
        ("start_policy=champion", "start_policy would change generation 0"),
        ("simulations=30", "simulations would change generation 0"),  # it labelled generation 0
    ):
        assert cli.main(["train", "--resume", str(run), "--set", f"expert_iteration.{change}"]) == 2
        assert problem in capsys.readouterr().err
    more = ["--set", "expert_iteration.generations=2"]
    more += ["--set", "expert_iteration.first_teacher=ismcts:10"]  # unused by this run
    assert cli.main(["train", "--resume", str(run), *more]) == 0  # without the source folder
    assert json.loads((run / "state.json").read_text())["generation"] == 2

    tanh = tmp_path / "tanh"
    shape = ["--set", "expert_iteration.activation=tanh"]
    shape += ["--set", f"expert_iteration.start_policy={run}"]
    assert cli.main(["train", "--config", SMOKE, "--run-dir", str(tanh), *shape]) == 0
    assert (
        "generation 0: a 16x16 network per role (tanh) where the start policy "
        f"{tanh / 'start_policy'} has a 16x16 network per role (relu): fit from fresh weights"
    ) in capsys.readouterr().out


def test_a_start_policy_is_checked_before_the_run(smoke_run, tmp_path, capsys):
    no_value = tmp_path / "no_value"
    shutil.copytree(smoke_run / "policy", no_value)
    metadata = json.loads((no_value / "policy.json").read_text())
    (no_value / "policy.json").write_text(json.dumps(metadata | {"value_head": False}))
    no_weights = tmp_path / "no_weights"
    shutil.copytree(smoke_run / "policy", no_weights)
    (no_weights / "policy.npz").unlink()
    for start, message in (
        (tmp_path / "nowhere", "expert_iteration.start_policy is 'champion' (the shipped"),
        (no_value, "has no value head, which the search needs"),
        (no_weights, "has no policy.npz (the weights)"),
    ):
        run = tmp_path / f"run_{start.name}"
        option = f"expert_iteration.start_policy={start}"
        assert cli.main(["train", "--config", SMOKE, "--run-dir", str(run), "--set", option]) == 2
        assert message in capsys.readouterr().err
        assert not run.exists()
    config = load_config(SMOKE, ["expert_iteration.start_policy=champion"], schema=EITrainConfig)
    with pytest.raises(FileNotFoundError, match="the run's copy of its start policy"):
        check_start_copy(tmp_path, config, {"generation": 0})
    check_start_copy(tmp_path, config, {"generation": 1})  # generation 0 made: not needed
    commas = tmp_path / "a,b=c"  # a path is a field of the search's spec, never split
    shutil.copytree(smoke_run / "policy", commas)
    assert start_policy_path(str(commas)) == commas.resolve()


def test_a_fit_not_yet_scored_is_made_again_when_a_stage_changes_it(
    smoke_run, tmp_path, capsys, monkeypatch
):
    import jekyll_hyde_train.expert_iteration.loop as ei

    run = tmp_path / "run"
    shutil.copytree(smoke_run, run)
    policy = run / "generation_01" / "policy" / "policy.npz"
    made = policy.read_bytes()
    weights = []  # the value weight each metrics row chose its epoch by
    best_epochs = ei._best_epochs
    monkeypatch.setattr(
        ei,
        "_best_epochs",
        lambda history, weight: weights.append(weight) or best_epochs(history, weight),
    )

    def stop_after_generation_1_was_fit():  # as if stopped while it was scored
        (run / "state.json").write_text(
            json.dumps({"generation": 1, "wall_time": 1.0, "finished": False})
        )

    stop_after_generation_1_was_fit()
    assert cli.main(["train", "--resume", str(run)]) == 0
    assert "fit again" not in capsys.readouterr().out
    assert policy.read_bytes() == made and weights == [1.0]  # the finished fit, kept
    stop_after_generation_1_was_fit()
    stage = "expert_iteration.stages=[{from_generation: 1, value_loss_weight: 0.05}]"
    assert cli.main(["train", "--resume", str(run), "--set", stage]) == 0
    out = capsys.readouterr().out
    assert "generation 1: fit again, with other settings (value_loss_weight 1.0 -> 0.05)" in out
    fit = json.loads((run / "generation_01" / "fit.json").read_text())
    assert fit["settings"]["value_loss_weight"] == 0.05 and weights == [1.0, 0.05]
    assert policy.read_bytes() != made
    assert read_policy(run / "policy").metadata["training"]["generation"] == 1


def _window_refit():
    """experiments/window_refit.py as a module (experiments/ is not a package)."""
    import importlib.util

    path = ROOT / "experiments" / "window_refit.py"
    spec = importlib.util.spec_from_file_location("window_refit", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_refit_on_the_runs_own_window_remakes_its_network(smoke_run, tmp_path):
    window_refit = _window_refit()
    made = read_policy(smoke_run / "generation_01" / "policy")
    same = read_policy(window_refit.refit(smoke_run, 1, 2, tmp_path / "two"))  # the run's window
    for role, layers in made.groups.items():
        for (w, b), (w2, b2) in zip(layers, same.groups[role], strict=True):
            np.testing.assert_array_equal(w, w2)
            np.testing.assert_array_equal(b, b2)
    alone = window_refit.refit(smoke_run, 1, 1, tmp_path / "one")
    own = json.loads((smoke_run / "generation_01" / "fit.json").read_text())
    fits = [json.loads((tmp_path / name / "fit.json").read_text()) for name in ("one", "two")]
    generation_0 = json.loads((smoke_run / "generation_00" / "fit.json").read_text())
    assert fits[1]["decisions"] == own["decisions"]
    assert fits[0]["decisions"] == own["decisions"] - generation_0["decisions"]
    narrower = read_policy(alone).groups["jekyll"][0][0]
    assert not np.array_equal(narrower, made.groups["jekyll"][0][0])


def test_window_refit_refuses_bad_input_before_any_fit(smoke_run, tmp_path):
    window_refit = _window_refit()
    run = str(smoke_run)
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "file").write_text("x")
    refused = {
        r"--windows \[3\]: a window of generation 1 holds 1 to 2": ["--windows", "3"],
        "is not empty": ["--windows", "1", "--out", str(tmp_path / "used")],
        "is a file; name a new folder": ["--windows", "1", "--out", str(tmp_path / "used/file")],
        "--pairs must be at least 1, got 0": ["--windows", "1", "--pairs", "0"],
        "--opponent: unknown agent name 'nobody'": ["--windows", "1", "--opponent", "nobody"],
    }
    refused |= {
        r"'wd=1' in 'wd=1': a fit variant is 'run' or comma-separated KEY=VALUE with KEY one "
        r"of \['batch_size', 'epochs'": ["--windows", "1", "--fits", "wd=1"],
        "'run' in 'run,epochs=2': a fit variant is 'run' or": [
            "--windows",
            "1",
            "--fits",
            "epochs=1",
            "run,epochs=2",
        ],
        "epochs takes a whole number": ["--windows", "1", "--fits", "epochs=2.5"],
        "hidden takes positive layer sizes joined by x": ["--windows", "1", "--fits", "hidden=8x0"],
        "epochs is given twice": ["--windows", "1", "--fits", "epochs=2,epochs=4"],
        "weight_decay must be a finite number": ["--windows", "1", "--fits", "weight_decay=nan"],
        r"value_loss_weight must be > 0 \(a generation's network guides": [
            "--windows",
            "1",
            "--fits",
            "value_loss_weight=0",
        ],
        r"'weight_decay=2': weight_decay must be in \[0, 1\), got 2.0": [
            "--windows",
            "1",
            "--fits",
            "weight_decay=2",
        ],
    }
    for message, flags in refused.items():
        out = [] if "--out" in flags else ["--out", str(tmp_path / "new")]
        with pytest.raises(SystemExit, match=message):
            window_refit.main([run, "--generation", "1", *flags, *out])
        assert not (tmp_path / "new").exists(), message  # nothing made before the refusal
    with pytest.raises(SystemExit, match="holds no policy"):
        window_refit.main([run, "--generation", "5", "--windows", "1"])
    with pytest.raises(SystemExit, match="not an expert-iteration run folder"):
        window_refit.main([str(tmp_path), "--generation", "1", "--windows", "1"])


def test_window_refit_plays_the_runs_fit_and_each_refit(smoke_run, tmp_path, capsys):
    window_refit = _window_refit()
    flags = ["--windows", "1", "--pairs", "1", "--workers", "1", "--opponent", "random"]
    flags += ["--fits", "run", " epochs = 1 ", "epochs=1"]  # the last: the same variant again
    assert (
        window_refit.main(
            [str(smoke_run), "--generation", "1", *flags, "--out", str(tmp_path / "o")]
        )
        == 0
    )
    table = capsys.readouterr().out
    assert "| the run's fit (generations [0, 1]) |" in table
    assert "| window of 1 generation |" in table
    assert table.count("| window of 1 generation, epochs=1 |") == 1
    assert (tmp_path / "o" / "window_1" / "policy" / "policy.json").is_file()
    assert sorted(path.name for path in (tmp_path / "o").iterdir()) == [
        "window_1",
        "window_1_epochs-1",
    ]
    fit = json.loads((tmp_path / "o" / "window_1_epochs-1" / "fit.json").read_text())
    assert fit["settings"]["epochs"] == 1 and len(fit["history"]) == 2  # an epoch a role


def test_a_fit_variant_changes_the_fit_and_only_the_fit(smoke_run, tmp_path):
    window_refit = _window_refit()
    assert window_refit.parse_fit("run") == {}
    assert window_refit.parse_fit("weight_decay=0.05,epochs=2") == {
        "weight_decay": 0.05,
        "epochs": 2,
    }
    as_run = read_policy(window_refit.refit(smoke_run, 1, 2, tmp_path / "run"))
    changes = {"value_loss_weight": 0.25, "weight_decay": 0.1}
    varied = window_refit.refit(smoke_run, 1, 2, tmp_path / "varied", changes=changes)
    fit = json.loads((tmp_path / "varied" / "fit.json").read_text())
    own = json.loads((smoke_run / "generation_01" / "fit.json").read_text())
    assert {k: fit["settings"][k] for k in changes} == changes
    changed = {k for k in own["settings"] if fit["settings"][k] != own["settings"][k]}
    assert changed == set(changes)  # the games and every other setting as the run's
    assert fit["decisions"] == own["decisions"]
    weights = read_policy(varied).groups["jekyll"][0][0]
    assert not np.array_equal(weights, as_run.groups["jekyll"][0][0])


def test_a_fit_variant_of_another_kind_of_network_is_fit_from_fresh_weights(smoke_run, tmp_path):
    window_refit = _window_refit()
    assert window_refit.parse_fit("hidden=24,epochs=1") == {"hidden": (24,), "epochs": 1}
    assert window_refit.variant_name({"hidden": (32, 8)}) == "hidden-32x8"
    wider = read_policy(
        window_refit.refit(smoke_run, 1, 2, tmp_path / "w", changes={"hidden": (24,)})
    )
    assert [w.shape for w, _ in wider.groups["hyde"]] == [(24, OBS_SIZE), (NUM_ACTIONS, 24)]
    fit = json.loads((tmp_path / "w" / "fit.json").read_text())
    assert fit["settings"]["hidden"] == [24]
    assert window_refit.parse_fit("shared_policy=True") == {"shared_policy": True}
    with pytest.raises(ValueError, match="shared_policy takes true or false"):
        window_refit.parse_fit("shared_policy=yes")
    changes = {"shared_policy": True}  # the run's 16x16, but one network: fresh weights
    shared = read_policy(window_refit.refit(smoke_run, 1, 2, tmp_path / "s", changes=changes))
    assert shared.metadata["roles"] == {"jekyll": "shared", "hyde": "shared"}
