"""RLCard's agents against the env: the arena adapter (``jekyll_hyde_agents.rlcard_agent``)
and RLCard's DQN, NFSP and DMC trainers, unmodified."""

from __future__ import annotations

import importlib.util
import multiprocessing
import pathlib

import numpy as np
import pytest

rlcard = pytest.importorskip("rlcard")

import torch  # noqa: E402  (RLCard's learning agents are torch modules)
from rlcard.agents import DQNAgent, NFSPAgent, RandomAgent  # noqa: E402
from rlcard.utils import reorganize, tournament  # noqa: E402

from jekyll_hyde_agents import make_agent  # noqa: E402
from jekyll_hyde_agents.rlcard_agent import RLCardAgent  # noqa: E402
from jekyll_hyde_arena import play_pair  # noqa: E402
from jekyll_hyde_env.engine import legal_actions, player_view  # noqa: E402
from jekyll_hyde_env.engine.cards import (  # noqa: E402
    HYDE,
    JEKYLL,
    NUM_ACTIONS,
)
from jekyll_hyde_env.integrations import rlcard as rc  # noqa: E402
from tests.test_rlcard import make, one_torch_thread, play_random  # noqa: E402, F401 (a fixture)

ROOT = pathlib.Path(__file__).resolve().parents[1]
DMC_SCRIPT = ROOT / "benchmarks" / "rlcard_dmc.py"


# --- the arena adapter ------------------------------------------------------------------------


def test_adapter_builds_the_envs_state_from_the_view():
    env = make(13)
    adapter = RLCardAgent(RandomAgent(NUM_ACTIONS))
    state, player = env.reset()
    rng = np.random.default_rng(13)
    while not env.is_over():
        game = env.game.state
        built = adapter.state(player_view(game, player), legal_actions(game))
        assert np.array_equal(built["obs"], state["obs"])
        assert built["legal_actions"] == state["legal_actions"]
        assert built["raw_legal_actions"] == state["raw_legal_actions"]
        assert built["raw_obs"] == state["raw_obs"]
        state, player = env.step(int(rng.choice(list(state["legal_actions"]))))


class _Scripted:
    """An RLCard-style agent that answers ``eval_step`` with a fixed action."""

    use_raw = False

    def __init__(self, answer):
        self.answer = answer

    def eval_step(self, state):
        return self.answer, {}


def test_adapter_plays_rlcard_agents_in_the_arena():
    random_agent = RLCardAgent(RandomAgent(NUM_ACTIONS), name="rlcard-random")
    result = play_pair(random_agent, make_agent("heuristic"), seed=3000, index=0)
    for game in (result.a_as_jekyll, result.a_as_hyde):
        assert game.winner in (JEKYLL, HYDE) and 1 <= game.rounds <= 3
    first = lambda state: (next(iter(state["legal_actions"])), {})  # noqa: E731
    lowest = RLCardAgent(type("Lowest", (), {"use_raw": False, "eval_step": staticmethod(first)})())
    again = play_pair(lowest, make_agent("lowest"), seed=3000, index=0)
    mirror = play_pair(make_agent("lowest"), make_agent("lowest"), seed=3000, index=0)
    assert again == mirror  # the adapter plays exactly the RLCard agent's choices


def test_adapter_refuses_bad_agents_and_answers():
    with pytest.raises(ValueError, match="not an RLCard agent"):
        RLCardAgent(object())
    env = make(0)
    env.reset()
    game = env.game.state
    view, legal = player_view(game, JEKYLL), legal_actions(game)
    illegal = next(a for a in range(NUM_ACTIONS) if a not in legal)
    with pytest.raises(ValueError, match=rf"chose action {illegal} .*not legal") as error:
        RLCardAgent(_Scripted(illegal), name="bad").act(view, legal)
    assert str(error.value).endswith(f"legal action ids: {legal}")
    with pytest.raises(ValueError, match="bad playing jekyll: unknown action id 40"):
        RLCardAgent(_Scripted(40), name="bad").act(view, legal)
    with pytest.raises(ValueError, match=r"eval_step must return \(action, info\)"):
        RLCardAgent(type("Bare", (), {"eval_step": lambda self, s: 3})()).act(view, legal)
    raw = _Scripted(rc.RAW_ACTIONS[legal[0]])
    raw.use_raw = True
    assert RLCardAgent(raw).act(view, legal) == legal[0]


# --- RLCard's agents, unmodified ---------------------------------------------------------------


def test_dqn_trains_and_plays():
    torch.manual_seed(0)
    env = make(1)
    agent = DQNAgent(
        num_actions=env.num_actions,
        state_shape=env.state_shape[0],
        mlp_layers=[32, 32],
        replay_memory_size=2000,
        replay_memory_init_size=64,
        update_target_estimator_every=100,
        batch_size=16,
        device=torch.device("cpu"),
    )
    before = [p.detach().clone() for p in agent.q_estimator.qnet.parameters()]
    env.set_agents([agent, RandomAgent(env.num_actions)])
    while agent.total_t < 300:
        trajectories, payoffs = env.run(is_training=True)
        for transition in reorganize(trajectories, payoffs)[0]:
            agent.feed(transition)
    after = list(agent.q_estimator.qnet.parameters())
    assert agent.train_t > 200
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    payoffs = tournament(env, 4)
    assert payoffs[0] == pytest.approx(-payoffs[1]) and -1 <= payoffs[0] <= 1
    arena = RLCardAgent(agent, name="dqn")
    played = play_pair(arena, make_agent("random"), seed=3000, index=1)
    assert played == play_pair(arena, make_agent("random"), seed=3000, index=1)  # greedy


def test_nfsp_trains_and_plays():
    torch.manual_seed(0)
    env = make(2)
    agents = [
        NFSPAgent(
            num_actions=env.num_actions,
            state_shape=env.state_shape[player],
            hidden_layers_sizes=[32],
            q_mlp_layers=[32],
            anticipatory_param=0.5,
            batch_size=32,
            min_buffer_size_to_learn=32,
            q_replay_memory_init_size=64,
            q_batch_size=16,
            device=torch.device("cpu"),
        )
        for player in range(env.num_players)
    ]
    env.set_agents(agents)
    episodes = 0
    while agents[0].total_t < 300 or agents[0].train_t == 0:
        for agent in agents:
            agent.sample_episode_policy()
        trajectories, payoffs = env.run(is_training=True)
        for agent, transitions in zip(agents, reorganize(trajectories, payoffs), strict=True):
            for transition in transitions:
                agent.feed(transition)
        episodes += 1
        assert episodes < 60, "NFSP did not train its average policy in 60 games"
    assert agents[0]._rl_agent.train_t > 0
    payoffs = tournament(env, 4)
    assert payoffs[0] == pytest.approx(-payoffs[1])


def _dmc_benchmark(monkeypatch):
    """benchmarks/rlcard_dmc.py as a module: its DMC training and loading are tested here."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("benchmark_rlcard_dmc", DMC_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_dmc_trainer_trains_both_players_and_its_agents_play(tmp_path, monkeypatch):
    """RLCard's DMCTrainer as it is, through the benchmark's ``train``: one actor
    process, tiny buffers, 64 frames; then its networks play RLCard's tournament
    and, through the adapter, duplicate pairs in the arena."""
    bench = _dmc_benchmark(monkeypatch)
    before = set(multiprocessing.active_children())
    trained = bench.train(
        tmp_path, frames=64, actors=1, batch_size=4, unroll_length=8, num_buffers=16
    )
    assert set(multiprocessing.active_children()) == before  # its actors were ended
    assert trained["frames"] >= 64
    assert trained["stats"]["loss_0"] > 0 and trained["stats"]["loss_1"] > 0  # both learned
    agents = bench.load_agents(trained["checkpoint"])
    assert [type(agent).__name__ for agent in agents] == ["DMCAgent", "DMCAgent"]
    env = make(0)
    env.set_agents(agents)
    payoffs = tournament(env, 2)
    assert payoffs[0] == pytest.approx(-payoffs[1])
    dmc = RLCardAgent(agents, name="dmc")
    report = bench.match(trained["checkpoint"], "heuristic", pairs=2, seed=3000, workers=1)
    again = bench.match(trained["checkpoint"], "heuristic", pairs=2, seed=3000, workers=1)
    assert report.pairs == 2 and report.score == again.score  # greedy: the same games
    result = play_pair(dmc, make_agent("heuristic"), seed=3000, index=0)
    assert result == play_pair(dmc, make_agent("heuristic"), seed=3000, index=0)  # greedy


def test_dmc_benchmark_writes_its_results_section(tmp_path, monkeypatch):
    bench = _dmc_benchmark(monkeypatch)
    page, name, script = bench.SECTION
    bench.check_section(page, name, script)  # docs/results/rlcard.md has the markers
    (tmp_path / page).write_text((ROOT / "docs" / "results" / page).read_text())
    bench.write_section(page, name, script, "| a | new |\n|---|---|", folder=tmp_path)
    assert "| a | new |" in (tmp_path / page).read_text()
