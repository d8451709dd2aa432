"""Expert iteration's labelling on Ray (``run.executor: ray``, train/expert_iteration/executors.py).

A run on a two-node Ray cluster (started here, one CPU a node) writes the
same shards as a local run with one worker; a worker killed in the middle of
a shard costs that shard only; a driver killed with ``kill -9`` resumes from
the shards on disk; a cluster that cannot label (unreachable, another version
of the package, a node without the C extension) or a machine without Ray is
refused in one line before the run folder changes.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from jekyll_hyde_app import cli
from jekyll_hyde_train.common.config import ConfigError, load_config
from jekyll_hyde_train.expert_iteration import executors
from jekyll_hyde_train.expert_iteration import loop as expert_iteration
from jekyll_hyde_train.expert_iteration.config import EITrainConfig
from jekyll_hyde_train.expert_iteration.distill import read_shard
from jekyll_hyde_train.expert_iteration.executors import (
    ExecutorError,
    RayExecutor,
    c_extensions,
    node_problems,
)

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "expert_iteration" / "smoke.yaml")
# Six one-game shards a generation, deep enough that a generation takes a second or so:
# a kill lands in the middle of one.
OVERRIDES = [
    "expert_iteration.games=6",
    "expert_iteration.games_per_shard=1",
    "expert_iteration.first_teacher=ismcts:1500",
]
RAY = ["run.executor=ray", "run.workers=2"]

requires_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="Ray is not installed: pip install -e '.[rllib]' (the rllib extra; .ci/run adds it)",
)


def _sets(overrides: list[str]) -> list[str]:
    return [word for item in overrides for word in ("--set", item)]


def _config(*more: str) -> EITrainConfig:
    return load_config(SMOKE, [*OVERRIDES, *more], schema=EITrainConfig)


def _shards(run: pathlib.Path) -> dict[str, dict[str, np.ndarray]]:
    return {
        str(path.relative_to(run)): read_shard(path)
        for path in sorted(run.glob("generation_*/data/shard_*.npz"))
    }


def assert_same_shards(run: pathlib.Path, reference: pathlib.Path) -> None:
    """Every shard file of ``run`` holds the arrays of ``reference``'s, bit for bit."""
    ours, theirs = _shards(run), _shards(reference)
    assert sorted(ours) == sorted(theirs) and len(ours) == 12
    for name, arrays in theirs.items():
        assert sorted(ours[name]) == sorted(arrays), name
        for key, array in arrays.items():
            assert ours[name][key].dtype == array.dtype, (name, key)
            np.testing.assert_array_equal(ours[name][key], array, err_msg=f"{name}: {key}")


def _files(run: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


# --- without Ray -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["run.executor=slurm"], "run.executor 'slurm' is not one of ['local', 'ray']"),
        (["run.executor=ray", "run.ray_address=5"], "run.ray_address must be of type str"),
        (["run.executor=ray", "run.ray_address=head"], "'head' is not a Ray address: expected"),
        (["run.executor=ray", "run.ray_address=ray://h:0"], "'ray://h:0' is not a Ray address"),
        (["run.ray_address=head:6379"], "is for run.executor 'ray' (the executor is 'local')"),
    ],
)
def test_the_executor_and_its_address_are_checked_with_the_config(overrides, message):
    with pytest.raises(ConfigError) as error:
        load_config(SMOKE, overrides, schema=EITrainConfig)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_ray_addresses_of_every_form_are_accepted():
    for address in ("", "auto", "local", "10.0.0.5:6379", "ray://head.example:10001", "[::1]:6379"):
        assert (
            _config("run.executor=ray", f"run.ray_address='{address}'").run.ray_address == address
        )


def test_node_problems_name_the_node_and_what_differs():
    driver = {"version": "0.1.0", "python": "3.11"}
    good = {"node": "a" * 32, "host": "one", "version": "0.1.0", "python": "3.11", "missing": {}}
    assert node_problems(driver, [good]) == []
    older = {**good, "node": "b" * 32, "host": "two", "version": "0.0.9"}
    missing = {"jekyll_hyde_agents._rollout": "no"}
    bare = {**good, "node": "c" * 32, "host": "three", "missing": missing}
    other_python = {**good, "host": "four", "python": "3.12"}
    problems = node_problems(driver, [good, older, bare, other_python])
    assert problems == [
        "node two (bbbbbbbb) runs jekyll-hyde-env 0.0.9, the driver 0.1.0: install the same "
        "version on every node",
        "node three (cccccccc) cannot import the package's C extension "
        "jekyll_hyde_agents._rollout (no): "
        "install the package there with its compiled extensions (pip install jekyll-hyde-env)",
        "node four (aaaaaaaa) runs Python 3.12, the driver 3.11: use the same Python on every node",
    ]


def test_a_ray_run_without_ray_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as when not installed
    fresh = tmp_path / "fresh"
    args = ["train", "--config", SMOKE, "--run-dir", str(fresh), *_sets(RAY)]
    assert cli.main(args) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: run.executor 'ray' needs Ray, which is not installed")
    assert "pip install 'jekyll-hyde-env[rllib]'" in error and error.count("\n") == 1
    assert not fresh.exists()  # refused before the run folder was made
    run = expert_iteration.prepare_run_dir(_config(), str(tmp_path / "run"))
    before = _files(run)
    assert cli.main(["train", "--resume", str(run), *_sets(RAY)]) == 2
    assert "needs Ray" in capsys.readouterr().err
    assert _files(run) == before  # config.yaml still says executor local


# --- on a Ray cluster ------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    """A Ray cluster of two nodes of one CPU each, on this machine; this process is
    connected to it (as a run's driver would be) and RAY_ADDRESS names it."""
    ray = executors.import_ray()
    from ray.cluster_utils import Cluster

    if ray.is_initialized():  # left connected by an earlier test
        ray.shutdown()

    nodes = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    try:
        nodes.add_node(num_cpus=1)
        nodes.wait_for_nodes()
        ray.init(address=nodes.address, logging_level="WARNING")
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("RAY_ADDRESS", nodes.address)
            yield nodes
    finally:
        ray.shutdown()
        nodes.shutdown()


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> pathlib.Path:
    """The reference: the same config labelled by the local executor with one worker."""
    run = tmp_path_factory.mktemp("local") / "run"
    args = ["train", "--config", SMOKE, "--run-dir", str(run), *_sets(OVERRIDES)]
    assert cli.main([*args, "--set", "run.workers=1"]) == 0
    return run


@requires_ray
@pytest.mark.slow
def test_a_run_on_two_nodes_writes_the_local_runs_shards(cluster, local_run, tmp_path, monkeypatch):
    opened = []

    def open_and_keep(run):
        opened.append(executors.open_executor(run))
        return opened[-1]

    monkeypatch.setattr(expert_iteration, "open_executor", open_and_keep)
    ray = executors.import_ray()
    put, shipped = ray.put, []
    monkeypatch.setattr(ray, "put", lambda value, **kw: shipped.append(value) or put(value, **kw))
    run = tmp_path / "run"
    args = ["train", "--config", SMOKE, "--run-dir", str(run), *_sets([*OVERRIDES, *RAY])]
    assert cli.main(args) == 0
    assert_same_shards(run, local_run)
    (executor,) = opened
    assert isinstance(executor, RayExecutor) and len(executor.reports) == 2
    assert sum(executor.nodes.values()) == 12 and len(executor.nodes) == 2  # both nodes labelled
    assert (run / "policy" / "policy.json").exists()
    # The teacher is put into the object store once per generation, generation 1's with
    # the files of generation 0's policy, which the workers never read from the run folder.
    first, second = (shipped_teacher.teacher for shipped_teacher in shipped)
    assert first == "ismcts:1500" and second.config.num_simulations == 20
    policy = run / "generation_00" / "policy"
    assert shipped[1].weights == (policy / "policy.npz").read_bytes()
    assert shipped[1].metadata == (policy / "policy.json").read_bytes()


class _KillsAWorker:
    """A Ray executor whose first try of generation 0's shard 2 kills its own worker."""

    def __init__(self, inner: RayExecutor, log: pathlib.Path):
        self.inner, self.log = inner, str(log)
        self.nodes = inner.nodes

    def map_shards(self, fn, jobs, shared=None):
        log = self.log

        def dies_on_first_try(shared, job):  # nested: Ray sends it by value
            with open(log, "a") as handle:
                handle.write(f"{job.settings.seed} {job.index}\n")
            tries = pathlib.Path(log).read_text().splitlines()
            if job.settings.seed == 0 and job.index == 2 and tries.count("0 2") == 1:
                os.kill(os.getpid(), signal.SIGKILL)
            return fn(shared, job)

        return self.inner.map_shards(dies_on_first_try, jobs, shared)

    def describe(self) -> str:
        return self.inner.describe()

    def close(self) -> None:
        self.inner.close()


@requires_ray
@pytest.mark.slow
def test_a_worker_killed_in_a_shard_costs_that_shard_only(cluster, local_run, tmp_path):
    log = tmp_path / "tries"
    run = tmp_path / "run"
    config = _config(*RAY)
    expert_iteration.prepare_run_dir(config, str(run))
    executor = _KillsAWorker(RayExecutor(max_retries=2), log)
    expert_iteration.train(config, run, executor)
    tries = log.read_text().splitlines()
    assert tries.count("0 2") == 2  # killed, then run again
    assert all(tries.count(line) == 1 for line in set(tries) - {"0 2"})  # nothing else redone
    assert len(set(tries)) == 12
    assert_same_shards(run, local_run)


@requires_ray
@pytest.mark.slow
def test_a_driver_killed_with_sigkill_resumes_from_its_shards(cluster, local_run, tmp_path):
    run = tmp_path / "run"
    command = [sys.executable, "-m", "jekyll_hyde_app.cli", "train", "--config", SMOKE]
    command += ["--run-dir", str(run)]
    process = subprocess.Popen(
        [*command, *_sets([*OVERRIDES, *RAY])],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    data = run / "generation_00" / "data"
    deadline = time.time() + 120
    while not any(data.glob("shard_*.npz")):
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
        assert time.time() < deadline, "no shard appeared"
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    kept = {path: path.read_bytes() for path in data.glob("shard_*.npz")}
    assert 1 <= len(kept) < 6  # killed in the middle of generation 0's labelling
    assert cli.main(["train", "--resume", str(run)]) == 0
    assert all(path.read_bytes() == data for path, data in kept.items())  # not labelled again
    assert_same_shards(run, local_run)


@requires_ray
@pytest.mark.slow
def test_an_unreachable_address_is_refused_before_the_run_changes(cluster, tmp_path, capsys):
    run = expert_iteration.prepare_run_dir(_config(), str(tmp_path / "run"))
    before = _files(run)
    started = time.perf_counter()
    address = ["run.executor=ray", "run.ray_address=127.0.0.1:1"]
    assert cli.main(["train", "--resume", str(run), *_sets(address)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: run.ray_address '127.0.0.1:1': no Ray cluster is reachable")
    assert "ray start --head" in error and error.count("\n") == 1
    assert time.perf_counter() - started < 30
    assert _files(run) == before


@requires_ray
@pytest.mark.slow
def test_a_node_of_another_version_is_refused_before_the_run_changes(
    cluster, tmp_path, capsys, monkeypatch
):
    run = expert_iteration.prepare_run_dir(_config(), str(tmp_path / "run"))
    before = _files(run)
    other = {**executors.driver_report(), "version": "0.0.0+other"}
    monkeypatch.setattr(executors, "driver_report", lambda: other)
    assert cli.main(["train", "--resume", str(run), *_sets(RAY)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "(and 1 more)" in error  # both nodes
    assert "runs jekyll-hyde-env 0.1.0, the driver 0.0.0+other" in error
    assert _files(run) == before


@requires_ray
@pytest.mark.slow
def test_a_node_without_the_c_extension_is_refused(cluster, tmp_path):
    # Workers started with this folder first on their path cannot import the extension.
    blocked = c_extensions()[0]
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n\n\nclass Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {blocked!r}:\n"
        "            raise ImportError('not built on this node')\n\n\n"
        "sys.meta_path.insert(0, Block())\n"
    )
    with pytest.raises(ExecutorError) as error:
        RayExecutor(runtime_env={"env_vars": {"PYTHONPATH": str(tmp_path)}})
    message = str(error.value)
    assert f"cannot import the package's C extension {blocked} (not built on this node)" in message
    assert "\n" not in message
