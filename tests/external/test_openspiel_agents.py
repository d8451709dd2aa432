"""OpenSpiel policies and bots in the arena (``jekyll_hyde_agents.external.openspiel_policy``)."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python import policy as openspiel_policy  # noqa: E402
from open_spiel.python.algorithms import mcts  # noqa: E402
from open_spiel.python.bots.uniform_random import UniformRandomBot  # noqa: E402

from jekyll_hyde_agents import make_agent  # noqa: E402
from jekyll_hyde_agents.external.openspiel_policy import OpenSpielAgent  # noqa: E402
from jekyll_hyde_agents.openspiel_bots import load_game  # noqa: E402
from jekyll_hyde_agents.sources import as_agent  # noqa: E402
from jekyll_hyde_arena import play_pair  # noqa: E402
from jekyll_hyde_env.engine.information import player_view  # noqa: E402


class LowestPolicy(openspiel_policy.Policy):
    """Prefers the lowest legal action (probability 0.7, the rest shared); records what it
    was shown: the information state string and the whole state, for each call."""

    def __init__(self, game):
        super().__init__(game, list(range(game.num_players())))
        self.seen: list[tuple[int, str, str]] = []

    def action_probabilities(self, state, player_id=None):
        legal = state.legal_actions(player_id)
        self.seen.append((player_id, state.information_state_string(player_id), str(state)))
        if len(legal) == 1:
            return {legal[0]: 1.0}
        rest = 0.3 / (len(legal) - 1)
        return {action: 0.7 if action == min(legal) else rest for action in legal}


class Recorder:
    """An agent that passes each decision to ``agent`` and keeps (legal actions, choice)."""

    def __init__(self, agent):
        self.agent = agent
        self.name = agent.name
        self.moves: list[tuple[list[int], int]] = []

    def reset(self, seed=None):
        self.agent.reset(seed)

    def act(self, view, legal_actions):
        action = self.agent.act(view, legal_actions)
        self.moves.append((list(legal_actions), action))
        return action


@pytest.fixture(scope="module")
def game():
    return load_game()


def test_uniform_and_lowest_policies_play_whole_games_against_the_heuristic(game):
    heuristic = make_agent("heuristic")
    lowest = Recorder(as_agent(LowestPolicy(game)))
    uniform = Recorder(as_agent(openspiel_policy.UniformRandomPolicy(game), name="uniform"))
    assert isinstance(lowest.agent, OpenSpielAgent) and isinstance(uniform.agent, OpenSpielAgent)
    assert uniform.name == "uniform" and lowest.name == "openspiel:LowestPolicy"
    for agent in (lowest, uniform):
        results = [play_pair(agent, heuristic, 11, index) for index in range(2)]
        assert all(game.winner in (0, 1) for r in results for game in (r.a_as_jekyll, r.a_as_hyde))
        assert all(action in legal for legal, action in agent.moves)
    choices = [(legal, action) for legal, action in lowest.moves if len(legal) > 1]
    assert len(choices) > 20
    assert all(action == min(legal) for legal, action in choices)  # the most probable, always
    uniform_choices = [(legal, action) for legal, action in uniform.moves if len(legal) > 1]
    # A uniform policy played deterministically still plays at random (ties are drawn).
    assert any(action != min(legal) for legal, action in uniform_choices)


def test_the_state_shown_has_the_acting_players_real_information_state(game):
    """Play through the OpenSpiel game itself; at every decision the policy is shown a state
    whose information state for the acting player is the real one, hidden cards redrawn."""
    chooser = LowestPolicy(game)
    agent = as_agent(chooser)
    agent.reset(5)
    rng = np.random.default_rng(5)
    state = game.new_initial_state()
    decisions = redrawn = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probabilities)))
            continue
        player = state.current_player()
        before = len(chooser.seen)
        action = agent.act(player_view(state.engine_state, player), state.legal_actions())
        assert action in state.legal_actions()
        shown_player, shown_info, shown_whole = chooser.seen[before]
        assert shown_player == player
        assert shown_info == state.information_state_string(player)
        decisions += 1
        redrawn += shown_whole != str(state)  # the opponent's hand drawn, not the real one
        state.apply_action(action)
    assert decisions > 20
    assert redrawn >= decisions // 2


def test_a_deterministic_policy_gives_the_same_games_twice(game):
    heuristic = make_agent("heuristic")
    agent = as_agent(LowestPolicy(game))
    first = [play_pair(agent, heuristic, 2, i, keep_records=True) for i in range(2)]
    again = [
        play_pair(as_agent(LowestPolicy(game)), heuristic, 2, i, keep_records=True)
        for i in range(2)
    ]
    assert first == again
    # Sampling from the same policy plays other games (the records differ somewhere).
    sampled = as_agent(LowestPolicy(game), deterministic=False)
    other = [play_pair(sampled, heuristic, 2, i, keep_records=True) for i in range(2)]
    assert other != first


def test_an_mcts_bot_plays_a_game_and_replays_it_from_the_same_seed(game):
    def bot():
        return mcts.MCTSBot(
            game,
            2.0,
            3,
            mcts.RandomRolloutEvaluator(n_rollouts=1),
            random_state=np.random.RandomState(),
        )

    heuristic = make_agent("heuristic")
    agent = Recorder(as_agent(bot()))
    assert agent.name == "openspiel:MCTSBot"
    result = play_pair(agent, heuristic, 4, 0, keep_records=True)
    assert {result.a_as_jekyll.winner, result.a_as_hyde.winner} <= {0, 1}
    assert sum(len(legal) > 1 for legal, _ in agent.moves) > 20
    assert all(action in legal for legal, action in agent.moves)
    again = play_pair(as_agent(bot()), heuristic, 4, 0, keep_records=True)
    assert again == result  # reset reseeds the bot's random state and the world draws


def test_illegal_or_missing_actions_raise_errors_naming_the_agent(game):
    class Illegal(LowestPolicy):
        def action_probabilities(self, state, player_id=None):
            return {27: 1.0} if 27 not in state.legal_actions(player_id) else {0: 1.0}

    class Nothing(LowestPolicy):
        def action_probabilities(self, state, player_id=None):
            return {}

    heuristic = make_agent("heuristic")
    with pytest.raises(
        ValueError,
        match=r"^bad-policy playing jekyll gave probability to illegal action\(s\) \[27\]",
    ):
        play_pair(as_agent(Illegal(game), name="bad-policy"), heuristic, 0, 0)
    with pytest.raises(
        ValueError, match=r"^openspiel:Nothing playing jekyll gave no probability to any legal"
    ):
        play_pair(as_agent(Nothing(game)), heuristic, 0, 0)
    # A bot bound to Jekyll has no legal action as Hyde: the message says so.
    bound = as_agent(UniformRandomBot(0, np.random.RandomState(0)), name="jekyll-bot")
    with pytest.raises(
        ValueError, match=r"^jekyll-bot playing hyde chose action -1.*bound to player 0"
    ):
        play_pair(heuristic, bound, 0, 0)
    kuhn = openspiel_policy.UniformRandomPolicy(pyspiel.load_game("kuhn_poker"))
    with pytest.raises(ValueError, match=r"is for the OpenSpiel game 'kuhn_poker'"):
        as_agent(kuhn)
