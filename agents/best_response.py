"""Best-response search (ISMCTS-BR): information-set MCTS that knows its opponent's policy.

``br:N,target=SPEC`` searches like ``ismcts:N`` (worlds re-dealt from the
player's own view, UCT over its own moves, the whole loop in C on the shared
rules core) except that the opponent is not searched: in every world, inside
the tree and in the playouts, the opponent's moves are the target's, computed
from the target's own view of that world. This is the search responder of
Timbers et al. ("Approximate exploitability: learning a best response",
IJCAI 2022) that ``jekyll-hyde exploit`` reports beside the RL responder.

The search knows the target's policy, never its cards: the worlds are drawn
from the responder's view alone, uniformly among the deals consistent with it
(not reweighted by how likely the target's past moves were in each), which
keeps the result a lower bound on how exploitable the target is.

The target plays the playouts too, unless ``playouts=`` names another of the
kinds below: against a saved policy, ``playouts=heuristic`` keeps the
network's moves in the tree but spares its forward pass in every playout
step, for many times the simulations a second.

Targets it can model, all in C: ``random`` (uniform), ``lowest``,
``heuristic`` (``agents/_heuristic.h``, held to ``agents/heuristic.py``) and
saved policies, including ``champion`` (the network's most likely legal
action, as ``PolicyAgent`` plays it). Searches such as ``ismcts:N`` are refused:
a search inside every step of another search costs too much.

``parse_br_spec`` reads a ``br:`` name into a ``BRSpec``, the typed form in which the
agent travels between layers; ``BRSpec.build`` makes the agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from jekyll_hyde_agents.az import c_network
from jekyll_hyde_agents.base import make_agent, parse_budget
from jekyll_hyde_agents.policy_agent import PolicyAgent
from jekyll_hyde_agents.rollout import MOVE_POLICIES, SEED_BOUND, core_available, search_spec
from jekyll_hyde_env.engine.cards import AGENTS
from jekyll_hyde_env.engine.state import PlayerView

try:
    # a C extension (agents/_rollout.c): mypy reads no .so, and it has no stub
    from jekyll_hyde_agents import _rollout  # type: ignore[attr-defined]
except ImportError:  # not compiled: BestResponseAgent refuses to be built (core_available)
    _rollout = None

TARGET_KINDS = MOVE_POLICIES
NETWORK_KIND = 3
DEFAULT_SIMULATIONS = 1000
UCT_C = 0.7


def target_model(target) -> tuple[int, PolicyAgent | None]:
    """(kind, agent) for an agent name or object the search can model.

    Args:
        target: an agent name (built with ``make_agent``) or an agent: ``random``,
            ``lowest``, ``heuristic`` (by their ``name``) or a deterministic
            ``PolicyAgent`` (a saved policy, ``champion``).

    Returns:
        kind: the C search's number for the target: a ``TARGET_KINDS`` value, or
            ``NETWORK_KIND`` for a saved policy.
        agent: the ``PolicyAgent`` whose network the search runs, or None for the
            fixed policies.

    Raises:
        ValueError: a target the search cannot play in C (the message lists those it can).
    """
    agent = make_agent(target) if isinstance(target, str) else target
    if isinstance(agent, PolicyAgent):
        if not agent.deterministic:
            raise ValueError("br: a sampling policy is not modelled; use a deterministic one")
        return NETWORK_KIND, agent
    name = getattr(agent, "name", None)
    if name in TARGET_KINDS:
        return TARGET_KINDS[name], None
    raise ValueError(
        f"br: cannot model the target {target!r}; the search responder plays "
        f"{sorted(TARGET_KINDS)} and saved policies (a run folder, a policy, 'champion')"
    )


class BestResponseAgent:
    """Plays the most visited action of an ISMCTS-BR search against ``target``."""

    def __init__(
        self,
        target: str | object,
        simulations: int = DEFAULT_SIMULATIONS,
        time_budget: float | None = None,
        uct_c: float = UCT_C,
        seed: int | None = None,
        playouts: str | None = None,
    ):
        """``playouts`` names the policy of the target's playout moves: one of
        ``random``, ``lowest``, ``heuristic``, or None for the target itself.

        Args:
            target: the agent the search responds to, an agent name
                (``make_agent``) or an agent; one the search can play in C:
                ``random``, ``lowest``, ``heuristic`` or a deterministic saved
                policy (``PolicyAgent``, ``champion``).
            simulations: simulations per decision (a cap when ``time_budget`` is set).
            time_budget: seconds per decision, or None for ``simulations`` exactly.
            uct_c: the UCT exploration constant.
            seed: seeds the generator each search draws its own seed from.
            playouts: who plays the target's moves in the playouts (see above).

        Raises:
            RuntimeError: the compiled search core ``jekyll_hyde_agents._rollout``
                is missing.
            ValueError: ``simulations`` below 1, a target the search cannot model
                (a sampling policy, a search, an unknown name), or an unknown
                ``playouts``.
        """
        if not core_available():
            raise RuntimeError(
                "the best-response search needs the compiled core jekyll_hyde_agents._rollout"
            )
        if simulations < 1:
            raise ValueError(f"simulations must be >= 1, got {simulations}")
        self.kind, policy = target_model(target)
        if playouts is not None and playouts not in TARGET_KINDS:
            raise ValueError(
                f"br: playouts={playouts!r}; choose one of {sorted(TARGET_KINDS)} "
                "(or leave it out for the target's own moves)"
            )
        self.playouts = playouts
        self.playout_kind = self.kind if playouts is None else TARGET_KINDS[playouts]
        self.target = target if isinstance(target, str) else getattr(target, "name", "target")
        self.simulations = simulations
        self.time_budget = time_budget
        self.uct_c = uct_c
        self._nets = {}
        if policy is not None:
            for role in policy.roles:
                self._nets[role] = c_network(_rollout, policy, role, value_head=False)
        self._search = _rollout.ismcts
        self._rng = np.random.default_rng(seed)
        self.last_simulations = 0

    @property
    def name(self) -> str:
        budget = f"{self.time_budget:g}s" if self.time_budget else str(self.simulations)
        playouts = f",playouts={self.playouts}" if self.playouts else ""
        return f"br:{budget}{playouts},target={self.target}"

    def reset(self, seed: int | None = None) -> None:
        """Reseed the generator the searches draw their seeds from.

        Args:
            seed: the new seed; None keeps the generator as it is.
        """
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def search(self, view: PlayerView) -> tuple[np.ndarray, int]:
        """Root visit counts per action (28) and the simulations run, from ``view``.

        Args:
            view: what the responder knows; the worlds searched are dealt from it,
                and the target plays in each from its own view of that world.

        Returns:
            visits: the root's visit count of each of the 28 actions.
            simulations: the simulations run (fewer than asked when the time
                budget ran out).

        Raises:
            ValueError: the target is a saved policy that does not play the
                opponent's role.
        """
        net = None
        if self.kind == NETWORK_KIND:
            role = AGENTS[1 - view.player]
            if role not in self._nets:
                raise ValueError(f"br: the target policy does not play {role}")
            net = self._nets[role]
        visits, _, _, done = self._search(
            search_spec(view),
            self.simulations,
            self.uct_c,
            int(self._rng.integers(SEED_BOUND)),
            self.time_budget or 0.0,
            self.kind,
            net,
            self.playout_kind,
        )
        self.last_simulations = done
        return np.asarray(visits), done

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The most visited legal action of a search from ``view``.

        Args:
            view: what the responder knows.
            legal_actions: the ids of the legal actions.

        Returns:
            The chosen action id (ties to the lower id); a single legal action
                is played without search.
        """
        if len(legal_actions) == 1:
            return legal_actions[0]
        visits, _ = self.search(view)
        return max(legal_actions, key=lambda a: (visits[a], -a))


@dataclass(frozen=True)
class BRSpec:
    """A ``br`` agent before it is built: its budget, its playouts and its target.

    Agents travel between layers as specs, not as ``br:...`` strings built and
    parsed again; the spec is read once from a name (``parse_br_spec``), compares by
    value, pickles, and builds the same agent in any process (``__call__`` makes it a
    builder for the arena's workers).

    Attributes:
        target: the agent the search responds to, as the user named it (a name or a
            path, commas allowed); it is built, and checked, when the spec is.
        simulations: simulations a decision (a cap when ``time_budget`` is set).
        time_budget: seconds a decision, or None for ``simulations`` exactly.
        playouts: who plays the target's playout moves: one of ``TARGET_KINDS``, or
            None for the target itself.
    """

    target: str
    simulations: int = DEFAULT_SIMULATIONS
    time_budget: float | None = None
    playouts: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.target, str) or not self.target:
            raise ValueError(f"br: the target must be an agent name or path, got {self.target!r}")
        if isinstance(self.simulations, bool) or not isinstance(self.simulations, Integral):
            raise ValueError(f"simulations must be a whole number, got {self.simulations!r}")
        object.__setattr__(self, "simulations", int(self.simulations))
        if self.simulations < 1:
            raise ValueError(f"simulations must be >= 1, got {self.simulations}")
        if self.time_budget is not None and not 0 < self.time_budget < float("inf"):
            raise ValueError(f"time_budget must be positive seconds, got {self.time_budget}")
        if self.playouts is not None and self.playouts not in TARGET_KINDS:
            raise ValueError(
                f"br: playouts={self.playouts!r}; choose one of {sorted(TARGET_KINDS)} "
                "(or leave it out for the target's own moves)"
            )

    def build(self, seed: int | None = None) -> BestResponseAgent:
        """The agent, its randomness seeded with ``seed``.

        Args:
            seed: seeds the agent's searches (``BestResponseAgent``'s ``seed``).

        Returns:
            The ``BestResponseAgent``, its target built and checked.

        Raises:
            ValueError: a target the search cannot model, or no agent at all.
            RuntimeError: the compiled search core is missing.
        """
        return BestResponseAgent(
            self.target,
            simulations=self.simulations,
            time_budget=self.time_budget,
            seed=seed,
            playouts=self.playouts,
        )

    def __call__(self) -> BestResponseAgent:
        return self.build()

    @property
    def name(self) -> str:
        """A label for reports, as ``BestResponseAgent.name`` gives it; never parsed again."""
        budget = f"{self.time_budget:g}s" if self.time_budget else str(self.simulations)
        playouts = f",playouts={self.playouts}" if self.playouts else ""
        return f"br:{budget}{playouts},target={self.target}"


def parse_br_spec(argument: str | None) -> BRSpec:
    """Read ``N[,playouts=KIND],target=SPEC`` (or ``Xs,...``), the argument of a ``br:``
    name, into a spec; the target is everything after ``target=``, so it comes last
    (and may hold commas). The target is not built here: ``BRSpec.build`` does.

    Args:
        argument: the text after ``br:``.

    Returns:
        The ``BRSpec``.

    Raises:
        ValueError: no target, a bad budget or an unknown playouts kind; the message
            quotes the name.
    """
    budget, _, rest = (argument or "").partition(",")
    playouts = None
    if rest.startswith("playouts="):
        option, _, rest = rest.partition(",")
        playouts = option[len("playouts=") :]
    if not rest.startswith("target=") or not rest[len("target=") :]:
        raise ValueError(
            f"'br:{argument}': name the target last, after the budget and any "
            "playouts=KIND, e.g. 'br:1000,target=heuristic' or "
            "'br:300,playouts=heuristic,target=runs/mine'"
        )
    simulations, seconds = parse_budget(budget or None, "br", DEFAULT_SIMULATIONS)
    target = rest[len("target=") :]
    if seconds is not None:
        return BRSpec(target, simulations=100_000, time_budget=seconds, playouts=playouts)
    assert simulations is not None  # parse_budget gives a count or seconds
    return BRSpec(target, simulations=simulations, playouts=playouts)


def parse_br(argument: str | None) -> BestResponseAgent:
    """Build ``br:N[,playouts=KIND],target=SPEC`` (or ``br:Xs,...``): ``parse_br_spec``'s
    spec, built.

    Args:
        argument: the text after ``br:``.

    Returns:
        The ``BestResponseAgent``, its target built and checked.

    Raises:
        ValueError: no target, a bad budget, an unknown playouts kind or a target the
            search cannot model.
        RuntimeError: the compiled search core is missing.
    """
    return parse_br_spec(argument).build()


__all__ = ["BRSpec", "BestResponseAgent", "parse_br", "parse_br_spec", "target_model"]
