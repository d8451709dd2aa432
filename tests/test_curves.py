"""The exploitability curves' machinery (benchmarks/curves/): the CPU meter of a process
tree, checkpoints asked for at CPU marks, exact scores of what each trainer saved, and
the page's leaders, on the tiny variant."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

from jekyll_hyde_env.engine.variant import TINY
from jekyll_hyde_train.exact.best_response import exact_score
from jekyll_hyde_train.exact.table import InfosetTable, table_strategy
from jekyll_hyde_train.exact.tree import build_tree

ROOT = pathlib.Path(__file__).resolve().parents[1]
CURVES = ROOT / "benchmarks" / "curves"
BURN = "import time\nend = time.process_time() + {0}\nwhile time.process_time() < end: pass\n"


@pytest.fixture
def curves(monkeypatch):
    monkeypatch.syspath_prepend(str(CURVES))
    import cpu
    import curves_page
    import protocol
    import run

    return cpu, protocol, run, curves_page


@pytest.fixture(scope="module")
def tiny():
    tree = build_tree(TINY)
    return tree, InfosetTable.build(tree)


def test_the_meter_counts_the_children_of_a_process_and_never_goes_back(curves):
    cpu = curves[0]
    script = (
        "import subprocess, sys\n"
        f"subprocess.run([sys.executable, '-c', {BURN.format(1.0)!r}])\n" + BURN.format(0.5)
    )
    child = subprocess.Popen([sys.executable, "-c", script])
    meter = cpu.CpuMeter(child.pid)
    readings = []
    while child.poll() is None:
        readings.append(meter.seconds())
        time.sleep(0.05)
    assert readings == sorted(readings)
    assert 1.3 <= max(readings) <= 3.0  # 1 s in the grandchild, 0.5 s in the child
    assert cpu.tree_cpu_seconds(child.pid) == 0.0  # gone


def test_a_request_is_answered_once_atomically_and_names_the_checkpoint(curves, tmp_path):
    protocol = curves[1]
    requests = protocol.Requests(tmp_path)
    assert requests.pending() is None
    (tmp_path / protocol.REQUEST_FILE).write_text("cpu-000003")
    assert requests.pending() == "cpu-000003"
    folder = requests.save("cpu-000003", lambda f: (f / "x.txt").write_text("1"))
    assert (folder / "x.txt").read_text() == "1" and requests.pending() is None
    assert protocol.checkpoint_names(tmp_path) == ["cpu-000003"]
    assert (tmp_path / protocol.REQUEST_FILE).is_file()  # the parent clears it, not the trainer
    (tmp_path / protocol.REQUEST_FILE).write_text("cpu-000009")
    failures = [OSError("a file being replaced")]

    def write(folder):
        if failures:
            raise failures.pop()
        (folder / "y.txt").write_text("2")

    server = requests.serve(write, every=0.01)
    deadline = time.time() + 5
    while requests.pending() is not None and time.time() < deadline:
        time.sleep(0.01)
    server.stop()
    assert not failures  # the failed save was tried again
    assert protocol.checkpoint_names(tmp_path) == ["cpu-000003", "cpu-000009"]
    assert (tmp_path / "checkpoints" / "cpu-000009" / "y.txt").read_text() == "2"


def test_a_trainer_that_dies_is_reported_with_its_log(curves, tmp_path, monkeypatch):
    run = curves[2]
    run.trainer_module("cfr-plus")
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "run.py").write_text("import sys\nprint('the trainer broke')\nsys.exit(3)\n")
    monkeypatch.setattr(run, "HERE", fake)
    with pytest.raises(RuntimeError, match="exited with 3:\n.*the trainer broke"):
        run.run_trainer("cfr-plus", tmp_path / "out", TINY, 0, [100.0])


def test_the_script_trains_cfr_plus_to_its_marks_scores_it_and_resumes(curves, tiny, tmp_path):
    run = curves[2]
    script = ROOT / "benchmarks" / "exploitability_curves.py"
    common = [sys.executable, str(script), "--variant", "tiny", "--trainers", "cfr-plus"]
    argv = [*common, "--budgets", "0.02,0.07", "--out", str(tmp_path), "--no-write"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout[done.stdout.index("{") :])
    first, last = results["points"]["cfr-plus"]
    assert (first["mark"], last["mark"]) == (1.2, 4.2)
    assert first["requested_at"] >= 1.2 and last["requested_at"] >= 4.2
    assert last["cpu_seconds"] >= last["requested_at"] > first["cpu_seconds"]
    identity = json.loads((tmp_path / "cfr-plus" / "run.json").read_text())
    assert (identity["trainer"], identity["seed"]) == ("cfr-plus", 1)
    assert identity["variant"] == TINY.spec()
    assert 0.5 <= last["score"] < first["score"] <= 0.72  # uniform play scores 0.717 on tiny
    assert last["score"] < 0.52
    tree, table = tiny
    checkpoint = tmp_path / "cfr-plus" / "checkpoints" / run.mark_name(4.2)
    probabilities = run.trainer_module("cfr-plus").probabilities(checkpoint, table)
    assert not probabilities[~table.legal()].any()
    assert np.allclose(probabilities.sum(axis=1), 1.0)
    strategy = table_strategy(probabilities)
    assert exact_score(tree, strategy, strategy).score == pytest.approx(last["score"], abs=1e-12)
    before = os.path.getmtime(checkpoint / "meta.json")
    again = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "cfr-plus: cpu-" not in again.stdout  # nothing trained
    assert "exact score" not in again.stdout  # nor scored again
    assert os.path.getmtime(checkpoint / "meta.json") == before
    other_seed = subprocess.run(
        [*argv, "--seed", "2", "--score-only"], capture_output=True, text=True
    )
    assert other_seed.returncode != 0
    assert "another run's checkpoints: seed 1 (this run: 2)" in other_seed.stderr
    for budgets, message in (("x", "CPU-minutes"), ("0", "positive")):
        bad = subprocess.run([*common, "--budgets", budgets], capture_output=True, text=True)
        assert bad.returncode != 0 and message in bad.stderr
    bad = subprocess.run([*common[:-1], "nope"], capture_output=True, text=True)
    assert bad.returncode != 0 and "unknown trainer 'nope'" in bad.stderr
    for extra, message in (
        (["--trainers", "cfr-plus,cfr-plus"], "names a trainer twice"),
        (["--watch"], "--watch goes with --score-only"),
        (["--train-only", "--score-only"], "not allowed with argument"),
        (["--budgets", "1,1.001"], "two marks of the same second"),
    ):
        bad = subprocess.run([*common, *extra], capture_output=True, text=True)
        assert bad.returncode != 0 and message in bad.stderr, (extra, bad.stderr)


def test_the_page_names_the_lowest_learning_trainer_at_each_budget(curves):
    page = curves[3]

    def points(*scores):
        return [
            {"mark": m, "cpu_seconds": m + 1, "score": s, "seats": {"jekyll": 0.8, "hyde": 0.3}}
            for m, s in zip((60, 300), scores, strict=False)
        ]

    results = {
        "variant_name": "small",
        "seed": 1,
        "cores": 2,
        "budgets_cpu_seconds": [60, 300],
        "reference": "cfr-plus",
        "lp_jekyll_win_probability": 0.75,
        "labels": {"expert-iteration": "A", "b": "B", "cfr-plus": "C"},
        "points": {
            "expert-iteration": points(0.7, 0.6),
            "b": points(0.65, 0.62),
            "cfr-plus": points(0.6, 0.5),
        },
    }
    assert page.leaders(results) == {60: "b", 300: "expert-iteration"}
    table = page.page_table(results)
    assert "| expert-iteration | 0.7000 | **0.6000** |" in table
    assert "| b | **0.6500** | 0.6200 |" in table
    assert "- 1 min: `b` (0.6500); the main job is 2 of 2, 0.0500 above it" in table
    assert "- 5 min: `expert-iteration` (0.6000), the main job" in table
    assert "between 0.7000000 and 0.8000000; the LP's value (0.7500000" in table
    assert "lies inside" in table
    assert "| cfr-plus (reference) | 0.6000 | 0.5000 |" in table
    results["points"]["b"] = points(0.65)[:1]
    assert page.leaders(results) == {60: "b"}
    assert "not run" in page.page_table(results)
    svg = page.svg_plot(results)
    assert svg.count("<polyline") == 3 and "cfr-plus" in svg
