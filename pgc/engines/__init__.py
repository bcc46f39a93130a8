"""Execution engines: where independent tasks (training trials, tuning runs) are evaluated.

    from pgc.engines import make_engine
    with make_engine("ray") as engine:                       # local Ray cluster sized to the machine
        results = train_batch(configs, executor=engine)      # same results as the local engine
    with make_engine("ray", address="ray://head:10001"): ... # join a running cluster
    with make_engine("local", processes=2) as engine: ...   # forked processes on this machine

An engine has ``map(fn, *iterables)`` with :meth:`concurrent.futures.Executor.map`'s meaning (results
in input order), so :func:`pgc.a3c.trainer.train_batch` takes one as ``executor=``; the core package
:mod:`pgc` never imports Ray. Every task's randomness comes from its own inputs (a trial's
``SeedSequence(seed)``), so the engine changes where a task runs, never its result.

Granularity: a Ray task costs a fixed overhead (scheduling, pickling, one round trip through the
object store; ``pgc bench scale`` measures it: about 0.7 ms amortised, 1.7 ms one at a time, on
the 2-core reference machine) that a local call does not, against about 15-30 ms for one trial of a
replication grid at cap 2,000-4,000. The engine therefore sends CHUNKS of several items per task:
``tasks_per_cpu`` chunks per CPU of the cluster (default 8: the overhead stays below 1% of a chunk
once a chunk holds 4 or more trials, and 8 chunks per CPU still balance the load when trials
differ in length or a CPU is shared; fewer, larger chunks measured slower on a loaded machine).
``chunk`` fixes the chunk size instead.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterable

from pgc.errors import UserError

ENGINES = ("local", "ray")


class LocalEngine:
    """Tasks in this process (``processes=1``) or in forked processes on this machine."""

    name = "local"

    def __init__(self, processes: int = 1):
        if not isinstance(processes, int) or processes < 1:
            raise UserError(f"processes must be a positive integer, got {processes!r}")
        self.processes = processes
        self._pool = None

    def map(self, fn: Callable, *iterables: Iterable) -> list:
        items = list(zip(*iterables, strict=False))
        if self.processes == 1 or len(items) < 2:
            return [fn(*args) for args in items]
        pool = self._pool_for_bench()
        size = chunk_size(len(items), self.processes, tasks_per_cpu=2)
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        return _flatten(pool.map(_call_chunk, [fn] * len(chunks), chunks))

    def map_each(self, fn: Callable, items: Iterable, *, progress: str | None = None) -> list:
        """``fn(item)`` for every item, each its own task handed to the next free process in the given
        order (put the heaviest first): for a few long jobs, where chunks would balance badly. Results in
        input order; ``progress`` names a progress bar counting finished jobs."""
        from concurrent.futures import as_completed

        from pgc.tasks.progress import progress_bar

        items = list(items)
        with progress_bar(len(items), "job", progress or "", enabled=progress is not None) as bar:
            if self.processes == 1 or len(items) < 2:
                results = []
                for item in items:
                    results.append(fn(item))
                    bar.update(1)
                return results
            pool = self._pool_for_bench()
            futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
            results = [None] * len(items)
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                bar.update(1)
        return results

    def _pool_for_bench(self):
        """The process pool (started if needed), for measuring its per-task overhead."""
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            from pgc.tasks import die_with_parent

            self._pool = ProcessPoolExecutor(
                self.processes,
                mp_context=multiprocessing.get_context("fork"),
                initializer=die_with_parent,
                initargs=(os.getpid(),),
            )
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _call_chunk(fn: Callable, items: list) -> list:
    return [fn(*args) for args in items]


def _flatten(chunks) -> list:
    return [r for chunk in chunks for r in chunk]


def chunk_size(n_items: int, cpus: int, tasks_per_cpu: int = 2) -> int:
    """Items per task: ``n_items`` split into about ``cpus × tasks_per_cpu`` tasks."""
    return max(1, math.ceil(n_items / max(1, cpus * tasks_per_cpu)))


class RayEngine:
    """Tasks on a Ray cluster: ``address`` joins a running one; None starts a local cluster sized to
    this machine (``num_cpus`` overrides its size). An already initialised Ray (e.g. a test's) is used
    as it is and left running."""

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus: int | None = None,
        tasks_per_cpu: int = 8,
        chunk: int | None = None,
        object_store_memory: int | None = None,
    ):
        try:
            import ray
        except ImportError as exc:
            raise RuntimeError(
                "the ray engine needs Ray: pip install -e '.[ray]' (scripts/setup.sh installs it)"
            ) from exc
        self._ray = ray
        self.address = address
        self.tasks_per_cpu, self.chunk = tasks_per_cpu, chunk
        self._owns = False
        if not ray.is_initialized():
            kwargs = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
            if address is None:
                kwargs.update(
                    num_cpus=num_cpus or os.cpu_count() or 1,
                    object_store_memory=object_store_memory or 256 * 1024 * 1024,
                    runtime_env={"env_vars": {"PYTHONPATH": _pythonpath()}},
                )
            ray.init(address=address, **kwargs)
            self._owns = True
        self.cpus = int(ray.cluster_resources().get("CPU", 1))
        self.started_here = address is None and self._owns
        self.tasks = 0  # remote tasks sent so far
        self._remote = ray.remote(num_cpus=1)(_call_chunk)

    def describe(self) -> str:
        """Where the tasks run, in words: the cluster's address (or a local one started for this command)
        and its CPUs."""
        where = (
            "a local Ray cluster started for this command"
            if self.started_here
            else f"the Ray cluster at {self.address}"
            if self.address
            else "the Ray cluster this process had already joined"
        )
        return f"{where} ({self.cpus} CPUs)"

    def map(self, fn: Callable, *iterables: Iterable) -> list:
        items = list(zip(*iterables, strict=False))
        if not items:
            return []
        size = self.chunk or chunk_size(len(items), self.cpus, self.tasks_per_cpu)
        fn_ref = self._ray.put(fn)
        refs = [self._remote.remote(fn_ref, items[i : i + size]) for i in range(0, len(items), size)]
        self.tasks += len(refs)
        return _flatten(self._ray.get(refs))

    def close(self) -> None:
        if self._owns:
            self._ray.shutdown()
            self._owns = False

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _pythonpath() -> str:
    """This process's import path for the workers of a local cluster (the project's packages included)."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the folder holding pgc
    parts = [here] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join(dict.fromkeys(parts))


@contextlib.contextmanager
def installed(engine):
    """Within the block, :func:`pgc.a3c.trainer.train_batch` calls that name no executor use ``engine``
    (for code that calls train_batch itself, e.g. the replication grid). None changes nothing."""
    from pgc.a3c.trainer import DEFAULT_EXECUTOR

    if engine is None:
        yield None
        return
    token = DEFAULT_EXECUTOR.set(engine)
    try:
        yield engine
    finally:
        DEFAULT_EXECUTOR.reset(token)


def from_args(engine: str, address: str | None):
    """The engine chosen on a command line: None for ``local`` (the command's own processes option
    applies), a :class:`RayEngine` for ``ray``. A bad choice is a one-line :class:`UserError`."""
    if engine == "local":
        if address is not None:
            raise UserError("--address is only for --engine ray")
        return None
    try:
        return make_engine(engine, address)
    except (RuntimeError, ConnectionError) as exc:
        raise UserError(f"--engine {engine}: {exc}") from None


@contextlib.contextmanager
def chosen_engine(engine: str, address: str | None, *, install: bool = False):
    """The engine of ``--engine``/``--address`` for the block: None for ``local`` (the command's own
    process and processes option), else a started engine, shut down at the end. ``install`` also makes
    it the trainer's default executor (:func:`installed`: ``train_batch`` calls deep inside a study, as
    the replication grid's)."""
    try:
        started = from_args(engine, address)
    except ValueError as exc:  # Ray's own refusals of an address included
        raise UserError(str(exc)) from None
    if started is None:
        yield None
        return
    with started, installed(started) if install else contextlib.nullcontext():
        yield started


def make_engine(name: str = "local", address: str | None = None, *, processes: int = 1, **ray_kwargs):
    """An engine by name: ``local`` (``processes`` forked processes) or ``ray`` (``address`` or a local cluster)."""
    if name == "local":
        if address is not None:
            raise UserError("--address is only for --engine ray")
        return LocalEngine(processes)
    if name == "ray":
        return RayEngine(address, **ray_kwargs)
    raise UserError(f"engine must be one of {', '.join(ENGINES)}, got {name!r}")
