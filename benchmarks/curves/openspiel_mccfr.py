"""The curves' ``openspiel-mccfr`` trainer: OpenSpiel's outcome-sampling MCCFR.

``open_spiel.python.algorithms.outcome_sampling_mccfr.OutcomeSamplingSolver`` as
OpenSpiel ships it (exploration 0.6, no baseline: ``examples/mccfr_example.py``'s
solver) on the OpenSpiel game ``python_jekyll_hyde`` with the variant as its
parameter, one ``iteration()`` (an episode per seat) after another, NumPy's global
generator (which the solver draws from) seeded from the run's seed. It runs in the
one process, on one thread.

A checkpoint is the solver's table, every information state it has visited with
its cumulative regrets and average-policy weights (``MCCFRSolverBase._infostates``),
in ``average_policy.npz``: the information-state strings, NUL-separated UTF-8, and
the two arrays of each set one after the other in the legal actions' order.
``probabilities`` plays as OpenSpiel's ``AveragePolicy`` of that table: at a visited
set the average-policy weights normalised, at a set never visited uniform over the
legal actions. Our information set ``k`` is OpenSpiel's information state
``view_string`` of the acting player's view (``table.view(k)``), the string that
``information_state_string`` gives at that decision; the strings of a table's
``size`` sets take about 14 microseconds each to write, so their hashes are kept
for the table's lifetime (``table_hashes``).
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import random
import weakref
import zipfile
from functools import partial
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

import numpy as np
from open_spiel.python.algorithms.outcome_sampling_mccfr import OutcomeSamplingSolver
from protocol import check_trained_on

from jekyll_hyde_agents.openspiel_bots import load_game
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.engine.variant import Variant
from jekyll_hyde_env.integrations.openspiel import view_string
from jekyll_hyde_train.exact.table import InfosetTable

if TYPE_CHECKING:
    from protocol import Requests

NAME = "openspiel-mccfr"

TABLE_FILE = "average_policy.npz"
SOLVER_FILE = "mccfr.json"

SEPARATOR = "\x00"
"""Between two information-state strings in a checkpoint (no string holds it)."""


LABEL = (
    f"OpenSpiel {version('open_spiel')} outcome-sampling MCCFR (Python OutcomeSamplingSolver "
    "as shipped: exploration 0.6, no baseline) on python_jekyll_hyde, one thread; scored on "
    "its average policy, uniform at information sets it never visited"
)


def train(out: pathlib.Path, variant: Variant, seed: int, requests: Requests) -> None:
    """Run outcome-sampling MCCFR from scratch until stopped, saving requested checkpoints.

    Args:
        out: the trainer's folder (only checkpoints are written there).
        variant: the version of the game.
        seed: seeds Python's and NumPy's global generators (the solver samples the
            deals and its actions with ``np.random``).
        requests: the checkpoint requests (``protocol.Requests``).
    """
    random.seed(seed)
    np.random.seed(seed)
    game = load_game(variant)
    solver = OutcomeSamplingSolver(game)
    iterations = 0
    while True:
        name = requests.pending()
        if name is not None:
            progress = {"iterations": iterations, "exploration": solver._expl}
            write = partial(
                write_checkpoint, infostates=solver._infostates, variant=variant, progress=progress
            )
            requests.save(name, write)
        solver.iteration()
        iterations += 1


def write_checkpoint(
    folder: pathlib.Path,
    infostates: dict[str, list[np.ndarray]],
    variant: Variant,
    progress: dict[str, Any],
) -> None:
    """Save an MCCFR solver's table (``average_policy.npz``) and its counts (``mccfr.json``).

    Args:
        folder: the checkpoint's folder.
        infostates: the solver's table: information-state string -> [regrets, average
            policy weights], each over the legal actions in ascending order.
        variant: the version of the game.
        progress: counts to record (iterations, the exploration).
    """
    keys = list(infostates)
    counts = np.array([len(infostates[key][0]) for key in keys], np.int16)
    if keys:
        regrets = np.concatenate([infostates[key][0] for key in keys])
        average = np.concatenate([infostates[key][1] for key in keys])
    else:
        regrets = average = np.zeros(0)
    text = SEPARATOR.join(keys).encode()
    arrays = {
        "keys": np.frombuffer(text, np.uint8),
        "counts": counts,
        "regrets": regrets.astype(np.float64),
        "average": average.astype(np.float64),
    }
    # An .npz written as np.savez_compressed writes it, but at zlib's fastest level:
    # the strings shrink tenfold all the same, in a quarter of the time (the save is
    # counted in the trainer's CPU-seconds).
    with zipfile.ZipFile(folder / TABLE_FILE, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, array in arrays.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.ascontiguousarray(array))
    spec = {"variant": variant.spec(), "infostates": len(keys), **progress}
    (folder / SOLVER_FILE).write_text(json.dumps(spec, indent=1))


def read_checkpoint(checkpoint: pathlib.Path) -> dict[str, list[np.ndarray]]:
    """A checkpoint's table, as the solver held it.

    Args:
        checkpoint: the checkpoint's folder (``write_checkpoint``).

    Returns:
        information-state string -> [regrets, average policy weights] (float64), the
        solver's ``_infostates``; ``mccfr.AveragePolicy`` plays it.
    """
    keys, counts, regrets, average = _arrays(checkpoint)
    starts = np.concatenate([[0], np.cumsum(counts)])
    return {
        key: [regrets[starts[i] : starts[i + 1]], average[starts[i] : starts[i + 1]]]
        for i, key in enumerate(keys)
    }


def _arrays(checkpoint: pathlib.Path) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    with np.load(checkpoint / TABLE_FILE) as arrays:
        text = arrays["keys"].tobytes().decode()
        counts = arrays["counts"].astype(np.int64)
        regrets, average = arrays["regrets"], arrays["average"]
    keys = text.split(SEPARATOR) if len(counts) else []
    if len(keys) != len(counts) or counts.sum() != len(average):
        raise ValueError(f"{checkpoint / TABLE_FILE} is not a whole MCCFR table")
    return keys, counts, regrets, average


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


_TABLE_HASHES: dict[int, tuple[weakref.ref, np.ndarray]] = {}


def table_hashes(table: InfosetTable) -> np.ndarray:
    """A 64-bit hash of OpenSpiel's information-state string at each set of ``table``.

    The string of set ``k`` is ``view_string(table.view(k))``, what the OpenSpiel
    state's ``information_state_string`` gives at the decision. Computed once per
    table (about 50 CPU-seconds for the 2.4M sets of ``small``) and kept while it lives.

    Args:
        table: the information sets.

    Returns:
        uint64 (``table.size``,) BLAKE2b hashes of the strings.

    Raises:
        ValueError: two sets of the table share a hash (so a string).
    """
    found = _TABLE_HASHES.get(id(table))
    if found is not None and found[0]() is table:
        return found[1]
    hashes = np.fromiter(
        (_hash(view_string(table.view(k))) for k in range(table.size)), np.uint64, table.size
    )
    if len(np.unique(hashes)) != table.size:
        raise ValueError("two information sets of the table share an information-state hash")
    for key in [key for key, (ref, _) in _TABLE_HASHES.items() if ref() is None]:
        del _TABLE_HASHES[key]
    _TABLE_HASHES[id(table)] = (weakref.ref(table), hashes)
    return hashes


def probabilities(checkpoint: pathlib.Path, table: InfosetTable) -> np.ndarray:
    """The checkpoint's average policy at every information set of ``table``.

    As OpenSpiel's ``AveragePolicy``: at a set the solver visited, its average-policy
    weights over the legal actions divided by their sum; elsewhere uniform over the
    legal actions.

    Args:
        checkpoint: the checkpoint's folder (``write_checkpoint``).
        table: the information sets of the variant it was trained on.

    Returns:
        float64 (``table.size``, ``NUM_ACTIONS``), zero on illegal actions, rows
        summing to 1.

    Raises:
        ValueError: the checkpoint was trained on another variant, or it holds an
            information state that is no set of the table or has other actions.
    """
    spec = json.loads((checkpoint / SOLVER_FILE).read_text())
    check_trained_on(checkpoint, spec["variant"], table)
    keys, counts, _, average = _arrays(checkpoint)
    legal = table.legal()
    out = legal / legal.sum(axis=1, keepdims=True)  # uniform where never visited
    if not keys:
        return out
    key_hashes = np.fromiter((_hash(key) for key in keys), np.uint64, len(keys))
    hashes = table_hashes(table)
    order = np.argsort(hashes)
    place = np.searchsorted(hashes, key_hashes, sorter=order).clip(max=table.size - 1)
    rows = order[place]
    found = hashes[rows] == key_hashes
    if not found.all():
        missing = keys[int(np.flatnonzero(~found)[0])]
        raise ValueError(
            f"{checkpoint}: {int((~found).sum())} visited information states are no set of "
            f"the table, such as\n{missing}"
        )
    if (legal[rows].sum(axis=1) != counts).any():
        raise ValueError(f"{checkpoint}: a visited set's actions are not the table's")
    # The weights are the keys' one after the other, each over its legal actions in
    # ascending order: the order in which a boolean mask of the rows assigns them.
    block = np.zeros((len(rows), NUM_ACTIONS))
    block[legal[rows]] = average
    out[rows] = block / block.sum(axis=1, keepdims=True)
    return out
