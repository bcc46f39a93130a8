"""Independent tasks through an executor: the one place where audits and attacks hand work to an engine.

An executor is anything with :meth:`concurrent.futures.Executor.map`'s meaning (results in input
order), e.g. an engine of the ``pgc.engines`` package; this module never imports one. Every task draws
its randomness from its own arguments (a seed or ``SeedSequence``), so where it runs never changes
its result. Functions sent to an executor must be picklable: top-level functions, or
:func:`functools.partial` of one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any


def map_tasks(executor, fn: Callable, *iterables: Iterable) -> Iterator:
    """``fn`` over the zipped ``iterables`` in input order: through ``executor.map``, or lazily in this
    process when ``executor`` is None (a caller can then print each result as soon as it exists)."""
    if executor is None:
        return map(fn, *iterables)
    return iter(executor.map(fn, *iterables))


def call_with_keywords(fn: Callable, keywords: dict) -> Any:
    """``fn(**keywords)``: a task that runs any top-level function (tasks of different kinds in one map)."""
    return fn(**keywords)


def die_with_parent(parent: int) -> None:
    """A forked pool worker's initializer (``initargs=(os.getpid(),)``): the worker is killed when the
    process that started it dies (Linux ``PR_SET_PDEATHSIG``), so a command killed with ``kill -9`` leaves
    no idle workers behind, waiting for tasks forever; elsewhere it does nothing. The pool must be started
    from a thread that outlives it (the death signal follows the forking thread)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the death signal was set
        os._exit(1)
