"""Self-play games of a search teacher, played and labelled in C.

``jekyll_hyde_train.expert_iteration.distill.label_game`` plays a game of a search teacher against
itself
and keeps, at each decision, the root's visit shares and value: expert
iteration's data. When the teacher's search runs in the compiled core
(``ismcts`` with random playouts, or ``az``), the whole game can run there
too (``_rollout.label_game``), so that no Python runs between two searches:
the same deal, the same searches with the same seeds, hence the same moves
and labels (the search's value summed in another order: the same to float32
rounding). ``tests/test_self_play.py`` holds the two loops to each other.
"""

from __future__ import annotations

import numpy as np

from jekyll_hyde_agents.az import PLAYOUT_KINDS, AZAgent
from jekyll_hyde_agents.ismcts import ISMCTSAgent
from jekyll_hyde_agents.rollout import SEED_BOUND, core_available, to_core
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.engine.state import GameState
from jekyll_hyde_env.observation import OBS_SIZE

try:
    # a C extension (agents/_rollout.c): mypy reads no .so, and it has no stub
    from jekyll_hyde_agents import _rollout  # type: ignore[attr-defined]
except ImportError:  # not compiled: runs_in_core is False
    _rollout = None

MAX_DECISIONS = 512
"""The most decisions the core labels in one game (``MAX_DEPTH`` in ``_rollout.c``)."""

_ISMCTS, _AZ = 0, 1  # the core's teacher kinds


def runs_in_core(teacher: ISMCTSAgent | AZAgent) -> bool:
    """Whether ``label_game_in_core`` can play ``teacher``'s games: its search runs in C.

    Args:
        teacher: the search agent whose self-play games are to be labelled.

    Returns:
        True when the compiled core is built and ``teacher`` is an ``AZAgent``, or an
        ``ISMCTSAgent`` with random playouts and without ``verify_worlds``; False
        otherwise.
    """
    if not core_available():
        return False
    if isinstance(teacher, AZAgent):
        return True
    if not isinstance(teacher, ISMCTSAgent):
        return False
    return teacher.config.rollout == "random" and not teacher.config.verify_worlds


def label_game_in_core(
    teacher: ISMCTSAgent | AZAgent,
    state: GameState,
    network_moves: bool,
    full_search_share: float,
    fast_simulations: int,
    uniforms: np.ndarray,
) -> tuple[dict[str, np.ndarray], int]:
    """A game of ``teacher`` from ``state``, as
    ``jekyll_hyde_train.expert_iteration.distill.label_game`` plays it.

    Each search takes the next of the teacher's own seeds, as its ``search``
    would, and the teacher's random state ends where the searches left it.
    With ``full_search_share`` below 1, each decision with a choice takes the
    next of ``uniforms``: below the share, it is searched fully and kept.

    Args:
        teacher: the search agent playing both seats; ``runs_in_core(teacher)``
            must hold. Its search generator moves on as its own searches would.
        state: the game state to play from; it is not changed.
        network_moves: play the network's most likely legal action by the root's
            priors instead of the search's move (an ``az`` teacher).
        full_search_share: the chance, from 0 to 1, that a decision with a choice is
            searched fully and labelled; 1 searches and labels every one.
        fast_simulations: the simulations of a search that is not kept, when
            ``full_search_share`` is below 1 (an ``az`` teacher).
        uniforms: draws in [0, 1), one for each decision with a choice, compared
            with ``full_search_share``; may be empty when the share is 1.

    Returns:
        The labels (``obs``, ``mask``, ``target``, ``role``, ``search_value``)
        and the winner.

    Raises:
        ValueError: the teacher's search does not run in C, or the game needed more
            than ``MAX_DECISIONS`` seeds or more ``uniforms`` than given.
    """
    if not runs_in_core(teacher):
        raise ValueError(f"{teacher.name}: its search does not run in the compiled core")
    config = teacher.config
    if isinstance(teacher, AZAgent):
        az = teacher.config
        search = (_AZ, az.num_simulations, fast_simulations, az.c_puct)
        nets = (*teacher.nets, az.value_weight, az.fpu, PLAYOUT_KINDS[az.playouts])
    else:
        search = (_ISMCTS, config.num_simulations, 0, teacher.config.uct_c)
        nets = (None, None, 0.0, 0.0, PLAYOUT_KINDS["random"])
    rng = teacher.search_rng
    before = rng.bit_generator.state
    seeds = rng.integers(SEED_BOUND, size=MAX_DECISIONS).astype(np.uint64)
    obs, mask, target, role, value, winner, used, _ = _rollout.label_game(
        to_core(state),
        seeds.tobytes(),
        np.ascontiguousarray(uniforms, dtype=np.float64).tobytes(),
        *search,
        config.time_budget or 0.0,
        *nets,
        int(network_moves),
        float(full_search_share),
        teacher.config.gumbel if isinstance(teacher, AZAgent) else 0,
    )
    rng.bit_generator.state = before
    rng.integers(SEED_BOUND, size=used)  # as far as the searches' own draws would go
    labels = {
        "obs": np.frombuffer(obs, dtype=np.int8).reshape(-1, OBS_SIZE),
        "mask": np.frombuffer(mask, dtype=bool).reshape(-1, NUM_ACTIONS),
        "target": np.frombuffer(target, dtype=np.float32).reshape(-1, NUM_ACTIONS),
        "role": np.frombuffer(role, dtype=np.uint8),
        "search_value": np.frombuffer(value, dtype=np.float32),
    }
    return labels, winner
