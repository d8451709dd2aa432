"""The framework-neutral exchange format: TorchScript and ONNX policies.

A policy in this format is one module with the signature::

    (observation float32[B, 327], action_mask float32[B, 28]) -> logits float32[B, 28]

``observation`` is the Gym observation (``jekyll_hyde_env.observation``) as
float32, one row per decision; ``action_mask`` holds 1 for a legal action and 0
otherwise; the output scores the 28 actions, the highest played. One module
plays both seats (the observation names the role). Any framework that writes
TorchScript or ONNX can produce one; ``jekyll-hyde export`` writes any saved
policy (the champion included) in either form, with illegal actions' logits set
to minus infinity so that the module alone plays legally.

TorchScript files run code when loaded (TorchScript is a program): load only
your own. ONNX files are data (a graph of standard operators) and need the
``onnx`` extra (onnxruntime) to run.
"""

from __future__ import annotations

import contextlib
import copy
import os
import pathlib
import tempfile
import warnings
import zipfile
from collections.abc import Iterator
from typing import Any

import numpy as np

from jekyll_hyde_agents.model_agent import ModelAgent, ModelError, first_line
from jekyll_hyde_agents.policy_file import read_policy
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE, OFFSETS

FORMATS = ("torchscript", "onnx")
SIGNATURE = (
    f"(observation float32[B, {OBS_SIZE}], action_mask float32[B, {NUM_ACTIONS}]) "
    f"-> logits float32[B, {NUM_ACTIONS}]"
)
HYDE_COLUMN = OFFSETS["my_role"].start + AGENTS.index("hyde")
"""The observation entry that is 1 when Hyde is to act (``my_role``, hyde)."""
_PROBE_ROWS = 3


def _probe_inputs() -> tuple[np.ndarray, np.ndarray]:
    """A small batch to check a module's signature with: zeros and an all-legal mask."""
    return np.zeros((_PROBE_ROWS, OBS_SIZE), np.float32), np.ones(
        (_PROBE_ROWS, NUM_ACTIONS), np.float32
    )


def _check_probe(name: str, output: Any) -> None:
    shape = tuple(getattr(output, "shape", ()))
    if shape != (_PROBE_ROWS, NUM_ACTIONS):
        raise ModelError(
            f"{name}: wrong signature: for observations of shape ({_PROBE_ROWS}, {OBS_SIZE}) "
            f"the module returned shape {shape}; the exchange format is {SIGNATURE}"
        )


@contextlib.contextmanager
def _quiet_jit() -> Iterator[None]:
    """Silence torch's notice that TorchScript is deprecated (torch 2.13 gives it on every
    ``torch.jit`` call): the exchange format keeps TorchScript for the users and
    libraries that write it; ONNX is the format without such a notice."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit", category=DeprecationWarning)
        yield


def is_torchscript(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a TorchScript archive (a zip with compiled code in it).

    Args:
        path: the file to look into.

    Returns:
        True for a readable zip with an entry under a ``code/`` folder; False
        otherwise (a folder or a missing file included).
    """
    try:
        with zipfile.ZipFile(path) as archive:
            return any("/code/" in name for name in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return False


class TorchScriptModel:
    """A TorchScript module of the exchange format.

    Args:
        module: the module (TorchScript or a plain ``torch.nn.Module``), called as
            it is; it is checked on a small probe batch.
        name: the model's name in reports and errors.

    Raises:
        ModelError: calling the module on the probe batch failed, or it did not
            return (B, 28) scores.
    """

    kind = "logits"
    mask_aware = False

    def __init__(self, module: Any, name: str) -> None:
        import torch  # lazy: the train extra

        self.module = module
        self.name = name
        observations, masks = _probe_inputs()
        try:
            with torch.no_grad():
                output = module(torch.from_numpy(observations), torch.from_numpy(masks))
        except Exception as error:  # noqa: BLE001 - any failure of the user's module is its signature
            raise ModelError(
                f"{name}: wrong signature: calling the module failed ({type(error).__name__}: "
                f"{first_line(error)}); "
                f"the exchange format is {SIGNATURE}"
            ) from None
        _check_probe(name, output)

    def scores(self, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The module's logits for a batch, without gradients.

        Args:
            observations: float32 (B, 327), a row per decision.
            masks: (B, 28) legal actions, 1 for legal and 0 otherwise.
            seats: (B,) the seat to act in each row; unused, as the observation
                names the role.

        Returns:
            (B, 28) logits.
        """
        import torch  # lazy: the train extra (already loaded with the module)

        with torch.no_grad():
            output = self.module(
                torch.as_tensor(observations, dtype=torch.float32),
                torch.as_tensor(masks, dtype=torch.float32),
            )
        return output.numpy()


def load_torchscript(path: str, deterministic: bool = True) -> ModelAgent:
    """An agent playing the TorchScript module at ``path``.

    Args:
        path: the file ``torch.jit.save`` wrote; also the agent's name in reports.
        deterministic: play the best action (True) or sample from the softmax of the
            logits.

    Returns:
        The ``ModelAgent`` playing the module, loaded on the CPU in eval mode.

    Raises:
        ModelError: torch is missing, not a TorchScript archive, a module torch
            cannot load, or one of another signature.
    """
    try:
        import torch  # lazy: the train extra
    except ImportError as error:
        raise ModelError(
            f"{path}: TorchScript modules need torch: pip install 'jekyll-hyde-env[train]'"
        ) from error
    if not is_torchscript(path):
        raise ModelError(f"{path}: not a TorchScript module (torch.jit.save writes one)")
    try:
        with _quiet_jit():
            module = torch.jit.load(path, map_location="cpu")
    except (RuntimeError, ValueError) as error:
        first = first_line(error)
        raise ModelError(f"{path}: torch could not load this TorchScript module: {first}") from None
    module.eval()
    return ModelAgent(TorchScriptModel(module, path), deterministic)


class OnnxModel:
    """An ONNX graph of the exchange format, run by onnxruntime.

    Args:
        session: the onnxruntime ``InferenceSession`` of the graph; it is checked
            on a small probe batch.
        name: the model's name in reports and errors.

    Raises:
        ModelError: a graph that does not take a float observation and a mask
            (bool, int or float) and give scores of shape (B, 28), or fails to run.
    """

    kind = "logits"
    mask_aware = False

    def __init__(self, session: Any, name: str) -> None:
        self.session = session
        self.name = name
        inputs, outputs = session.get_inputs(), session.get_outputs()
        if len(inputs) != 2 or len(outputs) < 1:
            raise ModelError(
                f"{name}: wrong signature: the graph takes {len(inputs)} input(s) and gives "
                f"{len(outputs)} output(s); the exchange format is {SIGNATURE}"
            )
        self._inputs = [item.name for item in inputs]
        self._mask_type = {
            "tensor(bool)": np.bool_, "tensor(int8)": np.int8, "tensor(float)": np.float32,
            "tensor(int64)": np.int64, "tensor(int32)": np.int32,
        }.get(inputs[1].type)  # fmt: skip
        if inputs[0].type != "tensor(float)" or self._mask_type is None:
            raise ModelError(
                f"{name}: wrong signature: inputs are {inputs[0].type} and {inputs[1].type}; "
                f"the exchange format is {SIGNATURE}"
            )
        observations, masks = _probe_inputs()
        try:
            output = self._run(observations, masks)
        except Exception as error:  # noqa: BLE001 - onnxruntime's errors say what the graph wanted
            raise ModelError(
                f"{name}: wrong signature: running the graph failed "
                f"({first_line(error)}); "
                f"the exchange format is {SIGNATURE}"
            ) from None
        _check_probe(name, output)

    def _run(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        feed = {
            self._inputs[0]: np.asarray(observations, np.float32),
            self._inputs[1]: np.asarray(masks).astype(self._mask_type),
        }
        return self.session.run(None, feed)[0]

    def scores(self, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The graph's logits for a batch; the mask goes in as the graph's type.

        Args:
            observations: float32 (B, 327), a row per decision.
            masks: (B, 28) legal actions, 1 for legal and 0 otherwise.
            seats: (B,) the seat to act in each row; unused, as the observation
                names the role.

        Returns:
            (B, 28) logits.
        """
        return self._run(observations, masks)


def load_onnx(path: str, deterministic: bool = True) -> ModelAgent:
    """An agent playing the ONNX graph at ``path`` (the ``onnx`` extra: onnxruntime).

    Args:
        path: the ``.onnx`` file; also the agent's name in reports.
        deterministic: play the best action (True) or sample from the softmax of the
            logits.

    Returns:
        The ``ModelAgent`` playing the graph on the CPU, with one thread.

    Raises:
        ModelError: onnxruntime is missing, a file it cannot load, or a graph of
            another signature.
    """
    try:
        import onnxruntime  # lazy: the onnx extra
    except ImportError as error:
        raise ModelError(
            f"{path}: ONNX models need onnxruntime: pip install 'jekyll-hyde-env[onnx]'"
        ) from error
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # small graphs: one thread is quickest beside the games
    options.log_severity_level = 3
    try:
        session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    except Exception as error:  # noqa: BLE001 - onnxruntime raises its own classes for bad files
        first = first_line(error)
        raise ModelError(f"{path}: not an ONNX model onnxruntime can load: {first}") from None
    return ModelAgent(OnnxModel(session, path), deterministic)


def module_agent(module: Any, deterministic: bool = True, name: str | None = None) -> ModelAgent:
    """An agent playing a torch module (``nn.Module`` or TorchScript) or an onnxruntime
    ``InferenceSession`` held in memory, of the exchange format's signature.

    Args:
        module: the torch module or onnxruntime session; a plain ``nn.Module`` is
            copied (the caller's keeps its training mode), a TorchScript module is
            put in eval mode as it is.
        deterministic: play the best action (True) or sample from the softmax of the
            logits.
        name: the agent's name in reports (default: ``onnx``, or ``torch:`` and the
            class name).

    Returns:
        The ``ModelAgent`` playing the module.

    Raises:
        ModelError: a module of another signature.
    """
    if type(module).__module__.split(".")[0] == "onnxruntime":
        return ModelAgent(OnnxModel(module, name or "onnx"), deterministic)
    import torch  # lazy: the train extra (the module is torch's)

    if not isinstance(module, torch.jit.ScriptModule):
        module = copy.deepcopy(module)  # the caller's module keeps its training mode
    module.eval()
    return ModelAgent(
        TorchScriptModel(module, name or f"torch:{type(module).__name__}"), deterministic
    )


# --- export ------------------------------------------------------------------------


def _role_layers(path: str | os.PathLike) -> tuple[list[list[tuple[np.ndarray, np.ndarray]]], str]:
    """The (Jekyll, Hyde) layers of a saved policy and its activation.

    Raises:
        ModelError: a policy that does not play both roles.
    """
    metadata, groups, _ = read_policy(path)
    roles = metadata["roles"]
    missing = [role for role in AGENTS if role not in roles]
    if missing:
        raise ModelError(
            f"{path}: the policy does not play {missing[0]}; an export plays both roles"
        )
    layers = [
        [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in groups[roles[role]]]
        for role in AGENTS
    ]
    return layers, metadata["architecture"]["activation"]


def export_torchscript(policy: str | os.PathLike, out: str | os.PathLike) -> pathlib.Path:
    """Write the saved policy ``policy`` as a TorchScript module of the exchange format.

    Args:
        policy: a saved policy (a run folder, a policy folder or its files).
        out: the file to write; replaced whole, or left as it was on failure.

    Returns:
        The path written, ``out``.

    Raises:
        ModelError: torch is missing, or the policy does not play both roles.
        PolicyFileError: the policy cannot be read.
    """
    try:
        import torch  # lazy: the train extra
    except ImportError as error:
        raise ModelError(
            "export to TorchScript needs torch: pip install 'jekyll-hyde-env[train]'"
        ) from error

    layers, activation = _role_layers(policy)

    class ExportedPolicy(torch.nn.Module):
        """Both roles' networks; each row is scored by the network of its role."""

        def __init__(self) -> None:
            super().__init__()
            jekyll, hyde = ([_linear(torch, w, b) for w, b in role] for role in layers)
            self.jekyll_hidden = torch.nn.ModuleList(jekyll[:-1])
            self.jekyll_out = jekyll[-1]
            self.hyde_hidden = torch.nn.ModuleList(hyde[:-1])
            self.hyde_out = hyde[-1]
            self.relu = activation == "relu"
            self.hyde_column = HYDE_COLUMN

        def _activate(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(x) if self.relu else torch.tanh(x)

        def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
            jekyll = observation
            for linear in self.jekyll_hidden:
                jekyll = self._activate(linear(jekyll))
            hyde = observation
            for linear in self.hyde_hidden:
                hyde = self._activate(linear(hyde))
            jekyll = self.jekyll_out(jekyll)
            hyde = self.hyde_out(hyde)
            is_hyde = observation[:, self.hyde_column : self.hyde_column + 1] > 0.5
            logits = torch.where(is_hyde, hyde, jekyll)
            return torch.where(action_mask > 0.5, logits, torch.full_like(logits, -float("inf")))

    with _quiet_jit():
        module = torch.jit.script(ExportedPolicy().eval())
        return _atomic(out, lambda temporary: torch.jit.save(module, temporary))


def _linear(torch: Any, weight: np.ndarray, bias: np.ndarray) -> Any:
    """A ``torch.nn.Linear`` holding copies of ``weight`` (out x in) and ``bias``."""
    linear = torch.nn.Linear(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(weight))
        linear.bias.copy_(torch.from_numpy(bias))
    return linear


def export_onnx(policy: str | os.PathLike, out: str | os.PathLike) -> pathlib.Path:
    """Write the saved policy ``policy`` as an ONNX graph of the exchange format (the
    ``onnx`` extra), built from standard operators: Gemm, Tanh or Relu, Where.

    Args:
        policy: a saved policy (a run folder, a policy folder or its files).
        out: the file to write; replaced whole, or left as it was on failure.

    Returns:
        The path written, ``out``.

    Raises:
        ModelError: onnx is missing, or the policy does not play both roles.
        PolicyFileError: the policy cannot be read.
    """
    try:
        import onnx  # lazy: the onnx extra
        from onnx import TensorProto, helper, numpy_helper  # lazy: the onnx extra
    except ImportError as error:
        raise ModelError(
            "export to ONNX needs onnx: pip install 'jekyll-hyde-env[onnx]'"
        ) from error
    layers, activation = _role_layers(policy)
    nodes, initialisers = [], []
    role_outputs = []
    for role, role_layers in zip(AGENTS, layers, strict=True):
        x = "observation"
        for i, (weight, bias) in enumerate(role_layers):
            w, b, y = f"{role}_w{i}", f"{role}_b{i}", f"{role}_gemm{i}"
            initialisers += [numpy_helper.from_array(weight, w), numpy_helper.from_array(bias, b)]
            nodes.append(helper.make_node("Gemm", [x, w, b], [y], transB=1))
            x = y
            if i < len(role_layers) - 1:
                x = f"{role}_act{i}"
                nodes.append(helper.make_node("Relu" if activation == "relu" else "Tanh", [y], [x]))
        role_outputs.append(x)
    initialisers += [
        numpy_helper.from_array(np.array([HYDE_COLUMN], np.int64), "hyde_start"),
        numpy_helper.from_array(np.array([HYDE_COLUMN + 1], np.int64), "hyde_end"),
        numpy_helper.from_array(np.array([1], np.int64), "column_axis"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
        numpy_helper.from_array(np.array(-np.inf, np.float32), "minus_infinity"),
    ]
    nodes += [
        helper.make_node(
            "Slice", ["observation", "hyde_start", "hyde_end", "column_axis"], ["hyde_entry"]
        ),
        helper.make_node("Greater", ["hyde_entry", "half"], ["is_hyde"]),
        helper.make_node("Where", ["is_hyde", role_outputs[1], role_outputs[0]], ["role_logits"]),
        helper.make_node("Greater", ["action_mask", "half"], ["legal"]),
        helper.make_node("Where", ["legal", "role_logits", "minus_infinity"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "jekyll_hyde_policy",
        [
            helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", OBS_SIZE]),
            helper.make_tensor_value_info("action_mask", TensorProto.FLOAT, ["batch", NUM_ACTIONS]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", NUM_ACTIONS])],
        initialisers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # readable by onnxruntime releases since 1.14
    onnx.checker.check_model(model)
    return _atomic(out, lambda temporary: onnx.save(model, temporary))


def _atomic(out: str | os.PathLike, write: Any) -> pathlib.Path:
    """Call ``write(temporary)`` for a file beside ``out``, then move it over ``out``."""
    target = pathlib.Path(out)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    os.close(handle)
    try:
        write(temporary)
        os.replace(temporary, target)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise
    return target


def export_policy(policy: str | os.PathLike, fmt: str, out: str | os.PathLike) -> pathlib.Path:
    """Write a saved policy (a run, a policy folder, the champion's) in ``fmt``.

    Args:
        policy: a saved policy (a run folder, a policy folder or its files).
        fmt: ``"torchscript"`` or ``"onnx"`` (``FORMATS``).
        out: the file to write; replaced whole, or left as it was on failure.

    Returns:
        The path written, ``out``.

    Raises:
        ModelError: an unknown format, naming those there are; the format's library
            is missing, or the policy does not play both roles.
        PolicyFileError: the policy cannot be read.
    """
    if fmt not in FORMATS:
        raise ModelError(f"unknown export format {fmt!r}; formats: {', '.join(FORMATS)}")
    return (export_torchscript if fmt == "torchscript" else export_onnx)(policy, out)
