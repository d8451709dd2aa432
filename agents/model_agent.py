"""A network over the Gym observation as an agent, whatever library made it.

Every model that reads the observation of ``JekyllHyde-v0`` (327 entries, see
``jekyll_hyde_env.observation``) and scores the 28 actions plays through one
class here: ``ModelAgent``. A library's adapter (SB3, RLlib, Tianshou,
TorchScript, ONNX; ``jekyll_hyde_agents.external``) only supplies a
``ScoringModel``: a function from a batch of observations and masks to one score
per action. The agent turns scores into moves the same way for all of them:

- **deterministic** (the default): the highest-scoring action;
- **sampling**: an action drawn from the softmax of the scores, with the
  agent's own seeded generator (models whose scores are logits only).

A model that does not read the action mask may prefer an illegal action. Its
choice is then replaced by its most probable legal action, and the agent counts
the replacement in ``replacements``; the arena reports the count. A model that
reads the mask (``mask_aware``, as sb3-contrib's MaskablePPO) chooses among the
legal actions only and is never replaced.

Several agents may share one model (``spawn``): the arena plays games side by
side and asks the model once for all the games waiting on it
(``choose_many``), while each agent keeps its own generator and counts, so a
game's moves do not depend on which games were played beside it (up to the
rounding of a batched product, which can differ in the last bit from one
row's and so decide an exact tie).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.observation import OBS_SIZE, encode

SCORE_KINDS = ("logits", "values")
"""What a model's scores are: ``logits`` of a policy (sampling is the softmax), or
action ``values`` (Q-values: play the best; there is no distribution to sample)."""


class ModelError(ValueError):
    """A model that cannot be played here; the message names it and says why."""


@runtime_checkable
class ScoringModel(Protocol):
    """Scores of the 28 actions for a batch of observations.

    Attributes:
        name: the model's name in reports and errors (usually its file).
        kind: ``"logits"`` or ``"values"`` (``SCORE_KINDS``).
        mask_aware: True when the model itself restricts its choice to the legal
            actions (its illegal choices are not counted as replacements).
    """

    name: str
    kind: str
    mask_aware: bool

    def scores(self, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Scores (B, 28) of ``observations`` float32 (B, 327) with ``masks`` bool (B, 28);
        ``seats`` (B,) says who acts in each row (0 Jekyll, 1 Hyde), for models that
        keep one network per role.

        Args:
            observations: float32 (B, 327), a row per decision (``encode``).
            masks: bool (B, 28), each row's legal actions.
            seats: (B,) the seat to act in each row: 0 Jekyll, 1 Hyde.

        Returns:
            (B, 28) numbers, one per action: logits or action values (``kind``).
        """
        ...


def first_line(error: BaseException) -> str:
    """The first line of an error's message (its type's name when it has none): a
    library's multi-line error as one line of the command line's report.

    Args:
        error: the exception to describe.

    Returns:
        The first line of ``str(error)``, stripped, or the exception's class name when
        the message is empty.
    """
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def model_scores(
    model: ScoringModel, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray
) -> np.ndarray:
    """``model.scores`` checked; a failure of the model's own code becomes a
    ``ModelError`` naming the model and the first line of what it raised.

    Args:
        model: the scoring model to ask.
        observations: float32 (B, 327), a row per decision.
        masks: bool (B, 28), each row's legal actions.
        seats: (B,) the seat to act in each row: 0 Jekyll, 1 Hyde.

    Returns:
        The scores as float64 (B, 28).

    Raises:
        ModelError: the model raised, or gave scores that are not (B, 28) numbers, or
            NaN; the message names the model.
    """
    try:
        scores = model.scores(observations, masks, seats)
    except ModelError:
        raise
    except Exception as error:  # noqa: BLE001 - a model of any library fails its own way
        raise ModelError(
            f"{model.name}: the model failed on {len(observations)} observation(s): "
            f"{type(error).__name__}: {first_line(error)}"
        ) from error
    return _check_scores(model, scores, len(observations))


def _check_scores(model: ScoringModel, scores: np.ndarray, rows: int) -> np.ndarray:
    """``scores`` as float64 (rows, 28), or a ``ModelError`` naming the model and the shape
    it gave."""
    array = np.asarray(scores)
    if array.shape != (rows, NUM_ACTIONS) or not np.issubdtype(array.dtype, np.number):
        raise ModelError(
            f"{model.name}: the model gave scores of shape {array.shape} ({array.dtype}) for "
            f"{rows} observation(s); a model of this game gives ({rows}, {NUM_ACTIONS}) numbers, "
            f"one per action, from observations of shape ({rows}, {OBS_SIZE})"
        )
    array = array.astype(np.float64, copy=False)
    if np.isnan(array).any():
        raise ModelError(f"{model.name}: the model gave NaN scores")
    return array


def mask_of(legal_actions: Sequence[int]) -> np.ndarray:
    """The bool (28,) mask of ``legal_actions``.

    Args:
        legal_actions: action ids (0-27).

    Returns:
        A bool array of 28 entries, True at each id of ``legal_actions``.
    """
    mask = np.zeros(NUM_ACTIONS, bool)
    mask[list(legal_actions)] = True
    return mask


class ModelAgent:
    """Plays a ``ScoringModel`` (see the module docstring).

    Args:
        model: the scoring model.
        deterministic: play the best action (True) or sample from the softmax.
        seed: seeds the sampling generator (``reset`` reseeds it).
        label: the agent's name in reports (default: the model's name).

    Raises:
        ModelError: sampling asked of a model whose scores are not logits, or a
            model of an unknown score kind.
    """

    def __init__(
        self,
        model: ScoringModel,
        deterministic: bool = True,
        seed: int | None = None,
        label: str | None = None,
    ) -> None:
        if model.kind not in SCORE_KINDS:
            raise ModelError(
                f"{model.name}: unknown score kind {model.kind!r}; one of {SCORE_KINDS}"
            )
        if not deterministic and model.kind != "logits":
            raise ModelError(
                f"{model.name}: this model scores actions by value (as DQN does) and has no "
                "distribution to sample from; play it deterministically"
            )
        self.model = model
        self.deterministic = deterministic
        self._label = label or model.name
        self._rng = np.random.default_rng(seed)
        self.replacements = 0
        """Illegal choices of the model replaced by its most probable legal action."""

    @property
    def name(self) -> str:
        return self._label

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampling generator (the counts run on across games).

        Args:
            seed: the new seed; None keeps the generator as it is.
        """
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def spawn(self) -> ModelAgent:
        """A new agent on the same model (shared, not copied), with its own generator
        and counts, for a game played beside this agent's.

        Returns:
            The new ``ModelAgent``: the same model, play and label, a generator
                seeded from the operating system (``reset`` seeds it), no
                replacements counted.
        """
        return ModelAgent(self.model, self.deterministic, label=self._label)

    def choose(self, scores: np.ndarray, mask: np.ndarray) -> int:
        """The action for one row of scores (28,) with its bool mask (28,).

        An illegal choice of a model that does not read the mask is replaced by its
        highest-scoring legal action and counted in ``replacements``.

        Args:
            scores: the model's (28,) scores of one decision.
            mask: bool (28,), the legal actions of that decision.

        Returns:
            The chosen action id, a legal one.

        Raises:
            ModelError: no action is legal.
        """
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ModelError(f"{self.name}: asked to act with no legal action")
        if self.model.mask_aware:
            scores = np.where(mask, scores, -np.inf)
        top = scores.max()
        if self.deterministic or not np.isfinite(top):  # +inf: that action; all -inf: none
            action = int(np.argmax(scores))
        else:
            weights = np.exp(scores - top)
            action = int(self._rng.choice(NUM_ACTIONS, p=weights / weights.sum()))
        if mask[action]:
            return action
        self.replacements += 1
        return int(legal[np.argmax(scores[legal])])

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The model's choice for one decision, asked with a batch of one row.

        Args:
            view: what the player to act knows, encoded as the environments encode it.
            legal_actions: the ids of the legal actions.

        Returns:
            The chosen action id (see ``choose``).

        Raises:
            ModelError: the model failed, or gave scores of the wrong shape or NaN;
                the message names the model.
        """
        observation = encode(view).astype(np.float32)[None]
        mask = mask_of(legal_actions)
        scores = model_scores(self.model, observation, mask[None], np.array([view.player]))
        return self.choose(scores[0], mask)

    def act_batch(
        self, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray
    ) -> np.ndarray:
        """One action for each row of several games (the batched environments use it).

        Args:
            observations: (k, 327) observations of the seats to act.
            masks: (k, 28) their action masks.
            seats: (k,) the seat of each row (0 Jekyll, 1 Hyde).

        Returns:
            int64 (k,) actions, chosen row by row with this agent's generator.
        """
        masks = np.asarray(masks) != 0
        scores = model_scores(
            self.model, np.asarray(observations, np.float32), masks, np.asarray(seats)
        )
        return np.array(
            [self.choose(row, mask) for row, mask in zip(scores, masks, strict=True)], np.int64
        )


def choose_many(
    agents: Sequence[ModelAgent],
    views: Sequence[PlayerView],
    legal_actions: Sequence[Sequence[int]],
) -> list[int]:
    """The moves of several agents that share one model, with one call to the model.

    Each agent chooses its row as its own ``act`` would: the result is the same
    as calling ``agents[i].act(views[i], legal_actions[i])`` one by one.

    Args:
        agents: the agents, at least one, all on the model of ``agents[0]``.
        views: the view of each agent's decision, in the same order.
        legal_actions: the legal action ids of each decision, in the same order.

    Returns:
        The chosen action id of each agent, in order.

    Raises:
        ModelError: the model failed, or gave scores of the wrong shape or NaN, or a
            decision has no legal action.
    """
    model = agents[0].model
    observations = np.stack([encode(view) for view in views]).astype(np.float32)
    masks = np.stack([mask_of(legal) for legal in legal_actions])
    seats = np.array([view.player for view in views])
    scores = model_scores(model, observations, masks, seats)
    return [agent.choose(row, mask) for agent, row, mask in zip(agents, scores, masks, strict=True)]


class RoleModel:
    """Two models, one per role, as one (``jekyll=A,hyde=B``): each row goes to its seat's model.

    The pair scores logits when both models do, else values; it reads the mask when
    both do (the rows of a mask-aware model in a pair that is not have their illegal
    actions scored ``-inf``).

    Args:
        jekyll: the model of the Jekyll seat (0).
        hyde: the model of the Hyde seat (1).
    """

    def __init__(self, jekyll: ScoringModel, hyde: ScoringModel) -> None:
        self.models = (jekyll, hyde)
        self.name = f"jekyll={jekyll.name},hyde={hyde.name}"
        kinds = {jekyll.kind, hyde.kind}
        self.kind = "logits" if kinds == {"logits"} else "values"
        self.mask_aware = jekyll.mask_aware and hyde.mask_aware

    def scores(self, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Each row scored by its seat's model.

        Args:
            observations: float32 (B, 327), a row per decision.
            masks: bool (B, 28), each row's legal actions.
            seats: (B,) the seat to act in each row: 0 Jekyll, 1 Hyde.

        Returns:
            float64 (B, 28) scores.

        Raises:
            ModelError: a model failed, or gave scores of the wrong shape or NaN.
        """
        out = np.zeros((len(observations), NUM_ACTIONS), np.float64)
        for seat, model in enumerate(self.models):
            rows = np.flatnonzero(seats == seat)
            if rows.size:
                out[rows] = model_scores(model, observations[rows], masks[rows], seats[rows])
                if model.mask_aware and not self.mask_aware:
                    out[rows] = np.where(masks[rows], out[rows], -np.inf)
        return out
