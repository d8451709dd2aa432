"""RLCard's Neural Fictitious Self-Play (``NFSPAgent``) as a trainer of the exploitability curves.

Two ``rlcard.agents.NFSPAgent`` (torch), one per player id (0 Jekyll, 1 Hyde), play
each other on the RLCard environment ``"jekyll-hyde"`` as RLCard's NFSP examples
train them: before each game every agent samples its episode policy (best response
with probability 0.1, else its average policy), ``env.run(is_training=True)`` plays
the game, ``rlcard.utils.reorganize`` turns the trajectories into transitions and
each agent is fed its own. The networks are those of RLCard's ``examples/run_rl.py``
(two layers of 64 for the average policy and the Q-network); everything else is
``NFSPAgent``'s defaults: anticipatory 0.1, reservoir and replay memories of 20,000,
supervised Adam at 0.005 on batches of 256 and Q-learning Adam at 0.1 on batches
of 32 (discount 0.99), both trained at every step, target network every 1,000 steps,
exploration 0.06 decaying to 0 over a million steps. One torch thread (the run is measured in
CPU-seconds).

A checkpoint is ``model.pt`` (``torch.save`` of plain tensors and numbers, read back
with ``weights_only=True``): each seat's average-policy network's ``state_dict``
(its batch norm's statistics included) and the layer sizes. It plays as
``NFSPAgent.eval_step`` with ``evaluate_with="average_policy"``: the network's
probabilities (``exp`` of its log-softmax) kept on the legal actions and divided by
their sum (uniform over them when that sum is 0: ``rlcard.utils.remove_illegal``).
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import random
import sys
from importlib.metadata import version
from typing import Any

import numpy as np
import rlcard
import torch
from protocol import Requests
from rlcard.agents import NFSPAgent
from rlcard.agents.nfsp_agent import AveragePolicyNetwork
from rlcard.utils import reorganize

import jekyll_hyde_env.integrations.rlcard as rlcard_env
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.engine.variant import Variant
from jekyll_hyde_env.observation import OBS_SIZE
from jekyll_hyde_train.exact.table import InfosetTable, batched_probabilities

NAME = "rlcard-nfsp"
HIDDEN_LAYERS = [64, 64]
LABEL = (
    f"RLCard {version('rlcard')} NFSPAgent (NFSP, torch): an agent per seat in self-play, "
    "average-policy and Q MLPs 64 x 64 (examples/run_rl.py), RLCard's defaults otherwise "
    "(anticipatory 0.1, memories 20k, SL Adam 0.005 x 256, RL Adam 0.1 x 32, both every "
    "step); plays its average policy"
)
CHECKPOINT = "model.pt"


def _agents(num_players: int) -> list[NFSPAgent]:
    return [
        NFSPAgent(
            num_actions=NUM_ACTIONS,
            state_shape=[OBS_SIZE],
            hidden_layers_sizes=list(HIDDEN_LAYERS),
            q_mlp_layers=list(HIDDEN_LAYERS),
            device=torch.device("cpu"),
        )
        for _ in range(num_players)
    ]


def _copy(weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {key: value.detach().clone() for key, value in weights.items()}


def _writer(agents: list[NFSPAgent], progress: dict[str, int]) -> Any:
    def write(folder: pathlib.Path) -> None:
        players = [_copy(agent.policy_network.state_dict()) for agent in agents]
        torch.save({"hidden_layers": list(HIDDEN_LAYERS), "players": players}, folder / CHECKPOINT)
        (folder / "progress.json").write_text(json.dumps(progress))
        print(
            f"{NAME}: a checkpoint after {progress['episodes']:,} games, "
            f"{progress['steps']:,} decisions",
            file=sys.stderr,
        )

    return write


def train(out: pathlib.Path, variant: Variant, seed: int, requests: Requests) -> None:
    """Train two NFSP agents by self-play on ``variant`` until interrupted.

    RLCard's agents print a line per training step; their output goes to
    ``os.devnull`` (the checkpoints' lines go to stderr).

    Args:
        out: the trainer's folder.
        variant: the version of the game.
        seed: seeds the deals (the environment) and numpy's, random's and torch's
            generators, which RLCard's agents draw from (as ``rlcard.utils.set_seed``).
        requests: the checkpoint requests, checked between games.
    """
    np.random.seed(seed)
    random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    env = rlcard.make(rlcard_env.ENV_ID, config={"seed": seed, "variant": variant})
    agents = _agents(env.num_players)
    env.set_agents(agents)
    progress = {"episodes": 0, "steps": 0}
    write = _writer(agents, progress)
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
        while True:
            name = requests.pending()
            if name is not None:
                requests.save(name, write)
            for agent in agents:
                agent.sample_episode_policy()
            trajectories, payoffs = env.run(is_training=True)
            transitions = reorganize(trajectories, payoffs)
            for agent, own in zip(agents, transitions, strict=True):
                for transition in own:
                    agent.feed(transition)
            progress["episodes"] += 1
            progress["steps"] += sum(len(own) for own in transitions)


def _load(checkpoint: pathlib.Path) -> list[AveragePolicyNetwork]:
    saved = torch.load(checkpoint / CHECKPOINT, weights_only=True)
    layers = [int(size) for size in saved["hidden_layers"]] + [NUM_ACTIONS]
    nets = []
    for weights in saved["players"]:
        net = AveragePolicyNetwork(NUM_ACTIONS, [OBS_SIZE], layers)
        net.load_state_dict(weights)
        nets.append(net.eval())
    return nets


def load_agents(checkpoint: pathlib.Path) -> list[NFSPAgent]:
    """The checkpoint's average policies as RLCard's NFSP agents, one per player id.

    Args:
        checkpoint: a checkpoint's folder.

    Returns:
        ``[Jekyll's, Hyde's]`` ``NFSPAgent`` (``evaluate_with="average_policy"``);
        only their average-policy networks are trained.
    """
    nets = _load(checkpoint)
    agents = _agents(len(nets))
    for agent, net in zip(agents, nets, strict=True):
        agent.policy_network = net
    return agents


def _legal_probabilities(log_probabilities: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """``remove_illegal(np.exp(log_probabilities), legal)`` of each row, in float64."""
    kept = np.where(legal, np.exp(log_probabilities).astype(np.float64), 0.0)
    total = kept.sum(axis=1, keepdims=True)
    uniform = legal / legal.sum(axis=1, keepdims=True)
    return np.where(total > 0, kept / np.where(total > 0, total, 1.0), uniform)


def probabilities(checkpoint: pathlib.Path, table: InfosetTable) -> np.ndarray:
    """The checkpoint's average policies at every information set of ``table``.

    Row ``k`` is what ``NFSPAgent.eval_step`` of the seat that acts at set ``k``
    gives: its average-policy network's probabilities on the legal actions,
    renormalised (see the module's docstring).

    Args:
        checkpoint: a checkpoint's folder (``model.pt``).
        table: the variant's information sets.

    Returns:
        float64 (``table.size``, ``NUM_ACTIONS``), zero on illegal actions, rows
        summing to 1.
    """
    nets = _load(checkpoint)

    def play(observations: np.ndarray, masks: np.ndarray, players: np.ndarray) -> np.ndarray:
        legal = masks.astype(bool)
        block = np.zeros(legal.shape)
        for seat, net in enumerate(nets):
            rows = np.flatnonzero(players == seat)
            if len(rows):
                log_probabilities = net(torch.from_numpy(observations[rows]).float()).numpy()
                block[rows] = _legal_probabilities(log_probabilities, legal[rows])
        return block

    with torch.inference_mode():
        return batched_probabilities(table, play)
