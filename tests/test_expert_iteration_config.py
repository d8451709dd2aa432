"""Expert iteration's config: bad settings refused, the algorithm named or implied,
the teacher each generation gets, stages, and when network play and playout caps start.
"""

from __future__ import annotations

import pathlib

import pytest

from jekyll_hyde_agents import AZSpec
from jekyll_hyde_app import cli
from jekyll_hyde_train.common.config import ConfigError, load_config, read_algorithm
from jekyll_hyde_train.expert_iteration.config import EITrainConfig
from jekyll_hyde_train.expert_iteration.generation import settings_for
from jekyll_hyde_train.ppo.config import TrainConfig

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "expert_iteration" / "smoke.yaml")

pytestmark = pytest.mark.slow


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
    from jekyll_hyde_train.expert_iteration.generation import teacher_for

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
    from jekyll_hyde_train.expert_iteration.generation import teacher_for

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
