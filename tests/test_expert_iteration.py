"""Expert iteration: the smoke run, resumption after kill -9, the fit's epoch resume,
shared and warm-started fits."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from jekyll_hyde_agents import AZAgent, PolicyAgent
from jekyll_hyde_agents.policy_file import read_policy
from jekyll_hyde_app import cli
from jekyll_hyde_train.expert_iteration.distill import generate
from jekyll_hyde_train.expert_iteration.fit import FIT_STATE_FILE, fit
from jekyll_hyde_train.expert_iteration.settings import DistillSettings
from tests.test_train_smoke import play_legal_games

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "expert_iteration" / "smoke.yaml")

pytestmark = pytest.mark.slow


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
