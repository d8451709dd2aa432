"""The curves' ``openspiel-nfsp`` trainer: OpenSpiel's NFSP (PyTorch) in self-play.

Two ``open_spiel.python.pytorch.nfsp.NFSP`` agents, one per seat, learn on the
OpenSpiel game ``python_jekyll_hyde`` with the variant as its parameter, stepped by
OpenSpiel's ``rl_environment.Environment`` exactly as OpenSpiel's examples
(``nfsp_leduc_pytorch.py``) step them: one episode at a time, each agent shown its
information-state tensor (``observation.encode`` of its view), the chance moves
drawn by the environment's ``ChanceEventSampler``. The settings (``SETTINGS``) are
the Leduc example's, scaled to this game: two hidden layers of 256 for an input of
327 and millions of information sets (Leduc's 128 are for 30 inputs and 936
sets), and exploration decayed over 2M steps of each agent, a run's length here
(Leduc's 20M is the length of its run).

Everything runs in the one process, torch on one thread (``torch.set_num_threads(1)``):
the networks see one state at a time and batches of 128, which more threads do not
speed up, and the CPU meter counts every thread.

A checkpoint is what NFSP plays as its average policy: each seat's average-policy
network, its weights in ``avg_network.npz`` (``"{seat}/{state_dict name}"``) and its
shape in ``nfsp.json``. ``probabilities`` runs both networks over the table's
observations, which are the information-state tensors, a batch at a time, and plays
the softmax of the legal logits, as ``NFSP`` does in its average-policy mode.
"""

from __future__ import annotations

import json
import pathlib
import random
from functools import partial
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from open_spiel.python import rl_environment
from open_spiel.python.pytorch import nfsp
from protocol import check_trained_on
from torch import nn

from jekyll_hyde_agents.openspiel_bots import load_game
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.engine.variant import Variant
from jekyll_hyde_train.exact.table import InfosetTable, batched_probabilities, softmax_rows

if TYPE_CHECKING:
    from protocol import Requests

NAME = "openspiel-nfsp"

HIDDEN_LAYERS = [256, 256]
"""The hidden layers of both networks of each agent (its Q-network and average policy)."""

SETTINGS: dict[str, Any] = {
    "reservoir_buffer_capacity": int(2e6),
    "anticipatory_param": 0.1,
    "batch_size": 128,
    "rl_learning_rate": 0.01,
    "sl_learning_rate": 0.01,
    "min_buffer_size_to_learn": 1000,
    "learn_every": 64,
    "optimizer_str": "sgd",
    "replay_buffer_capacity": int(2e5),
    "update_target_network_every": 19200,
    "discount_factor": 1.0,
    "epsilon_start": 0.06,
    "epsilon_end": 0.001,
    "epsilon_decay_duration": int(2e6),
    "loss_str": "mse",
}
"""``NFSP``'s keyword arguments: ``nfsp_leduc_pytorch.py``'s flags but the exploration's decay."""

TORCH_THREADS = 1
"""Torch's threads while training."""

NETWORK_FILE = "nfsp.json"
WEIGHTS_FILE = "avg_network.npz"


LABEL = (
    f"OpenSpiel {version('open_spiel')} NFSP (PyTorch, open_spiel.python.pytorch.nfsp) in "
    "self-play on python_jekyll_hyde through rl_environment: nfsp_leduc_pytorch.py's settings "
    "(anticipatory 0.1, SGD lr 0.01/0.01, batch 128, learn every 64, reservoir 2M, replay 200k, "
    "target every 19.2k, epsilon 0.06 to 0.001) with hidden [256, 256] and epsilon decayed "
    "over 2M steps; 1 torch thread; scored on the average-policy networks"
)


def train(out: pathlib.Path, variant: Variant, seed: int, requests: Requests) -> None:
    """Train two NFSP agents from scratch until stopped, saving requested checkpoints.

    Python's, NumPy's and torch's generators and the environment's chance sampler are
    seeded from ``seed``; each agent's ``seed`` is ``seed * 10 + seat`` (OpenSpiel
    seeds the average-policy network from it and reseeds NumPy and torch with it).

    Args:
        out: the trainer's folder (only checkpoints are written there).
        variant: the version of the game.
        seed: the run's seed.
        requests: the checkpoint requests (``protocol.Requests``).
    """
    torch.set_num_threads(TORCH_THREADS)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    game = load_game(variant)
    env = rl_environment.Environment(
        game, chance_event_sampler=rl_environment.ChanceEventSampler(seed)
    )
    size = env.observation_spec()["info_state"][0]
    actions = env.action_spec()["num_actions"]
    agents = [
        nfsp.NFSP(seat, size, actions, HIDDEN_LAYERS, seed=seed * 10 + seat, **SETTINGS)
        for seat in range(game.num_players())
    ]
    episodes = 0
    while True:
        name = requests.pending()
        if name is not None:
            progress = {"episodes": episodes, "steps": [agent.step_counter for agent in agents]}
            requests.save(
                name, partial(write_checkpoint, agents=agents, variant=variant, progress=progress)
            )
        time_step = env.reset()
        while not time_step.last():
            seat = time_step.observations["current_player"]
            output = agents[seat].step(time_step)
            time_step = env.step([output.action])
        for agent in agents:  # the episode's end, shown to both agents
            agent.step(time_step)
        episodes += 1


def write_checkpoint(
    folder: pathlib.Path, agents: list[Any], variant: Variant, progress: dict[str, Any]
) -> None:
    """Save each agent's average-policy network: its weights and its layers.

    Args:
        folder: the checkpoint's folder.
        agents: the ``NFSP`` agents, seat 0 (Jekyll) first.
        variant: the version of the game.
        progress: training counts to record (episodes, each agent's steps).
    """
    weights: dict[str, np.ndarray] = {}
    layers: list[list[str]] = []
    for seat, agent in enumerate(agents):
        network = agent._avg_network  # OpenSpiel keeps it private; it is the average policy
        names = [name for name, module in network.named_modules() if isinstance(module, nn.Linear)]
        layers.append(names)
        for key, tensor in network.state_dict().items():
            weights[f"{seat}/{key}"] = tensor.detach().cpu().numpy()
    np.savez(folder / WEIGHTS_FILE, **weights)
    spec = {
        "variant": variant.spec(),
        "input_size": int(agents[0]._avg_network.model[0][0].in_features),
        "hidden_layers": HIDDEN_LAYERS,
        "num_actions": NUM_ACTIONS,
        "linear_layers": layers,
        "settings": SETTINGS,
        "torch_threads": TORCH_THREADS,
        **progress,
    }
    (folder / NETWORK_FILE).write_text(json.dumps(spec, indent=1))


def load_networks(checkpoint: pathlib.Path) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    """Each seat's average-policy network from a checkpoint, as its linear layers.

    Args:
        checkpoint: the checkpoint's folder.

    Returns:
        Per seat (Jekyll's first), the (weight (out, in), bias (out,)) float32 pairs of
        its linear layers in order; a ReLU follows each but the last.
    """
    spec = json.loads((checkpoint / NETWORK_FILE).read_text())
    with np.load(checkpoint / WEIGHTS_FILE) as arrays:
        return [
            [(arrays[f"{seat}/{name}.weight"], arrays[f"{seat}/{name}.bias"]) for name in names]
            for seat, names in enumerate(spec["linear_layers"])
        ]


def logits(network: list[tuple[np.ndarray, np.ndarray]], observations: np.ndarray) -> np.ndarray:
    """A network's logits, ``dqn.MLP``'s forward pass in NumPy (float32).

    Args:
        network: its linear layers, as ``load_networks`` gives them.
        observations: (n, input size) information-state tensors.

    Returns:
        float32 (n, ``NUM_ACTIONS``).
    """
    x = observations.astype(np.float32)
    for i, (weight, bias) in enumerate(network):
        x = x @ weight.T + bias
        if i < len(network) - 1:
            np.maximum(x, 0.0, out=x)
    return x


def probabilities(checkpoint: pathlib.Path, table: InfosetTable) -> np.ndarray:
    """The checkpoint's average policy at every information set of ``table``.

    Each row is the softmax of the acting seat's average-policy logits over the legal
    actions, as ``NFSP`` plays in its average-policy mode.

    Args:
        checkpoint: the checkpoint's folder (``write_checkpoint``).
        table: the information sets of the variant it was trained on.

    Returns:
        float64 (``table.size``, ``NUM_ACTIONS``), zero on illegal actions, rows
        summing to 1.

    Raises:
        ValueError: the checkpoint was trained on another variant.
    """
    spec = json.loads((checkpoint / NETWORK_FILE).read_text())
    check_trained_on(checkpoint, spec["variant"], table)
    networks = load_networks(checkpoint)

    def play(observations: np.ndarray, masks: np.ndarray, players: np.ndarray) -> np.ndarray:
        out = np.zeros((len(observations), NUM_ACTIONS))
        for seat, network in enumerate(networks):
            rows = np.flatnonzero(players == seat)
            if rows.size:
                out[rows] = softmax_rows(logits(network, observations[rows]), masks[rows])
        return out

    return batched_probabilities(table, play)
