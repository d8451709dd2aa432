"""experiments/window_refit.py: refits on a run's own window of generations, and fit
variants, checked against the run's fit.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from jekyll_hyde_agents.policy_file import read_policy
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "expert_iteration" / "smoke.yaml")

pytestmark = pytest.mark.slow


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
