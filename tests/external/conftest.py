"""Shared fixtures of the tests of other libraries' agents."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny networks, one row at a time: torch's second thread only spins, and on a busy
    machine it costs more than it gives (the arena's worker processes use one thread too)."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
