"""Shared by the tests of the exploitability curves' trainers (benchmarks/curves/)."""

from __future__ import annotations

import importlib.util
import pathlib

CURVES = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "curves"


def curves_module(name: str, monkeypatch):
    """benchmarks/curves/NAME.py as a module (its folder on the path for its own imports)."""
    monkeypatch.syspath_prepend(str(CURVES))
    spec = importlib.util.spec_from_file_location(f"curves_{name}", CURVES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
