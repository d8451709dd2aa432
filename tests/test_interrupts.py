"""Ctrl-C reaches the command's code, never an import (jekyll_hyde_app.interrupts)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from jekyll_hyde_app.interrupts import deliver_interrupts, inside_import

# A module whose import is interrupted half-way: it sends SIGINT to its own process,
# then goes on for a while before it marks itself complete.
SLOW_MODULE = """
import os, signal, time
os.kill(os.getpid(), signal.SIGINT)
deadline = time.monotonic() + 0.3
while time.monotonic() < deadline:
    sum(range(1000))
COMPLETE = True
"""


def _import_fresh(tmp_path, monkeypatch, name: str):
    (tmp_path / f"{name}.py").write_text(SLOW_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    return __import__(name)


def test_an_interrupt_during_an_import_lands_after_it(tmp_path, monkeypatch):
    with deliver_interrupts(), pytest.raises(KeyboardInterrupt):
        _import_fresh(tmp_path, monkeypatch, "slow_module_guarded")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # the interrupt comes here, once the import is done
            time.sleep(0.01)
        pytest.fail("the interrupt was lost")
    assert sys.modules["slow_module_guarded"].COMPLETE


def test_without_the_guard_the_interrupt_breaks_the_import(tmp_path, monkeypatch):
    # What deliver_interrupts prevents: Python's own handler raises inside the import.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        _import_fresh(tmp_path, monkeypatch, "slow_module_bare")
    assert "slow_module_bare" not in sys.modules


def test_a_block_that_ends_while_an_interrupt_waits_raises_it(tmp_path, monkeypatch):
    with pytest.raises(KeyboardInterrupt), deliver_interrupts():
        _import_fresh(tmp_path, monkeypatch, "slow_module_last")  # the block's last step
    assert sys.modules["slow_module_last"].COMPLETE
    time.sleep(0.2)  # no retry is left to interrupt the code after the block


def test_an_interrupt_outside_imports_is_raised_at_once():
    with deliver_interrupts(), pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
        pytest.fail("the interrupt was not raised")


def test_the_handler_is_given_back_and_an_ignored_sigint_stays_ignored():
    with deliver_interrupts():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with deliver_interrupts():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_off_the_main_thread_it_changes_nothing():
    seen = []

    def run():
        with deliver_interrupts():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [signal.default_int_handler]


def test_inside_import_reads_the_whole_stack(tmp_path, monkeypatch):
    assert not inside_import(sys._getframe())
    (tmp_path / "probe_module.py").write_text(
        "import sys\nfrom jekyll_hyde_app.interrupts import inside_import\n"
        "def nested():\n    return inside_import(sys._getframe())\n"
        "DURING_IMPORT = nested()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("probe_module", None)
    module = __import__("probe_module")
    assert module.DURING_IMPORT is True
    assert module.nested() is False  # the same code, called after the import
