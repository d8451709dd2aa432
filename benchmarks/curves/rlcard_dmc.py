"""RLCard's Deep Monte-Carlo (``DMCTrainer``) as a trainer of the exploitability curves.

RLCard's ``DMCTrainer`` runs as RLCard ships it, with the settings of
``benchmarks/rlcard_dmc.py``: one Q-network per player id (0 Jekyll, 1 Hyde; RLCard's
default MLP of five layers of 512 on the observation and the action's one-hot), one
actor process that plays both seats with exploration 0.01, a learner thread per seat
(batches of 8 unrolls of 100 decisions, RMSprop at 1e-4), one thread per process.
``DMCTrainer.start`` runs its own loop until the run is stopped, so the checkpoint
requests are answered from a thread (``Requests.serve``) that copies the learner's
networks as they are: the only hooks are a wrapper around ``DMCTrainer.model_func``,
which notes the networks it makes (the learner's is the last), and one around the
module's ``learn``, which takes a lock per seat so that a copy never sees half an
update, and counts the updates (frames = updates x batch x unroll).

A checkpoint is ``model.pt`` (``torch.save`` of plain tensors and numbers, read back
with ``weights_only=True``): each seat's network's ``state_dict`` and the layer sizes.
It plays greedily, as DMC's ``eval_step`` does: at each information set, the legal
action of the highest Q (the first of ties), so ``probabilities`` is one-hot.

RLCard seeds each actor's deals by the actor's index (``env.seed(i)``) and its
exploration draws from the actor's unseeded numpy generator; ``seed`` fixes the
networks' initial weights only.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import pathlib
import random
import sys
import threading
import traceback
from importlib.metadata import version
from typing import Any

import numpy as np
import rlcard
import rlcard.agents.dmc_agent.trainer as dmc_trainer
import torch
from protocol import Requests
from rlcard.agents.dmc_agent.model import DMCModel, DMCNet

import jekyll_hyde_env.integrations.rlcard as rlcard_env
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.engine.variant import Variant
from jekyll_hyde_env.observation import OBS_SIZE
from jekyll_hyde_train.exact.table import InfosetTable, argmax_rows, batched_probabilities

NAME = "rlcard-dmc"
ACTORS = 1
BATCH_SIZE = 8
UNROLL_LENGTH = 100
NUM_BUFFERS = 50
EXPLORATION = 0.01
LABEL = (
    f"RLCard {version('rlcard')} DMCTrainer (Deep Monte-Carlo): a Q-network per seat, 5 x 512 ReLU "
    f"(RLCard's default), {ACTORS} actor process, batch {BATCH_SIZE} x unroll "
    f"{UNROLL_LENGTH}, RMSprop lr 1e-4, exploration {EXPLORATION}; greedy play"
)
CHECKPOINT = "model.pt"
SAMPLES_PER_PASS = 65_536
"""(information set, legal action) pairs per forward pass in ``probabilities``."""


class _Learner:
    """The hooks into a ``DMCTrainer`` that let a thread copy its learner's networks.

    Args:
        trainer: the trainer, before ``start``.
    """

    def __init__(self, trainer: dmc_trainer.DMCTrainer):
        self.models: list[Any] = []
        self.ready = threading.Event()
        self.locks = [threading.Lock() for _ in range(trainer.num_players)]
        self.updates = [0] * trainer.num_players
        self.frames_per_update = trainer.T * trainer.B
        learner_index = len(trainer.device_iterator)  # start() makes the actors' models first
        make_model = trainer.model_func
        learn = dmc_trainer.learn

        def model_func(device: Any) -> Any:
            model = make_model(device)
            self.models.append(model)
            if len(self.models) > learner_index:
                self.ready.set()
            return model

        def locked_learn(position: int, *args: Any, **kwargs: Any) -> Any:
            with self.locks[position]:
                stats = learn(position, *args, **kwargs)
                self.updates[position] += 1
            return stats

        trainer.model_func = model_func
        dmc_trainer.learn = locked_learn
        self.learner_index = learner_index

    def write(self, folder: pathlib.Path) -> None:
        """Save the learner's networks as they are now into ``folder``.

        Args:
            folder: the checkpoint's folder.
        """
        self.ready.wait()
        learner = self.models[self.learner_index]
        players = []
        updates = 0
        for position, lock in enumerate(self.locks):
            with lock:
                weights = learner.get_agent(position).state_dict()
                players.append({key: value.detach().clone() for key, value in weights.items()})
                updates += self.updates[position]
        net = learner.get_agent(0).net
        layers = [m.out_features for m in net.fc_layers if isinstance(m, torch.nn.Linear)]
        frames = updates * self.frames_per_update
        torch.save({"mlp_layers": layers[:-1], "players": players}, folder / CHECKPOINT)
        (folder / "progress.json").write_text(json.dumps({"frames": frames, "updates": updates}))
        print(f"{NAME}: a checkpoint after {frames:,} frames", file=sys.stderr)


def train(out: pathlib.Path, variant: Variant, seed: int, requests: Requests) -> None:
    """Run RLCard's ``DMCTrainer`` on ``variant`` until the process is interrupted.

    RLCard's learner threads wait on their queues forever once the actors stop, so
    the process ends with ``os._exit`` once ``DMCTrainer.start`` returns (on Ctrl-C
    or the runner's SIGINT), after ending the actors.

    Args:
        out: the trainer's folder (RLCard's own logs go to ``out/dmc``).
        variant: the version of the game.
        seed: seeds the networks' initial weights (and numpy, random).
        requests: the checkpoint requests, answered from a thread.
    """
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    # One thread per process: the actor and the learner share two cores (see
    # benchmarks/rlcard_dmc.py); the spawned actor reads OMP_NUM_THREADS.
    torch.set_num_threads(1)
    os.environ["OMP_NUM_THREADS"] = "1"
    env = rlcard.make(rlcard_env.ENV_ID, config={"seed": seed, "variant": variant})
    trainer = dmc_trainer.DMCTrainer(
        env,
        xpid="dmc",
        savedir=str(out),
        save_interval=24 * 60 * 365,  # minutes: RLCard's own model.tar at the start only
        num_actors=ACTORS,
        training_device="cpu",
        exp_epsilon=EXPLORATION,
        batch_size=BATCH_SIZE,
        unroll_length=UNROLL_LENGTH,
        num_buffers=NUM_BUFFERS,
        num_threads=1,
    )
    learner = _Learner(trainer)
    server = requests.serve(learner.write)
    code = 1
    try:
        trainer.start()
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        server.stop()
        for child in multiprocessing.active_children():
            child.terminate()
            child.join(timeout=10)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _load(checkpoint: pathlib.Path) -> tuple[list[int], list[dict[str, torch.Tensor]]]:
    saved = torch.load(checkpoint / CHECKPOINT, weights_only=True)
    return [int(size) for size in saved["mlp_layers"]], saved["players"]


def load_agents(checkpoint: pathlib.Path) -> list[Any]:
    """The checkpoint's networks as RLCard's DMC agents (greedy), one per player id.

    Args:
        checkpoint: a checkpoint's folder.

    Returns:
        ``[Jekyll's, Hyde's]`` ``DMCAgent``, for ``eval_step`` or ``env.set_agents``.
    """
    layers, players = _load(checkpoint)
    count = len(players)
    model = DMCModel(
        [[OBS_SIZE]] * count, [[NUM_ACTIONS]] * count, layers, exp_epsilon=0.0, device="cpu"
    )
    for agent, weights in zip(model.get_agents(), players, strict=True):
        agent.load_state_dict(weights)
        agent.eval()
    return model.get_agents()


def _nets(checkpoint: pathlib.Path) -> list[DMCNet]:
    layers, players = _load(checkpoint)
    nets = []
    for weights in players:
        net = DMCNet([OBS_SIZE], [NUM_ACTIONS], layers)
        net.load_state_dict(weights)
        nets.append(net.eval())
    return nets


def _q_values(net: DMCNet, observations: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Q of every legal action of each row, -inf elsewhere, as ``DMCAgent.predict``
    computes it: the observation and the action's one-hot, through the network."""
    rows, actions = np.nonzero(legal)
    one_hot = torch.eye(NUM_ACTIONS)
    values = np.empty(len(rows), np.float32)
    for start in range(0, len(rows), SAMPLES_PER_PASS):
        part = slice(start, start + SAMPLES_PER_PASS)
        obs = torch.from_numpy(observations[rows[part]]).float()
        values[part] = net.forward(obs, one_hot[actions[part]]).numpy()
    scores = np.full(legal.shape, -np.inf, np.float32)
    scores[rows, actions] = values
    return scores


def probabilities(checkpoint: pathlib.Path, table: InfosetTable) -> np.ndarray:
    """The checkpoint's greedy play at every information set of ``table``.

    Row ``k`` is one-hot on the legal action of the highest Q of the network of the
    seat that acts at set ``k`` (the first of ties, as ``DMCAgent.eval_step``'s
    ``np.argmax`` over the legal actions in ascending order); a set with one legal
    action needs no network.

    Args:
        checkpoint: a checkpoint's folder (``model.pt``).
        table: the variant's information sets.

    Returns:
        float64 (``table.size``, ``NUM_ACTIONS``) one-hot rows on legal actions.
    """
    nets = _nets(checkpoint)

    def play(observations: np.ndarray, masks: np.ndarray, players: np.ndarray) -> np.ndarray:
        legal = masks.astype(bool)
        block = np.zeros(legal.shape)
        forced = legal.sum(axis=1) == 1
        block[forced] = legal[forced]
        for seat, net in enumerate(nets):
            rows = np.flatnonzero(~forced & (players == seat))
            if len(rows):
                scores = _q_values(net, observations[rows], legal[rows])
                block[rows] = argmax_rows(scores, legal[rows])
        return block

    with torch.inference_mode():
        return batched_probabilities(table, play)
