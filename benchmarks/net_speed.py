"""The search's network forward pass in C against numpy, per observation.

Network-guided search (``az``) runs a policy-and-value network at every node it
adds, one observation at a time, so this is much of its cost. For networks of
the widths given (random weights with a value head, relu, or a saved policy
with ``--policy``), on the observations of a few random games, on one core:

- ``_rollout.net_forward`` (``agents/_net.h``), one observation a call, as the
  search runs it (the figure includes the Python call, which the search does
  not pay);
- the peer: numpy's ``PolicyAgent.logits`` and ``value`` one observation a
  call, and the same network as one batched matrix product over all the
  observations (numpy's best case, which tree search cannot use: each node's
  observation depends on the evaluations before it).

Prints microseconds per observation and the ratios, best of ``--repeats``.
Then what it costs the search: ``az:N`` (N = ``--simulations``, value head
blended with random playouts, as ``make train`` labels) with each network
against plain ``ismcts:N`` (random rollouts, no network), in milliseconds a
decision and simulations a second, over the decisions with a choice of the
same games (both players' views), best of ``--repeats``.

    python benchmarks/net_speed.py [--widths 256x256 512x512] [--policy DIR] [--games 30]
        [--simulations 300] [--decisions 300]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

# One core: numpy's BLAS threads would only contend for it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from _timing import pin_to_one_core
from jekyll_hyde_agents import AZAgent, AZConfig, ISMCTSAgent, ISMCTSConfig, PolicyAgent, rollout
from jekyll_hyde_agents.az import c_network
from jekyll_hyde_agents.policy_file import parse_layer_sizes, save_policy
from jekyll_hyde_env.engine import apply_action, is_terminal, legal_actions, new_game, player_view
from jekyll_hyde_env.observation import OBS_SIZE, encode


def random_policy(folder: str, hidden: list[int], seed: int = 0) -> str:
    """A relu policy of the given hidden widths with random weights and a value head."""
    rng = np.random.default_rng(seed)
    groups, values = {}, {}
    for group in ("jekyll", "hyde"):
        layers, size = [], OBS_SIZE
        for width in (*hidden, 28):
            layers.append((rng.normal(0, 1 / np.sqrt(size), (width, size)), np.zeros(width)))
            size = width
        groups[group] = layers
        last = hidden[-1]
        values[group] = (rng.normal(0, 1 / np.sqrt(last), last), np.zeros(1))
    save_policy(folder, groups, {"jekyll": "jekyll", "hyde": "hyde"}, "relu", values=values)
    return folder


def random_games(games: int) -> tuple[np.ndarray, list]:
    """Of ``games`` uniformly random games: Jekyll's observation at every
    decision, and the acting player's view at every decision with a choice."""
    rng = np.random.default_rng(0)
    rows, views = [], []
    for _ in range(games):
        state = new_game(rng)
        while not is_terminal(state):
            rows.append(encode(player_view(state, 0)))
            moves = legal_actions(state)
            if len(moves) > 1:
                views.append(player_view(state, state.to_act))
            apply_action(state, moves[rng.integers(len(moves))])
    return np.array(rows, dtype=np.int8), views


def search_milliseconds(agent, views: list, repeats: int) -> float:
    """Best of ``repeats`` mean milliseconds of ``agent.search`` over ``views``."""
    best = float("inf")
    for _ in range(repeats):
        agent.reset(seed=0)
        start = time.perf_counter()
        for view in views:
            agent.search(view)
        best = min(best, (time.perf_counter() - start) / len(views) * 1e3)
    return best


def best_microseconds(run, count: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, (time.perf_counter() - start) / count * 1e6)
    return best


def measure(policy: PolicyAgent, observations: np.ndarray, repeats: int) -> dict[str, float]:
    from jekyll_hyde_agents import _rollout  # lazy: may be unbuilt; main says so first

    net = c_network(_rollout, policy, "jekyll", value_head=policy.has_value_head)
    as_bytes = [row.tobytes() for row in observations]
    floats = observations.astype(np.float32)
    count = len(observations)

    def c_loop():
        for row in as_bytes:
            _rollout.net_forward(net, row)

    def numpy_loop():
        for row in observations:
            policy.logits(row, "jekyll")
            if policy.has_value_head:
                policy.value(row, "jekyll")

    def numpy_batch():
        policy.batch_logits(floats, "jekyll")

    return {
        "C, one at a time": best_microseconds(c_loop, count, repeats),
        "numpy, one at a time": best_microseconds(numpy_loop, count, repeats),
        "numpy, one batch (logits only)": best_microseconds(numpy_batch, count, repeats),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--widths",
        nargs="+",
        default=["256x256", "512x512"],
        help="hidden widths of random networks, e.g. 256x256",
    )
    parser.add_argument("--policy", help="a saved policy (or run folder) to time as well")
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--simulations", type=int, default=300)
    parser.add_argument("--decisions", type=int, default=300, help="searched decisions")
    args = parser.parse_args()
    if args.simulations < 1 or args.decisions < 1 or args.games < 1 or args.repeats < 1:
        raise SystemExit("--simulations, --decisions, --games and --repeats must be at least 1")
    if not rollout.core_available():
        raise SystemExit(
            "the C core jekyll_hyde_agents._rollout is not built: run `pip install -e .`"
        )
    try:
        nets = [(w, list(parse_layer_sizes(w))) for w in args.widths]
    except ValueError as error:
        raise SystemExit(f"--widths takes forms like 256x256: {error}") from None
    pin_to_one_core()
    observations, views = random_games(args.games)
    views = views[: args.decisions]
    print(f"{len(observations)} observations of {args.games} random games, one core\n")
    with tempfile.TemporaryDirectory() as folder:
        policies = [
            (f"random {name}", PolicyAgent(random_policy(f"{folder}/{name}", hidden)))
            for name, hidden in nets
        ]
        if args.policy:
            policies.append((args.policy, PolicyAgent(args.policy)))
        print("| network | C (us) | numpy, one at a time (us) | ratio | numpy, batched | ratio |")
        print("|---|---|---|---|---|---|")
        for name, policy in policies:
            t = measure(policy, observations, args.repeats)
            c, one, batch = t.values()
            print(
                f"| {name} | {c:.2f} | {one:.1f} | {one / c:.1f}x | {batch:.2f} | "
                f"{batch / c:.2f}x |"
            )
        n = args.simulations
        ismcts = search_milliseconds(
            ISMCTSAgent(ISMCTSConfig(num_simulations=n), seed=0), views, args.repeats
        )
        print(f"\n{len(views)} decisions searched with {n} simulations each\n")
        print("| search | ms a decision | simulations/s | cost against ismcts |")
        print("|---|---|---|---|")
        print(f"| ismcts:{n} | {ismcts:.3f} | {n / ismcts * 1e3:,.0f} | 1.00x |")
        for name, policy in policies:
            if not policy.has_value_head:
                continue
            az = AZAgent(policy, AZConfig(num_simulations=n, value_weight=0.5), seed=0)
            ms = search_milliseconds(az, views, args.repeats)
            print(f"| az:{n}, {name} | {ms:.3f} | {n / ms * 1e3:,.0f} | {ms / ismcts:.2f}x |")


if __name__ == "__main__":
    main()
