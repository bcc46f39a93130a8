"""Independent tasks through an executor: the one place where audits and attacks hand work to an engine.

An executor is anything with :meth:`concurrent.futures.Executor.map`'s meaning (results in input
order), e.g. an engine of the ``engines`` package; this module never imports one. Every task draws
its randomness from its own arguments (a seed or ``SeedSequence``), so where it runs never changes
its result. Functions sent to an executor must be picklable: top-level functions, or
:func:`functools.partial` of one.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator


def map_tasks(executor, fn: Callable, *iterables: Iterable) -> Iterator:
    """``fn`` over the zipped ``iterables`` in input order: through ``executor.map``, or lazily in this
    process when ``executor`` is None (a caller can then print each result as soon as it exists)."""
    if executor is None:
        return map(fn, *iterables)
    return iter(executor.map(fn, *iterables))


def call_with_keywords(fn: Callable, keywords: dict) -> Any:
    """``fn(**keywords)``: a task that runs any top-level function (tasks of different kinds in one map)."""
    return fn(**keywords)
