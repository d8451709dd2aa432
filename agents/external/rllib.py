"""RLlib models as agents: new-API-stack checkpoints and modules in memory.

Accepted, as a folder (``rllib:PATH``, or detected by ``is_rllib_checkpoint``):

- an ``Algorithm`` checkpoint, as ``algorithm.save_to_path(PATH)`` writes it: its
  learner's modules (``learner_group/learner/rl_module``) play;
- one of this project's RLlib run folders (``jekyll-hyde train --config rllib``):
  its checkpoint ``rllib_checkpoint/algorithm`` (a run folder that also holds an
  exported ``policy/`` plays that policy when named without ``rllib:``);
- a ``MultiRLModule`` or ``RLModule`` checkpoint (``module.save_to_path(PATH)``),
  or the sub-folder of one module inside any of these.

From Python (``rllib_agent``): an ``Algorithm`` (its learner's modules), a
``MultiRLModule`` or an ``RLModule``.

The modules are rebuilt with RLlib's own ``RLModule.from_checkpoint``; no
Algorithm is built and Ray is not started. Each module keeps one network for
the role(s) it plays:

- a module whose id is ``jekyll`` or ``hyde`` plays that role; otherwise the one
  module whose id contains the role's name (``jekyll_learner``) plays it;
  frozen snapshots beside the learners (``jekyll_v3``) play nothing;
- a single module, or the shared one (``default_policy``, or ``shared`` of this
  project's ``rllib.shared_policy``), plays both roles (the observation names
  the role);
- otherwise the mapping is ambiguous and loading fails, listing the module ids.

A module reads the observation in the form its observation space says: a
``Dict`` with an ``action_mask`` key (RLlib's ``ActionMaskingTorchRLModule``,
this project's RLlib backend and the glue of ``jekyll_hyde_env.integrations.clients``) gets
``{"observations": float32[B, 327], "action_mask": float32[B, 28]}`` and chooses
among the legal actions only (``mask_aware``); a ``Box`` gets the observation
alone, and its illegal choices are replaced and counted by ``ModelAgent``. The
scores are the ``action_dist_inputs`` (the logits) of ``forward_inference``; a
Q-network (RLlib's ``QNetAPI``, as DQN's module) scores by its Q-values and
plays greedily.

Loading unpickles the classes stored in the checkpoint
(``class_and_ctor_args.pkl``) and the modules' state: it runs code, so load
only your own checkpoints.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pickle
from collections.abc import Iterator, Mapping
from typing import Any, Protocol, cast

import numpy as np

from jekyll_hyde_agents.external.sb3 import check_spaces
from jekyll_hyde_agents.model_agent import ModelAgent, ModelError, RoleModel, first_line
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS

CLASS_FILE = "class_and_ctor_args.pkl"
"""What RLlib's ``save_to_path`` writes in every component's folder: the class to rebuild."""
METADATA_FILE = "metadata.json"
ALGORITHM_FILE = "rllib_checkpoint.json"
"""An Algorithm checkpoint's marker (both API stacks)."""
MODULE_STATE = "module_state"
"""An RLModule's (and a MultiRLModule's) state file, ``.pkl`` or ``.msgpack``."""
RUN_CHECKPOINT = os.path.join("rllib_checkpoint", "algorithm")
"""Where this project's RLlib runs keep RLlib's checkpoint (``train/ppo/rllib.py``)."""
MODULES_IN = (
    os.path.join("learner_group", "learner", "rl_module"),
    os.path.join("learner", "rl_module"),
    "rl_module",
)
"""Where an Algorithm, LearnerGroup or Learner checkpoint keeps its (Multi)RLModule."""
SHARED_IDS = ("default_policy", "shared")
"""Module ids that play both roles: RLlib's default policy, this project's shared module."""
MASK_KEY = "action_mask"
QUIET_LOGGERS = ("ray", "ray.rllib", "ray._common.deprecation")
"""Ray's loggers with their own level (RLlib's, and the one its deprecations go to)."""
NEEDS_RAY = "RLlib checkpoints need Ray RLlib: pip install 'jekyll-hyde-env[rllib]'"


# --- checkpoint folders ---------------------------------------------------------------


def _state_file(folder: str) -> str | None:
    for suffix in (".pkl", ".msgpack"):
        path = os.path.join(folder, MODULE_STATE + suffix)
        if os.path.isfile(path):
            return path
    return None


def _read_metadata(folder: str) -> dict[str, Any]:
    try:
        with open(os.path.join(folder, METADATA_FILE), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _is_component(folder: str) -> bool:
    """A folder RLlib's ``save_to_path`` wrote (any Checkpointable: an Algorithm, a
    Learner, a module...)."""
    return os.path.isfile(os.path.join(folder, CLASS_FILE)) and (
        os.path.isfile(os.path.join(folder, METADATA_FILE))
        or os.path.isfile(os.path.join(folder, ALGORITHM_FILE))
    )


def _checkpoint_root(path: str) -> str | None:
    """The RLlib checkpoint at ``path``: itself, or a run's ``rllib_checkpoint/algorithm``."""
    for folder in (path, os.path.join(path, RUN_CHECKPOINT)):
        if os.path.isdir(folder) and (
            os.path.isfile(os.path.join(folder, ALGORITHM_FILE)) or _is_component(folder)
        ):
            return folder
    return None


def is_rllib_checkpoint(path: str | os.PathLike) -> bool:
    """Whether ``path`` is an RLlib checkpoint folder (an Algorithm's, a module's, ...) or
    a run folder holding one in ``rllib_checkpoint/algorithm``. Reads file names only.

    Args:
        path: the folder to look into.

    Returns:
        True for a folder holding ``rllib_checkpoint.json``, or the class and metadata
        files RLlib's ``save_to_path`` writes, directly or in
        ``rllib_checkpoint/algorithm``; False otherwise (a file included).
    """
    return os.path.isdir(path) and _checkpoint_root(os.fspath(path)) is not None


def _module_folder(path: str) -> str:
    """The (Multi)RLModule checkpoint folder of the checkpoint at ``path``.

    Args:
        path: an RLlib checkpoint folder or a run folder holding one.

    Returns:
        The folder of the checkpoint's modules: the first of ``MODULES_IN`` found in
        the checkpoint, or the checkpoint itself (a module's checkpoint).

    Raises:
        ModelError: no RLlib checkpoint there, one without modules, or a module folder
            missing its class or state file; the message names ``path``.
    """
    if not os.path.isdir(path):
        raise ModelError(f"{path}: not an RLlib checkpoint: not a folder")
    root = _checkpoint_root(path)
    if root is None:
        raise ModelError(
            f"{path}: not an RLlib checkpoint: no {ALGORITHM_FILE} or {CLASS_FILE} and "
            f"{METADATA_FILE} in it (nor in {RUN_CHECKPOINT}); algorithm.save_to_path() or "
            "module.save_to_path() of RLlib's new API stack writes them"
        )
    folder = next(
        (os.path.join(root, sub) for sub in MODULES_IN if os.path.isdir(os.path.join(root, sub))),
        root,
    )
    state_name = _read_metadata(folder).get("state_file", MODULE_STATE)
    if state_name != MODULE_STATE or os.path.isfile(os.path.join(folder, ALGORITHM_FILE)):
        old = os.path.isdir(os.path.join(root, "policies"))
        raise ModelError(
            f"{path}: an RLlib checkpoint without RL modules (no {MODULES_IN[0]})"
            + ("; it is of the old API stack (policies/), which is not supported" if old else "")
            + "; give an Algorithm, MultiRLModule or RLModule checkpoint of the new API stack"
        )
    missing = [
        needed
        for needed, present in (
            (CLASS_FILE, os.path.isfile(os.path.join(folder, CLASS_FILE))),
            (MODULE_STATE + ".pkl", _state_file(folder) is not None),
        )
        if not present
    ]
    if missing:
        where = os.path.relpath(os.path.join(folder, missing[0]), path)
        raise ModelError(f"{path}: a broken RLlib checkpoint: {where} is missing")
    return folder


# --- loading --------------------------------------------------------------------------


@contextlib.contextmanager
def _quiet_rllib() -> Iterator[None]:
    """RLlib's warnings (deprecations of its example modules) kept off the user's terminal
    while a checkpoint loads; errors still show."""
    loggers = [logging.getLogger(name) for name in QUIET_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _rl_module_class(name: str) -> Any:
    try:
        from ray.rllib.core.rl_module.rl_module import RLModule  # lazy: the rllib extra
    except ImportError as error:
        raise ModelError(f"{name}: {NEEDS_RAY}") from error
    return RLModule


def _error_line(error: BaseException) -> str:
    """The error's type and the first line of its message."""
    text = str(error).strip()
    return f"{type(error).__name__}: {first_line(error)}" if text else type(error).__name__


def _version_note(folder: str) -> str:
    """`` (saved with Ray X; this is Ray Y)`` when the checkpoint names another Ray version."""
    saved = _read_metadata(folder).get("ray_version")
    try:
        import ray  # lazy: the rllib extra

        running = ray.__version__
    except ImportError:
        return ""
    return f" (saved with Ray {saved}; this is Ray {running})" if saved and saved != running else ""


def _load_module(folder: str, name: str) -> Any:
    """RLlib's ``RLModule.from_checkpoint`` of ``folder``, errors as one-line ``ModelError``."""
    RLModule = _rl_module_class(name)
    import pyarrow.fs  # lazy: comes with Ray

    try:
        with _quiet_rllib():
            module = RLModule.from_checkpoint(
                os.path.abspath(folder), filesystem=pyarrow.fs.LocalFileSystem()
            )
    except Exception as error:  # noqa: BLE001 - RLlib and unpickling fail in many ways
        raise ModelError(
            f"{name}: RLlib could not load this checkpoint{_version_note(folder)}: "
            f"{_error_line(error)}"
        ) from None
    if type(module) is RLModule:
        # RLlib falls back to the base class, without a word, when the stored one cannot
        # be unpickled; the reason is the unpickling's.
        raise ModelError(
            f"{name}: RLlib could not rebuild the module class stored in this checkpoint"
            f"{_version_note(folder)}: {_class_problem(folder)}"
        )
    return module


def _class_problem(folder: str) -> str:
    """Why the class stored in ``folder`` does not unpickle (its first line)."""
    from ray import cloudpickle  # lazy: the rllib extra

    try:
        with open(os.path.join(folder, CLASS_FILE), "rb") as handle:
            cloudpickle.load(handle)
    except Exception as error:  # noqa: BLE001 - unpickling fails in many ways
        return _error_line(error)
    return f"{CLASS_FILE} does not name an RLModule class"


def _is_multi(module: Any) -> bool:
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule  # lazy: the rllib extra

    return isinstance(module, MultiRLModule)


def role_modules(module_ids: list[str], name: str, where: str) -> dict[str, str]:
    """The module id playing each role (see the module docstring).

    Args:
        module_ids: the ids of the modules of a ``MultiRLModule``.
        name: the model's name, quoted in errors.
        where: how to name one module, quoted in the error of an ambiguous mapping.

    Returns:
        ``{"jekyll": id, "hyde": id}``; both roles map to the same id when one module
        plays both.

    Raises:
        ModelError: no module or an ambiguous mapping, listing the ids; ``where`` says
            how to name one module (a folder, an expression).
    """
    ids = [str(i) for i in module_ids]
    if not ids:
        raise ModelError(f"{name}: the RLlib checkpoint holds no module")
    if len(ids) == 1:
        return dict.fromkeys(AGENTS, ids[0])
    shared = [i for i in SHARED_IDS if i in ids]
    chosen = {}
    for role in AGENTS:
        named = [i for i in ids if role in i.lower()]
        if role in ids:
            chosen[role] = role
        elif len(named) == 1:
            chosen[role] = named[0]
        elif not named and shared:
            chosen[role] = shared[0]
        else:
            raise ModelError(
                f"{name}: cannot tell which RLlib module plays {role} among the modules "
                f"{sorted(ids)}: a module named jekyll or hyde (or one id containing the role), "
                f"or one module for both roles, is needed; name one module for each role as "
                f"jekyll=A,hyde=B with {where}"
            )
    return chosen


def load_rllib(path: str, deterministic: bool = True) -> ModelAgent:
    """An agent playing the RLlib checkpoint at ``path`` (see the module docstring).

    Args:
        path: an RLlib checkpoint folder or a run folder holding one; also the
            agent's name in reports.
        deterministic: play the best action (True) or sample from the softmax of the
            logits (not for Q-networks).

    Returns:
        The ``ModelAgent`` playing the checkpoint's module(s), one per role where
        they differ.

    Raises:
        ModelError: not an RLlib checkpoint, one RLlib cannot load (one line with its
            reason), an ambiguous role mapping, or modules of another environment.
    """
    folder = _module_folder(path)
    module = _load_module(folder, path)
    if not _is_multi(module):
        return ModelAgent(RLlibModel(module, path, owned=True), deterministic, label=path)
    mapping = role_modules(list(module.keys()), path, f"A = rllib:{folder}{os.sep}<module id>")
    for module_id in set(mapping.values()):
        if _state_file(os.path.join(folder, module_id)) is None:
            # RLlib rebuilds a module without a folder untrained, without a word.
            raise ModelError(
                f"{path}: a broken RLlib checkpoint: module {module_id!r} has no saved state "
                f"({os.path.join(folder, module_id, MODULE_STATE)}.pkl is missing)"
            )
    return ModelAgent(_by_role(module, mapping, path, owned=True), deterministic, label=path)


def _by_role(multi: Any, mapping: dict[str, str], name: str, owned: bool) -> Any:
    models = {
        module_id: RLlibModel(multi[module_id], f"{name} [{module_id}]", owned)
        for module_id in dict.fromkeys(mapping.values())
    }
    jekyll, hyde = (models[mapping[role]] for role in AGENTS)
    return jekyll if jekyll is hyde else RoleModel(jekyll, hyde)


# --- objects in memory -------------------------------------------------------------------


def _learner_modules(algorithm: Any) -> Any:
    """The (Multi)RLModule of an Algorithm's learner (the one its checkpoints save), or of
    its env runner when the learner cannot be reached."""
    group = getattr(algorithm, "learner_group", None)
    if group is not None:
        for result in group.foreach_learner(lambda learner: learner.module):
            if result.ok:
                return result.get()
    runner = getattr(algorithm, "env_runner", None)
    if runner is not None:
        return runner.module
    return algorithm.get_module()


def rllib_agent(thing: Any, deterministic: bool = True, name: str | None = None) -> ModelAgent:
    """An agent playing an RLlib ``Algorithm``, ``MultiRLModule`` or ``RLModule`` held in memory.

    The agent uses the object's own module(s) (not a copy): training it further changes
    the agent's play.

    Args:
        thing: an RLlib ``Algorithm`` (its learner's modules play), ``MultiRLModule``
            or ``RLModule``.
        deterministic: play the best action (True) or sample from the softmax of the
            logits (not for Q-networks).
        name: the agent's name in reports (default: ``rllib:`` and the class name).

    Returns:
        The ``ModelAgent`` playing the module(s), one per role where they differ.

    Raises:
        ModelError: an object of another kind, an ambiguous role mapping, or modules of
            another environment.
    """
    label = name or f"rllib:{type(thing).__name__}"
    RLModule = _rl_module_class(label)
    module = thing
    if not isinstance(thing, RLModule):
        if not (hasattr(thing, "learner_group") or hasattr(thing, "get_module")):
            raise ModelError(
                f"{label}: not an RLlib Algorithm, MultiRLModule or RLModule "
                f"({type(thing).__module__}.{type(thing).__qualname__})"
            )
        module = _learner_modules(thing)
    if not _is_multi(module):
        return ModelAgent(RLlibModel(module, label), deterministic, label=label)
    mapping = role_modules(list(module.keys()), label, "A = multi_rl_module[<module id>]")
    return ModelAgent(_by_role(module, mapping, label, owned=False), deterministic, label=label)


# --- the scoring model ------------------------------------------------------------------


def _observation_key(name: str, module: Any) -> str | None:
    """The key of the observation in the module's ``Dict`` observation space (None for a
    flat ``Box``), once the spaces are checked against the game's.

    Args:
        name: the model's name, quoted in errors.
        module: the RLlib module, with its ``observation_space`` and ``action_space``.

    Returns:
        The key of the observation beside ``action_mask``, or None for a flat space.

    Raises:
        ModelError: spaces of another environment, naming both shapes.
    """
    space = getattr(module, "observation_space", None)
    subspaces = getattr(space, "spaces", None)
    if not isinstance(subspaces, Mapping):
        check_spaces(name, space, getattr(module, "action_space", None))
        return None
    others = [key for key in subspaces if key != MASK_KEY]
    if MASK_KEY not in subspaces or len(others) != 1:
        raise ModelError(
            f"{name}: the module reads a dict observation with the keys {list(subspaces)}; "
            f"this game gives one observation and its '{MASK_KEY}' (as 'observations' and "
            f"'{MASK_KEY}', see jekyll_hyde_env.integrations.clients)"
        )
    check_spaces(name, subspaces[others[0]], getattr(module, "action_space", None))
    mask_shape = tuple(getattr(subspaces[MASK_KEY], "shape", None) or ())
    if mask_shape != (NUM_ACTIONS,):
        raise ModelError(
            f"{name}: the module's '{MASK_KEY}' has shape {mask_shape}; this game has "
            f"{NUM_ACTIONS} actions"
        )
    return others[0]


class _ScoringModule(Protocol):
    """What ``RLlibModel`` calls of an RLlib module: an ``RLModule``'s inference, and
    ``QNetAPI``'s Q-values for a Q-network (``kind`` ``values``)."""

    def forward_inference(self, batch: dict[str, Any]) -> dict[str, Any]: ...

    def compute_q_values(self, batch: dict[str, Any]) -> dict[str, Any]: ...


class RLlibModel:
    """The scores of one RLlib ``RLModule`` (see the module docstring).

    ``owned`` modules (loaded here) are put in eval mode; a module in memory is left as
    its owner keeps it.

    Args:
        module: the RLlib ``RLModule``, a torch module of the new API stack.
        name: the model's name in reports and errors.
        owned: whether the module was loaded for this model (then put in eval mode)
            rather than held by the caller.

    Raises:
        ModelError: a module that is not a torch module, spaces of another
            environment, or a recurrent module.
    """

    def __init__(self, module: Any, name: str, owned: bool = False) -> None:
        import torch  # lazy: the rllib extra

        if not isinstance(module, torch.nn.Module):
            raise ModelError(
                f"{name}: RLlib module {type(module).__name__} is not a torch module; only "
                "torch modules (RLlib's new API stack) are supported"
            )
        self.key = _observation_key(name, module)
        is_stateful = getattr(module, "is_stateful", None)
        if callable(is_stateful) and is_stateful():
            raise ModelError(
                f"{name}: recurrent RLlib modules keep a state between moves and are not "
                "supported; train a feed-forward module"
            )
        from ray.rllib.core.rl_module.apis import QNetAPI  # lazy: the rllib extra

        if owned:
            module.eval()
        # torch's stubs type a module's attributes as tensors or modules, not its methods
        self.module = cast(_ScoringModule, module)
        self.name = name
        self.kind = "values" if isinstance(module, QNetAPI) else "logits"
        self.mask_aware = self.key is not None

    def _batch(self, observations: np.ndarray, masks: np.ndarray) -> dict[str, Any]:
        import torch  # lazy: the rllib extra
        from ray.rllib.core.columns import Columns  # lazy: the rllib extra

        obs: torch.Tensor | dict[str, torch.Tensor]
        obs = torch.from_numpy(np.array(observations, np.float32))  # a copy torch may write
        if self.key is not None:  # a fresh dict: masking modules pop their keys from it
            obs = {self.key: obs, MASK_KEY: torch.from_numpy(np.array(masks, np.float32))}
        return {Columns.OBS: obs}

    def scores(self, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The module's scores of a batch, without gradients.

        Args:
            observations: float32 (B, 327), a row per decision.
            masks: bool (B, 28), each row's legal actions; given to a module that
                reads a ``Dict`` observation with an ``action_mask``.
            seats: (B,) the seat to act in each row; unused, as the observation
                names the role.

        Returns:
            (B, 28) scores: the ``action_dist_inputs`` (logits) of
            ``forward_inference``, or a Q-network's Q-values.

        Raises:
            ModelError: the module's ``forward_inference`` gives no
                ``action_dist_inputs``.
        """
        import torch  # lazy: the rllib extra
        from ray.rllib.core.columns import Columns  # lazy: the rllib extra

        batch = self._batch(observations, masks)
        with torch.no_grad():
            if self.kind == "values":
                return self.module.compute_q_values(batch)["qf_preds"].cpu().numpy()
            output = self.module.forward_inference(batch)
        if Columns.ACTION_DIST_INPUTS not in output:
            raise ModelError(
                f"{self.name}: the module's forward_inference gives no "
                f"{Columns.ACTION_DIST_INPUTS!r} (it gives {sorted(output)}); supported: modules "
                "with an action distribution (PPO, APPO, IMPALA, ...) and Q-networks (DQN)"
            )
        return output[Columns.ACTION_DIST_INPUTS].cpu().numpy()

    def __getstate__(self) -> dict[str, Any]:
        """Pickled with Ray's cloudpickle (RLlib modules hold functions plain pickle refuses),
        so the arena's worker processes rebuild the model."""
        from ray import cloudpickle  # lazy: the rllib extra

        return {**self.__dict__, "module": cloudpickle.dumps(self.module)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.module = pickle.loads(state["module"])  # noqa: S301 - bytes of this object's own pickling
