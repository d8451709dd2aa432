"""Several saved policies merged into one whose logits are the mean of theirs.

Averaging the logits of networks trained apart (other seeds, other shapes)
lowers the error of each: their mistakes differ, their agreement stays. The
ensemble is written as one ordinary policy file, so every loader, the arena
and the Gym env's opponent play it unchanged:

- the first layers of the members stand side by side (their weights stacked),
- each later hidden layer is block-diagonal, one block per member,
- the output layer joins the blocks and divides by the number of members.

Members of unequal depth are made equal first: a ReLU network takes an
identity layer after any hidden layer without changing its output, since the
activations it passes on are never negative. For tanh networks that does not
hold, so tanh members must share one depth (and a member without hidden
layers, whose input is the observation, can only join members like it).
"""

from __future__ import annotations

import os
import pathlib

import numpy as np

from jekyll_hyde_agents.policy_file import load_policy, save_policy
from jekyll_hyde_agents.policy_format import PolicyFileError, provenance
from jekyll_hyde_env.engine.cards import AGENTS

Layers = list[tuple[np.ndarray, np.ndarray]]


def average_policies(members: list[str | os.PathLike], folder: str | os.PathLike) -> pathlib.Path:
    """Write into ``folder`` the policy whose logits are the mean of the members'.

    Args:
        members: two or more saved policies (run folders, policy folders or
            ``policy.json`` files) that play the same roles with one activation.
        folder: where ``policy.json`` and ``policy.npz`` go.

    Returns:
        The path of the ensemble's ``policy.json``.

    Raises:
        PolicyFileError: a member cannot be read, or the members do not fit
            together (another set of roles, another activation, tanh members
            of unequal depth), naming which.
    """
    if len(members) < 2:
        raise PolicyFileError(f"an ensemble needs two or more policies, got {len(members)}")
    loaded = [load_policy(path) for path in members]
    roles = [sorted(metadata["roles"]) for metadata, _ in loaded]
    activations = [metadata["architecture"]["activation"] for metadata, _ in loaded]
    for path, role_list, activation in zip(members, roles, activations, strict=True):
        if role_list != roles[0]:
            raise PolicyFileError(f"{path} plays {role_list}, {members[0]} plays {roles[0]}")
        if activation != activations[0]:
            raise PolicyFileError(
                f"{path} uses {activation}, {members[0]} uses {activations[0]}; "
                "an ensemble needs one activation"
            )
    groups = {
        role: merge_layers(
            [groups[metadata["roles"][role]] for metadata, groups in loaded],
            relu=activations[0] == "relu",
        )
        for role in AGENTS
        if role in roles[0]
    }
    extra = {
        "training_steps": sum(int(m.get("training_steps", 0)) for m, _ in loaded),
        "training": {
            "method": "ensemble",
            "members": [
                {"path": str(path), "hidden": m["architecture"]["hidden"], **m.get("training", {})}
                for path, (m, _) in zip(members, loaded, strict=True)
            ],
        },
        "provenance": provenance(),
    }
    return save_policy(folder, groups, {role: role for role in groups}, activations[0], extra)


def merge_layers(members: list[Layers], relu: bool) -> Layers:
    """One network computing the mean of the members' outputs, exactly.

    Each member is a list of (weight out x in, bias) layers, the last giving
    the logits. ReLU members are deepened to the deepest with identity layers.

    Args:
        members: the members' layers (one role's network each), all reading the same
            observation and giving the same number of outputs.
        relu: whether the members' hidden layers use ReLU (else tanh).

    Returns:
        The merged network's (weight out x in, bias) layers: the first hidden layer
        stacked, later hidden layers block-diagonal, the output layer joining the
        blocks divided by the number of members.

    Raises:
        PolicyFileError: tanh members of unequal depth, or a member without hidden
            layers beside deeper ones.
    """
    depth = max(len(layers) for layers in members)
    if not relu and any(len(layers) != depth for layers in members):
        raise PolicyFileError(
            "tanh policies of unequal depth cannot be merged exactly "
            f"(hidden layers: {[len(layers) - 1 for layers in members]})"
        )
    if depth > 1 and min(len(layers) for layers in members) == 1:
        raise PolicyFileError(
            "a policy without hidden layers cannot be merged with deeper ones "
            "(an identity ReLU layer would change its input, the observation, where negative)"
        )
    members = [_deepen(layers, depth) for layers in members]
    merged: Layers = []
    for i in range(depth - 1):
        weights = [layers[i][0] for layers in members]
        weight = np.vstack(weights) if i == 0 else _block_diagonal(weights)
        merged.append((weight, np.concatenate([layers[i][1] for layers in members])))
    count = len(members)
    outputs = [layers[-1][0] for layers in members]
    weight = np.hstack(outputs) if depth > 1 else np.sum(outputs, axis=0)
    bias = np.sum([layers[-1][1] for layers in members], axis=0)
    merged.append((weight / count, bias / count))
    return merged


def _deepen(layers: Layers, depth: int) -> Layers:
    """``layers`` with identity layers before the output until it has ``depth`` layers."""
    width = layers[-1][0].shape[1]
    identity = (np.eye(width, dtype=np.float32), np.zeros(width, dtype=np.float32))
    return [*layers[:-1], *[identity] * (depth - len(layers)), layers[-1]]


def _block_diagonal(blocks: list[np.ndarray]) -> np.ndarray:
    rows, columns = sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)
    matrix = np.zeros((rows, columns), dtype=np.float32)
    row = column = 0
    for block in blocks:
        matrix[row : row + block.shape[0], column : column + block.shape[1]] = block
        row, column = row + block.shape[0], column + block.shape[1]
    return matrix
