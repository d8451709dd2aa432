"""``jekyll-hyde serve``, the command: where it listens, its default opponent, its stop.

docs/web/threat-model.md, 7: a port out of range or in use is refused in one line and
never announced, port 0 prints the port it got, and SIGTERM stops the server within two
seconds while an agent thinks. An unknown default opponent is refused. The slow agent of
the SIGTERM test is registered by a ``sitecustomize`` module in the server's process.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx2", reason="the web extra (httpx2, the test client) is not installed")

from jekyll_hyde_app import cli  # noqa: E402


def test_serve_refuses_a_port_out_of_range_in_one_line(capsys):
    for port in ("99999", "65536", "-1"):
        assert cli.main(["serve", "--port", port]) == 2
        out, err = capsys.readouterr()
        assert "open http" not in out
        assert err.strip().count("\n") == 0 and f"--port {port} is not a port" in err
        assert "0 to 65535" in err


def test_serve_refuses_an_unknown_default_opponent():
    with pytest.raises(ValueError, match="unknown agent name"):
        from jekyll_hyde_app.web.app import serve

        serve(opponent="nobody")
    assert cli.build_parser().parse_args(["serve"]).host == "127.0.0.1"  # loopback by default


def _no_proxy():
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _start_serve(tmp_path, *arguments: str) -> tuple[subprocess.Popen, int]:
    """``python -m jekyll_hyde_app.cli serve --port 0 ...`` with the test agent ``sleeper`` (a
    ``sitecustomize`` on PYTHONPATH registers it); returns the process and its port."""
    (tmp_path / "sitecustomize.py").write_text(
        textwrap.dedent(
            f"""
            import pathlib, time
            import jekyll_hyde_agents

            class Sleeper(jekyll_hyde_agents.HeuristicAgent):
                def act(self, view, legal):
                    pathlib.Path({str(tmp_path / "thinking")!r}).touch()
                    time.sleep(30)
                    return legal[0]

            jekyll_hyde_agents.register_agent("sleeper", lambda argument: Sleeper())
            """
        )
    )
    environment = dict(
        os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "jekyll_hyde_app.cli", "serve", "--port", "0", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    line = process.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if match is None or match.group(1) == "0":
        process.kill()
        pytest.fail(f"serve did not print the port it listens on: {line!r} {process.stderr.read()}")
    return process, int(match.group(1))


@pytest.mark.slow
def test_serve_on_port_0_prints_the_port_it_listens_on_and_sigterm_stops_it_while_an_agent_thinks(
    tmp_path,
):
    process, port = _start_serve(
        tmp_path,
        "--opponent",
        "sleeper",
        "--allow-opponents",
        "random",
        "--max-think-seconds",
        "60",
    )
    try:
        agents = _no_proxy().open(f"http://127.0.0.1:{port}/api/agents", timeout=10)
        assert json.load(agents)["allowed"] == ["sleeper", "random"]
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/games",
            data=json.dumps({"role": "hyde", "opponent": "sleeper"}).encode(),
            headers={"content-type": "application/json"},
        )
        answer = {}

        def ask():
            try:
                answer["status"] = _no_proxy().open(request, timeout=40).status
            except (urllib.error.URLError, ConnectionError) as error:
                answer["error"] = error

        asking = threading.Thread(target=ask, daemon=True)
        asking.start()
        deadline = time.monotonic() + 15
        while not (tmp_path / "thinking").exists():
            assert time.monotonic() < deadline, "the agent never started thinking"
            time.sleep(0.05)
        time.sleep(0.2)
        assert "status" not in answer  # still thinking
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=2)
        assert time.monotonic() - started < 2
        assert process.returncode in (-signal.SIGTERM, 0, 130)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_serve_on_a_port_in_use_says_so_in_one_line_and_never_announces_it(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "jekyll_hyde_app.cli", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1 and "open http" not in result.stdout
    assert result.stderr.strip().count("\n") == 0 and "the port is in use" in result.stderr
