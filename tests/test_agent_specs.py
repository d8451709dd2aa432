"""Typed agent specs (``AZSpec``, ``BRSpec``): read once from a name, they build the agent
the name builds, carry paths a name cannot (a comma), round-trip through JSON, and are
rebuilt in the arena's worker processes."""

from __future__ import annotations

import json
import pickle
import shutil

import pytest

from jekyll_hyde_agents import (
    AZAgent,
    AZConfig,
    AZSpec,
    BestResponseAgent,
    BRSpec,
    champion_path,
    make_agent,
    parse_az,
    parse_az_spec,
    parse_br_spec,
    rollout,
)
from jekyll_hyde_agents.sources import as_agent, source_of
from jekyll_hyde_arena import evaluate, play_pair

pytestmark = pytest.mark.skipif(
    not rollout.core_available(), reason="the C core jekyll_hyde_agents._rollout is not compiled"
)

OPTIONS = "c=2,value_weight=0.5,playouts=heuristic"
CONFIG = AZConfig(num_simulations=20, c_puct=2.0, value_weight=0.5, playouts="heuristic")


def moves(agent, pairs: int = 2, seed: int = 4) -> list[list[dict]]:
    """The moves of every game of ``pairs`` duplicate pairs of ``agent`` against the heuristic."""
    results = [
        play_pair(agent, make_agent("heuristic"), seed, index, keep_records=True)
        for index in range(pairs)
    ]
    return [game.record["actions"] for r in results for game in (r.a_as_jekyll, r.a_as_hyde)]


# --- AZSpec -----------------------------------------------------------------------


def test_parse_az_spec_reads_what_the_name_says_and_leaves_the_champion_for_the_build():
    spec = parse_az_spec(f"20,{OPTIONS}")
    assert spec == AZSpec(None, CONFIG)
    assert parse_az_spec("0.5s").config == AZConfig(num_simulations=100_000, time_budget=0.5)
    assert parse_az_spec("20,policy=runs/x").policy == "runs/x"
    assert parse_az_spec("20", default_policy=lambda: "runs/y").policy == "runs/y"
    agent = spec.build()
    assert isinstance(agent, AZAgent) and agent.policy.path == str(champion_path())
    assert agent.config == CONFIG


def test_parse_az_keeps_refusing_a_name_without_a_policy_when_given_no_default():
    with pytest.raises(ValueError, match="name a saved policy"):
        parse_az("20")
    assert make_agent("az:20").policy.path == str(champion_path())


@pytest.mark.parametrize(
    "argument",
    ["0,policy=x", "100,gumbel=29", "0.1s,gumbel=8", "100,playouts=greedy", "100,depth=3"],
)
def test_parse_az_spec_refuses_what_make_agent_refuses_with_the_same_message(argument):
    with pytest.raises(ValueError) as by_name:
        make_agent(f"az:{argument}")
    with pytest.raises(ValueError) as by_spec:
        parse_az_spec(argument)
    assert str(by_spec.value) == str(by_name.value)


def test_an_agent_built_from_a_spec_plays_as_the_one_built_from_the_name():
    spec = parse_az_spec(f"20,{OPTIONS}")
    by_name = moves(make_agent(f"az:20,{OPTIONS}"))
    assert moves(spec.build()) == by_name
    assert moves(AZSpec(None, CONFIG).build(seed=5)) == by_name  # the arena reseeds each game
    assert moves(spec.with_policy(champion_path()).build()) == by_name
    other = AZSpec(None, AZConfig(num_simulations=20))  # the moves tell configs apart
    assert moves(other.build()) != by_name


def test_a_policy_path_with_a_comma_works_through_a_spec(tmp_path):
    folder = tmp_path / "a,b"
    shutil.copytree(champion_path(), folder)
    with pytest.raises(ValueError, match="options are policy=PATH"):
        make_agent(f"az:20,policy={folder}")  # a name cannot hold the comma
    spec = AZSpec(None, CONFIG).with_policy(folder)
    assert spec.policy == str(folder)
    agent = spec.build()
    assert agent.policy.path == str(folder)
    assert moves(agent, pairs=1) == moves(AZSpec(None, CONFIG).build(), pairs=1)
    assert AZSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec
    report = evaluate(spec, "random", pairs=1, seed=2, workers=1)
    assert report.agents[0] == f"az:20,policy={folder},c=2,value_weight=0.5,playouts=heuristic"


@pytest.mark.parametrize(
    "spec",
    [
        AZSpec(),
        AZSpec("runs/a,b", CONFIG),
        AZSpec(None, AZConfig(num_simulations=100_000, time_budget=0.05, fpu=0.25)),
        AZSpec("p", AZConfig(num_simulations=64, gumbel=8, value_weight=0.0)),
    ],
    ids=["champion", "comma path", "timed", "gumbel"],
)
def test_to_json_and_from_json_round_trip(spec):
    data = spec.to_json()
    assert data["kind"] == "az" and set(data) == {
        "kind", "policy", "num_simulations", "time_budget", "c_puct", "value_weight", "fpu",
        "playouts", "gumbel",
    }  # fmt: skip
    again = AZSpec.from_json(json.loads(json.dumps(data)))
    assert again == spec and again.to_json() == data
    assert pickle.loads(pickle.dumps(spec)) == spec and hash(again) == hash(spec)


def test_from_json_fills_left_out_keys_with_the_defaults():
    assert AZSpec.from_json({"kind": "az"}) == AZSpec()
    assert AZSpec.from_json({"num_simulations": 20, "c_puct": 2}) == AZSpec(
        None, AZConfig(num_simulations=20, c_puct=2.0)
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "az", "simulations": 20}, "unknown key 'simulations'; the keys are kind, policy"),
        ({"kind": "br"}, "'kind' must be 'az'"),
        ({"num_simulations": "20"}, "'num_simulations' must be a whole number"),
        ({"num_simulations": True}, "'num_simulations' must be a whole number"),
        ({"gumbel": 2.5}, "'gumbel' must be a whole number"),
        ({"c_puct": "high"}, "'c_puct' must be a number"),
        ({"time_budget": "1s"}, "'time_budget' must be a number or null"),
        ({"playouts": 1}, "'playouts' must be one of"),
        ({"policy": 3}, "'policy' must be a path or null"),
        ({"policy": ""}, "'policy' must be a path or null"),
        ({"value_weight": 2}, "value_weight must be in"),
        (["az", 20], "JSON object with keys kind, policy"),
    ],
)
def test_from_json_refuses_bad_input_naming_the_key(data, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        AZSpec.from_json(data)


def test_a_spec_names_its_budget_policy_and_the_options_that_differ_from_the_defaults():
    assert AZSpec().name == "az:200"
    assert (
        parse_az_spec(f"300,{OPTIONS},c=1.5").name == "az:300,value_weight=0.5,playouts=heuristic"
    )
    assert parse_az_spec("0.01s,policy=runs/x,gumbel=0").name == "az:0.01s,policy=runs/x"
    spec = AZSpec(None, AZConfig(num_simulations=64, gumbel=8, fpu=0.25))
    assert spec.name == "az:64,fpu=0.25,gumbel=8"
    assert spec.build().name == "az:64"  # the agent's own name is unchanged


def test_a_spec_refuses_a_policy_that_is_no_path_and_a_config_that_is_no_azconfig():
    with pytest.raises(ValueError, match="policy must be a path or None"):
        AZSpec(3)
    with pytest.raises(TypeError, match="config must be an AZConfig"):
        AZSpec(None, {"num_simulations": 20})


# --- BRSpec -----------------------------------------------------------------------


def test_parse_br_spec_reads_the_budget_playouts_and_a_target_with_commas():
    assert parse_br_spec("300,playouts=heuristic,target=runs/a,b") == BRSpec(
        "runs/a,b", simulations=300, playouts="heuristic"
    )
    assert parse_br_spec("0.5s,target=random") == BRSpec(
        "random", simulations=100_000, time_budget=0.5
    )
    assert parse_br_spec(",target=lowest") == BRSpec("lowest", simulations=1000)


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("100", "name the target last"),
        ("0,target=random", "positive integer"),
        ("100,playouts=wild,target=random", "playouts='wild'"),
    ],
)
def test_parse_br_spec_refuses_what_make_agent_refuses_with_the_same_message(argument, message):
    with pytest.raises(ValueError, match=message) as by_spec:
        parse_br_spec(argument)
    with pytest.raises(ValueError) as by_name:
        make_agent(f"br:{argument}")
    assert str(by_spec.value) == str(by_name.value)


def test_a_br_spec_builds_the_agent_of_its_name_and_checks_the_target_then():
    name = "br:40,playouts=heuristic,target=heuristic"
    spec = parse_br_spec(name.partition(":")[2])
    agent = spec.build()
    assert isinstance(agent, BestResponseAgent) and agent.name == spec.name == name
    assert moves(agent) == moves(make_agent(name))
    late = BRSpec("nobody")  # the target is built, and refused, with the agent
    with pytest.raises(ValueError, match="unknown agent name"):
        late.build()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"target": ""}, "the target must be an agent name or path"),
        ({"target": "random", "simulations": 0}, "simulations must be >= 1"),
        ({"target": "random", "simulations": 2.5}, "simulations must be a whole number"),
        ({"target": "random", "time_budget": 0.0}, "time_budget must be positive"),
        ({"target": "random", "playouts": "wild"}, "playouts='wild'"),
    ],
)
def test_a_br_spec_refuses_bad_fields(fields, message):
    with pytest.raises(ValueError, match=message):
        BRSpec(**fields)


# --- the arena and the sources ----------------------------------------------------


def test_source_of_a_spec_builds_it_and_labels_it_by_its_name():
    spec = AZSpec(None, CONFIG)
    source = source_of(spec)
    assert source.label == spec.name and source.rebuildable
    assert isinstance(pickle.loads(pickle.dumps(source.build))(), AZAgent)
    assert source_of(spec, label="mine").label == "mine"
    assert isinstance(as_agent(spec), AZAgent)
    assert isinstance(make_agent(BRSpec("random", simulations=10), seed=1), BestResponseAgent)


@pytest.mark.parametrize(
    "spec",
    [AZSpec(None, AZConfig(num_simulations=20)), BRSpec("heuristic", simulations=30)],
    ids=["az", "br"],
)
def test_a_spec_is_rebuilt_in_the_workers_and_plays_as_in_one_process(spec):
    alone = evaluate(spec, "heuristic", pairs=2, seed=6, workers=1)
    shared = evaluate(spec, "heuristic", pairs=2, seed=6, workers=2)
    assert shared.agents == alone.agents == (spec.name, "heuristic")
    assert shared.pair_scores == alone.pair_scores
    assert shared.by_role == alone.by_role
