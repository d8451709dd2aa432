"""A run killed and resumed ends exactly as the same run left alone: exploit and train."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time
import zipfile

import pytest

from jekyll_hyde_app import cli
from jekyll_hyde_train.exploit import responder

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

# Two stretches of two rollouts per seat, against a target played per game in Python.
EXPLOIT = [
    "exploit", "heuristic",
    "--set", "responder.steps=1024", "--set", "responder.curve_every=512",
    "--set", "responder.n_envs=8", "--set", "responder.n_steps=32",
    "--set", "responder.batch_size=128", "--set", "responder.n_epochs=2",
    "--set", "evaluation.games=32", "--set", "search.simulations=0",
]  # fmt: skip


def _exploit_outcome(run: pathlib.Path) -> tuple[dict, dict]:
    """The results without the clock's figures, and each seat's final weights."""
    results = json.loads((run / "results.json").read_text())
    del results["created"], results["budget"]["seconds"]
    for row in results["seats"].values():
        del row["rl"]["seconds"]
    weights = {}
    for seat in ("jekyll", "hyde"):
        with zipfile.ZipFile(run / seat / "checkpoint.zip") as archive:
            weights[seat] = archive.read("policy.pth")
    return results, weights


@pytest.fixture(scope="module")
def exploit_whole(tmp_path_factory) -> tuple[dict, dict]:
    run = tmp_path_factory.mktemp("exploit") / "whole"
    assert cli.main([*EXPLOIT, "--run-dir", str(run)]) == 0
    return _exploit_outcome(run)


@pytest.mark.parametrize(
    ("stop", "before_writing"),
    [
        (1, False),  # right after the Jekyll responder's first checkpoint
        (2, True),  # between its second checkpoint and the progress.json beside it
        (3, False),  # right after the Hyde responder's first checkpoint
    ],
)
def test_an_exploit_run_interrupted_and_resumed_ends_as_the_whole_run(
    tmp_path, monkeypatch, exploit_whole, stop, before_writing
):
    run = tmp_path / "run"
    write = responder.atomic_write_text
    progress_writes = []

    def interrupting(path, text):
        if path.name == "progress.json":
            progress_writes.append(path)
        stopping = path.name == "progress.json" and len(progress_writes) == stop
        if stopping and before_writing:
            raise KeyboardInterrupt
        write(path, text)
        if stopping:
            raise KeyboardInterrupt

    monkeypatch.setattr(responder, "atomic_write_text", interrupting)
    assert cli.main([*EXPLOIT, "--run-dir", str(run)]) == 130
    assert not (run / "results.json").exists()
    monkeypatch.undo()
    assert cli.main([*EXPLOIT, "--run-dir", str(run)]) == 0
    results, weights = _exploit_outcome(run)
    whole_results, whole_weights = exploit_whole
    assert results == whole_results
    assert weights == whole_weights


def test_an_exploit_run_killed_with_sigkill_resumes_to_the_whole_run(tmp_path, exploit_whole):
    run = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "jekyll_hyde_app.cli", *EXPLOIT, "--run-dir", str(run)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    progress = run / "jekyll" / "progress.json"
    deadline = time.time() + 300
    while not progress.exists():  # killed somewhere after the first checkpoint
        assert process.poll() is None, process.stderr.read().decode()
        assert time.time() < deadline, "no checkpoint appeared"
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (run / "results.json").exists()
    assert cli.main([*EXPLOIT, "--run-dir", str(run)]) == 0
    assert _exploit_outcome(run) == exploit_whole


# --- jekyll-hyde train (expert iteration) ------------------------------------------

SMOKE = ["train", "--config", str(ROOT / "configs" / "expert_iteration" / "smoke.yaml")]
CLOCK_COLUMNS = ("label_seconds", "fit_seconds", "eval_seconds", "wall_time")


def _train_outcome(run: pathlib.Path) -> tuple[dict, list]:
    """Every generation's weights and the final ones, and metrics.csv without its times."""
    import csv

    weights = {
        path.relative_to(run).as_posix(): path.read_bytes()
        for path in sorted(run.glob("**/policy.npz"))
    }
    with open(run / "metrics.csv", newline="") as handle:
        rows = [
            {k: v.replace(str(run), "RUN") for k, v in row.items() if k not in CLOCK_COLUMNS}
            for row in csv.DictReader(handle)
        ]  # the teacher names the previous generation's policy by its path
    return weights, rows


@pytest.fixture(scope="module")
def train_whole(tmp_path_factory) -> tuple[dict, list]:
    run = tmp_path_factory.mktemp("train") / "whole"
    assert cli.main([*SMOKE, "--run-dir", str(run)]) == 0
    return _train_outcome(run)


def _stop_after_labelling_a_shard(monkeypatch, generation: int) -> None:
    from jekyll_hyde_train.expert_iteration import generation as expert_iteration

    generate = expert_iteration.generate

    def generate_then_stop(folder, settings, workers, report, *executor):
        def stopping(done, total, decisions):
            report(done, total, decisions)
            if folder.name == f"generation_{generation:02d}":
                raise KeyboardInterrupt

        generate(folder, settings, workers, stopping, *executor)

    monkeypatch.setattr(expert_iteration, "generate", generate_then_stop)


def _stop_after_a_fit(monkeypatch, generation: int) -> None:
    from jekyll_hyde_train.expert_iteration import loop as expert_iteration

    fit_generation = expert_iteration.fit_generation

    def fit_then_stop(config, run_dir, fitted):
        summary = fit_generation(config, run_dir, fitted)
        if fitted == generation:
            raise KeyboardInterrupt
        return summary

    monkeypatch.setattr(expert_iteration, "fit_generation", fit_then_stop)


@pytest.mark.parametrize(
    "interrupt",
    [
        pytest.param(lambda m: _stop_after_labelling_a_shard(m, 1), id="after-a-shard-of-gen-1"),
        pytest.param(lambda m: _stop_after_a_fit(m, 0), id="after-the-fit-of-gen-0"),
    ],
)
def test_a_training_run_interrupted_and_resumed_ends_as_the_whole_run(
    tmp_path, monkeypatch, train_whole, interrupt
):
    run = tmp_path / "run"
    interrupt(monkeypatch)
    assert cli.main([*SMOKE, "--run-dir", str(run)]) == 130
    monkeypatch.undo()
    assert cli.main(["train", "--resume", str(run)]) == 0
    weights, rows = _train_outcome(run)
    whole_weights, whole_rows = train_whole
    assert rows == whole_rows
    assert weights.keys() == whole_weights.keys()
    for name, data in whole_weights.items():
        assert weights[name] == data, f"{name} differs from the uninterrupted run's"
