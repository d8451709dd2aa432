"""Stable-Baselines3 and sb3-contrib models in the arena (``jekyll_hyde_agents.external.sb3``).

Tiny models are trained here for a moment on ``JekyllHyde-v0`` and saved with
``model.save``; the arena must play each zip, and each model in memory, exactly as
the model plays when driven by hand through the Gym env with its own ``predict``.
"""

from __future__ import annotations

import json
import pathlib
import re
import types
import zipfile

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed (the train extra)")

import gymnasium as gym  # noqa: E402 - after the skip
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3 import DQN, PPO  # noqa: E402

import jekyll_hyde_env  # noqa: E402, F401 - registers JekyllHyde-v0
from jekyll_hyde_agents.model_agent import ModelAgent, RoleModel  # noqa: E402
from jekyll_hyde_agents.sources import detect_kind, load_agent, source_of  # noqa: E402
from jekyll_hyde_app.cli import main  # noqa: E402
from jekyll_hyde_arena import evaluate  # noqa: E402
from jekyll_hyde_env.engine import (  # noqa: E402
    apply_action,
    is_terminal,
    legal_actions,
    new_game,
    player_view,
)
from jekyll_hyde_env.engine.cards import NUM_ACTIONS  # noqa: E402
from jekyll_hyde_env.observation import OBS_SIZE, OFFSETS, encode  # noqa: E402
from tests.external.hand import hand_games, hand_pair_scores, saved_histories  # noqa: E402

HYDE_COLUMN = OFFSETS["my_role"].start + 1
"""The observation entry that is 1 when the player to act is Hyde."""
PAIRS, SEED = 8, 5


@pytest.fixture(scope="module", autouse=True)
def _torch_on_one_thread(one_torch_thread):
    """Every test of this module runs with torch on one thread (``conftest.py``)."""


@pytest.fixture(scope="module")
def zoo(tmp_path_factory, one_torch_thread):
    """Tiny models trained for a moment, and their zips."""
    folder = tmp_path_factory.mktemp("sb3")
    env = gym.make("JekyllHyde-v0", role="random", opponent="heuristic")
    tiny = {"net_arch": [32]}
    mppo = MaskablePPO(
        "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0, policy_kwargs=tiny
    )
    mppo.learn(256)
    ppo = PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, policy_kwargs=tiny)
    ppo.learn(64)
    dqn = DQN("MlpPolicy", env, learning_starts=32, buffer_size=500, seed=0, policy_kwargs=tiny)
    dqn.learn(64)
    cartpole = PPO(
        "MlpPolicy", gym.make("CartPole-v1"), n_steps=64, batch_size=64, n_epochs=1, seed=0
    )
    cartpole.learn(64)
    models = {"mppo": mppo, "ppo": ppo, "dqn": dqn, "cartpole": cartpole}
    paths = {}
    for name, model in models.items():
        model.save(folder / name)
        paths[name] = str(folder / f"{name}.zip")
    return types.SimpleNamespace(folder=folder, paths=paths, **models)


def obs_tensor(observation: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(np.asarray(observation, np.float32).reshape(1, OBS_SIZE))


def mppo_choice(model, observation: np.ndarray, mask: np.ndarray) -> int:
    action, _ = model.predict(observation, action_masks=mask.astype(bool), deterministic=True)
    return int(action)


def action_scores(model, observation: np.ndarray) -> np.ndarray:
    """The model's own preference over the 28 actions, through its public API: PPO's
    log-probability of each action, DQN's Q-values."""
    obs = obs_tensor(observation)
    with torch.no_grad():
        if isinstance(model, DQN):
            return model.q_net(obs)[0].numpy()
        _, log_prob, _ = model.policy.evaluate_actions(
            obs.repeat(NUM_ACTIONS, 1), torch.arange(NUM_ACTIONS)
        )
    return log_prob.numpy()


class Counted:
    """A non-mask-aware model driven by hand: its masked argmax, counting the decisions
    where its own unmasked choice (``predict``) is illegal."""

    def __init__(self, model):
        self.model = model
        self.illegal = 0
        self.decisions = 0

    def __call__(self, observation: np.ndarray, mask: np.ndarray) -> int:
        self.decisions += 1
        unmasked, _ = self.model.predict(observation, deterministic=True)
        self.illegal += not mask[int(unmasked)]
        scores = action_scores(self.model, observation)
        return int(np.flatnonzero(mask)[np.argmax(scores[mask != 0])])


def decision_rows(games: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(observations, masks, seats) of every decision of a few games of random legal moves."""
    rng = np.random.default_rng(0)
    rows = []
    for game in range(games):
        state = new_game(np.random.default_rng(game))
        while not is_terminal(state):
            legal = legal_actions(state)
            mask = np.zeros(NUM_ACTIONS, bool)
            mask[legal] = True
            rows.append((encode(player_view(state, state.to_act)), mask, state.to_act))
            apply_action(state, int(rng.choice(legal)))
    observations, masks, seats = zip(*rows, strict=True)
    return np.array(observations, np.float32), np.array(masks), np.array(seats)


@pytest.fixture(scope="module")
def mppo_by_hand(zoo):
    """MaskablePPO driven by hand: its pair scores, game histories, and how often its
    unmasked choice would have been illegal."""
    unmasked_illegal = 0

    def choose(observation, mask):
        nonlocal unmasked_illegal
        unmasked, _ = zoo.mppo.predict(observation, deterministic=True)
        unmasked_illegal += not mask[int(unmasked)]
        return mppo_choice(zoo.mppo, observation, mask)

    scores = hand_pair_scores(choose, PAIRS, SEED)
    unmasked_illegal = 0
    same_scores, histories = hand_games(choose, PAIRS, SEED)
    assert same_scores == scores  # this file's driver plays as tests/external/hand.py
    return types.SimpleNamespace(
        scores=scores, histories=histories, unmasked_illegal=unmasked_illegal
    )


def test_eval_of_a_maskable_ppo_zip_on_the_command_line(zoo, capsys):
    path = zoo.paths["mppo"]
    assert detect_kind(path) == "sb3"
    code = main(["eval", path, "heuristic", "--pairs", "4", "--workers", "1", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"{path} (A) against heuristic (B): 4 duplicate pairs, seed 0" in out
    match = re.search(r"A score +(\d\.\d{3})  95% CI \[(\d\.\d{3}), (\d\.\d{3})\]", out)
    assert match, out
    score, low, high = map(float, match.groups())
    assert 0 <= low <= score <= high <= 1
    assert "illegal choices" not in out  # MaskablePPO chooses among the legal actions


def test_the_arena_plays_the_zip_as_predict_with_masks_does(zoo, mppo_by_hand, tmp_path):
    path = zoo.paths["mppo"]
    report = evaluate(path, "heuristic", pairs=PAIRS, seed=SEED, workers=1, save_games=tmp_path)
    assert report.pair_scores == mppo_by_hand.scores
    assert saved_histories(tmp_path, PAIRS) == mppo_by_hand.histories
    # The model alone would often prefer an illegal action; masked, nothing is replaced.
    assert mppo_by_hand.unmasked_illegal > 0
    assert report.illegal["A"] == {"replaced": 0, "forfeited": 0}
    agent = load_agent(path)
    assert isinstance(agent, ModelAgent) and agent.model.mask_aware
    assert agent.model.kind == "logits" and agent.name == path


def test_a_model_in_memory_plays_the_same_in_one_and_in_two_workers(
    zoo, mppo_by_hand, tmp_path, capsys
):
    source = source_of(zoo.mppo)
    assert source.rebuildable and source.label == "sb3:MaskablePPO"
    for workers in (1, 2):
        folder = tmp_path / f"w{workers}"
        report = evaluate(
            zoo.mppo, "heuristic", pairs=PAIRS, seed=SEED, workers=workers, save_games=folder
        )
        _, err = capsys.readouterr()
        assert "note:" not in err  # rebuilt from its bytes in each worker, not kept here
        assert report.agents == ("sb3:MaskablePPO", "heuristic")
        assert report.pairs == PAIRS
        assert report.pair_scores == mppo_by_hand.scores, workers
        assert saved_histories(folder, PAIRS) == mppo_by_hand.histories, workers
        assert report.illegal["A"]["replaced"] == 0


@pytest.mark.parametrize("name", ["ppo", "dqn"])
def test_unmasked_models_play_their_masked_argmax_and_count_replacements(zoo, name, tmp_path):
    model = getattr(zoo, name)
    agent = load_agent(zoo.paths[name])
    assert not agent.model.mask_aware
    assert agent.model.kind == ("values" if name == "dqn" else "logits")
    counted = Counted(model)
    by_hand, histories = hand_games(counted, 4, SEED)
    report = evaluate(zoo.paths[name], "heuristic", pairs=4, seed=SEED, save_games=tmp_path)
    assert report.pair_scores == by_hand
    assert saved_histories(tmp_path, 4) == histories  # every move the masked argmax
    assert counted.illegal > 0  # an untrained model prefers illegal actions now and then
    assert report.illegal["A"] == {"replaced": counted.illegal, "forfeited": 0}
    # The same model in memory counts the same.
    assert evaluate(model, "heuristic", pairs=4, seed=SEED).illegal["A"]["replaced"] == (
        counted.illegal
    )


def test_each_role_plays_its_own_zip(zoo, tmp_path):
    mppo, ppo = zoo.paths["mppo"], zoo.paths["ppo"]
    spec = f"jekyll={mppo},hyde={ppo}"
    agent = load_agent(spec)
    assert isinstance(agent, ModelAgent) and isinstance(agent.model, RoleModel)
    assert [model.name for model in agent.model.models] == [mppo, ppo]

    # Row by row: each seat's decisions are its model's.
    observations, masks, seats = decision_rows()
    actions = agent.act_batch(observations, masks, seats)
    masked_ppo = Counted(zoo.ppo)
    choices = [
        (mppo_choice(zoo.mppo, o, m), masked_ppo(o, m))
        for o, m in zip(observations, masks, strict=True)
    ]
    expected = [choice[seat] for choice, seat in zip(choices, seats, strict=True)]
    assert actions.tolist() == expected
    swapped = [choice[1 - seat] for choice, seat in zip(choices, seats, strict=True)]
    assert swapped != expected  # the two models differ: a mix-up of seats would show

    # In the arena, against the games played by hand choosing by the role in the observation.
    counted = Counted(zoo.ppo)

    def by_role(observation, mask):
        if observation[HYDE_COLUMN]:
            return counted(observation, mask)
        return mppo_choice(zoo.mppo, observation, mask)

    _, histories = hand_games(by_role, 4, SEED)
    report = evaluate(spec, "heuristic", pairs=4, seed=SEED, save_games=tmp_path)
    assert report.agents[0] == spec
    assert saved_histories(tmp_path, 4) == histories
    assert report.illegal["A"]["replaced"] == counted.illegal > 0  # Hyde's PPO only


def bad_inputs(zoo, folder: pathlib.Path) -> dict[str, tuple[str, list[str]]]:
    """Spec -> (the file its message names, what else the message says)."""
    other = folder / "other.zip"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("notes.txt", "not a model")
    not_zip = folder / "x.zip"
    not_zip.write_text("this is not a zip archive")
    missing = folder / "missing.zip"
    cartpole = zoo.paths["cartpole"]
    damaged = folder / "damaged.zip"  # SB3's entries, policy.pth overwritten
    with zipfile.ZipFile(zoo.paths["mppo"]) as source, zipfile.ZipFile(damaged, "w") as archive:
        for entry in source.namelist():
            archive.writestr(entry, b"garbage" if entry == "policy.pth" else source.read(entry))
    a_folder = folder / "saved_model"
    a_folder.mkdir()
    return {
        str(other): (str(other), ["not an SB3 model", "data"]),
        str(not_zip): (str(not_zip), ["not an SB3 model", "not a zip"]),
        "sb3:" + str(not_zip): (str(not_zip), ["not a zip"]),
        cartpole: (cartpole, ["(4,)", f"({OBS_SIZE},)", "Discrete(2)", f"Discrete({NUM_ACTIONS})"]),
        "sb3:" + cartpole: (cartpole, ["(4,)", f"({OBS_SIZE},)"]),
        "sb3:" + str(missing): (str(missing), ["no such file"]),
        str(damaged): (str(damaged), ["SB3 could not load this model", "damaged"]),
        "sb3:" + str(a_folder): (str(a_folder), ["not an SB3 model", "folder"]),
    }


def test_bad_input_is_one_line_naming_the_file(zoo, tmp_path, capsys):
    for spec, (file, says) in bad_inputs(zoo, tmp_path).items():
        code = main(["eval", spec, "heuristic", "--pairs", "1", "--workers", "1", "--no-progress"])
        out, err = capsys.readouterr()
        assert code == 2, (spec, out, err)
        assert err.count("\n") == 1 and err.startswith("error: "), (spec, err)
        assert file in err, (spec, err)
        for words in says:
            assert words in err, (spec, words, err)
    # A Q-network has no distribution to sample from.
    code = main(
        ["eval", zoo.paths["dqn"], "heuristic", "--pairs", "1", "--sample", "--workers", "1"]
    )
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and zoo.paths["dqn"] in err
    assert "deterministic" in err


def test_sampling_plays_legal_actions_reproducibly(zoo, tmp_path, capsys):
    path = zoo.paths["mppo"]

    def run(name: str, *extra: str) -> tuple[dict, list[list[int]]]:
        folder, out = tmp_path / name, tmp_path / f"{name}.json"
        argv = ["eval", path, "heuristic", "--pairs", "6", "--seed", "3", "--workers", "1"]
        argv += ["--no-progress", "--save-games", str(folder), "--out", str(out), *extra]
        code = main(argv)
        _, err = capsys.readouterr()
        assert code == 0, err
        return json.loads(out.read_text()), saved_histories(folder, 6)

    first, first_games = run("sample1", "--sample")
    again, again_games = run("sample2", "--sample")
    best, best_games = run("best")
    assert first_games == again_games and first["pair_scores"] == again["pair_scores"]
    assert first["illegal"]["A"] == {"replaced": 0, "forfeited": 0}  # sampled legal moves only
    assert any(s != d for s, d in zip(first_games, best_games, strict=True))

    # Row by row: legal, reproducible from the seed, and not always the best action.
    observations, masks, seats = decision_rows()
    agent = load_agent(path, deterministic=False)
    agent.reset(7)
    sampled = agent.act_batch(observations, masks, seats)
    agent.reset(7)
    assert agent.act_batch(observations, masks, seats).tolist() == sampled.tolist()
    assert all(masks[row, action] for row, action in enumerate(sampled))
    best_rows = load_agent(path).act_batch(observations, masks, seats)
    assert (sampled != best_rows).any()
    assert agent.replacements == 0
