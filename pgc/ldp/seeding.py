"""The libraries' global random generators, seeded from the audit's stream one block of reports at a time.

multi-freq-ldpy and pure-ldp draw from process-global generators: Python's ``random`` (pure-ldp), numpy's
global ``np.random`` (both) and, inside numba-compiled clients (multi-freq-ldpy's GRR, UE, SS, HE), numba's
own per-thread Mersenne Twister, which ``np.random.seed`` called from Python does not reach. A release of n
reports is cut into blocks of :data:`RELEASE_BLOCK`; each block gets one seed drawn from the caller's
``rng`` (:func:`block_seeds`), all three generators are seeded with it for that block
(:func:`seeded_library_generators`) and restored to their previous states afterwards, so a release depends
only on the audit's generator and nothing outside the block sees a changed global state.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

import numpy as np

RELEASE_BLOCK = 8192  # reports per seeded block of a release


def block_seeds(n: int, rng: np.random.Generator, block: int = RELEASE_BLOCK) -> list[tuple[int, int]]:
    """(size, seed) of each block of a release of n reports, the seeds drawn from ``rng`` in one call."""
    sizes = [block] * (n // block) + ([n % block] if n % block else [])
    seeds = rng.integers(2**32, size=len(sizes))
    return [(size, int(seed)) for size, seed in zip(sizes, seeds, strict=True)]


def _numba_state():
    """(pointer, state) of numba's generator for numpy calls in compiled code; None without numba."""
    try:
        from numba import _helperlib
    except ImportError:  # numba is a dependency of multi-freq-ldpy; pure-ldp alone runs without it
        return None
    pointer = _helperlib.rnd_get_np_state_ptr()
    return _helperlib, pointer, _helperlib.rnd_get_state(pointer)


@contextlib.contextmanager
def seeded_library_generators(seed: int) -> Iterator[None]:
    """Python's ``random``, numpy's global generator and numba's compiled-code generator seeded with ``seed``,
    each restored afterwards."""
    py_state, np_state, numba_saved = random.getstate(), np.random.get_state(), _numba_state()
    random.seed(seed)
    np.random.seed(seed)
    if numba_saved is not None:
        helper, pointer, _ = numba_saved
        helper.rnd_seed(pointer, seed)
    try:
        yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)
        if numba_saved is not None:
            helper, pointer, state = numba_saved
            helper.rnd_set_state(pointer, state)
