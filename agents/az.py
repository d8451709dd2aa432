"""Network-guided information-set search (``az:N``): ISMCTS with a policy network's
priors (PUCT) and its value head at the leaves.

Each simulation draws a world from the player's view (as ISMCTS does, with
the hidden cards re-dealt), walks the tree choosing by PUCT, ``Q + c P
sqrt(N) / (1 + n)`` with ``P`` the network's policy renormalised over the
actions legal in that world, adds one node and evaluates it with the network
of the player to act there: its policy becomes the node's priors, its value
head (blended with a playout when ``value_weight < 1``) the result
backed up the path. The whole search runs in C (``_rollout.az_search``) on the
shared rules core, with the network's forward pass in C (``agents/_net.h``),
so a decision of a few hundred simulations takes milliseconds. The move
played is the most visited one; the root's visit shares are the policy
target of expert iteration.

With ``gumbel=K`` the root chooses as Gumbel AlphaZero does (Danihelka et al.,
"Policy improvement by planning with Gumbel", 2022): it samples at most K
actions by Gumbel noise added to the network's log-policy, shares the
simulations among them by sequential halving on ``g + log P + sigma(Q)``, plays
the most visited one left (the last one standing), and its policy target is
``softmax(log P + sigma(Q))`` with Q completed for the actions it never tried and
rescaled to [0, 1]. That target improves on the
network's policy with few simulations, where visit shares are coarse; the tree
below the root stays PUCT's.

Agent names: ``az:N`` (N simulations a decision) or ``az:Xs`` (X seconds),
with options after commas: ``policy=PATH`` (a saved policy with a value head;
the shipped champion when left out), ``c=1.5`` (PUCT constant), ``value_weight=1.0`` (0:
playouts only, for policies without a value head) and ``playouts=random`` (or
``heuristic``: who plays the playouts that ``value_weight < 1`` blends in) and
``gumbel=K`` (Gumbel root selection among at most K sampled actions; 0, the
default, is PUCT at the root). ``parse_az_spec`` reads such a name into an
``AZSpec``, the typed form in which the agent travels between layers (a path
there may hold a comma); ``AZSpec.build`` makes the agent.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from jekyll_hyde_agents.base import parse_budget
from jekyll_hyde_agents.champion import champion_path
from jekyll_hyde_agents.policy_agent import PolicyAgent
from jekyll_hyde_agents.policy_format import PolicyFileError
from jekyll_hyde_agents.rollout import MOVE_POLICIES, SEED_BOUND, core_available, search_spec
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.engine.state import PlayerView

try:
    # a C extension (agents/_rollout.c): mypy reads no .so, and it has no stub
    from jekyll_hyde_agents import _rollout  # type: ignore[attr-defined]
except ImportError:  # not compiled: AZAgent refuses to be built (core_available)
    _rollout = None

PLAYOUT_KINDS = {name: MOVE_POLICIES[name] for name in ("random", "heuristic")}
"""Who may play the leaves' playouts (the C search's policy numbers)."""
MAX_GUMBEL_ACTIONS = NUM_ACTIONS
"""Gumbel root selection samples at most this many actions: all of them."""


@dataclass(frozen=True)
class AZConfig:
    """How the network-guided search runs.

    Attributes:
        num_simulations: simulations per decision (a cap when ``time_budget`` is set).
        time_budget: seconds per decision, or None for ``num_simulations`` exactly.
        c_puct: weight of the prior in PUCT's exploration term.
        value_weight: 1 evaluates leaves with the value head alone; 0 with one
            playout (no value head needed); between, a blend.
        fpu: the value assumed for an action not tried yet (a win chance).
        playouts: who plays the leaves' playouts: ``random`` moves or both
            players by the ``heuristic`` agent (slower, better informed).
        gumbel: 0 for PUCT at the root (the most visited action is played);
            K above 0 for Gumbel root selection among at most K sampled actions
            (at most ``MAX_GUMBEL_ACTIONS``, the number of actions). Its rounds
            are planned for ``num_simulations``; a ``time_budget`` only caps them
            (a cut search plays its most visited candidate), so ``az:Xs`` names
            cannot ask for it.
    """

    num_simulations: int = 200
    time_budget: float | None = None
    c_puct: float = 1.5
    value_weight: float = 1.0
    fpu: float = 0.5
    playouts: str = "random"
    gumbel: int = 0

    def __post_init__(self) -> None:
        if self.num_simulations < 1:
            raise ValueError(f"num_simulations must be >= 1, got {self.num_simulations}")
        if self.time_budget is not None and not self.time_budget > 0:
            raise ValueError(f"time_budget must be positive seconds, got {self.time_budget}")
        if not self.c_puct >= 0:
            raise ValueError(f"c_puct must be >= 0, got {self.c_puct}")
        if not 0 <= self.value_weight <= 1:
            raise ValueError(f"value_weight must be in [0, 1], got {self.value_weight}")
        if not 0 <= self.fpu <= 1:
            raise ValueError(f"fpu must be a win chance in [0, 1], got {self.fpu}")
        if self.playouts not in PLAYOUT_KINDS:
            raise ValueError(
                f"playouts must be one of {sorted(PLAYOUT_KINDS)}, got {self.playouts!r}"
            )
        if not 0 <= self.gumbel <= MAX_GUMBEL_ACTIONS:
            raise ValueError(
                f"gumbel must be 0 (PUCT at the root) or a number of sampled actions from 1 "
                f"to {MAX_GUMBEL_ACTIONS}, got {self.gumbel}"
            )
        if self.playouts != "random" and self.value_weight == 1:
            raise ValueError(
                f"playouts={self.playouts} needs value_weight < 1 (at 1 the leaves take the "
                "value head alone and play nothing out)"
            )


class SearchResult:
    """The root statistics of one search: visits, summed values and priors per
    action, the policy target and, with Gumbel root selection, the move.

    Args:
        visits: the root's visit count of each action (28 entries), kept as int64.
        values: the root player's win chances summed over each action's visits
            (28 entries), kept as float64.
        priors: the network's prior of each action at the root (28 entries), kept
            as float64.
        simulations: the simulations the search ran.
        policy: the search's policy target (28 entries), kept as float32.
        choice: the move Gumbel root selection chose, or None.

    Attributes:
        policy: the search's policy target (float32, 28 entries): the root's
            visit shares, or with Gumbel root selection its improved policy.
        choice: the move Gumbel root selection chose, or None (PUCT: the
            player takes the most visited action).
    """

    def __init__(self, visits, values, priors, simulations: int, policy, choice: int | None):
        self.visits = np.asarray(visits, dtype=np.int64)
        self.values = np.asarray(values, dtype=np.float64)
        self.priors = np.asarray(priors, dtype=np.float64)
        self.simulations = simulations
        self.policy = np.asarray(policy, dtype=np.float32)
        self.choice = choice


def c_network(core, policy: PolicyAgent, role: str, value_head: bool):
    """The role's network of ``policy`` in C (``core.make_net``), for search in ``_rollout``:
    its layers as float32 arrays, with the value head when asked for and present.

    Args:
        core: the compiled rules core (``jekyll_hyde_agents._rollout``) that builds
            the network.
        policy: the loaded policy whose network is copied.
        role: ``"jekyll"`` or ``"hyde"``: whose network.
        value_head: whether to include the role's value head (left out when the
            policy has none).

    Returns:
        The core's network object, which ``az_search``, ``ismcts`` and ``label_game``
        of the core read.
    """
    layers, head = policy.role_network(role)
    packed = [
        (np.ascontiguousarray(w, np.float32), np.ascontiguousarray(b, np.float32), *w.shape)
        for w, b in layers
    ]
    value = None
    if value_head and head is not None:
        value = (np.ascontiguousarray(head[0], np.float32), float(head[1][0]))
    return core.make_net(packed, policy.relu, value)


class AZAgent:
    """Plays the most visited action of a network-guided search from its view.

    Args:
        policy: the saved policy searched with (a run folder, a policy folder or
            its files; it needs a value head unless ``config.value_weight`` is 0),
            or a ``PolicyAgent`` loaded already.
        config: how the search runs (default: ``AZConfig()``).
        seed: seeds the generator each search draws its own seed from.

    Raises:
        RuntimeError: the compiled search core ``jekyll_hyde_agents._rollout`` is
            missing.
        PolicyFileError: the policy cannot be read, has no value head where the
            search needs one, or does not play both roles.
    """

    def __init__(
        self,
        policy: str | os.PathLike | PolicyAgent,
        config: AZConfig | None = None,
        seed: int | None = None,
    ):
        if not core_available():
            raise RuntimeError("AZAgent needs the compiled search core jekyll_hyde_agents._rollout")
        self.config = config or AZConfig()
        self.policy = policy if isinstance(policy, PolicyAgent) else PolicyAgent(policy)
        if self.config.value_weight > 0 and not self.policy.has_value_head:
            raise PolicyFileError(
                f"{self.policy.path}: this policy has no value head, which az search with "
                f"value_weight {self.config.value_weight} needs; use a policy trained with "
                "one, or value_weight=0 for playouts only"
            )
        missing = [role for role in AGENTS if role not in self.policy.roles]
        if missing:
            raise PolicyFileError(f"{self.policy.path}: az search needs both roles; no {missing}")
        self._nets = tuple(self._make_net(_rollout, role) for role in AGENTS)
        self._search = _rollout.az_search
        self._rng = np.random.default_rng(seed)
        self.last_simulations = 0

    def _make_net(self, core, role: str):
        return c_network(core, self.policy, role, value_head=True)

    @property
    def nets(self) -> tuple:
        """Jekyll's and Hyde's networks in the C core's form, as the search reads them."""
        return self._nets

    @property
    def search_rng(self) -> np.random.Generator:
        """The generator each search draws its seed from (``reset`` replaces it)."""
        return self._rng

    @property
    def name(self) -> str:
        config = self.config
        budget = f"{config.time_budget:g}s" if config.time_budget else str(config.num_simulations)
        return f"az:{budget}"

    def reset(self, seed: int | None = None) -> None:
        """Reseed the generator the searches draw their seeds from.

        Args:
            seed: the new seed; None keeps the generator as it is.
        """
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def search(self, view: PlayerView, simulations: int | None = None) -> SearchResult:
        """Run the search from ``view``; returns the root's statistics.

        ``simulations`` overrides the configured count for this one search (a cap
        when the agent has a time budget); labelling uses it for its fast searches.

        Args:
            view: what the player to act knows; the worlds searched are dealt
                from it.
            simulations: simulations for this search, or None for
                ``config.num_simulations``.

        Returns:
            The root's ``SearchResult``: visits, summed values and priors per
                action, the simulations run, the policy target and, with Gumbel
                root selection, the move.

        Raises:
            ValueError: ``simulations`` below 1.
        """
        config = self.config
        if simulations is not None and simulations < 1:
            raise ValueError(f"simulations must be >= 1, got {simulations}")
        visits, values, priors, done, policy, action = self._search(
            search_spec(view),
            simulations or config.num_simulations,
            int(self._rng.integers(SEED_BOUND)),
            config.time_budget or 0.0,
            *self._nets,
            config.c_puct,
            config.value_weight,
            config.fpu,
            PLAYOUT_KINDS[config.playouts],
            config.gumbel,
        )
        self.last_simulations = done
        return SearchResult(visits, values, priors, done, policy, action if action >= 0 else None)

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The move of a search from ``view``; a single legal action is played unsearched.

        Args:
            view: what the player to act knows.
            legal_actions: the ids of the legal actions.

        Returns:
            Gumbel root selection's choice, or else the most visited legal action
                (ties to the higher prior, then to the lower id).

        Raises:
            ValueError: a view of another variant than the policy's.
        """
        self.policy.check_variant(view)  # the network plays the variant it was trained on
        if len(legal_actions) == 1:
            return legal_actions[0]
        result = self.search(view)
        if result.choice is not None:
            return result.choice
        visits = result.visits
        return max(legal_actions, key=lambda a: (visits[a], result.priors[a], -a))


_SPEC_KIND = "az"
_CONFIG_KEYS = tuple(field.name for field in dataclasses.fields(AZConfig))
_JSON_KEYS = ("kind", "policy", *_CONFIG_KEYS)
_OPTION_NAMES = {"c_puct": "c"}  # the az name's key of a config field, where it differs


def _policy_text(policy: object) -> str | None:
    """An ``AZSpec``'s policy as the spec keeps it: a path object's text, or None."""
    if policy is None:
        return None
    text = os.fspath(policy) if isinstance(policy, os.PathLike) else policy
    if not isinstance(text, str) or not text:
        raise ValueError(f"AZSpec: policy must be a path or None, got {policy!r}")
    return text


@dataclass(frozen=True)
class AZSpec:
    """An ``az`` agent before it is built: the policy it searches with and how it searches.

    Agents travel between layers as specs, not as ``az:...`` strings built and
    parsed again (a path with a comma cannot be written in such a string). A spec
    string is read once, where it comes in (``parse_az_spec``); a spec is frozen,
    compares by value, pickles, and builds the same agent in any process, so the
    arena's workers can build their own (``__call__`` makes it a builder).

    Attributes:
        policy: a saved policy with a value head (a run folder or policy folder),
            or None for the shipped champion, looked up only when the agent is built.
        config: how the search runs.
    """

    policy: str | None = None
    config: AZConfig = dataclasses.field(default_factory=AZConfig)

    def __post_init__(self) -> None:
        if self.policy is not None:
            # a path object kept as its text
            object.__setattr__(self, "policy", _policy_text(self.policy))
        if not isinstance(self.config, AZConfig):
            raise TypeError(f"AZSpec: config must be an AZConfig, got {type(self.config).__name__}")

    def build(self, seed: int | None = None) -> AZAgent:
        """The agent, its randomness seeded with ``seed``.

        Args:
            seed: seeds the agent's searches (``AZAgent``'s ``seed``).

        Returns:
            The ``AZAgent`` searching with this spec's policy and config.

        Raises:
            PolicyFileError: the policy cannot be read, has no value head where the
                search needs one, or lacks a role (the shipped champion: it is missing).
            RuntimeError: the compiled search core is missing.
        """
        policy = champion_path() if self.policy is None else self.policy
        return AZAgent(policy, self.config, seed=seed)

    def __call__(self) -> AZAgent:
        return self.build()

    @property
    def name(self) -> str:
        """A label for reports: ``az:`` and the budget, as ``AZAgent.name`` gives it,
        then the policy when one is named and the options that differ from
        ``AZConfig``'s defaults. Never parsed again: a path may hold a comma."""
        config, default = self.config, AZConfig()
        budget = f"{config.time_budget:g}s" if config.time_budget else str(config.num_simulations)
        parts = [f"az:{budget}"]
        if self.policy is not None:
            parts.append(f"policy={self.policy}")
        for key in ("c_puct", "value_weight", "fpu", "playouts", "gumbel"):
            value = getattr(config, key)
            if value != getattr(default, key):
                shown = f"{value:g}" if isinstance(value, float) else str(value)
                parts.append(f"{_OPTION_NAMES.get(key, key)}={shown}")
        return ",".join(parts)

    def with_policy(self, policy: str | os.PathLike | None) -> AZSpec:
        """This spec searching with ``policy`` (None: the shipped champion).

        Args:
            policy: the path of a saved policy with a value head, or None.

        Returns:
            A new spec with the same config; this one is unchanged (frozen).

        Raises:
            ValueError: ``policy`` is neither a non-empty path nor None.
        """
        return dataclasses.replace(self, policy=_policy_text(policy))

    def to_json(self) -> dict:
        """The spec as a plain dict of JSON values; ``from_json`` reads it back.

        Returns:
            ``kind`` (``"az"``), ``policy`` (a path, or None for the champion) and
                every field of ``AZConfig``.
        """
        return {"kind": _SPEC_KIND, "policy": self.policy, **dataclasses.asdict(self.config)}

    @classmethod
    def from_json(cls, data: Any) -> AZSpec:
        """The spec ``to_json`` wrote. Keys left out take ``AZConfig``'s defaults (and the
        champion for ``policy``).

        Args:
            data: the decoded JSON (any value: everything is checked).

        Returns:
            The spec.

        Raises:
            ValueError: not a dict, another kind, an unknown key or a value of the
                wrong type or range; the message names the key (and the keys allowed).
        """
        allowed = ", ".join(_JSON_KEYS)
        if not isinstance(data, Mapping):
            raise ValueError(f"an az spec is a JSON object with keys {allowed}; got {data!r}")
        for key in data:
            if key not in _JSON_KEYS:
                raise ValueError(f"az spec: unknown key {key!r}; the keys are {allowed}")
        if data.get("kind", _SPEC_KIND) != _SPEC_KIND:
            raise ValueError(f"az spec: 'kind' must be {_SPEC_KIND!r}, got {data['kind']!r}")
        policy = data.get("policy")
        if policy is not None and not (isinstance(policy, str) and policy):
            raise ValueError(f"az spec: 'policy' must be a path or null, got {policy!r}")
        values = {key: _json_field(key, data[key]) for key in _CONFIG_KEYS if key in data}
        try:
            config = AZConfig(**values)
        except ValueError as error:
            raise ValueError(f"az spec: {error}") from None
        return cls(policy, config)


def _json_field(key: str, value: Any) -> Any:
    """``value`` of the ``AZConfig`` field ``key`` as the config holds it, or ValueError
    naming the key when JSON gave the wrong type."""
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if key in ("num_simulations", "gumbel"):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        expected = "a whole number"
    elif key == "playouts":
        if isinstance(value, str):
            return value
        expected = f"one of {sorted(PLAYOUT_KINDS)}"
    elif key == "time_budget" and value is None:
        return None
    elif is_number:
        return float(value)
    else:
        expected = "a number" + (" or null" if key == "time_budget" else "")
    raise ValueError(f"az spec: {key!r} must be {expected}, got {value!r}")


def _parse(
    argument: str | None,
    default_policy: Callable[[], str | os.PathLike] | None,
    require_policy: bool,
) -> AZSpec:
    budget, _, rest = (argument or "").partition(",")
    options: dict[str, str] = {}
    for item in filter(None, rest.split(",")):
        key, equals, value = item.partition("=")
        if not equals or key not in ("policy", "c", "value_weight", "playouts", "gumbel"):
            raise ValueError(
                f"'az:{argument}': options are policy=PATH, c=X, value_weight=X, "
                f"playouts={'|'.join(PLAYOUT_KINDS)} and gumbel=K (0 to {MAX_GUMBEL_ACTIONS}), "
                f"comma-separated after the budget; got {item!r}"
            )
        options[key] = value
    simulations, seconds = parse_budget(budget or None, "az", AZConfig.num_simulations)
    policy: str | os.PathLike | None = options.get("policy")
    if policy is None and default_policy is not None:
        policy = default_policy()
    if policy is None and require_policy:
        raise ValueError(
            f"'az:{argument}': name a saved policy with a value head, "
            "e.g. 'az:200,policy=runs/mine' (a run folder or policy folder)"
        )
    try:
        numbers = {key: float(options[key]) for key in ("c", "value_weight") if key in options}
    except ValueError:
        raise ValueError(f"'az:{argument}': c and value_weight must be numbers") from None
    gumbel = options.get("gumbel", str(AZConfig.gumbel))
    if not gumbel.isdigit():
        raise ValueError(
            f"'az:{argument}': gumbel must be a whole number of sampled actions from 0 to "
            f"{MAX_GUMBEL_ACTIONS}, got {gumbel!r}"
        )
    if seconds is not None and int(gumbel):
        raise ValueError(
            f"'az:{argument}': gumbel needs a number of simulations, not seconds: sequential "
            "halving plans its rounds from the simulations, which a clock would cut short"
        )
    config = AZConfig(
        num_simulations=simulations or 100_000,
        time_budget=seconds,
        c_puct=numbers.get("c", AZConfig.c_puct),
        value_weight=numbers.get("value_weight", AZConfig.value_weight),
        playouts=options.get("playouts", AZConfig.playouts),
        gumbel=int(gumbel),
    )
    return AZSpec(_policy_text(policy), config)


def parse_az_spec(
    argument: str | None, default_policy: Callable[[], str | os.PathLike] | None = None
) -> AZSpec:
    """Read ``N[,policy=PATH][,c=X][,value_weight=X][,playouts=KIND][,gumbel=K]`` (or
    ``Xs,...``), the argument of an ``az:`` name, into a spec; nothing is loaded.

    The policy is ``policy=``'s, else ``default_policy()`` (called only then), else
    None: the shipped champion, looked up when the spec is built. Read a string once,
    where it comes in (a command line, a config file); pass the spec on from there.

    Args:
        argument: the text after ``az:``; None or empty for the default budget.
        default_policy: called for the policy's path when ``argument`` names none.

    Returns:
        The ``AZSpec``, not built (no file is read).

    Raises:
        ValueError: an unknown option, a bad budget or a value out of range, worded
            as ``make_agent("az:...")`` words it.
    """
    return _parse(argument, default_policy, require_policy=False)


def parse_az(
    argument: str | None, default_policy: Callable[[], str | os.PathLike] | None = None
) -> AZAgent:
    """Build ``az:N[,policy=PATH][,c=X][,value_weight=X][,playouts=KIND][,gumbel=K]``
    (or ``az:Xs,...``): ``parse_az_spec``'s spec, built.

    ``default_policy`` gives the policy searched when the name has no
    ``policy=`` (the registry passes the champion's path); it is called only then.
    Without either, the name is refused: a caller that means the champion says so.

    Args:
        argument: the text after ``az:``; None or empty for the default budget.
        default_policy: called for the policy's path when ``argument`` names none;
            None to require ``policy=``.

    Returns:
        The ``AZAgent``, with its policy loaded.

    Raises:
        ValueError: an unknown option, a bad budget or a value out of range, or no
            policy named while ``default_policy`` is None.
        PolicyFileError: the policy cannot be read, has no value head where the
            search needs one, or does not play both roles.
        RuntimeError: the compiled search core is missing.
    """
    return _parse(argument, default_policy, require_policy=default_policy is None).build()


__all__ = ["AZAgent", "AZConfig", "AZSpec", "SearchResult", "parse_az", "parse_az_spec"]
