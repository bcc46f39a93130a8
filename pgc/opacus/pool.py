"""Releases of an Opacus client computed in worker processes: each worker builds the same system once (the
:class:`~pgc.opacus.system.OpacusSystem` that owns the pool hands over its class and keywords: its own model copies
and Opacus objects) and trains the releases whose seeds it is given. A release depends on its seed only, so the
releases are the same for any number of workers. A worker ends itself when the process that started it is gone
(killed before it could close the pool), so no worker outlives the audit.

Torch runs one intra-op thread in each worker (and in the serial path, see :func:`one_thread`): a release is a few
hundred small tensor operations, where a pool of intra-op threads costs more than it gives, and far more when the
cores are shared.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import numpy as np

from pgc.errors import UserError

_WORKER: dict[str, Any] = {}  # the worker process's own system, built once by its initializer


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Torch's intra-op threads set to one for the block, and restored after it."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# seconds between a worker's looks at its parent: a worker whose parent is gone (killed, not closed) exits
PARENT_POLL_S = 1.0


def _exit_with_parent(parent: int) -> None:
    """Ends this worker process once its parent ``parent`` is gone (the worker is handed to another parent)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def _start(parent: int, make_system: Callable[..., Any], settings: dict[str, Any]) -> None:
    """A worker's initializer: watch ``parent`` (the pool owner's pid, passed in: a parent killed while this worker
    still starts is seen at once), then build the system."""
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    import torch

    torch.set_num_threads(1)
    _WORKER["system"] = make_system(**settings)


def _updates(secret: str, seeds: np.ndarray) -> np.ndarray:
    return _WORKER["system"].updates(secret, seeds)


class ReleasePool:
    """``workers`` spawned processes, each with the system ``make_system(**settings)`` (a picklable class or function:
    its releases ``updates(secret, seeds)``); started on first use, closed by ``close``."""

    def __init__(self, make_system: Callable[..., Any], settings: dict[str, Any], workers: int) -> None:
        self.args, self.workers = (make_system, settings), workers
        self._pool: ProcessPoolExecutor | None = None

    def updates(self, secret: str, seeds: np.ndarray) -> np.ndarray:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")  # torch's thread pools do not survive a fork
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=_start, initargs=(os.getpid(), *self.args)
            )
        chunks = np.array_split(seeds, min(len(seeds), 4 * self.workers))
        try:
            return np.concatenate(list(self._pool.map(_updates, [secret] * len(chunks), chunks)))
        except BrokenProcessPool:
            self.close()
            raise UserError(
                "the Opacus workers could not start (the client's model or data must be picklable by an importable "
                "module): run with --workers 1"
            ) from None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
