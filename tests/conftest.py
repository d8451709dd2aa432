"""What every test needs from the process that runs them."""

from __future__ import annotations

import signal

import pytest


@pytest.fixture(autouse=True, scope="session")
def sigint_reaches_the_programs_under_test():
    """A shell that starts the tests in the background makes them ignore SIGINT, and a
    program inherits an ignored signal: the Ctrl-C tests would send theirs in vain."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
