"""What every test needs from the process that runs them, and the web tests' app and client.

The ``app`` and ``client`` fixtures serve the tests of ``jekyll-hyde serve``
(tests/test_web*.py), which skip themselves when the web extra is missing; their
shared helpers are tests/web_helpers.py.
"""

from __future__ import annotations

import signal

import pytest

# The web helpers' own asserts report their values, as a test module's do.
pytest.register_assert_rewrite("tests.web_helpers")


@pytest.fixture(autouse=True, scope="session")
def sigint_reaches_the_programs_under_test():
    """A shell that starts the tests in the background makes them ignore SIGINT, and a
    program inherits an ignored signal: the Ctrl-C tests would send theirs in vain."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield


@pytest.fixture()
def app():
    """The web application of the API tests: the default opponents and ``lowest``."""
    from jekyll_hyde_app.web.app import create_app  # lazy: the web extra (fastapi)
    from jekyll_hyde_app.web.opponents import DEFAULT_OPPONENTS

    return create_app(allow=(*DEFAULT_OPPONENTS, "lowest"))


@pytest.fixture()
def client(app):
    """A client of ``app`` that sends each game's token as the pages do."""
    from .web_helpers import TokenClient  # lazy: the web extra (fastapi's test client)

    with TokenClient(app) as test_client:
        test_client.tokens = {}
        yield test_client


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory):
    """One expert-iteration smoke run (configs/expert_iteration/smoke.yaml) for every
    test that reads a finished run; a test that changes it works on a copy."""
    import pathlib

    from jekyll_hyde_app import cli  # lazy: only the tests that ask for a run need it

    config = pathlib.Path(__file__).resolve().parents[1] / "configs/expert_iteration/smoke.yaml"
    run = tmp_path_factory.mktemp("smoke") / "run"
    assert cli.main(["train", "--config", str(config), "--run-dir", str(run)]) == 0
    return run
