"""Tabular strategies: an action distribution for each information state of a small variant.

``jekyll-hyde solve`` writes the equilibrium it finds as one ``tabular.npz``; the
arena, ``eval --variant`` and ``exploit --exact`` play it as ``TabularAgent``. The file
is data only (numpy arrays, no pickle), so it is safe to load from anywhere:

| array | what |
|---|---|
| ``format`` | the string ``"jekyll-hyde-tabular"`` |
| ``meta`` | JSON: ``{"variant": ..., "made_by": ...}``, the variant as ``Variant.to_json`` |
| ``keys`` | each information state, as ``engine.info_string`` writes the view |
| ``offsets`` | where each state's entries start in the two arrays below (one more than ``keys``) |
| ``actions``, ``probabilities`` | each state's actions (ids 0-27) and their probabilities |

A tabular strategy is a mixed strategy, and the agent plays it as it is: each action is
sampled with its probability from the agent's seeded generator (an equilibrium played
by its most likely action would be another strategy, and exploitable).
"""

from __future__ import annotations

import json
import os
import pathlib
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from jekyll_hyde_env.engine.information import info_string
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.engine.variant import Variant, parse_variant

TABULAR_FILE = "tabular.npz"
"""The file name of a tabular strategy, alone or in a folder."""

FORMAT = "jekyll-hyde-tabular"


class TabularFileError(ValueError):
    """A tabular strategy file that cannot be read; the message names the file and why."""


def save_tabular(
    path: str | os.PathLike,
    variant: Variant,
    table: Mapping[str, tuple[Sequence[int], Sequence[float]]],
    meta: Mapping[str, Any] | None = None,
) -> pathlib.Path:
    """Write a tabular strategy atomically (a temporary file renamed into place).

    Args:
        path: the file to write, or a folder to write ``tabular.npz`` in.
        variant: the variant the strategy plays.
        table: information state (``info_string``) -> (actions, their probabilities).
        meta: more JSON values to keep beside the variant (who made it, the game value).

    Returns:
        The file written.
    """
    target = pathlib.Path(path)
    if target.is_dir() or target.suffix != ".npz":
        target.mkdir(parents=True, exist_ok=True)
        target = target / TABULAR_FILE
    keys = sorted(table)
    offsets = np.zeros(len(keys) + 1, np.int64)
    actions: list[int] = []
    probabilities: list[float] = []
    for i, key in enumerate(keys):
        ids, probs = table[key]
        actions.extend(int(a) for a in ids)
        probabilities.extend(float(p) for p in probs)
        offsets[i + 1] = len(actions)
    info = {"variant": variant.to_json(), **(meta or {})}
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".npz.tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez_compressed(
                stream,
                format=np.array(FORMAT),
                meta=np.array(json.dumps(info, sort_keys=True)),
                keys=np.array(keys, dtype=np.str_),
                offsets=offsets,
                actions=np.array(actions, np.int8),
                probabilities=np.array(probabilities, np.float64),
            )
        os.replace(temporary, target)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise
    return target


def tabular_path(path: str | os.PathLike) -> pathlib.Path:
    """The ``tabular.npz`` that ``path`` names: the file itself or the one in a folder.

    Args:
        path: a ``tabular.npz`` file or a folder holding one.

    Returns:
        The file's path (it may not exist).
    """
    target = pathlib.Path(path)
    return target / TABULAR_FILE if target.is_dir() else target


class TabularAgent:
    """Plays a tabular strategy (``save_tabular``) of one variant.

    Args:
        path: a ``tabular.npz`` file or a folder holding one.
        seed: seeds the generator that samples the actions.

    Raises:
        TabularFileError: the file is missing or not a tabular strategy.
    """

    def __init__(self, path: str | os.PathLike, seed: int | None = None) -> None:
        self.path = tabular_path(path)
        self._rng = np.random.default_rng(seed)
        try:
            with np.load(self.path, allow_pickle=False) as data:
                if str(data["format"]) != FORMAT:
                    raise TabularFileError(f"{self.path}: not a tabular strategy ({FORMAT})")
                self.meta: dict[str, Any] = json.loads(str(data["meta"]))
                keys = data["keys"].tolist()
                offsets = data["offsets"]
                actions = data["actions"].astype(np.int64)
                probabilities = data["probabilities"]
        except (OSError, KeyError, ValueError) as error:
            if isinstance(error, TabularFileError):
                raise
            raise TabularFileError(
                f"{self.path}: cannot read a tabular strategy: {error}"
            ) from None
        self.variant = parse_variant(self.meta["variant"])
        self._index = {key: i for i, key in enumerate(keys)}
        self._offsets = offsets
        self._actions = actions
        self._probabilities = probabilities
        self.name = f"tabular:{self.path}"

    def reset(self, seed: int | None = None) -> None:
        """Reseed the generator for the next game.

        Args:
            seed: the new seed; None keeps the generator as it is.
        """
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def covers(self, view: PlayerView) -> bool:
        """Whether the strategy has an entry for ``view``: a view of its variant that its
        own play reaches (a solver leaves out the views behind its own zero-probability
        actions).

        Args:
            view: the player's view.

        Returns:
            True when ``action_probabilities`` has the view's probabilities.
        """
        return view.variant == self.variant and info_string(view) in self._index

    def action_probabilities(self, view: PlayerView, legal_actions: list[int]) -> np.ndarray:
        """The strategy's probability of each legal action at ``view``.

        Args:
            view: the player's view, of this strategy's variant.
            legal_actions: the legal actions, ascending.

        Returns:
            float64 array, one probability per legal action (0 for those the strategy
            never plays there).

        Raises:
            ValueError: a view of another variant, or a view that the strategy has no
                entry for (one its own play never reaches).
        """
        if view.variant != self.variant:
            raise ValueError(
                f"{self.path} plays variant {self.variant.name}, not {view.variant.name}"
            )
        key = info_string(view)
        row = self._index.get(key)
        if row is None:
            raise ValueError(
                f"{self.path} has no entry for this view of variant {self.variant.name} "
                f"(its own play never reaches it): {key}"
            )
        start, end = self._offsets[row], self._offsets[row + 1]
        out = np.zeros(len(legal_actions))
        position = {a: i for i, a in enumerate(legal_actions)}
        for action, p in zip(self._actions[start:end], self._probabilities[start:end], strict=True):
            if int(action) not in position:
                raise ValueError(f"{self.path}: action {int(action)} is not legal at {key}")
            out[position[int(action)]] = p
        return out

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """An action sampled from the strategy at ``view``.

        Args:
            view: the player's view, of this strategy's variant.
            legal_actions: the legal actions, ascending.

        Returns:
            The chosen action id.

        Raises:
            ValueError: as ``action_probabilities``.
        """
        probabilities = self.action_probabilities(view, legal_actions)
        return legal_actions[int(self._rng.choice(len(legal_actions), p=probabilities))]
