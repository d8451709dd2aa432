"""A saved policy behind the agent interface, run with numpy alone.

The policy is the actor of a MaskablePPO ``MlpPolicy``: hidden layers with
tanh (or relu), then the action logits. Illegal actions are masked out, as in
training. ``deterministic=True`` plays the most likely legal action;
otherwise an action is sampled with the agent's own seeded generator. The
same ``encode`` as the environments turns the view into the observation, so a
policy sees in play exactly what it saw in training. No torch is needed.
"""

from __future__ import annotations

import copy
import os

import numpy as np

from jekyll_hyde_agents.policy_file import read_policy
from jekyll_hyde_agents.policy_format import PolicyFileError
from jekyll_hyde_env.engine.cards import AGENTS
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.engine.variant import parse_variant
from jekyll_hyde_env.observation import encode


class PolicyAgent:
    """Plays the roles a saved policy covers (both, for a run's export)."""

    def __init__(
        self,
        path: str | os.PathLike,
        deterministic: bool = True,
        seed: int | None = None,
        label: str | None = None,
    ):
        """``label`` is the agent's name in reports (default ``policy:PATH``).

        Args:
            path: the saved policy: its folder, a run folder holding ``policy/``,
                or its ``policy.json``.
            deterministic: play the most likely legal action (True) or sample from
                the masked softmax of the logits.
            seed: seeds the sampling generator (``reset`` reseeds it).
            label: the agent's name in reports.

        Raises:
            PolicyFileError: no saved policy at ``path``, or one that fails its
                checks; the message names the file and the problem.
        """
        self.metadata, groups, values = read_policy(path)
        self.path = str(path)
        self._label = label or f"policy:{self.path}"
        self.deterministic = deterministic
        # The variant trained on (RULES.md V1-V7), checked when the file was read.
        self.variant = parse_variant(self.metadata.get("variant"))
        self._layers = {role: groups[group] for role, group in self.metadata["roles"].items()}
        self._values = {role: values[group] for role, group in self.metadata["roles"].items()}
        self._relu = self.metadata["architecture"]["activation"] == "relu"
        self._rng = np.random.default_rng(seed)

    @property
    def name(self) -> str:
        return self._label

    @property
    def roles(self) -> list[str]:
        return [role for role in AGENTS if role in self._layers]

    @property
    def has_value_head(self) -> bool:
        """Whether the file has a value head for every role it plays."""
        return all(head is not None for head in self._values.values())

    @property
    def relu(self) -> bool:
        return self._relu

    def role_network(self, role: str) -> tuple[list, tuple[np.ndarray, np.ndarray] | None]:
        """The role's (layers, value head or None), for search that runs the network in C.

        Args:
            role: ``"jekyll"`` or ``"hyde"``.

        Returns:
            layers: the role's network as a list of (weight (out, in), bias (out,))
                float32 arrays, the action logits' layer last.
            value_head: (weight, bias) of its value head, or None without one.

        Raises:
            PolicyFileError: this policy does not play ``role``.
        """
        if role not in self._layers:
            raise PolicyFileError(
                f"{self.path}: this policy does not play {role} (it plays {self.roles})"
            )
        return self._layers[role], self._values[role]

    def value(self, observation: np.ndarray, role: str) -> float:
        """The value head's estimate of the outcome (+1 win, -1 loss) for the observing role.

        Args:
            observation: one (327,) observation of the role's player (``encode``).
            role: ``"jekyll"`` or ``"hyde"``, the observing role.

        Returns:
            The estimate, in [-1, 1] (the head's tanh).

        Raises:
            PolicyFileError: this policy does not play ``role``, or has no value head.
        """
        layers, head = self.role_network(role)
        if head is None:
            raise PolicyFileError(f"{self.path}: this policy has no value head")
        x = self._hidden(observation.astype(np.float32), layers, rows=False)
        return float(np.tanh(head[0] @ x + head[1][0]))

    def _hidden(self, x: np.ndarray, layers: list, rows: bool) -> np.ndarray:
        """The last hidden layer's activations for one observation, or for rows of them."""
        for weight, bias in layers[:-1]:
            x = (x @ weight.T if rows else weight @ x) + bias
            x = np.maximum(x, 0) if self._relu else np.tanh(x)
        return x

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampling generator for the next game.

        Args:
            seed: the new seed; None keeps the generator as it is.
        """
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def spawn(self) -> PolicyAgent:
        """Another agent on the same weights (shared, read-only) with its own generator,
        for a game played beside this agent's.

        Returns:
            The twin: the same label and play, a generator seeded from the operating
                system (``reset`` seeds it).
        """
        twin = copy.copy(self)
        twin._rng = np.random.default_rng()
        return twin

    def logits(self, observation: np.ndarray, role: str) -> np.ndarray:
        """The action logits of the role's network for one observation.

        Args:
            observation: one (327,) observation of the role's player (``encode``).
            role: ``"jekyll"`` or ``"hyde"``.

        Returns:
            The (28,) logits, illegal actions not masked.

        Raises:
            PolicyFileError: this policy does not play ``role``.
        """
        layers, _ = self.role_network(role)
        weight, bias = layers[-1]
        return weight @ self._hidden(observation.astype(np.float32), layers, rows=False) + bias

    def batch_logits(self, observations: np.ndarray, role: str) -> np.ndarray:
        """The action logits of the role's network for a batch of observations (rows).

        Args:
            observations: (k, 327) observations of the role's player, one per row.
            role: ``"jekyll"`` or ``"hyde"``.

        Returns:
            The (k, 28) logits, illegal actions not masked.

        Raises:
            PolicyFileError: this policy does not play ``role``.
        """
        layers, _ = self.role_network(role)
        weight, bias = layers[-1]
        return self._hidden(observations.astype(np.float32), layers, rows=True) @ weight.T + bias

    def act_batch(
        self, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray
    ) -> np.ndarray:
        """One action for each row of several games at once (the batched environments use it).

        Args:
            observations: int8 (k, 327), each row the observation of the seat to act.
            masks: (k, 28) action masks of those seats.
            seats: (k,) the seat (0 Jekyll, 1 Hyde) of each row.

        Returns:
            int64 (k,) actions: the most likely legal one, or one sampled from the
                masked softmax (Gumbel-max, with the agent's generator) when not
                deterministic.
        """
        actions = np.zeros(len(observations), np.int64)
        for seat, role in enumerate(AGENTS):
            rows = np.flatnonzero(seats == seat)
            if rows.size == 0:
                continue
            logits = self.batch_logits(observations[rows], role)
            logits = np.where(masks[rows] != 0, logits, -np.inf)
            if not self.deterministic:
                logits += self._rng.gumbel(size=logits.shape)
            actions[rows] = logits.argmax(axis=1)
        return actions

    def check_variant(self, view: PlayerView) -> None:
        """Refuse a view of another variant than the one the policy was trained on.

        Args:
            view: the view to play.

        Raises:
            ValueError: naming both variants.
        """
        if view.variant != self.variant:
            raise ValueError(
                f"{self.path} was trained on variant {self.variant.name} and does not play "
                f"variant {view.variant.name}"
            )

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The most likely legal action, or one sampled when not ``deterministic``.

        Args:
            view: what the player to act knows, encoded as the environments encode
                it; its seat chooses the role's network.
            legal_actions: the ids of the legal actions.

        Returns:
            The chosen action id.

        Raises:
            PolicyFileError: this policy does not play the seat to act.
        """
        self.check_variant(view)
        logits = self.logits(encode(view), AGENTS[view.player])[legal_actions]
        if self.deterministic:
            return legal_actions[int(np.argmax(logits))]
        probabilities = np.exp(logits - logits.max())
        probabilities /= probabilities.sum()
        return legal_actions[int(self._rng.choice(len(legal_actions), p=probabilities))]
