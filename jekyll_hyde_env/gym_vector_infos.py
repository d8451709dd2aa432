"""The infos of ``JekyllHydeVectorEnv``, batched as Gymnasium's ``VectorEnv._add_info``
batches the single-agent env's: every key of ``JekyllHydeGymEnv``'s info, each with
its ``_key`` mask, strings as object arrays (None where a game gave none), whole
numbers as Gymnasium's int, ``tricks`` as a nested dict, and ``winner`` only for the
games that have ended. So the vector entry point is a drop-in for ``sync``
(tests/test_gym_vector_sync.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jekyll_hyde_env.engine.cards import AGENTS, PHASE_NAMES
from jekyll_hyde_env.vector import BatchedGames

NAMES = np.array(AGENTS, dtype=object)
PHASES = np.array(PHASE_NAMES, dtype=object)
INT = np.dtype(int)  # the dtype Gymnasium batches a Python int info into


def batched_infos(
    games: BatchedGames,
    mask: np.ndarray,
    learner: np.ndarray,
    game_info: np.ndarray,
    rows: np.ndarray | None,
    illegal: np.ndarray,
    everyone: np.ndarray,
    describe_all: bool,
) -> dict[str, Any]:
    """The batched infos of the games in ``rows``.

    Args:
        games: the batched games.
        mask: the learner's legal actions, shape (N, 28).
        learner: the learner's seat in each game (0 Jekyll, 1 Hyde).
        game_info: per game, whether its info describes the table (``game_info``).
        rows: the games the infos are for (None: every game).
        illegal: per game, whether the learner's action was illegal.
        everyone: N trues, the masks of infos for every game (copied, never handed
            out), kept by the env so that a step allocates none.
        describe_all: whether every game's info describes its table.

    Returns:
        The infos, as ``sync`` would batch them.
    """
    n = len(games)
    given = everyone if rows is None else rows
    action_mask, role = mask.copy(), NAMES[learner]
    if rows is not None:
        action_mask[~rows] = 0
        role[~rows] = None
    infos: dict[str, Any] = {
        "action_mask": action_mask,
        "_action_mask": given.copy(),
        "illegal_action": illegal & given,
        "_illegal_action": given.copy(),
        "role": role,
        "_role": given.copy(),
    }
    described = given if rows is None and describe_all else given & game_info
    if described is given or described.any():
        phase = PHASES[games.phase]
        ranks = np.fromiter(games.ranks.tolist(), dtype=object, count=n)  # a list per game
        numbers = [games.round, games.marker, games.tricks[:, 0], games.tricks[:, 1]]
        round_, marker, jekyll, hyde = (array.astype(INT) for array in numbers)
        if described is not given:
            hidden = ~described
            phase[hidden] = ranks[hidden] = None
            for array in (round_, marker, jekyll, hyde):
                array[hidden] = 0
        infos |= {
            "phase": phase,
            "_phase": described.copy(),
            "round": round_,
            "_round": described.copy(),
            "marker": marker,
            "_marker": described.copy(),
            "tricks": {
                "jekyll": jekyll,
                "_jekyll": described.copy(),
                "hyde": hyde,
                "_hyde": described.copy(),
            },
            "_tricks": described.copy(),
            "colour_ranks": ranks,
            "_colour_ranks": described.copy(),
        }
    # A game is over once won or ended by an illegal action (then C's winner is -1).
    over = games.terminated & given if rows is None else (illegal | (games.winner >= 0)) & rows
    if over.any():
        winner = np.full(n, None, dtype=object)
        seats = np.where(illegal, 1 - learner, games.winner)
        winner[over] = NAMES[seats[over]]
        infos |= {"winner": winner, "_winner": over}
    return infos
