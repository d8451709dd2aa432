"""What the file-checking tests share: the configs they damage, hostile inputs, the
check that a command refuses a file in one line naming it, and Hypothesis' settings
with a strategy for JSON values and the places inside them."""

from __future__ import annotations

import copy
import io
import pathlib

import numpy as np
from hypothesis import HealthCheck
from hypothesis import strategies as st

from jekyll_hyde_app import cli

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = ROOT / "configs" / "expert_iteration" / "smoke.yaml"
PPO_SMOKE = ROOT / "configs" / "ppo" / "smoke.yaml"
NESTED = b"[" * 100_000 + b"]" * 100_000  # 200 KB of brackets
RANDOM_BYTES = np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8).tobytes()


def refused(capsys, argv: list[str], path: pathlib.Path, says: str = "") -> str:
    """Run the command; it must exit 2 with one line on stderr naming ``path``."""
    capsys.readouterr()
    status = cli.main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert str(path) in lines[0], err
    assert says in lines[0], err
    return lines[0]


# Derandomized: the same examples on every run, so a failure is always reproduced.
FUZZ = dict(derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=5)
)


def nested(keys: st.SearchStrategy) -> st.SearchStrategy:
    """Values nested in lists and mappings (keys drawn from ``keys``), a few leaves."""
    return st.recursive(
        SCALARS,
        lambda children: (
            st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=3)
        ),
        max_leaves=8,
    )


JSON = nested(st.text(max_size=5))


def places(data, path=()):
    """Every place in a JSON value: (path to it, value)."""
    yield path, data
    if isinstance(data, dict):
        items = data.items()
    else:
        items = enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        yield from places(value, (*path, key))


def replaced(data, path, value):
    data = copy.deepcopy(data)
    if not path:
        return value
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def npy_claiming(shape, dtype="<f4") -> bytes:
    buffer = io.BytesIO()
    header = {"descr": dtype, "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue() + b"\0" * 64
