"""Expert iteration on a variant of the game (``run.variant``): a tiny run whose games,
searches, scores and policies are of the variant; the refusals (a start policy of
another variant, the champion, a resumed run given another variant, an opponent that
does not play it); ``jekyll-hyde distill --variant``; the full game's files unchanged.
"""

from __future__ import annotations

import csv
import io
import json
import pathlib
import pickle
import shutil

import numpy as np
import pytest

from jekyll_hyde_agents import AZAgent, PolicyAgent, RandomAgent, make_agent
from jekyll_hyde_app import cli
from jekyll_hyde_env.engine import legal_actions, new_game, player_view
from jekyll_hyde_env.engine.cards import NUM_CARDS
from jekyll_hyde_env.engine.variant import FULL, TINY
from jekyll_hyde_train.common.config import load_config
from jekyll_hyde_train.expert_iteration.config import EITrainConfig
from jekyll_hyde_train.expert_iteration.distill import ShardJob, label_game, label_shard_job
from jekyll_hyde_train.expert_iteration.exploiters import responder_config
from jekyll_hyde_train.expert_iteration.generation import settings_for
from jekyll_hyde_train.expert_iteration.progress import check_resume_changes
from jekyll_hyde_train.expert_iteration.settings import DistillSettings
from jekyll_hyde_train.expert_iteration.teacher import parse_teacher, ship_teacher
from tests.test_agents import play_checked
from tests.test_self_play import assert_same_labels

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "expert_iteration" / "smoke.yaml")
TINY_RUN = ["--set", "run.variant=tiny", "--set", "run.workers=2"]  # a pool of 2 labels
EXPLOITERS = [  # generation 1 also learns from games against exploiters of generation 0
    "expert_iteration.exploiters=[1]",
    "expert_iteration.exploiter_steps=2048",
    "expert_iteration.exploiter_games=4",
    "expert_iteration.exploiter_eval_pairs=4",
]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> pathlib.Path:
    run = tmp_path_factory.mktemp("tiny") / "run"
    options = [*TINY_RUN, *(item for override in EXPLOITERS for item in ("--set", override))]
    assert cli.main(["train", "--config", SMOKE, "--run-dir", str(run), *options]) == 0
    return run


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    return err


def test_a_tiny_run_labels_searches_scores_and_exports_tiny(tiny_run):
    run = tiny_run
    for folder in (run / "generation_00", run / "generation_01"):
        assert json.loads((folder / "distill.json").read_text())["variant"] == "tiny"
        assert json.loads((folder / "fit.json").read_text())["settings"]["variant"] == "tiny"
        assert PolicyAgent(folder / "policy").variant == TINY
        for shard in sorted((folder / "data").glob("shard_*.npz")):
            with np.load(shard) as labels:  # only the tiny deck's cards are ever playable
                assert _tiny_cards_only(labels["mask"]), shard
    rows = list(csv.DictReader((run / "metrics.csv").open(newline="")))
    assert rows[1]["teacher"].startswith("az:20,policy=")  # guided by generation 0, tiny too
    exploiters = run / "generation_01" / "exploiters"  # trained, scored and answered in tiny
    assert PolicyAgent(exploiters / "policy").variant == TINY
    assert json.loads((exploiters / "distill.json").read_text())["variant"] == "tiny"
    assert sorted((exploiters / "data").glob("shard_*.npz"))
    assert 0 <= float(rows[1]["exploiter_before"]) <= 1
    assert 0 <= float(rows[1]["exploiter_after"]) <= 1
    agent = PolicyAgent(run)
    assert agent.variant.name == "tiny"
    for seed in range(2):  # it plays the tiny game in either seat
        play_checked(agent, RandomAgent(seed=0), seed, TINY)
        play_checked(RandomAgent(seed=0), agent, seed, TINY)
    play_checked(AZAgent(run), RandomAgent(seed=0), 0, TINY)  # and guides a search in it
    full = new_game(np.random.default_rng(0))
    with pytest.raises(ValueError, match="trained on variant tiny and does not play variant full"):
        agent.act(player_view(full, full.to_act), legal_actions(full))
    report = (run / "report.md").read_text()
    assert "- variant: tiny" in report and f"eval {run} heuristic --variant tiny" in report
    assert "--seed 777 --variant " in report  # the final arena played the tiny game


def _tiny_cards_only(mask: np.ndarray) -> bool:
    """Whether only cards of the tiny deck are ever legal in these decisions' masks."""
    cards = np.flatnonzero(mask[:, :NUM_CARDS].any(axis=0))
    return len(cards) > 0 and all(TINY.deck >> int(card) & 1 for card in cards)


def test_a_shard_job_carries_its_variant_to_the_worker_and_the_c_labelling():
    settings = DistillSettings(teacher="ismcts:10", games=2, games_per_shard=2, variant="tiny")
    job = pickle.loads(pickle.dumps(ShardJob(settings, 0)))  # as both executors send it
    index, data, decisions = label_shard_job(ship_teacher(job.settings.teacher), job)
    with np.load(io.BytesIO(data)) as labels:
        assert index == 0 and int(labels["games"]) == 2 and len(labels["role"]) == decisions
        assert _tiny_cards_only(labels["mask"])
    for deal in range(3):  # the C game of a tiny deal is the Python reference's
        core = label_game(make_agent("ismcts:20", seed=deal), deal, variant=TINY)
        python = label_game(make_agent("ismcts:20", seed=deal), deal, in_core=False, variant=TINY)
        assert_same_labels(core, python)
        assert _tiny_cards_only(core["mask"])


def test_the_full_games_files_name_no_variant(smoke_run):
    generation = smoke_run / "generation_01"
    for path in (generation / "distill.json", generation / "policy" / "policy.json"):
        assert "variant" not in json.loads(path.read_text()), path
    assert "variant" not in json.loads((generation / "fit.json").read_text())["settings"]
    assert "- variant" not in (smoke_run / "report.md").read_text()
    assert "variant" not in DistillSettings().to_json()


def test_a_variant_run_cannot_start_from_another_variants_policy(tiny_run, tmp_path, capsys):
    run = tmp_path / "run"
    for start, variant, message in (
        ("champion", "tiny", "champion was trained on variant full, but run.variant is tiny"),
        (str(tiny_run), "small", "was trained on variant tiny, but run.variant is small"),
        (str(tiny_run), "full", "was trained on variant tiny, but run.variant is full"),
    ):
        options = [
            "--set",
            f"run.variant={variant}",
            "--set",
            f"expert_iteration.start_policy={start}",
        ]
        assert cli.main(["train", "--config", SMOKE, "--run-dir", str(run), *options]) == 2
        err = _one_line_error(capsys)
        assert "expert_iteration.start_policy" in err and message in err, err
        assert not run.exists()


def test_a_resumed_run_keeps_its_variant(tiny_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    config = (run / "config.yaml").read_text()
    for other in ("small", "full"):
        assert cli.main(["train", "--resume", str(run), "--set", f"run.variant={other}"]) == 2
        err = _one_line_error(capsys)
        assert (
            f"run.variant cannot change on --resume: the run plays variant tiny, given {other}"
            in err
        )
    assert (run / "config.yaml").read_text() == config  # nothing recorded
    saved = load_config(run / "config.yaml", schema=EITrainConfig)
    spelled = load_config(run / "config.yaml", [f"run.variant={TINY.spec()}"], schema=EITrainConfig)
    check_resume_changes(saved, spelled, 2)  # the same variant, spelled out: no change
    assert settings_for(spelled, run, 1).variant == "tiny"  # one spelling in the records


def test_opponents_and_exploiters_play_the_runs_variant(tiny_run, tmp_path, capsys):
    run = tmp_path / "run"
    pimc = ["--set", "expert_iteration.eval_opponents=[pimc:5]"]
    assert cli.main(["train", "--config", SMOKE, "--run-dir", str(run), *TINY_RUN, *pimc]) == 2
    err = _one_line_error(capsys)
    assert "expert_iteration.eval_opponents: pimc:5 does not play variant tiny" in err
    assert not run.exists()
    config = load_config(SMOKE, ["run.variant=tiny"], schema=EITrainConfig)
    assert responder_config(config, tiny_run / "policy", 1).run.variant == "tiny"


def test_distill_deals_its_variant_and_keeps_it(tiny_run, tmp_path, capsys):
    folder = tmp_path / "distill"
    base = ["distill", "--run-dir", str(folder), "--teacher", "ismcts:10", "--games", "2"]
    base += ["--games-per-shard", "1", "--workers", "1", "--generate-only"]
    assert cli.main([*base, "--variant", "tiny"]) == 0
    assert json.loads((folder / "distill.json").read_text())["variant"] == "tiny"
    assert cli.main(base) == 2  # the full game, in a folder of tiny games
    assert "variant 'tiny' (given 'full')" in _one_line_error(capsys)
    assert cli.main([*base, "--variant", "tiny", "--teacher", "az:5"]) == 2  # the champion
    err = _one_line_error(capsys)
    assert "policy trained on variant full, but the games are of variant tiny" in err
    with pytest.raises(ValueError, match="trained on variant tiny, but the games are of .* full"):
        DistillSettings(teacher=parse_teacher(f"az:5,policy={tiny_run}"), variant=FULL.name)
    tiny = DistillSettings(teacher=parse_teacher(f"az:5,policy={tiny_run}"), variant=TINY.spec())
    assert tiny.variant == "tiny" and tiny.to_json()["variant"] == "tiny"


def test_train_variant_is_run_variant(tmp_path):
    """``train --variant V`` trains as ``--set run.variant=V`` does."""
    import yaml

    from jekyll_hyde_app.cli import main

    run = tmp_path / "run"
    args = ["train", "--config", "smoke", "--run-dir", str(run), "--variant", "tiny"]
    args += ["--set", "expert_iteration.generations=1"]
    assert main(args) == 0
    config = yaml.safe_load((run / "config.yaml").read_text())
    assert config["run"]["variant"] == "tiny"
