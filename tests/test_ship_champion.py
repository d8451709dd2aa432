"""tools/ship_champion.py: a run's generation shipped as the champion, with its lineage."""

from __future__ import annotations

import csv
import importlib.util
import json
import pathlib
import shutil

import numpy as np
import pytest
import yaml

from jekyll_hyde_agents import champion_path
from jekyll_hyde_agents.policy_file import read_policy, weights_sha256

ROOT = pathlib.Path(__file__).resolve().parents[1]
COLUMNS = [
    "generation", "teacher", "train_games", "train_decisions", "validation_loss",
    "validation_value_loss", "validation_agreement", "score_vs_ismcts:1000",
]  # fmt: skip


@pytest.fixture
def ship_champion(tmp_path, monkeypatch):
    """The tool as a module, shipping into a folder of the test's instead of the package."""
    spec = importlib.util.spec_from_file_location("ship_champion", ROOT / "tools/ship_champion.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "CHAMPION_DIR", tmp_path / "shipped")
    return module


def _run(tmp_path: pathlib.Path, scores: list[float], start_policy: str | None) -> pathlib.Path:
    """A finished expert-iteration run folder: one policy a generation (the champion's
    weights, scaled differently each generation), its metrics and its config."""
    run = tmp_path / "run"
    rows = []
    for generation, score in enumerate(scores):
        policy = run / f"generation_{generation:02d}" / "policy"
        shutil.copytree(champion_path(), policy)
        with np.load(policy / "policy.npz") as saved:
            arrays = {name: saved[name] * (1 + generation) for name in saved.files}
        np.savez(policy / "policy.npz", **arrays)
        rows.append([generation, "az:10", 100, 7000, 0.9, 0.2, 0.7, score])
    with (run / "metrics.csv").open("w", newline="") as file:
        csv.writer(file).writerows([COLUMNS, *rows])
    config = {"algorithm": "expert_iteration", "expert_iteration": {"generations": len(scores)}}
    if start_policy is not None:
        config["expert_iteration"]["start_policy"] = start_policy
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    return run


def test_the_best_generation_ships_with_its_record(tmp_path, ship_champion):
    run = _run(tmp_path, [0.60, 0.66, 0.64], start_policy=None)
    ship_champion.ship(run, None, note="a test run")
    shipped = ship_champion.CHAMPION_DIR
    assert weights_sha256(shipped) == weights_sha256(run / "generation_01" / "policy")
    provenance = read_policy(shipped).metadata["provenance"]
    assert provenance["generation"] == 1
    assert provenance["note"] == "a test run"
    assert provenance["data"] == {"games": 100, "decisions": 7000, "teacher": "az:10"}
    assert [row["generation"] for row in provenance["generations"]] == ["0", "1", "2"]
    assert "start_policy" not in provenance


def test_a_run_from_a_saved_policy_records_which_policy_it_began_from(tmp_path, ship_champion):
    """``start_policy: champion`` names another policy once the new one ships: the
    provenance keeps the sha256 and record of the run's own copy of the one it began from."""
    run = _run(tmp_path, [0.60, 0.66], start_policy="champion")
    with pytest.raises(SystemExit, match="holds no copy of it in"):
        ship_champion.ship(run, 1)
    assert not ship_champion.CHAMPION_DIR.exists()  # refused before anything was copied
    shutil.copytree(champion_path(), run / "start_policy")
    ship_champion.ship(run, 1)
    started = read_policy(ship_champion.CHAMPION_DIR).metadata["provenance"]["start_policy"]
    parent = json.loads((champion_path() / "policy.json").read_text())
    assert started["named"] == "champion"
    assert started["weights_sha256"] == weights_sha256(champion_path())
    assert started["training"] == parent["training"]
    assert started["provenance"]["run"] == parent["provenance"]["run"]
