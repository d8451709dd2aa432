"""Python functions and objects as agents (``jekyll_hyde_agents.external.python_agent``):
``python:file.py:name``, ``file.py:name``, ``python:package.module:name`` and objects in
memory; the one-line errors of functions that fail, answer wrongly or play illegally."""

from __future__ import annotations

import json
import pathlib
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

from jekyll_hyde_agents.external.python_agent import (
    CheckedAgent,
    FunctionAgent,
    load_python_object,
    looks_like_python_target,
)
from jekyll_hyde_agents.sources import as_agent, load_agent
from jekyll_hyde_app.cli import main
from jekyll_hyde_arena import evaluate, run_pairs
from jekyll_hyde_env.engine import legal_actions, new_game, player_view
from jekyll_hyde_env.observation import OFFSETS
from tests.external.hand import hand_games, hand_pair_scores, saved_histories

HYDE_COLUMN = OFFSETS["my_role"].start + 1
PAIRS, SEED = 6, 11

AGENT_FILE = '''
from __future__ import annotations

import numpy as np

from jekyll_hyde_env.engine.state import PlayerView


def first_legal(observation, action_mask):
    return int(action_mask.nonzero()[0][0])


def last_legal(view, legal_actions):
    return legal_actions[-1]


def middle_legal(state: PlayerView, legal):
    return legal[len(legal) // 2]


class SecondLegal:
    def act(self, view, legal_actions):
        return legal_actions[min(1, len(legal_actions) - 1)]


second = SecondLegal()


def boom(observation, action_mask):
    raise RuntimeError("kaboom")


def text(observation, action_mask):
    return "3"


def half(observation, action_mask):
    return 3.5


def illegal(observation, action_mask):
    return int(np.flatnonzero(action_mask == 0)[0])


def hyde_cheats(observation, action_mask):
    """Plays first_legal as Jekyll, and an illegal action as Hyde."""
    if observation[{hyde}]:
        return int(np.flatnonzero(action_mask == 0)[0])
    return first_legal(observation, action_mask)
'''.replace("{hyde}", str(HYDE_COLUMN))


def first_legal(observation: np.ndarray, action_mask: np.ndarray) -> int:
    return int(np.flatnonzero(action_mask)[0])


def nth_legal(which):
    """A choose(observation, mask) playing ``which(legal)`` of the legal actions."""

    def choose(observation, mask):
        legal = np.flatnonzero(mask)
        return int(legal[which(len(legal))])

    return choose


HAND = {  # how each agent of AGENT_FILE plays, as a function of the mask
    "first_legal": nth_legal(lambda n: 0),
    "last_legal": nth_legal(lambda n: n - 1),
    "middle_legal": nth_legal(lambda n: n // 2),
    "SecondLegal": nth_legal(lambda n: min(1, n - 1)),
    "second": nth_legal(lambda n: min(1, n - 1)),
}


@pytest.fixture
def agent_file(tmp_path) -> pathlib.Path:
    path = tmp_path / "agent.py"
    path.write_text(AGENT_FILE)
    return path


def eval_cli(spec: str, capsys, *extra: str) -> tuple[int, str, str]:
    argv = ["eval", spec, "heuristic", "--pairs", str(PAIRS), "--seed", str(SEED)]
    code = main([*argv, "--workers", "1", "--no-progress", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_function_in_a_file_plays_by_prefix_and_by_detection(agent_file, tmp_path, capsys):
    by_hand = hand_games(HAND["first_legal"], PAIRS, SEED)
    assert by_hand[0] == hand_pair_scores(HAND["first_legal"], PAIRS, SEED)
    for spec in (f"python:{agent_file}:first_legal", f"{agent_file}:first_legal"):
        folder = tmp_path / f"games{len(spec)}"
        code, out, err = eval_cli(spec, capsys, "--save-games", str(folder))
        assert code == 0, err
        assert f"{spec} (A) against heuristic (B): {PAIRS} duplicate pairs" in out
        assert saved_histories(folder, PAIRS) == by_hand[1]
    assert looks_like_python_target(f"{agent_file}:first_legal")
    assert not looks_like_python_target(f"{tmp_path / 'missing.py'}:first_legal")
    agent = load_agent(f"{agent_file}:first_legal")
    assert isinstance(agent, FunctionAgent) and agent.name == f"python:{agent_file}:first_legal"


def test_a_function_from_python_plays_as_by_hand(agent_file, tmp_path):
    function = load_python_object(f"{agent_file}:first_legal")
    report = evaluate(function, "heuristic", pairs=PAIRS, seed=SEED, save_games=tmp_path)
    scores, histories = hand_games(HAND["first_legal"], PAIRS, SEED)
    assert report.pair_scores == scores and saved_histories(tmp_path, PAIRS) == histories
    assert report.agents == ("python:first_legal", "heuristic")
    # A hundred pairs against the champion, from memory and from the file, agree.
    in_memory = evaluate(first_legal, "champion", pairs=100, seed=SEED)
    from_file = evaluate(f"python:{agent_file}:first_legal", "champion", pairs=100, seed=SEED)
    assert in_memory.pairs == from_file.pairs == 100
    assert in_memory.pair_scores == from_file.pair_scores
    assert in_memory.by_role == from_file.by_role
    assert in_memory.score < 0.5  # the champion beats the first legal action


def test_a_module_on_sys_path_plays_by_dotted_name(tmp_path, monkeypatch, capsys):
    package = tmp_path / "jh_test_user_agents"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "players.py").write_text(AGENT_FILE)
    monkeypatch.syspath_prepend(str(tmp_path))
    _, histories = hand_games(HAND["last_legal"], PAIRS, SEED)
    spec = "python:jh_test_user_agents.players:last_legal"
    code, out, err = eval_cli(spec, capsys, "--save-games", str(tmp_path / "games"))
    assert code == 0, err
    assert f"{spec} (A) against heuristic (B)" in out
    assert saved_histories(tmp_path / "games", PAIRS) == histories
    code, _, err = eval_cli("python:jh_test_user_agents.nowhere:last_legal", capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: python:jh_test_user_agents.nowhere:last_legal: cannot import")


@pytest.mark.parametrize("name", ["last_legal", "middle_legal", "SecondLegal", "second"])
def test_view_functions_agent_classes_and_objects(agent_file, tmp_path, name):
    spec = f"python:{agent_file}:{name}"
    agent = load_agent(spec)
    if name in ("SecondLegal", "second"):
        assert isinstance(agent, CheckedAgent) and type(agent.agent).__name__ == "SecondLegal"
    else:
        assert isinstance(agent, FunctionAgent) and agent._view_style
    scores, histories = hand_games(HAND[name], PAIRS, SEED)
    report = evaluate(spec, "heuristic", pairs=PAIRS, seed=SEED, save_games=tmp_path)
    assert report.pair_scores == scores
    assert saved_histories(tmp_path, PAIRS) == histories


def test_the_hand_players_differ():
    """The agents above are told apart by their games, so the checks can fail."""
    games = {name: str(hand_games(HAND[name], 2, SEED)[1]) for name in HAND}
    assert len(set(games.values())) == 4  # SecondLegal and second play alike


BAD = {
    # target -> what the one line says after "error: "
    "boom": ["python:{file}:boom raised RuntimeError: kaboom"],
    "text": ["python:{file}:text returned '3' (str), not an integer action id"],
    "half": ["python:{file}:half returned 3.5 (float), not an integer action id"],
    "illegal": ["agent python:{file}:illegal playing jekyll chose illegal action", "forfeit"],
    "nosuch": ["python:{file}:nosuch: ", "has no attribute 'nosuch'"],
}


def test_functions_that_fail_are_one_line_naming_them(agent_file, tmp_path, capsys):
    for name, says in BAD.items():
        code, out, err = eval_cli(f"python:{agent_file}:{name}", capsys)
        assert code == 2, (name, out, err)
        assert err.count("\n") == 1 and err.startswith("error: "), (name, err)
        for words in says:
            assert words.format(file=agent_file) in err, (name, words, err)
    broken = tmp_path / "broken.py"
    broken.write_text("import numpy\nraise ImportError('this file is broken')\n")
    for spec, says in (
        (f"python:{broken}:agent", f"python:{broken}:agent: running {broken} raised ImportError"),
        ("python:nocolon", "python:nocolon: name a function or object as python:"),
        (f"python:{tmp_path / 'gone.py'}:f", f"no such file '{tmp_path / 'gone.py'}'"),
    ):
        code, out, err = eval_cli(spec, capsys)
        assert code == 2 and err.count("\n") == 1 and err.startswith("error: "), (spec, err)
        assert says in err, (spec, err)


def test_an_illegal_action_can_be_scored_as_a_forfeit(agent_file, tmp_path, capsys):
    fair, cheat = tmp_path / "fair.json", tmp_path / "cheat.json"
    code, _, err = eval_cli(f"python:{agent_file}:first_legal", capsys, "--out", str(fair))
    assert code == 0, err
    code, out, err = eval_cli(
        f"python:{agent_file}:hyde_cheats", capsys, "--illegal", "forfeit", "--out", str(cheat)
    )
    assert code == 0, err
    assert re.search(rf"^  forfeits \(A\) +{PAIRS} games lost by an illegal action$", out, re.M)
    fair_report = json.loads(fair.read_text())
    cheat_report = json.loads(cheat.read_text())
    assert cheat_report["illegal"]["A"] == {"replaced": 0, "forfeited": PAIRS}
    assert cheat_report["illegal"]["B"] == {"replaced": 0, "forfeited": 0}
    # Every Hyde game is lost; the Jekyll games are first_legal's.
    assert cheat_report["by_role"]["hyde"]["wins"] == 0
    assert cheat_report["by_role"]["jekyll"] == fair_report["by_role"]["jekyll"]
    assert cheat_report["score"] == fair_report["by_role"]["jekyll"]["wins"] / (2 * PAIRS)
    # Without --illegal forfeit the same agent stops the match.
    code, _, err = eval_cli(f"python:{agent_file}:hyde_cheats", capsys)
    assert code == 2 and "playing hyde chose illegal action" in err


def test_an_unpicklable_function_plays_in_one_process_with_a_note(capsys):
    def choose(observation, action_mask):
        return int(np.flatnonzero(action_mask)[-1])

    lam = lambda observation, action_mask: choose(observation, action_mask)  # noqa: E731
    one = evaluate(lam, "heuristic", pairs=PAIRS, seed=SEED, workers=1)
    _, err = capsys.readouterr()
    assert err == ""
    two = evaluate(lam, "heuristic", pairs=PAIRS, seed=SEED, workers=2)
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("note: "), err
    assert "cannot be copied into worker processes" in err and "one worker" in err
    assert two.pair_scores == one.pair_scores == hand_games(choose, PAIRS, SEED)[0]
    assert two.by_role == one.by_role and two.return_match == one.return_match


UNPICKLE = """
import pickle, sys
from jekyll_hyde_env.engine import legal_actions, new_game, player_view
import numpy as np
agent = pickle.loads(sys.stdin.buffer.read())
state = new_game(np.random.default_rng(0))
print(type(agent).__name__, agent.act(player_view(state, state.to_act), legal_actions(state)))
"""


def test_functions_and_objects_of_a_file_play_in_spawned_workers(agent_file):
    """A spawned worker has not run the user's file: it runs it before unpickling what the
    file defines (a function, an object of one of its classes)."""
    for name, load in (("first_legal", load_python_object), ("second", load_agent)):
        side = load(f"{agent_file}:{name}")  # each load runs the file again
        # First in a fresh interpreter, with a timeout (a pool whose workers cannot build
        # their agents starts new ones forever).
        fresh = subprocess.run(
            [sys.executable, "-c", UNPICKLE],
            input=pickle.dumps(as_agent(side)),
            capture_output=True,
            timeout=120,
        )
        assert fresh.returncode == 0, fresh.stderr.decode()[-2000:]
        agent = as_agent(side)
        state = new_game(np.random.default_rng(0))
        action = agent.act(player_view(state, state.to_act), legal_actions(state))
        assert fresh.stdout.decode().split() == [type(agent).__name__, str(action)]
        one = sorted(run_pairs(side, "heuristic", 4, SEED, workers=1), key=lambda r: r.index)
        spawned = run_pairs(side, "heuristic", 4, SEED, workers=2, start_method="spawn")
        assert sorted(spawned, key=lambda r: r.index) == one, name
        assert [r.a_wins / 2 for r in one] == hand_games(HAND[name], 4, SEED)[0]
