"""Tianshou 2 policies in the arena (``jekyll_hyde_agents.external.tianshou``).

A small DQN is trained here as in ``tests/test_clients.py`` (Tianshou 2's multi-agent
tic-tac-toe example with the env changed: DQN as Hyde against Tianshou's masked random
player, through ``PettingZooEnv``) and saved as Tianshou's docs show.
"""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest

pytest.importorskip("tianshou", minversion="2.0", reason="Tianshou 2 is not installed")

import torch  # noqa: E402
from tianshou.data import Batch  # noqa: E402

from jekyll_hyde_agents import make_agent  # noqa: E402
from jekyll_hyde_agents.external import tianshou as ts  # noqa: E402
from jekyll_hyde_agents.model_agent import ModelAgent, ModelError, RoleModel  # noqa: E402
from jekyll_hyde_agents.sources import as_agent, detect_kind, load_agent  # noqa: E402
from jekyll_hyde_app.cli import main  # noqa: E402
from jekyll_hyde_arena import evaluate, play_pair  # noqa: E402
from jekyll_hyde_env import jekyll_hyde_v0  # noqa: E402
from jekyll_hyde_env.engine.cards import NUM_ACTIONS  # noqa: E402
from jekyll_hyde_env.observation import OBS_SIZE  # noqa: E402
from tests.external.hand import hand_pair_scores  # noqa: E402


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(algorithm, DQN policy, folder with ts.pt, algo.pt and state_dict.pt)."""
    from tianshou.algorithm import (
        DQN,
        MARLRandomDiscreteMaskedOffPolicyAlgorithm,
        MultiAgentOffPolicyAlgorithm,
    )
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    def get_env() -> PettingZooEnv:
        return PettingZooEnv(jekyll_hyde_v0.env())

    torch.manual_seed(0)
    env = get_env()
    net = Net(
        state_shape=env.observation_space["observation"].shape,
        action_shape=int(env.action_space.n),
        hidden_sizes=[64],
    )
    policy = DiscreteQLearningPolicy(
        model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.05
    )
    learner = DQN(
        policy=policy,
        optim=AdamOptimizerFactory(lr=1e-3),
        gamma=0.9,
        n_step_return_horizon=3,
        target_update_freq=100,
    )
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[opponent, learner], env=env)
    training_envs = DummyVectorEnv([get_env for _ in range(2)])
    training_envs.seed(0)
    collector = Collector[CollectStats](
        algorithm, training_envs, VectorReplayBuffer(2000, 2), exploration_noise=True
    )
    collector.reset()
    collector.collect(n_step=64)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a small network: one thread is quickest
    try:
        result = algorithm.run_training(
            OffPolicyTrainerParams(
                training_collector=collector,
                test_collector=None,
                max_epochs=1,
                epoch_num_steps=300,
                collection_step_num_env_steps=10,
                batch_size=32,
                update_step_num_gradient_steps_per_sample=0.1,
                multi_agent_return_reduction=lambda returns: returns[:, 1],  # Hyde's
                verbose=False,
                show_progress=False,
            )
        )
    finally:
        torch.set_num_threads(threads)
    assert result.update_step >= 30
    folder = tmp_path_factory.mktemp("tianshou")
    torch.save(policy, folder / "ts.pt")
    torch.save(algorithm, folder / "algo.pt")
    torch.save(policy.state_dict(), folder / "state_dict.pt")
    return algorithm, policy, folder


def tianshou_action(policy, observation: np.ndarray, mask: np.ndarray, role: str) -> int:
    """The policy's own greedy action, called as Tianshou's collector calls it on PettingZooEnv."""
    obs = Batch(obs=observation[None], mask=mask[None] != 0, agent_id=np.array([role], object))
    with torch.no_grad():
        return int(policy(Batch(obs=obs, info=Batch())).act[0])


def game_rows(games: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(observations, masks, seats) of every decision of a few games of random legal moves."""
    rng = np.random.default_rng(0)
    rows = []
    for game in range(games):
        env = jekyll_hyde_v0.env()
        env.reset(seed=game)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            mask = observation["action_mask"]
            rows.append((observation["observation"], mask, ("jekyll", "hyde").index(agent)))
            env.step(int(rng.choice(np.flatnonzero(mask))))
    observations, masks, seats = zip(*rows, strict=True)
    return np.array(observations, np.float32), np.array(masks) != 0, np.array(seats)


def test_a_saved_policy_is_detected_and_loaded(trained):
    _, policy, folder = trained
    path = str(folder / "ts.pt")
    assert ts.is_tianshou_file(path) and ts.is_tianshou_file(folder / "algo.pt")
    assert not ts.is_tianshou_file(folder / "state_dict.pt")
    assert detect_kind(path) == "tianshou"
    observations, masks, seats = game_rows(1)
    for spec in (path, "tianshou:" + path):
        agent = load_agent(spec)
        assert isinstance(agent, ModelAgent) and agent.name == path
        assert agent.model.kind == "values" and agent.model.mask_aware
        actions = agent.act_batch(observations, masks, seats)
        expected = [
            tianshou_action(policy, o, m, ("jekyll", "hyde")[s])
            for o, m, s in zip(observations, masks, seats, strict=True)
        ]
        assert actions.tolist() == expected
    with pytest.raises(ModelError, match="play it deterministically"):
        load_agent(path, deterministic=False)  # Q-values have no distribution to sample


def test_the_arena_plays_the_file_as_the_policy_played_by_hand(trained):
    _, policy, folder = trained
    path = str(folder / "ts.pt")

    def choose(observation: np.ndarray, mask: np.ndarray) -> int:
        # One DQN plays both seats (the observation names the role); it ignores agent_id.
        return tianshou_action(policy, observation.astype(np.float32), mask, "jekyll")

    by_hand = hand_pair_scores(choose, pairs=6, seed=3)
    report = evaluate(path, "heuristic", pairs=6, seed=3, workers=1)
    assert report.pair_scores == by_hand


def test_eval_on_the_command_line(trained, capsys):
    _, _, folder = trained
    path = str(folder / "ts.pt")
    code = main(["eval", path, "heuristic", "--pairs", "2", "--workers", "1", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"{path} (A) against heuristic (B): 2 duplicate pairs" in out


def test_a_state_dict_is_refused_with_what_to_save_instead(trained, capsys):
    _, _, folder = trained
    path = str(folder / "state_dict.pt")
    for spec in (path, "tianshou:" + path):
        code = main(["eval", spec, "heuristic", "--pairs", "1", "--workers", "1", "--no-progress"])
        _, err = capsys.readouterr()
        assert code == 2
        assert err.count("\n") == 1 and err.startswith(f"error: {path}: ")
    # Named as Tianshou, the message says why and what to do.
    assert "holds a state dict" in err and "torch.save(policy, path)" in err
    assert "python:file.py:function" in err


def test_a_policy_of_another_environment_is_refused_naming_both_shapes(trained, tmp_path, capsys):
    from gymnasium import spaces
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.utils.net.common import Net

    cases = {
        "obs10.pt": (Net(state_shape=10, action_shape=NUM_ACTIONS), NUM_ACTIONS, r"\(10,\)"),
        "act9.pt": (Net(state_shape=OBS_SIZE, action_shape=9), 9, r"Discrete\(9\)"),
    }
    for file, (net, actions, theirs) in cases.items():
        path = tmp_path / file
        policy = DiscreteQLearningPolicy(model=net, action_space=spaces.Discrete(actions))
        torch.save(policy, path)
        code = main(
            ["eval", str(path), "heuristic", "--pairs", "1", "--workers", "1", "--no-progress"]
        )
        _, err = capsys.readouterr()
        assert code == 2 and err.count("\n") == 1 and err.startswith(f"error: {path}: ")
        assert re.search(theirs, err), err
        assert f"({OBS_SIZE},)" in err and f"Discrete({NUM_ACTIONS})" in err
    # A network of other outputs behind a space of 28 actions is caught by the probe.
    policy = DiscreteQLearningPolicy(
        model=Net(state_shape=OBS_SIZE, action_shape=5), action_space=spaces.Discrete(NUM_ACTIONS)
    )
    with pytest.raises(
        ModelError, match=r"Discrete\(5\); this game has observations of shape \(327,\)"
    ):
        as_agent(policy)


def test_a_multi_agent_algorithm_plays_each_seat_with_its_sub_policy(trained):
    algorithm, policy, folder = trained
    observations, masks, seats = game_rows(3)
    for agent in (as_agent(algorithm), load_agent(str(folder / "algo.pt"))):
        assert isinstance(agent.model, RoleModel)
        actions = agent.act_batch(observations, masks, seats)
        assert all(masks[row, action] for row, action in enumerate(actions))
        hyde = np.flatnonzero(seats == 1)
        expected = [tianshou_action(policy, observations[r], masks[r], "hyde") for r in hyde]
        assert actions[hyde].tolist() == expected  # Hyde's seat plays the DQN
        # Jekyll's seat plays the random sub-policy: legal moves, not always the first one.
        jekyll = [r for r in np.flatnonzero(seats == 0) if masks[r].sum() > 1]
        assert any(actions[r] != np.flatnonzero(masks[r])[0] for r in jekyll)
        assert agent.replacements == 0
    result = play_pair(as_agent(algorithm), make_agent("heuristic"), 0, 0)
    assert {result.a_as_jekyll.winner, result.a_as_hyde.winner} <= {0, 1}


class ReadsObsObs(torch.nn.Module):
    """An actor as trained through PettingZooEnv: it reads the observation from ``obs.obs``."""

    def __init__(self, actor):
        super().__init__()
        self.actor = actor

    def forward(self, obs, state=None, info=None):
        return self.actor(obs.obs, state, info)


def test_actor_policies_give_their_distributions_logits_in_the_form_they_read():
    """A categorical actor (PPO's policy) reading the Gym observation, and one trained
    through PettingZooEnv that reads ``obs.obs``: the scores are the log-probabilities."""
    from gymnasium import spaces
    from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
    from tianshou.utils.net.common import Net
    from tianshou.utils.net.discrete import DiscreteActor

    torch.manual_seed(1)
    actor = DiscreteActor(
        preprocess_net=Net(state_shape=OBS_SIZE, hidden_sizes=[16]),
        action_shape=NUM_ACTIONS,
        softmax_output=False,
    )
    observations, masks, seats = game_rows(1)
    with torch.no_grad():
        expected = torch.log_softmax(actor(torch.as_tensor(observations))[0], -1).numpy()
    for network, form in ((actor, "gym"), (ReadsObsObs(actor), "pettingzoo")):
        policy = DiscreteActorPolicy(actor=network, action_space=spaces.Discrete(NUM_ACTIONS))
        agent = ts.tianshou_agent(policy, deterministic=False)
        assert agent.name == "tianshou:DiscreteActorPolicy"
        assert agent.model.kind == "logits" and not agent.model.mask_aware
        assert agent.model.forms == (form,)
        np.testing.assert_allclose(
            agent.model.scores(observations, masks, seats), expected, atol=1e-5
        )
        agent.reset(0)
        first = agent.act_batch(observations, masks, seats)
        agent.reset(0)
        assert agent.act_batch(observations, masks, seats).tolist() == first.tolist()
        assert all(masks[row, action] for row, action in enumerate(first))
        assert pickle.loads(pickle.dumps(agent)).model.forms == (form,)  # goes to arena workers


def test_files_are_told_apart_without_unpickling(trained, tmp_path):
    _, policy, _ = trained
    for protocol in (2, 4, 5):  # GLOBAL, and STACK_GLOBAL from memoized strings
        path = tmp_path / f"p{protocol}.pt"
        torch.save(policy, path, pickle_protocol=protocol)
        assert ts.is_tianshou_file(path), protocol
        data = pickle.dumps(policy, protocol=protocol)
        assert "tianshou.algorithm.modelfree.dqn" in ts.pickled_modules(data)
    torch.save(torch.nn.Linear(2, 2), tmp_path / "linear.pt")
    (tmp_path / "text.pt").write_text("not a zip")
    assert not ts.is_tianshou_file(tmp_path / "linear.pt")
    assert not ts.is_tianshou_file(tmp_path / "text.pt")
    assert not ts.is_tianshou_file(tmp_path / "missing.pt")
    torch.save(torch.zeros(3), tmp_path / "tensor.pt")
    with pytest.raises(ModelError, match=r"tensor\.pt: this file holds a Tensor, not a Tianshou"):
        ts.load_tianshou(str(tmp_path / "tensor.pt"))  # data only: read without running code
    with pytest.raises(
        ModelError, match=r"linear\.pt: a torch\.nn\.modules\.linear\.Linear is not a"
    ):
        ts.load_tianshou(str(tmp_path / "linear.pt"))
