"""Other RL libraries on the AEC env: Tianshou's and RLlib's own PettingZoo wrappers."""

from __future__ import annotations

import numpy as np
import pytest

from jekyll_hyde_env import jekyll_hyde, jekyll_hyde_v0
from jekyll_hyde_env.engine.cards import NUM_ACTIONS, PHASE_NAMES
from jekyll_hyde_env.integrations.clients import RLlibObservations, rllib_env, rllib_pettingzoo_env
from jekyll_hyde_env.observation import OBS_SIZE

NEEDS_TIANSHOU = "Tianshou 2 is not installed (the bench extra installs it; .ci/run installs it)"
NEEDS_RAY = "Ray RLlib is not installed (pip install 'jekyll-hyde-env[rllib]'; .ci/run installs it)"


@pytest.mark.slow
def test_tianshou_trains_a_dqn_against_a_random_player_as_in_its_tic_tac_toe_example():
    """Tianshou 2's multi-agent tic-tac-toe example with only the env changed: DQN as
    Hyde against Tianshou's masked random player, a few hundred training steps. Its
    replay buffer is sized from the first info, so every info must keep that shape."""
    pytest.importorskip("tianshou", minversion="2.0", reason=NEEDS_TIANSHOU)
    import torch
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
    assert env.agents == ["jekyll", "hyde"]
    space = env.observation_space["observation"]
    net = Net(state_shape=space.shape, action_shape=int(env.action_space.n), hidden_sizes=[64])
    policy = DiscreteQLearningPolicy(
        model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.05
    )
    learner = DQN(
        policy=policy,
        optim=AdamOptimizerFactory(lr=1e-4),
        gamma=0.9,
        n_step_return_horizon=3,
        target_update_freq=100,
    )
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[opponent, learner], env=env)

    training_envs = DummyVectorEnv([get_env for _ in range(2)])
    test_envs = DummyVectorEnv([get_env for _ in range(2)])
    training_envs.seed(0)
    test_envs.seed(1)
    buffer = VectorReplayBuffer(2000, len(training_envs))
    training_collector = Collector[CollectStats](
        algorithm, training_envs, buffer, exploration_noise=True
    )
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=True)
    training_collector.reset()
    training_collector.collect(n_step=64)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a small network: one thread is quickest
    try:
        result = algorithm.run_training(
            OffPolicyTrainerParams(
                training_collector=training_collector,
                test_collector=test_collector,
                max_epochs=1,
                epoch_num_steps=300,
                collection_step_num_env_steps=10,
                test_step_num_episodes=2,
                batch_size=32,
                update_step_num_gradient_steps_per_sample=0.1,
                multi_agent_return_reduction=lambda returns: returns[:, 1],  # Hyde's
                verbose=False,
                show_progress=False,
            )
        )
    finally:
        torch.set_num_threads(threads)
    assert result.train_step >= 300 and result.update_step >= 30
    assert result.test_episode >= 2 and abs(result.best_reward) <= 1.0
    # The buffer stored every info with its fixed structure.
    stored = buffer[buffer.sample_indices(0)]
    assert len(stored) == len(buffer) >= 300
    assert stored.info.colour_ranks.shape == (len(buffer), 3)
    assert set(stored.info.phase.tolist()) <= set(PHASE_NAMES)
    assert stored.info.tricks.jekyll.shape == (len(buffer),)
    # A finished game gives +1 and -1 (R4), never a draw.
    final_rewards = stored.rew[stored.terminated]
    assert len(final_rewards) >= 1
    assert all(sorted(rewards.tolist()) == [-1.0, 1.0] for rewards in final_rewards)


def test_rllib_observations_are_the_env_observations_as_float():
    env = rllib_env()
    plain = jekyll_hyde_v0.env()
    env.reset(seed=4)
    plain.reset(seed=4)
    space = env.observation_space("jekyll")
    assert set(space) == {"observations", "action_mask"}
    assert space["observations"].shape == (OBS_SIZE,)
    assert space["action_mask"].shape == (NUM_ACTIONS,)
    assert space["observations"].dtype == np.float32 and space["action_mask"].dtype == np.float32
    assert env.action_space("hyde").n == NUM_ACTIONS
    final_rewards = {}
    for agent in env.agent_iter():
        observation, reward, term, trunc, info = env.last()
        expected = plain.last()
        assert space.contains(observation)
        assert np.array_equal(observation["observations"], expected[0]["observation"])
        assert np.array_equal(observation["action_mask"], expected[0]["action_mask"])
        assert (reward, term, trunc, info) == expected[1:]
        if term or trunc:
            final_rewards[agent] = reward
            action = None
        else:
            action = int(np.flatnonzero(observation["action_mask"])[0])
        env.step(action)
        plain.step(action)
    assert sorted(final_rewards.values()) == [-1, 1]
    with pytest.raises(KeyError):
        env.observation_space("dr_lanyon")
    with pytest.raises(TypeError, match="wraps a PettingZoo AECEnv"):
        RLlibObservations(object())


def test_rllib_env_config_keys_are_checked():
    with pytest.raises(
        ValueError, match=r"\['render'\] are not known; allowed keys: \['render_mode'\]"
    ):
        rllib_pettingzoo_env({"render": "ansi"})


def test_rllib_pettingzoo_env_plays_a_whole_game_with_masked_actions():
    """RLlib's own PettingZooEnv around rllib_env(): RLlib's env checker accepts it, only
    the agent to act observes, and a whole game ends with +1 and -1."""
    pytest.importorskip("ray.rllib", reason=NEEDS_RAY)
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    env = rllib_pettingzoo_env({"render_mode": "ansi"})
    assert isinstance(env, PettingZooEnv)
    check_multiagent_environments(env)
    observations, infos = env.reset(seed=7)
    rng = np.random.default_rng(7)
    steps = 0
    while True:
        (agent,) = observations  # only the agent to act observes
        observation = observations[agent]
        assert env.observation_space[agent].contains(observation)
        mask = observation["action_mask"]
        assert mask.dtype == np.float32 and mask.any()
        observations, rewards, terminated, truncated, infos = env.step(
            {agent: int(rng.choice(np.flatnonzero(mask)))}
        )
        steps += 1
        if terminated["__all__"]:
            break
        assert set(rewards) == set(observations) and not any(rewards.values())
        assert not truncated["__all__"]
    assert 40 < steps <= jekyll_hyde.MAX_STEPS
    assert sorted(rewards.values()) == [-1, 1] and set(observations) == {"jekyll", "hyde"}
    assert all(info["phase"] == "game_over" for info in infos.values())
    assert "Track" in env.env.render()


def test_rllib_action_masking_module_reads_the_observations():
    """RLlib's action-masking RLModule (the one its examples and this project's RLlib
    backend use) builds on the observation space and gives illegal actions no chance."""
    pytest.importorskip("ray.rllib", reason=NEEDS_RAY)
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )

    env = rllib_pettingzoo_env()
    observations, _ = env.reset(seed=1)
    (agent,) = observations
    module = ActionMaskingTorchRLModule(
        observation_space=env.observation_space[agent],
        action_space=env.action_space[agent],
        model_config={"fcnet_hiddens": [16], "head_fcnet_hiddens": []},
    )
    batch = {
        Columns.OBS: {
            key: torch.from_numpy(value[None]) for key, value in observations[agent].items()
        }
    }
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0].numpy()
    mask = observations[agent]["action_mask"].astype(bool)
    assert logits[~mask].max() < -1e30 < logits[mask].min()
