"""``jekyll-hyde solve VARIANT --out DIR`` and ``jekyll-hyde exploit TARGET --exact``.

``solve_variant`` builds the variant's tree, solves both sequence-form programs
(``lp``), writes the equilibrium as a tabular strategy (``DIR/tabular.npz``, which the
arena plays) and ``DIR/solve.json``, and checks the answer with an exact best response
in each seat: the solver's convergence figure is that exploitability, the exact score
minus 0.5.

``exact_exploit`` computes the exact best response to any agent whose action
probabilities can be enumerated (``strategies``), in each seat.
"""

from __future__ import annotations

import json
import os
import pathlib
import time
from typing import Any

import numpy as np

from jekyll_hyde_agents.policy_agent import PolicyAgent
from jekyll_hyde_agents.tabular import save_tabular
from jekyll_hyde_env.engine.variant import Variant, parse_variant
from jekyll_hyde_train.common.files import atomic_write_text
from jekyll_hyde_train.exact.best_response import ExactScore, exact_score
from jekyll_hyde_train.exact.lp import solve
from jekyll_hyde_train.exact.strategies import agent_strategy, seat_agent
from jekyll_hyde_train.exact.table import InfosetTable, policy_probabilities, table_strategy
from jekyll_hyde_train.exact.tree import MAX_NODES, GameTree, build_tree, check_size

SOLVE_FILE = "solve.json"


def check_out_folder(out: str | os.PathLike) -> pathlib.Path:
    """The folder ``solve`` writes, checked before any work is done (and not created).

    Args:
        out: the folder; it may not exist yet.

    Returns:
        The folder.

    Raises:
        ValueError: ``out`` is a file, or neither it nor its nearest existing parent
            can be written.
    """
    folder = pathlib.Path(out)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--out {folder}: a file is there; name a folder")
    existing = folder
    while not existing.exists():
        existing = existing.parent
    if not os.access(existing, os.W_OK):
        raise ValueError(f"--out {folder}: {existing} cannot be written")
    return folder


def solve_variant(
    variant: Variant, out: str | os.PathLike, max_nodes: int = MAX_NODES, resume: bool = False
) -> dict[str, Any]:
    """Solve ``variant`` exactly and save its equilibrium in ``out``.

    Each player's program, once solved, is saved in ``out`` (``plan-jekyll.npz``,
    ``plan-hyde.npz``): a solve interrupted (Ctrl-C) keeps them, and ``resume`` continues
    from them instead of solving those programs again.

    Args:
        variant: a variant small enough for an exact solution (``tree.check_size``).
        out: the folder for ``tabular.npz`` and ``solve.json``.
        max_nodes: refuse a variant whose tree would hold more nodes.
        resume: continue from the plans an interrupted solve of the same variant left
            in ``out``; without it, a folder holding them is refused.

    Returns:
        What ``solve.json`` holds: the variant, the game value and Jekyll's win
        probability, the exact score of the equilibrium found, the tree's sizes and
        the seconds each step took.

    Raises:
        TreeTooLarge: a variant too big, naming its size and the limit.
        ValueError: an unusable ``out``, a folder holding an interrupted solve without
            ``resume``, or ``resume`` where the plans are of another variant.
    """
    folder = check_out_folder(out)
    check_size(variant, max_nodes)
    saved = _saved_plans(folder, variant, resume)
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    canonical = build_tree(variant, canonical_picks=True, max_nodes=max_nodes)
    built = time.perf_counter()

    def keep(player: int, plan: tuple[np.ndarray, float]) -> None:
        _save_plan(folder, variant, player, plan)

    solution = solve(canonical, saved, keep)
    table = {
        infoset.key: (infoset.actions, solution.strategies[k].tolist())
        for k, infoset in enumerate(canonical.infosets)
    }
    sizes = tree_sizes(canonical)
    del canonical
    full = build_tree(variant, max_nodes=max_nodes)
    check = exact_score(full, *_table_strategies(full, table))
    checked = time.perf_counter()
    result = {
        "variant": variant.to_json(),
        "solver": "sequence-form linear program, HiGHS (scipy.optimize.linprog)",
        "game_value": solution.value,
        "game_value_hyde_program": solution.value_hyde,
        "jekyll_win_probability": solution.jekyll_win_probability,
        "exact_score": check.score,
        "exploitability": check.score - 0.5,
        "sizes": sizes,
        "seconds": {
            "tree": built - started,
            "solve": solution.seconds,
            "check": checked - built - solution.seconds,
        },
    }
    save_tabular(folder, variant, table, {"made_by": "jekyll-hyde solve", **result})
    atomic_write_text(folder / SOLVE_FILE, json.dumps(result, indent=2, sort_keys=True) + "\n")
    for player in (0, 1):  # the equilibrium is saved whole: the plans are no longer needed
        (folder / PLAN_FILES[player]).unlink(missing_ok=True)
    return result


PLAN_FILES = ("plan-jekyll.npz", "plan-hyde.npz")
"""Each player's solved program in an interrupted solve's folder."""


def _save_plan(
    folder: pathlib.Path, variant: Variant, player: int, plan: tuple[np.ndarray, float]
) -> None:
    path = folder / PLAN_FILES[player]
    temporary = path.with_suffix(".tmp.npz")
    np.savez(
        temporary,
        plan=plan[0],
        value=np.array(plan[1]),
        variant=np.array(json.dumps(variant.to_json(), sort_keys=True)),
    )
    os.replace(temporary, path)


def _saved_plans(
    folder: pathlib.Path, variant: Variant, resume: bool
) -> dict[int, tuple[np.ndarray, float]]:
    """The plans an interrupted solve left in ``folder`` (checked to be of ``variant``)."""
    found = [p for p in (0, 1) if (folder / PLAN_FILES[p]).is_file()]
    if found and not resume:
        names = ", ".join(PLAN_FILES[p] for p in found)
        raise ValueError(
            f"--out {folder} holds an interrupted solve ({names}): add --resume to continue "
            "it, or choose another folder"
        )
    plans = {}
    for player in found:
        path = folder / PLAN_FILES[player]
        try:
            with np.load(path, allow_pickle=False) as data:
                their = parse_variant(json.loads(str(data["variant"])))
                plan, value = np.asarray(data["plan"], np.float64), float(data["value"])
        except (OSError, KeyError, ValueError) as error:
            raise ValueError(f"{path}: not a saved plan ({error}); delete it") from None
        if their != variant:
            raise ValueError(
                f"{path} is a plan of variant {their.name}, not {variant.name}; "
                "choose another folder"
            )
        plans[player] = (plan, value)
    return plans


def tree_sizes(tree: GameTree) -> dict[str, int]:
    """The sizes a results page reports for a variant.

    Args:
        tree: the variant's tree.

    Returns:
        The deals, the histories (nodes below the deal), the ends of the game, and
        each player's information sets and sequences.
    """
    counts = [0, 0]
    for infoset in tree.infosets:
        counts[infoset.player] += 1
    return {
        "deals": tree.deals,
        "histories": tree.size,
        "terminal_histories": len(tree.payoffs),
        "infosets_jekyll": counts[0],
        "infosets_hyde": counts[1],
        "sequences_jekyll": len(tree.sequences[0]),
        "sequences_hyde": len(tree.sequences[1]),
    }


def _table_strategies(tree: GameTree, table: dict[str, tuple[list[int], list[float]]]):
    """Both seats' strategies from a table keyed by information state, on ``tree``."""

    def strategy(k: int, infoset: Any) -> np.ndarray:
        actions, probabilities = table[infoset.key]
        out = np.zeros(len(infoset.actions))
        for action, p in zip(actions, probabilities, strict=True):
            out[infoset.actions.index(action)] = p
        return out

    return strategy, strategy


def exact_exploit(
    agent: Any, variant: Variant, tree: GameTree | None = None, table: InfosetTable | None = None
) -> ExactScore:
    """The exact best response to ``agent`` in each seat of ``variant``.

    Args:
        agent: an agent whose action probabilities can be enumerated
            (``strategies.agent_strategy``).
        variant: a variant small enough (``tree.check_size``).
        tree: the variant's tree (without canonical picks), to score several agents on
            one; built here if not given.
        table: ``tree``'s information sets as arrays (``table.InfosetTable``); built here
            if not given and a seat is played by a saved policy.

    Returns:
        The best responses and the exact score.

    Raises:
        TreeTooLarge: a variant too big, naming its size and the limit.
        ValueError: an agent that cannot be enumerated, naming why, a tree of another
            variant, or a table of another tree.
    """
    if tree is None:
        check_size(variant)
        tree = build_tree(variant)
    elif tree.variant != variant:
        raise ValueError(f"a tree of variant {tree.variant.name} given for {variant.name}")
    if table is not None and table.tree is not tree:
        raise ValueError("the information-set table given was built from another tree")
    players = [seat_agent(agent, seat) for seat in (0, 1)]
    if table is None and any(isinstance(player, PolicyAgent) for player in players):
        table = InfosetTable.build(tree)
    if isinstance(players[0], PolicyAgent) and players[0] is players[1] and table is not None:
        both = table_strategy(policy_probabilities(players[0], table))  # one pass, both seats
        return exact_score(tree, both, both)
    return exact_score(
        tree, agent_strategy(agent, tree, 0, table), agent_strategy(agent, tree, 1, table)
    )
