"""OpenSpiel's ``nash_conv`` beside this project's exact scores, on a variant.

``open_spiel.python.algorithms.exploitability.nash_conv`` walks the whole tree of
``python_jekyll_hyde`` with OpenSpiel's own best response, an implementation
independent of ``jekyll_hyde_train.exact``. For each target it gives ``nash_conv``,
whose score ``(nash_conv + 2) / 4`` must equal the exact score that
``benchmarks/exact_variants.py`` wrote to ``docs/results/exact.json``. The targets:

- ``random``: OpenSpiel's ``UniformRandomPolicy``;
- ``equilibrium``: the solver's equilibrium (``runs/exact/<variant>/tabular.npz``),
  asked through its ``TabularAgent`` at the acting player's view (uniform at the views
  its own play never reaches, which weigh nothing), so a check of the solver's claim
  that no best response gains against it.

The test suite runs this check on ``tiny`` (``tests/test_exact_openspiel.py``); this
script runs it on larger variants, where OpenSpiel's Python traversal takes time and
memory in proportion to the histories. ``--memory-gb`` caps the process's address
space, each target checked in a process of its own: a check that needs more is
recorded as not finished, with the cap, and tried again by the next run. Each
target's result is written as soon as it is known, and a finished one is not run
again. The script exits non-zero when a score disagrees.

It writes ``docs/results/openspiel_nash_conv.json`` (keyed by variant) and the
``openspiel`` section of ``docs/results/exact.md``.

    python benchmarks/openspiel_nash_conv.py --variant small [--memory-gb 16]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import pathlib
import resource
import time

from _results_page import RESULTS, check_section, write_section
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import exploitability

from jekyll_hyde_agents.openspiel_bots import load_game
from jekyll_hyde_agents.tabular import TabularAgent
from jekyll_hyde_env.engine.information import player_view
from jekyll_hyde_env.engine.variant import parse_variant
from jekyll_hyde_train.common.files import atomic_write_text

PAGE = "exact.md"
SCRIPT = "benchmarks/openspiel_nash_conv.py"
DATA = RESULTS / "openspiel_nash_conv.json"
EXACT = RESULTS / "exact.json"
TOLERANCE = 1e-9


class TabularPolicy(os_policy.Policy):
    """A ``TabularAgent`` as an OpenSpiel policy: the strategy at the acting player's view."""

    def __init__(self, game, agent: TabularAgent) -> None:
        super().__init__(game, [0, 1])
        self._agent = agent

    def action_probabilities(self, state, player_id=None) -> dict[int, float]:
        """The strategy's probability of each legal action of the player to act."""
        player = state.current_player()
        legal = state.legal_actions()
        view = player_view(state.engine_state, player)
        if view.variant == self._agent.variant and not self._agent.covers(view):
            # A view the strategy's own play never reaches. OpenSpiel's best response
            # still walks there (through the strategy's zero-probability actions),
            # where the choice weighs nothing.
            probabilities = [1 / len(legal)] * len(legal)
        else:
            probabilities = self._agent.action_probabilities(view, legal)
        return {action: float(p) for action, p in zip(legal, probabilities, strict=True)}


def policies(game, variant_name: str, exact_runs: pathlib.Path) -> dict:
    """The targets by label, each a function that makes its OpenSpiel policy."""
    equilibrium = exact_runs / variant_name / "tabular.npz"
    if not equilibrium.is_file():
        raise SystemExit(f"{equilibrium} is missing: run benchmarks/exact_variants.py first")
    return {
        "random": lambda: os_policy.UniformRandomPolicy(game),
        "equilibrium": lambda: TabularPolicy(game, TabularAgent(equilibrium)),
    }


def check(variant_name: str, label: str, exact_runs: pathlib.Path, memory_gb: int) -> dict:
    """OpenSpiel's ``nash_conv`` of one target, with its score, the exact score and their
    difference, in a process of its own whose address space is capped at ``memory_gb``
    (its peak memory is then the target's own)."""
    exact_score = json.loads(EXACT.read_text())[variant_name]["scores"][label]["score"]
    with concurrent.futures.ProcessPoolExecutor(
        1, initializer=_cap_memory, initargs=(memory_gb,)
    ) as pool:
        row = pool.submit(_nash_conv, variant_name, label, exact_runs).result()
    row["memory_gb"] = memory_gb
    if row["finished"]:
        score = (row["nash_conv"] + 2) / 4
        row |= {
            "score": score,
            "exact_score": exact_score,
            "difference": score - exact_score,
            "agrees": bool(abs(score - exact_score) <= TOLERANCE),
        }
    return row


def _cap_memory(memory_gb: int) -> None:
    cap = memory_gb * 2**30
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _nash_conv(variant_name: str, label: str, exact_runs: pathlib.Path) -> dict:
    game = load_game(parse_variant(variant_name))
    make_policy = policies(game, variant_name, exact_runs)[label]
    started = time.perf_counter()
    try:
        nash_conv = float(exploitability.nash_conv(game, make_policy()))
    except MemoryError:
        return {"finished": False, "seconds": time.perf_counter() - started}
    return {
        "finished": True,
        "nash_conv": nash_conv,
        "seconds": time.perf_counter() - started,
        "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
    }


def page(by_variant: dict[str, dict]) -> str:
    """The check's table: one row per variant and target."""
    lines = [
        "| variant | target | OpenSpiel `nash_conv` | its score | exact score | difference "
        "| agrees to 1e-9 | time | peak memory |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for variant, data in by_variant.items():
        for label, row in data["targets"].items():
            if not row["finished"]:
                lines.append(
                    f"| {variant} | {label} | not finished within {row['memory_gb']} GB "
                    f"| | | | | {row['seconds']:.0f} s | |"
                )
                continue
            lines.append(
                f"| {variant} | {label} | {row['nash_conv']:.12f} | {row['score']:.12f} "
                f"| {row['exact_score']:.12f} | {row['difference']:.1e} "
                f"| {'yes' if row['agrees'] else 'no'} | {row['seconds']:.0f} s "
                f"| {row['peak_gb']:.1f} GB |"
            )
    return "\n".join(lines)


def main() -> None:
    """Run the variant's missing checks, writing each result as it comes, then the page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="small")
    parser.add_argument("--memory-gb", type=int, default=16, help="address-space cap")
    parser.add_argument("--exact-runs", type=pathlib.Path, default=pathlib.Path("runs/exact"))
    args = parser.parse_args()
    if args.memory_gb < 1:
        raise SystemExit(f"--memory-gb must be at least 1, not {args.memory_gb}")
    check_section(PAGE, "openspiel", SCRIPT)
    variant = parse_variant(args.variant)
    exact = json.loads(EXACT.read_text()).get(variant.name)
    if exact is None:
        raise SystemExit(f"{EXACT} has no scores of {variant.name}: run exact_variants.py")
    by_variant = json.loads(DATA.read_text()) if DATA.is_file() else {}
    data = by_variant.setdefault(variant.name, {"targets": {}})
    game = load_game(variant)
    for label in policies(game, variant.name, args.exact_runs):
        if data["targets"].get(label, {}).get("finished"):
            continue
        row = check(variant.name, label, args.exact_runs, args.memory_gb)
        data["targets"][label] = row
        atomic_write_text(DATA, json.dumps(by_variant, indent=2) + "\n")
        write_section(PAGE, "openspiel", SCRIPT, page(by_variant))
        print(f"{variant.name} {label}: {row}", flush=True)
    write_section(PAGE, "openspiel", SCRIPT, page(by_variant))
    print(f"written: {DATA} and {RESULTS / PAGE}")
    disagree = [label for label, row in data["targets"].items() if row.get("agrees") is False]
    if disagree:
        raise SystemExit(f"OpenSpiel's nash_conv disagrees with the exact score: {disagree}")


if __name__ == "__main__":
    main()
