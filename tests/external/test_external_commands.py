"""Models of other libraries where the commands take an agent: exploit, start_policy, serve.

The exploit run below pins its target by the bytes of the file it names, as it
pins a saved policy by its weights: a file changed in place is another target.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from jekyll_hyde_agents import champion_path, make_agent
from jekyll_hyde_agents.external.exchange import export_policy
from jekyll_hyde_app import cli
from jekyll_hyde_app.web.opponents import OpponentMenu
from jekyll_hyde_env.engine import legal_actions, new_game, player_view
from jekyll_hyde_train.common.config import ConfigError
from jekyll_hyde_train.expert_iteration.config import start_policy_path
from jekyll_hyde_train.exploit.run import WEIGHTS_KEY, files_sha256
from tests.test_exploit import TINY

AGENT_FILE = """
def first_legal(observation, action_mask):
    return int(action_mask.nonzero()[0][0])
"""


@pytest.mark.slow
def test_exploit_takes_a_python_function_and_pins_its_file(tmp_path, capsys):
    source = tmp_path / "agent.py"
    source.write_text(AGENT_FILE)
    target = f"python:{source}:first_legal"
    run, out = tmp_path / "run", tmp_path / "results.json"
    assert cli.main(["exploit", target, "--run-dir", str(run), "--out", str(out), *TINY]) == 0
    results = json.loads(out.read_text())
    assert results["target"] == target
    settings = json.loads((run / "exploit.json").read_text())
    assert settings[WEIGHTS_KEY] == files_sha256(source)
    # The lowest legal action is easy prey for a trained responder in both seats.
    assert results["seats"]["jekyll"]["win_rate"] > 0.5 and results["abr_score"] > 0.5
    # The search responder models named targets only, and says so.
    assert results["budget"]["search_agent"] is None
    # The same file changed in place is another target: the folder refuses it.
    source.write_text(AGENT_FILE + "\n# changed\n")
    capsys.readouterr()
    assert cli.main(["exploit", target, "--run-dir", str(run), *TINY]) == 2
    assert "another policy" in capsys.readouterr().err


def test_start_policy_names_the_kind_of_a_model_that_does_not_fit(tmp_path):
    onnx = pytest.importorskip("onnx")
    assert onnx is not None
    path = export_policy(champion_path(), "onnx", tmp_path / "champion.onnx")
    with pytest.raises(ConfigError, match="is an ONNX model .*value head"):
        start_policy_path(str(path))
    with pytest.raises(ConfigError, match="a run folder or a policy folder"):
        start_policy_path(str(tmp_path / "nothing-here"))


def test_serve_offers_a_listed_model_file_and_refuses_a_python_function(tmp_path):
    pytest.importorskip("onnxruntime")
    path = str(export_policy(champion_path(), "onnx", tmp_path / "champion.onnx"))
    menu = OpponentMenu.from_specs([path, "heuristic"], max_think_seconds=1.0)
    assert menu.allowed == [path, "heuristic"]
    agent, champion = menu.build(path, seed=3), make_agent("champion")
    state = new_game(np.random.default_rng(4))
    view, legal = player_view(state, state.to_act), legal_actions(state)
    assert agent.act(view, legal) == champion.act(view, legal)
    source = tmp_path / "agent.py"
    source.write_text(AGENT_FILE)
    with pytest.raises(ValueError, match="cannot bound the thinking time"):
        OpponentMenu.from_specs([f"python:{source}:first_legal"], max_think_seconds=1.0)
    # A client names only what is listed: a path it sends is refused, never loaded.
    with pytest.raises(ValueError, match="not offered by this server"):
        menu.build(str(tmp_path / "other.onnx"), seed=0)
