"""Expert iteration resumed and extended: a finished run grown by a stage, a run
started from a saved policy, and a fit not yet scored made again when a stage changes it.
"""

from __future__ import annotations

import csv
import json
import pathlib
import re
import shutil

import numpy as np
import pytest

from jekyll_hyde_agents import AZAgent
from jekyll_hyde_agents.policy_file import read_policy
from jekyll_hyde_app import cli
from jekyll_hyde_train.common.config import load_config
from jekyll_hyde_train.expert_iteration.config import EITrainConfig, start_policy_path
from jekyll_hyde_train.expert_iteration.generation import settings_for
from jekyll_hyde_train.expert_iteration.loop import check_start_copy

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "expert_iteration" / "smoke.yaml")

pytestmark = pytest.mark.slow


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
