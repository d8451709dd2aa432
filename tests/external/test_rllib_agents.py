"""RLlib models as agents: a run of this project's RLlib training, a user's own script with
the documented glue, and the one-line errors of broken or foreign checkpoints."""

from __future__ import annotations

import pathlib
import pickle
import shutil
import subprocess
import sys
import types

import numpy as np
import pytest

pytest.importorskip(
    "ray.rllib",
    reason="Ray RLlib is not installed (pip install 'jekyll-hyde-env[rllib]'; .ci/run installs it)",
)

import gymnasium as gym  # noqa: E402 - after the skip
import ray  # noqa: E402
import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec  # noqa: E402
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec  # noqa: E402
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (  # noqa: E402
    ActionMaskingTorchRLModule,
)

from jekyll_hyde_agents import sources  # noqa: E402
from jekyll_hyde_agents.external.rllib import (  # noqa: E402
    NEEDS_RAY,
    is_rllib_checkpoint,
    load_rllib,
    rllib_agent,
    role_modules,
)
from jekyll_hyde_agents.model_agent import ModelAgent, ModelError, RoleModel  # noqa: E402
from jekyll_hyde_app import cli  # noqa: E402
from jekyll_hyde_arena import evaluate  # noqa: E402
from jekyll_hyde_env.engine.cards import NUM_ACTIONS  # noqa: E402
from jekyll_hyde_env.observation import OBS_SIZE, OFFSETS  # noqa: E402
from tests.external.hand import hand_pair_scores  # noqa: E402

pytestmark = pytest.mark.filterwarnings(  # RLlib registers its env wrapper per algorithm
    "ignore:.*Overriding environment rllib-multi-agent-env:UserWarning"
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
SMOKE = str(ROOT / "configs" / "rllib" / "smoke.yaml")
TINY = [  # one iteration of 64 decisions sampled in the driver, a 16-unit network
    "rllib.num_env_runners=0",
    "ppo.n_steps=64",
    "ppo.batch_size=64",
    "ppo.net_arch=[16]",
]
MODULES = pathlib.Path("learner_group", "learner", "rl_module")
PAIRS, SEED = 6, 3


def hand_module(folder: pathlib.Path) -> RLModule:
    """One module loaded with RLlib's own call, as a user would."""
    return RLModule.from_checkpoint(str(folder.resolve()))


def hand_logits(module: RLModule, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The module's inference logits on the documented observation dict."""
    batch = {
        Columns.OBS: {
            "observations": torch.from_numpy(np.array(observations, np.float32)),
            "action_mask": torch.from_numpy(np.array(masks, np.float32)),
        }
    }
    with torch.no_grad():
        return module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].numpy()


def probe(rows: int = 16, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random observations, masks with at least one legal action, alternating seats."""
    rng = np.random.default_rng(seed)
    observations = rng.integers(0, 2, (rows, OBS_SIZE)).astype(np.float32)
    masks = rng.random((rows, NUM_ACTIONS)) < 0.5
    masks[np.arange(rows), rng.integers(0, NUM_ACTIONS, rows)] = True
    return observations, masks, np.arange(rows) % 2


def scores_of(agent, batch) -> np.ndarray:
    observations, masks, seats = batch
    return np.asarray(agent.model.scores(observations, masks, seats))


def same(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal logits, up to the float rounding of another batch size."""
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def by_seat(modules: dict[int, RLModule], batch) -> np.ndarray:
    """The logits each row gets from its seat's module, computed by hand."""
    observations, masks, seats = batch
    out = np.zeros((len(seats), NUM_ACTIONS), np.float32)
    for seat, module in modules.items():
        rows = seats == seat
        out[rows] = hand_logits(module, observations[rows], masks[rows])
    return out


@pytest.fixture(scope="module")
def ray_session():
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def project_run(tmp_path_factory, ray_session):
    """A run of this project's RLlib training: two iterations with a frozen snapshot of
    each learner between them, checkpointed as the run writes it."""
    from jekyll_hyde_train.common.config import load_config
    from jekyll_hyde_train.ppo import rllib as rllib_backend

    config = load_config(SMOKE, TINY, schema=rllib_backend.RLlibTrainConfig)
    run = tmp_path_factory.mktemp("rllib") / "run"
    run.mkdir()
    algorithm = rllib_backend.build_algorithm(config)
    try:
        algorithm.train()
        snapshots: dict[str, list[str]] = {}
        rllib_backend.add_snapshots(algorithm, config, snapshots, 1)  # jekyll_v1, hyde_v1
        result = algorithm.train()  # the learners move on from their snapshots
        steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
        progress = {"iteration": 2, "steps": steps, "wall_time": 1.0, "snapshots": snapshots}
        rllib_backend._save_checkpoint(algorithm, run, progress)
        yield types.SimpleNamespace(
            run=run, checkpoint=run / "rllib_checkpoint" / "algorithm", algorithm=algorithm
        )
    finally:
        algorithm.stop()


@pytest.fixture(scope="module")
def user_run(tmp_path_factory, ray_session):
    """A user's own script: RLlib's PettingZoo wrapper over the documented glue
    (docs/envs/clients.md), a masking module per role, one tiny iteration, saved."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env

    from jekyll_hyde_env.integrations.clients import rllib_pettingzoo_env

    register_env("jekyll_hyde", rllib_pettingzoo_env)
    modules = ("jekyll_learner", "hyde_learner")
    config = (
        PPOConfig()
        .environment("jekyll_hyde")
        .env_runners(num_env_runners=0)
        .multi_agent(
            policies=set(modules),
            policy_mapping_fn=lambda agent_id, episode, **kwargs: f"{agent_id}_learner",
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    m: RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={"fcnet_hiddens": [16]},
                    )
                    for m in modules
                }
            )
        )
        .training(train_batch_size_per_learner=64, minibatch_size=64, num_epochs=1)
        .debugging(seed=1)
    )
    algorithm = config.build_algo()
    try:
        algorithm.train()
        path = tmp_path_factory.mktemp("user") / "ppo"
        algorithm.save_to_path(str(path))
        yield types.SimpleNamespace(path=path, algorithm=algorithm)
    finally:
        algorithm.stop()


def test_roles_map_to_module_ids():
    snapshots = ["jekyll", "hyde", "jekyll_v1", "hyde_v1"]
    assert role_modules(snapshots, "x", "") == {"jekyll": "jekyll", "hyde": "hyde"}
    learners = ["hyde_learner", "Jekyll_Learner"]
    assert role_modules(learners, "x", "") == {"jekyll": "Jekyll_Learner", "hyde": "hyde_learner"}
    for shared in (["shared", "shared_v1", "shared_v2"], ["default_policy"], ["only_one"]):
        assert set(role_modules(shared, "x", "").values()) == {shared[0]}
    for ambiguous in (["jekyll_a", "jekyll_b", "hyde"], ["first", "second"], []):
        with pytest.raises(ModelError) as error:
            role_modules(ambiguous, "ckpt", "")
        assert str(error.value).startswith("ckpt: ")
        assert all(repr(i) in str(error.value) for i in ambiguous)


def test_a_project_run_loads_by_path_prefix_detection_and_in_memory(project_run, tmp_path):
    checkpoint, run = project_run.checkpoint, project_run.run
    assert is_rllib_checkpoint(checkpoint) and is_rllib_checkpoint(run)
    assert is_rllib_checkpoint(checkpoint / MODULES / "hyde")
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("{}")
    assert not any(is_rllib_checkpoint(tmp_path / name) for name in ("empty", "file", "none"))
    assert sources.detect_kind(str(checkpoint)) == sources.detect_kind(str(run)) == "rllib"

    # The learners play, by role; the frozen snapshots beside them differ and play nothing.
    folder = checkpoint / MODULES
    learners = {0: hand_module(folder / "jekyll"), 1: hand_module(folder / "hyde")}
    snapshots = {0: hand_module(folder / "jekyll_v1"), 1: hand_module(folder / "hyde_v1")}
    batch = probe()
    expected = by_seat(learners, batch)
    assert not np.allclose(expected, by_seat(snapshots, batch))
    assert not np.allclose(expected, by_seat({0: learners[1], 1: learners[0]}, batch))

    agent = load_rllib(str(checkpoint))
    assert isinstance(agent, ModelAgent) and isinstance(agent.model, RoleModel)
    assert agent.model.mask_aware and agent.model.kind == "logits"
    assert agent.name == str(checkpoint)
    same(scores_of(agent, batch), expected)
    for spec in ("rllib:" + str(checkpoint), str(checkpoint), "rllib:" + str(run), str(run)):
        same(scores_of(sources.load_agent(spec), batch), expected)
    # The algorithm in memory: its learner's modules, as saved.
    for in_memory in (rllib_agent(project_run.algorithm), sources.as_agent(project_run.algorithm)):
        same(scores_of(in_memory, batch), expected)
        # As the arena's worker processes get it.
        same(scores_of(pickle.loads(pickle.dumps(in_memory)), batch), expected)


def test_a_user_script_checkpoint_maps_its_modules_by_role(user_run, tmp_path):
    path, algorithm = user_run.path, user_run.algorithm
    folder = path / MODULES
    modules = {0: hand_module(folder / "jekyll_learner"), 1: hand_module(folder / "hyde_learner")}
    batch = probe(seed=1)
    expected = by_seat(modules, batch)
    assert not np.allclose(expected, by_seat({0: modules[1], 1: modules[0]}, batch))
    assert sources.detect_kind(str(path)) == "rllib"
    agent = sources.load_agent(str(path))
    assert isinstance(agent, ModelAgent)
    assert "[jekyll_learner]" in agent.model.name and "[hyde_learner]" in agent.model.name
    same(scores_of(agent, batch), expected)
    same(scores_of(rllib_agent(algorithm), batch), expected)

    # One module's folder: that module plays both roles.
    hyde_only = load_rllib(str(folder / "hyde_learner"))
    assert not isinstance(hyde_only.model, RoleModel)
    same(scores_of(hyde_only, batch), by_seat({0: modules[1], 1: modules[1]}, batch))

    # A MultiRLModule and an RLModule in memory and saved on their own.
    multi = algorithm.env_runner.module
    multi.save_to_path(str(tmp_path / "multi"))
    for agent in (load_rllib(str(tmp_path / "multi")), rllib_agent(multi), sources.as_agent(multi)):
        same(scores_of(agent, batch), expected)
    single = rllib_agent(algorithm.get_module("jekyll_learner"))
    same(scores_of(single, batch), by_seat({0: modules[0], 1: modules[0]}, batch))


def test_the_arena_plays_a_checkpoint_as_its_module_plays_by_hand(project_run, capsys):
    """The loaded agent's arena results equal its modules driven by hand through the Gym
    env on the same deals, and every recorded decision is the agent's."""
    folder = project_run.checkpoint / MODULES
    modules = [hand_module(folder / "jekyll"), hand_module(folder / "hyde")]
    role_slice = OFFSETS["my_role"]
    decisions = []

    def choose(observation, mask):
        observation = observation.astype(np.float32)
        seat = int(np.argmax(observation[role_slice]))
        logits = hand_logits(modules[seat], observation[None], mask[None])[0]
        action = int(np.argmax(np.where(mask.astype(bool), logits, -np.inf)))
        decisions.append((observation, mask.astype(bool), seat, action))
        return action

    hand = hand_pair_scores(choose, PAIRS, SEED)
    path = str(project_run.checkpoint)
    agent = load_rllib(path)
    for side in (path, agent, project_run.algorithm):
        assert evaluate(side, "heuristic", pairs=PAIRS, seed=SEED, workers=1).pair_scores == hand
    observations, masks, seats, actions = map(np.array, zip(*decisions, strict=True))
    assert set(seats) == {0, 1}
    assert agent.act_batch(observations, masks, seats).tolist() == actions.tolist()
    # The seat decides the module: the other role's module chooses otherwise somewhere.
    assert agent.act_batch(observations, masks, 1 - seats).tolist() != actions.tolist()

    code = cli.main(
        ["eval", path, "heuristic", "--pairs", "2", "--seed", str(SEED), "--workers", "1",
         "--no-progress"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert f"{'A score':<24}{np.mean(hand[:2]):.3f}" in out


def test_sampling_plays_legal_actions_reproducibly(project_run):
    observations, masks, seats = probe(rows=64, seed=2)
    sampled = [load_rllib(str(project_run.checkpoint), deterministic=False) for _ in range(2)]
    for agent in sampled:
        agent.reset(seed=5)
    first, second = (agent.act_batch(observations, masks, seats) for agent in sampled)
    assert masks[np.arange(len(first)), first].all()
    assert first.tolist() == second.tolist()
    assert sampled[0].replacements == 0


def _eval_error(path: pathlib.Path, capsys) -> str:
    flags = ["--pairs", "2", "--workers", "1", "--no-progress"]
    code = cli.main(["eval", str(path), "heuristic", *flags])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith("error:"), lines
    assert str(path) in lines[0]
    return lines[0]


def _garble(folder: pathlib.Path) -> str:
    (folder / "jekyll" / "module_state.pkl").write_bytes(b"not a pickle, garbled")
    return "RLlib could not load this checkpoint"


def _cut(folder: pathlib.Path) -> str:
    state = folder / "hyde" / "module_state.pkl"
    state.write_bytes(state.read_bytes()[:100])
    return "RLlib could not load this checkpoint"


def _no_state(folder: pathlib.Path) -> str:
    (folder / "module_state.pkl").unlink()
    return "module_state.pkl is missing"


def _no_module(folder: pathlib.Path) -> str:
    shutil.rmtree(folder / "hyde")  # RLlib alone would rebuild it untrained
    return "module 'hyde' has no saved state"


def _foreign_class(folder: pathlib.Path) -> str:
    (folder / "class_and_ctor_args.pkl").write_bytes(b"cno_such_module_here\nModule\n.")
    return "No module named 'no_such_module_here'"


@pytest.mark.parametrize("damage", [_garble, _cut, _no_state, _no_module, _foreign_class])
def test_a_broken_checkpoint_is_one_line_naming_it(project_run, tmp_path, capsys, damage):
    broken = tmp_path / "broken"
    shutil.copytree(project_run.checkpoint, broken)
    reason = damage(broken / MODULES)
    assert is_rllib_checkpoint(broken)  # it still looks like one
    line = _eval_error(broken, capsys)
    assert reason in line
    with pytest.raises(ModelError, match=reason):
        load_rllib(str(broken))


def _dict_space() -> gym.spaces.Dict:
    return gym.spaces.Dict(
        {
            "observations": gym.spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
        }
    )


def test_a_module_of_another_environment_names_both_shapes(tmp_path, capsys, ray_session):
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import (
        DefaultPPOTorchRLModule,
    )

    module = RLModuleSpec(
        module_class=DefaultPPOTorchRLModule,
        observation_space=gym.spaces.Box(-1.0, 1.0, (4,), np.float32),
        action_space=gym.spaces.Discrete(2),
        model_config={"fcnet_hiddens": [8]},
    ).build()
    module.save_to_path(str(tmp_path / "cartpole"))
    line = _eval_error(tmp_path / "cartpole", capsys)
    assert "(4,)" in line and "Discrete(2)" in line and f"({OBS_SIZE},)" in line
    with pytest.raises(ModelError, match=r"\(4,\)"):
        rllib_agent(module)


def test_modules_with_no_role_mapping_are_listed(tmp_path, capsys, ray_session):
    ids = ["jekyll_a", "jekyll_b", "hyde"]
    multi = MultiRLModuleSpec(
        rl_module_specs={
            i: RLModuleSpec(
                module_class=ActionMaskingTorchRLModule,
                observation_space=_dict_space(),
                action_space=gym.spaces.Discrete(NUM_ACTIONS),
                model_config={"fcnet_hiddens": [8]},
            )
            for i in ids
        }
    ).build()
    multi.save_to_path(str(tmp_path / "three"))
    line = _eval_error(tmp_path / "three", capsys)
    assert all(repr(i) in line for i in ids)
    with pytest.raises(ModelError, match="jekyll_b"):
        rllib_agent(multi)
    # Naming one module's folder settles it.
    agent = load_rllib(str(tmp_path / "three" / "jekyll_b"))
    batch = probe(rows=4)
    same(scores_of(agent, batch), by_seat({0: multi["jekyll_b"], 1: multi["jekyll_b"]}, batch))


def test_the_module_imports_and_detects_without_ray_or_torch(project_run):
    code = (
        "import sys; sys.modules['ray'] = sys.modules['torch'] = None\n"
        "from jekyll_hyde_agents.external import rllib\n"
        "from jekyll_hyde_agents.model_agent import ModelError\n"
        f"assert rllib.is_rllib_checkpoint({str(project_run.run)!r})\n"
        "try:\n"
        f"    rllib.load_rllib({str(project_run.checkpoint)!r})\n"
        "except ModelError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert NEEDS_RAY in done.stdout


def test_a_q_network_plays_its_q_values_and_unmasked_choices_are_replaced(tmp_path, ray_session):
    from ray.rllib.algorithms.dqn.dqn_catalog import DQNCatalog
    from ray.rllib.algorithms.dqn.torch.default_dqn_torch_rl_module import (
        DefaultDQNTorchRLModule,
    )

    torch.manual_seed(0)
    module = RLModuleSpec(
        module_class=DefaultDQNTorchRLModule,
        catalog_class=DQNCatalog,
        observation_space=gym.spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
        action_space=gym.spaces.Discrete(NUM_ACTIONS),
        model_config={  # what DQNConfig passes its module
            "fcnet_hiddens": [8],
            "num_atoms": 1,
            "dueling": False,
            "double_q": True,
            "epsilon": [(0, 1.0)],
        },
    ).build()
    module.save_to_path(str(tmp_path / "dqn"))
    agent = load_rllib(str(tmp_path / "dqn"))
    assert agent.model.kind == "values" and not agent.model.mask_aware
    observations, masks, seats = batch = probe(rows=32, seed=3)
    with torch.no_grad():
        q_values = module.compute_q_values({Columns.OBS: torch.from_numpy(observations)})
    same(scores_of(agent, batch), q_values["qf_preds"].numpy())
    greedy = q_values["qf_preds"].numpy().argmax(axis=1)
    actions = agent.act_batch(observations, masks, seats)
    assert masks[np.arange(len(actions)), actions].all()
    assert agent.replacements == int((~masks[np.arange(len(greedy)), greedy]).sum()) > 0
    with pytest.raises(ModelError, match="play it deterministically"):
        load_rllib(str(tmp_path / "dqn"), deterministic=False)
