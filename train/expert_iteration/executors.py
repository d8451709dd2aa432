"""Where expert iteration's shards are labelled: a local process pool or a Ray cluster.

Both executors do one thing, ``map_shards(fn, jobs, shared)``: call
``fn(shared, job)`` for every job and yield the results as they finish, in
any order. ``shared`` is what every job needs and is the same for all of them
(the generation's teacher with its network): it travels to each worker once
per call, not once per job. The caller (``jekyll_hyde_train.expert_iteration.distill.generate``)
writes
each result into the run folder itself, so the workers need no shared
filesystem, and a job is a pure function of its arguments, so that every
executor writes the same shards.

- ``LocalExecutor(workers)``: a fork pool of ``workers`` processes (one: in
  this process); ``shared`` reaches each process when it starts.
- ``RayExecutor(address, workers)``: a Ray task per job on the cluster at
  ``address`` (``run.ray_address``; empty: the ``RAY_ADDRESS`` environment
  variable, else a local Ray of ``workers`` CPUs started for the run), with
  ``shared`` put once into Ray's object store. A worker killed in the middle
  of a job loses that job only: Ray runs it again (``max_retries``). Before
  any job runs, a small task on every node reports the package's version and
  whether its C extensions import, and a node that differs from the driver
  stops the run with one line naming it.

``open_executor(run)`` makes the one a run's config asks for. Ray is an
optional dependency (the ``rllib`` extra installs it), imported only here
and only by ``RayExecutor``.
"""

from __future__ import annotations

import importlib
import logging
import multiprocessing
import os
import socket
import sys
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

import jekyll_hyde_agents
import jekyll_hyde_env
from jekyll_hyde_train.expert_iteration.config import EIRunConfig, ray_address_problem

LOCAL_NODE = "local"
"""The node every job of a ``LocalExecutor`` runs on, as ``nodes`` counts them."""
CONNECT_SECONDS = 5.0
"""How long a Ray address may take to accept a connection before it is called unreachable."""
PROBE_SECONDS = 120.0
"""How long the nodes' start-up reports may take (a node's first worker starts Python)."""
INSTALL_RAY = "pip install 'jekyll-hyde-env[rllib]' (the rllib extra installs Ray)"


def c_extensions() -> tuple[str, ...]:
    """The package's compiled modules, which a worker needs to label at full speed."""
    return (f"{jekyll_hyde_agents.__name__}._rollout", f"{jekyll_hyde_env.__name__}.core._core")


class ExecutorError(ValueError):
    """An executor that cannot run: Ray missing or unreachable, or a node unlike the
    driver; the message is one line naming the problem."""


class Executor(Protocol):
    """Runs a generation's jobs (``map_shards``) and counts where they ran (``nodes``)."""

    nodes: Counter

    def map_shards(
        self, fn: Callable[[Any, Any], Any], jobs: Iterable[Any], shared: Any = None
    ) -> Iterator[Any]:
        """``fn(shared, job)`` for every job, yielded as each finishes."""
        ...

    def close(self) -> None:
        """Release the workers (and a Ray started for the run)."""
        ...

    def describe(self) -> str:
        """Where the jobs run, in a few words."""
        ...


# --- local -----------------------------------------------------------------------

_POOL_SHARED: list[Any] = [None]  # the pool process's copy of map_shards' ``shared``


def _set_pool_shared(shared: Any) -> None:
    _POOL_SHARED[0] = shared


def _pool_call(task: tuple[Callable[[Any, Any], Any], Any]) -> Any:
    fn, job = task
    return fn(_POOL_SHARED[0], job)


class LocalExecutor:
    """Jobs on ``workers`` processes of this machine (a fork pool; one: in this process)."""

    def __init__(self, workers: int = 2):
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self.nodes: Counter = Counter()

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> str:
        return f"{self.workers} local process{'es' if self.workers > 1 else ''}"

    def map_shards(
        self, fn: Callable[[Any, Any], Any], jobs: Iterable[Any], shared: Any = None
    ) -> Iterator[Any]:
        jobs = list(jobs)
        if self.workers <= 1 or len(jobs) <= 1:
            for job in jobs:
                result = fn(shared, job)
                self.nodes[LOCAL_NODE] += 1
                yield result
            return
        pool = multiprocessing.get_context("fork").Pool(
            min(self.workers, len(jobs)), initializer=_set_pool_shared, initargs=(shared,)
        )
        try:
            for result in pool.imap_unordered(_pool_call, [(fn, job) for job in jobs]):
                self.nodes[LOCAL_NODE] += 1
                yield result
        finally:
            pool.terminate()
            pool.join()

    def close(self) -> None:
        pass


# --- Ray -------------------------------------------------------------------------


def import_ray() -> Any:
    """The ``ray`` module, or ExecutorError saying how to install it."""
    # Ray's handler of fatal signals, read when ray is first imported, would be inherited
    # by the processes a run forks (the arena's pool), which print a stack trace each
    # when the pool stops them with SIGTERM.
    os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")
    try:
        import ray  # lazy: the rllib extra
    except ImportError as error:
        raise ExecutorError(
            f"run.executor 'ray' needs Ray, which is not installed here ({error}): "
            f"{INSTALL_RAY}, or set run.executor=local"
        ) from None
    return ray


def resolve_address(address: str) -> tuple[str, str]:
    """The Ray address a run connects to, and where it came from (``run.ray_address``
    or ``RAY_ADDRESS``); ``local`` means a Ray started for the run.

    Raises:
        ExecutorError: ``RAY_ADDRESS`` holds no address (``ray_address`` is checked
            with the config).
    """
    if address:
        return address, "run.ray_address"
    from_environment = os.environ.get("RAY_ADDRESS", "").strip()
    if not from_environment:
        return "local", "run.ray_address"
    problem = ray_address_problem(from_environment)
    if problem:
        raise ExecutorError(f"the environment variable RAY_ADDRESS {problem}")
    return from_environment, "RAY_ADDRESS"


def check_reachable(address: str, source: str, seconds: float = CONNECT_SECONDS) -> None:
    """Refuse a ``host:port`` address that accepts no connection within ``seconds``
    (``ray.init`` would retry it for minutes).

    Raises:
        ExecutorError: naming the address, where it came from and what answered.
    """
    if address in ("auto", "local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=seconds):
            pass
    except OSError as error:
        reason = error.strerror or type(error).__name__
        if isinstance(error, TimeoutError) or reason == "timed out":
            reason = f"no answer within {seconds:g} s"
        raise ExecutorError(
            f"{source} {address!r}: no Ray cluster is reachable there ({reason}); start one "
            "with 'ray start --head' and give the address it prints, or leave run.ray_address "
            "empty for a Ray started for the run"
        ) from None


def _node_report(modules: tuple[str, ...]) -> dict[str, Any]:
    """What a node runs (a Ray task on it): the package's version, Python's, Ray's, and
    the compiled modules that do not import there (with why)."""
    import ray  # lazy: the rllib extra; this runs on a Ray worker

    missing = {}
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as error:
            missing[name] = str(error) or type(error).__name__
    return {
        "node": ray.get_runtime_context().get_node_id(),
        "host": socket.gethostname(),
        "version": jekyll_hyde_env.__version__,
        "python": _python_version(),
        "missing": missing,
    }


def _python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def driver_report() -> dict[str, Any]:
    """``_node_report``'s fields for the driver, which the nodes' must match."""
    return {"version": jekyll_hyde_env.__version__, "python": _python_version()}


def node_problems(driver: dict[str, Any], reports: list[dict[str, Any]]) -> list[str]:
    """What keeps each node from labelling the driver's shards: another version of the
    package or of Python, or a compiled module that does not import there."""
    problems = []
    for report in reports:
        where = f"node {report['host']} ({report['node'][:8]})"
        if report["version"] != driver["version"]:
            problems.append(
                f"{where} runs jekyll-hyde-env {report['version']}, the driver "
                f"{driver['version']}: install the same version on every node"
            )
        elif report["python"] != driver["python"]:
            problems.append(
                f"{where} runs Python {report['python']}, the driver {driver['python']}: "
                "use the same Python on every node"
            )
        for name, why in report["missing"].items():
            problems.append(
                f"{where} cannot import the package's C extension {name} ({why}): "
                "install the package there with its compiled extensions "
                "(pip install jekyll-hyde-env)"
            )
    return problems


_JOB_SHARED: list[Any] = [None, None]  # this worker's (key, value) of map_shards' last ``shared``


def _ray_call(fn: Callable[[Any, Any], Any], key: str, boxed: list, job: Any) -> tuple[str, Any]:
    """One job on a Ray worker: ``fn(shared, job)`` and the node it ran on.

    ``shared`` comes boxed in a list so that Ray does not fetch it for every job:
    a worker fetches it once per ``map_shards`` call (``key``) and keeps it."""
    import ray  # lazy: the rllib extra; this runs on a Ray worker

    if _JOB_SHARED[0] != key:
        _JOB_SHARED[:] = [None, None]  # let the previous generation's go first
        _JOB_SHARED[:] = [key, ray.get(boxed[0])]
    return ray.get_runtime_context().get_node_id(), fn(_JOB_SHARED[1], job)


class RayExecutor:
    """Jobs as Ray tasks on a cluster (or on a local Ray started for the run).

    Args:
        address: ``run.ray_address`` (see ``EIRunConfig``); empty: ``RAY_ADDRESS``,
            else ``local``. A process already connected (``ray.init`` called by the
            caller) uses that connection, when the address is ``local``, ``auto``
            or names the same port, and leaves it open.
        workers: CPUs of a local Ray started for the run.
        max_retries: how many times Ray runs a job again after its worker died.
        runtime_env: Ray's ``runtime_env`` for the jobs and the node checks.
        modules: the compiled modules every node must import (``c_extensions``).

    Raises:
        ExecutorError: Ray is not installed, the address is unreachable, or a node
            differs from the driver (``node_problems``); in one line, before any job.
    """

    def __init__(
        self,
        address: str = "",
        workers: int = 2,
        max_retries: int = 3,
        runtime_env: dict | None = None,
        modules: tuple[str, ...] | None = None,
    ):
        self.ray = ray = import_ray()
        self.max_retries = max_retries
        self.runtime_env = runtime_env
        self.nodes: Counter = Counter()
        self._started = False
        address, source = resolve_address(address)
        check_reachable(address, source)
        if ray.is_initialized():  # the caller's connection, which it closes itself
            connected = ray.get_runtime_context().gcs_address
            if address not in ("local", "auto") and _port(address) != _port(connected):
                raise ExecutorError(
                    f"{source} {address!r}: this process is already connected to the Ray "
                    f"cluster at {connected}"
                )
        else:
            self._connect(address, source, workers)
        self.address = ray.get_runtime_context().gcs_address
        try:
            self.reports = self.check_nodes(c_extensions() if modules is None else modules)
        except BaseException:
            self.close()
            raise

    def _connect(self, address: str, source: str, workers: int) -> None:
        options: dict[str, Any] = {"logging_level": logging.WARNING}
        if address == "local":
            options.update(num_cpus=workers, include_dashboard=False)
        else:
            # One attempt to reach the cluster's control store (within Ray's own timeout)
            # instead of Ray's default of many, so that an address where something other
            # than Ray answers is refused after that one.
            os.environ.setdefault("RAY_gcs_server_port_wait_time_s", "1")
        try:
            self.ray.init(address=address, **options)
        except Exception as error:  # ConnectionError, RuntimeError, ValueError from Ray
            message = " ".join(str(error).split()) or type(error).__name__
            raise ExecutorError(f"{source} {address!r}: Ray did not connect: {message}") from None
        self._started = True

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> str:
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        return f"Ray at {self.address}: {len(self.reports)} nodes, {cpus} CPUs"

    def _options(self, **options: Any) -> dict[str, Any]:
        if self.runtime_env is not None:
            options["runtime_env"] = self.runtime_env
        return options

    def check_nodes(self, modules: tuple[str, ...]) -> list[dict[str, Any]]:
        """Run ``_node_report`` on every live node with CPUs and refuse a node unlike
        the driver; returns the reports."""
        ray = self.ray
        # lazy: the rllib extra
        from ray.util.scheduling_strategies import (
            NodeAffinitySchedulingStrategy,  # lazy: rllib extra
        )

        nodes = [n for n in ray.nodes() if n.get("Alive") and n["Resources"].get("CPU", 0) > 0]
        if not nodes:
            raise ExecutorError(f"the Ray cluster at {self.address} has no node with CPUs")
        probe = ray.remote(_node_report)
        pending = {
            probe.options(
                **self._options(
                    num_cpus=0,
                    max_retries=0,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False),
                )
            ).remote(modules): n
            for n in nodes
        }
        ready, late = ray.wait(list(pending), num_returns=len(pending), timeout=PROBE_SECONDS)
        problems, reports = [], []
        for ref in late:
            address = pending[ref].get("NodeManagerAddress", "?")
            problems.append(f"node {address} did not report within {PROBE_SECONDS:g} s")
        for ref in ready:
            try:
                reports.append(ray.get(ref))
            except ray.exceptions.RayError as error:
                address = pending[ref].get("NodeManagerAddress", "?")
                cause = getattr(error, "cause", None) or error
                reason = " ".join(str(cause).split()[-12:])
                problems.append(
                    f"node {address} cannot run the package's code ({type(cause).__name__}: "
                    f"{reason}): install jekyll-hyde-env there"
                )
        problems += node_problems(driver_report(), reports)
        if problems:
            for ref in late:
                ray.cancel(ref, force=True)
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise ExecutorError(f"the Ray cluster at {self.address}: {problems[0]}{more}")
        return reports

    def map_shards(
        self, fn: Callable[[Any, Any], Any], jobs: Iterable[Any], shared: Any = None
    ) -> Iterator[Any]:
        ray = self.ray
        key = uuid.uuid4().hex  # this call's ``shared``, as the workers keep it
        boxed = [ray.put(shared)]
        remote = ray.remote(_ray_call)
        options = self._options(num_cpus=1, max_retries=self.max_retries)
        pending = {
            remote.options(**options, name=_describe_job(job)).remote(fn, key, boxed, job): job
            for job in jobs
        }
        try:
            while pending:
                (ready,), _ = ray.wait(list(pending), num_returns=1)
                job = pending.pop(ready)
                try:
                    node, result = ray.get(ready)
                except ray.exceptions.RayTaskError as error:  # the job's own exception
                    cause = getattr(error, "cause", None)
                    if isinstance(cause, Exception):
                        raise cause from None
                    raise ExecutorError(f"a Ray job failed: {_last_line(error)}") from None
                except ray.exceptions.RayError as error:  # its worker or node, every try
                    raise ExecutorError(
                        f"a Ray job ({_describe_job(job)}) failed {self.max_retries + 1} "
                        f"times: {_last_line(error)}"
                    ) from None
                self.nodes[node] += 1
                yield result
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)

    def close(self) -> None:
        if self._started:
            self._started = False
            self.ray.shutdown()


def _port(address: str) -> str:
    return address.rpartition(":")[2]


def _last_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__


def _describe_job(job: Any) -> str:
    describe = getattr(job, "describe", None)
    return describe() if callable(describe) else repr(job)[:80]


def open_executor(run: EIRunConfig) -> LocalExecutor | RayExecutor:
    """The executor ``run.executor`` names, connected and checked (``RayExecutor``)."""
    if run.executor == "ray":
        return RayExecutor(run.ray_address, run.workers)
    return LocalExecutor(run.workers)
