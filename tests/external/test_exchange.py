"""The exchange format (``jekyll_hyde_agents.external.exchange``): ``jekyll-hyde export`` writes
the champion as TorchScript and ONNX, and each export plays every decision as the numpy
champion does; modules of the wrong signature are refused in one line naming the file."""

from __future__ import annotations

import contextlib
import io
import json
import pathlib
import types

import numpy as np
import pytest

pytest.importorskip("torch", reason="torch is not installed (the train extra)")
pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (the onnx extra)")

import onnx  # noqa: E402 - after the skips
import onnxruntime  # noqa: E402
import torch  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from jekyll_hyde_agents import champion_path, make_agent  # noqa: E402
from jekyll_hyde_agents.external import exchange  # noqa: E402
from jekyll_hyde_agents.model_agent import ModelAgent  # noqa: E402
from jekyll_hyde_agents.policy_file import read_policy  # noqa: E402
from jekyll_hyde_agents.sources import as_agent, detect_kind, load_agent  # noqa: E402
from jekyll_hyde_app.cli import main  # noqa: E402
from jekyll_hyde_arena import evaluate  # noqa: E402
from jekyll_hyde_env.engine import (  # noqa: E402
    apply_action,
    is_terminal,
    legal_actions,
    new_game,
    player_view,
)
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS  # noqa: E402
from jekyll_hyde_env.observation import OBS_SIZE, OFFSETS  # noqa: E402

pytestmark = pytest.mark.filterwarnings(  # torch 2.13 deprecates TorchScript, still supported
    "ignore:`torch.jit.*` is deprecated:DeprecationWarning"
)

SIGNATURE = f"(observation float32[B, {OBS_SIZE}]"
HYDE_COLUMN = OFFSETS["my_role"].start + 1
EVAL = ["heuristic", "--pairs", "6", "--seed", "4", "--workers", "1", "--no-progress"]


@pytest.fixture(scope="module", autouse=True)
def _torch_on_one_thread(one_torch_thread):
    """Every test of this module runs with torch on one thread (``conftest.py``)."""


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """The champion exported on the command line in both formats, and what export printed."""
    folder = tmp_path_factory.mktemp("exchange")
    paths, printed = {}, {}
    for fmt, file in (("torchscript", "champion.pt"), ("onnx", "champion.onnx")):
        paths[fmt] = str(folder / file)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["export", "champion", "--format", fmt, "--out", paths[fmt]])
        assert code == 0
        printed[fmt] = out.getvalue()
    return types.SimpleNamespace(folder=folder, paths=paths, printed=printed)


def test_export_writes_each_format_and_says_where(exports):
    for fmt, path in exports.paths.items():
        assert exports.printed[fmt].startswith(f"{fmt}: {path} (plays champion;")
        assert pathlib.Path(path).stat().st_size > 0
    assert detect_kind(exports.paths["torchscript"]) == "torchscript"
    assert detect_kind(exports.paths["onnx"]) == "onnx"
    onnx.checker.check_model(onnx.load(exports.paths["onnx"]))
    assert not list(exports.folder.glob(".*"))  # no temporary file left beside the exports


def test_each_export_plays_every_decision_as_the_champion(exports):
    champion = make_agent("champion")
    scripted = load_agent(exports.paths["torchscript"])
    graph = load_agent(exports.paths["onnx"])
    assert isinstance(scripted, ModelAgent) and isinstance(graph, ModelAgent)
    decisions, disagreements = 0, []
    for seed in range(200):
        state = new_game(np.random.default_rng(seed))
        while not is_terminal(state):
            legal = legal_actions(state)
            view = player_view(state, state.to_act)
            action = champion.act(view, legal)
            others = scripted.act(view, legal), graph.act(view, legal)
            if others != (action, action):
                disagreements.append((seed, decisions, AGENTS[state.to_act], action, others))
            apply_action(state, action)
            decisions += 1
    assert decisions > 200 * 20
    assert disagreements == []
    # The modules mask illegal actions themselves: nothing was replaced.
    assert scripted.replacements == graph.replacements == 0


def records(folder: pathlib.Path) -> list[dict]:
    """The saved games of an eval, without the players' names."""
    games = []
    for path in sorted(folder.glob("pair*.json")):
        record = json.loads(path.read_text())
        record.pop("players")
        games.append(record)
    return games


def run_eval(spec: str, folder: pathlib.Path, capsys) -> tuple[str, dict, list[dict]]:
    out_file = folder.with_suffix(".json")
    code = main(["eval", spec, *EVAL, "--save-games", str(folder), "--out", str(out_file)])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, json.loads(out_file.read_text()), records(folder)


def test_eval_of_the_exports_equals_eval_of_the_champion(exports, tmp_path, capsys):
    _, champion, champion_games = run_eval("champion", tmp_path / "champion", capsys)
    assert len(champion_games) == 12
    for fmt, path in exports.paths.items():
        out, report, games = run_eval(path, tmp_path / fmt, capsys)
        assert f"{path} (A) against heuristic (B): 6 duplicate pairs, seed 4" in out
        assert "A score" in out and "95% CI" in out
        assert report["agents"]["A"] == path
        for key in ("pair_scores", "score", "by_role", "return_match", "illegal"):
            assert report[key] == champion[key], (fmt, key)
        assert games == champion_games, fmt


class OneInput(torch.nn.Module):
    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return observation[:, :28]  # TorchScript reads no globals


class FiveScores(torch.nn.Module):
    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        return observation[:, :5] + action_mask[:, :5]


def onnx_with_one_input(path: pathlib.Path) -> None:
    weight = np.zeros((OBS_SIZE, NUM_ACTIONS), np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["observation", "w"], ["logits"])],
        "one_input",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", OBS_SIZE])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", NUM_ACTIONS])],
        [numpy_helper.from_array(weight, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def wrong_files(folder: pathlib.Path) -> dict[str, tuple[str, list[str]]]:
    """Spec -> (the file its message names, what else the message says)."""
    one_input, five = folder / "one_input.pt", folder / "five.pt"
    torch.jit.save(torch.jit.script(OneInput()), one_input)
    torch.jit.save(torch.jit.script(FiveScores()), five)
    graph = folder / "one_input.onnx"
    onnx_with_one_input(graph)
    garbage = folder / "garbage.onnx"
    garbage.write_bytes(bytes(range(256)) * 8)
    tensor = folder / "tensor.pt"
    torch.save(torch.zeros(3), tensor)
    wrong = ["wrong signature", SIGNATURE]
    return {
        str(one_input): (str(one_input), wrong),
        "torchscript:" + str(one_input): (str(one_input), wrong),
        str(five): (str(five), [*wrong, "(3, 5)"]),
        str(graph): (str(graph), [*wrong, "1 input(s)"]),
        str(garbage): (str(garbage), ["not an ONNX model"]),
        str(tensor): (str(tensor), ["cannot tell what kind", "prefix", f"torchscript:{tensor}"]),
        "torchscript:" + str(tensor): (str(tensor), ["not a TorchScript module"]),
    }


def test_modules_of_the_wrong_signature_are_one_line_naming_the_file(tmp_path, capsys):
    for spec, (file, says) in wrong_files(tmp_path).items():
        code = main(["eval", spec, *EVAL])
        out, err = capsys.readouterr()
        assert code == 2, (spec, out, err)
        assert err.count("\n") == 1 and err.startswith("error: "), (spec, err)
        assert file in err, (spec, err)
        for words in says:
            assert words in err, (spec, words, err)


class ChampionNet(torch.nn.Module):
    """The champion's two networks written as a plain module, the mask left unread: a
    model that is not mask-aware, whose illegal choices the arena replaces."""

    def __init__(self) -> None:
        super().__init__()
        metadata, groups, _ = read_policy(champion_path())
        assert metadata["architecture"]["activation"] == "relu"
        self.roles = torch.nn.ModuleList()
        for role in AGENTS:
            layers = [
                torch.nn.Linear(w.shape[1], w.shape[0]) for w, _ in groups[metadata["roles"][role]]
            ]
            with torch.no_grad():
                for layer, (w, b) in zip(layers, groups[metadata["roles"][role]], strict=True):
                    layer.weight.copy_(torch.as_tensor(np.asarray(w, np.float32)))
                    layer.bias.copy_(torch.as_tensor(np.asarray(b, np.float32)))
            self.roles.append(torch.nn.ModuleList(layers))

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        outputs = []
        for layers in self.roles:
            x = observation
            for layer in layers[:-1]:
                x = torch.relu(layer(x))
            outputs.append(layers[-1](x))
        is_hyde = observation[:, HYDE_COLUMN : HYDE_COLUMN + 1] > 0.5
        return torch.where(is_hyde, outputs[1], outputs[0])


@pytest.fixture(scope="module")
def champion_games(tmp_path_factory):
    """The champion's report and saved games against heuristic (6 pairs, seed 4)."""
    folder = tmp_path_factory.mktemp("champion_games")
    report = evaluate("champion", "heuristic", pairs=6, seed=4, save_games=folder)
    return report, records(folder)


def in_memory(exports) -> dict:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    return {
        "net": ChampionNet(),
        "session": onnxruntime.InferenceSession(exports.paths["onnx"], options),
        "scripted": torch.jit.load(exports.paths["torchscript"]),
    }


def check_plays_as_the_champion(name, side, champion_games, folder) -> None:
    champion, games = champion_games
    report = evaluate(side, "heuristic", pairs=6, seed=4, save_games=folder)
    assert records(folder) == games, name
    assert report.pair_scores == champion.pair_scores, name
    replaced = report.illegal["A"]["replaced"]
    # The plain module does not read the mask: its illegal preferences were replaced.
    assert (replaced > 0) if name == "net" else (replaced == 0), (name, replaced)


def test_modules_in_memory_play_as_the_champion(exports, champion_games, tmp_path):
    modules = in_memory(exports)
    # An onnxruntime session and a TorchScript module are taken as they are.
    check_plays_as_the_champion("session", modules["session"], champion_games, tmp_path / "s")
    check_plays_as_the_champion("scripted", modules["scripted"], champion_games, tmp_path / "t")
    assert evaluate(modules["session"], "random", pairs=1).agents[0] == "onnx"
    assert evaluate(modules["scripted"], "random", pairs=1).agents[0] == (
        "torch:RecursiveScriptModule"
    )
    # A plain module of the user's, through the adapter (and from Python: the test below).
    agent = exchange.module_agent(modules["net"])
    assert isinstance(agent, ModelAgent) and not agent.model.mask_aware
    assert agent.name == "torch:ChampionNet"
    check_plays_as_the_champion("net", agent, champion_games, tmp_path / "net")


@pytest.mark.parametrize("wrap", [False, True], ids=["evaluate", "as_agent"])
def test_the_arena_takes_a_plain_torch_module_of_the_user(exports, champion_games, tmp_path, wrap):
    module = in_memory(exports)["net"]
    side = as_agent(module) if wrap else module
    check_plays_as_the_champion("net", side, champion_games, tmp_path)


def test_in_memory_modules_of_the_wrong_signature_are_refused():
    with pytest.raises(ValueError, match=r"torch:FiveScores: wrong signature.*\(3, 5\)"):
        exchange.module_agent(FiveScores())
    with pytest.raises(ValueError, match=r"torch:OneInput: wrong signature"):
        exchange.module_agent(OneInput())


def test_export_of_a_missing_policy_or_an_unknown_format_exits_2(tmp_path, capsys):
    missing = tmp_path / "no_such_policy"
    out = tmp_path / "x.onnx"
    code = main(["export", str(missing), "--format", "onnx", "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ")
    assert str(missing) in err and not out.exists()
    with pytest.raises(SystemExit) as exit_:
        main(["export", "champion", "--format", "bogus", "--out", str(out)])
    _, err = capsys.readouterr()
    assert exit_.value.code == 2 and "invalid choice: 'bogus'" in err
    assert not out.exists() and list(tmp_path.iterdir()) == []
