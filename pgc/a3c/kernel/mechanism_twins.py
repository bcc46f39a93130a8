"""The built-in mechanisms on one submission, compiled (the trainer's fast path).

:func:`privatize_row` makes the same arithmetic and the same draws, in the same order, as the numpy
classes of :mod:`pgc.mechanisms` applied to a single row; ``tests/pgc/mechanisms/test_mechanisms.py`` checks each
row bit for bit, and ``tests/pgc/a3c/test_trainer.py`` that a trial run with the fast path equals the same
trial run through the public Protocol.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..mechanism_codes import MECH_GAUSSIAN, MECH_LAPLACE, MECH_LAPLACE_SECURE, MECH_NONE, SNAP_BOUND_SCALES


@nb.njit(cache=True, inline="always", error_model="numpy")
def _l1_norm(g):
    """||g||_1 summed in the order of numpy's pairwise ``np.abs(g).sum()`` for d ≤ 128 (eight
    running sums, combined as a tree, then the d mod 8 tail), so the clip is bit for bit numpy's."""
    d = g.shape[0]
    if d < 8 or d > 128:
        total = 0.0
        for j in range(d):
            total += abs(g[j])
        return total
    r0 = abs(g[0])
    r1 = abs(g[1])
    r2 = abs(g[2])
    r3 = abs(g[3])
    r4 = abs(g[4])
    r5 = abs(g[5])
    r6 = abs(g[6])
    r7 = abs(g[7])
    full = d - d % 8
    for i in range(8, full, 8):
        r0 += abs(g[i])
        r1 += abs(g[i + 1])
        r2 += abs(g[i + 2])
        r3 += abs(g[i + 3])
        r4 += abs(g[i + 4])
        r5 += abs(g[i + 5])
        r6 += abs(g[i + 6])
        r7 += abs(g[i + 7])
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for j in range(full, d):
        total += abs(g[j])
    return total


@nb.njit(cache=True, inline="always", error_model="numpy")
def _sum_squares_block(g, start, stop):
    """Σ g[j]² over [start, stop) (at most 128 entries) in the order of numpy's pairwise sum: eight
    running sums combined as a tree, then the tail."""
    n = stop - start
    if n < 8:
        total = 0.0
        for j in range(start, stop):
            total += g[j] * g[j]
        return total
    r0 = g[start] * g[start]
    r1 = g[start + 1] * g[start + 1]
    r2 = g[start + 2] * g[start + 2]
    r3 = g[start + 3] * g[start + 3]
    r4 = g[start + 4] * g[start + 4]
    r5 = g[start + 5] * g[start + 5]
    r6 = g[start + 6] * g[start + 6]
    r7 = g[start + 7] * g[start + 7]
    full = start + n - n % 8
    for i in range(start + 8, full, 8):
        r0 += g[i] * g[i]
        r1 += g[i + 1] * g[i + 1]
        r2 += g[i + 2] * g[i + 2]
        r3 += g[i + 3] * g[i + 3]
        r4 += g[i + 4] * g[i + 4]
        r5 += g[i + 5] * g[i + 5]
        r6 += g[i + 6] * g[i + 6]
        r7 += g[i + 7] * g[i + 7]
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for j in range(full, stop):
        total += g[j] * g[j]
    return total


@nb.njit(cache=True, inline="always", error_model="numpy")
def _l2_norm(g):
    """||g||_2 with the squares summed in the order of numpy's pairwise ``np.square(g).sum()`` for
    d ≤ 256 (blocks of at most 128; above 128 numpy splits at a multiple of 8 below d/2)."""
    d = g.shape[0]
    if d <= 128:
        return math.sqrt(_sum_squares_block(g, 0, d))
    if d <= 256:
        half = d // 2
        half -= half % 8
        return math.sqrt(_sum_squares_block(g, 0, half) + _sum_squares_block(g, half, d))
    total = 0.0
    for j in range(d):
        total += g[j] * g[j]
    return math.sqrt(total)


@nb.njit(cache=True, inline="always", error_model="numpy")
def _l2_clip_row(g, out, bound):
    """The Gaussian mechanism's clip: g / max{1, ||g||_2 / bound}."""
    scale = max(1.0, _l2_norm(g) / bound)
    for j in range(g.shape[0]):
        out[j] = g[j] / scale


@nb.njit(cache=True, inline="always", error_model="numpy")
def _l1_clip_row(g, out, bound):
    """Eq. 19: g / max{1, ||g||_1 / bound}."""
    scale = max(1.0, _l1_norm(g) / bound)
    for j in range(g.shape[0]):
        out[j] = g[j] / scale


@nb.njit(cache=True, inline="always", error_model="numpy")
def _laplace_row(gen, scale, d):
    """d draws of Lap(0, scale), bit for bit numpy's ``Generator.laplace`` (same uniforms, same
    formula: U ≥ ½ → −scale·log(2 − U − U), else scale·log(U + U), U = 0 redrawn) but with the
    branch turned into selects: half of the branches would mispredict."""
    u = np.empty(d)
    for j in range(d):
        x = gen.random()
        while x == 0.0:
            x = gen.random()
        u[j] = x
    for j in range(d):
        x = u[j]
        upper = x >= 0.5
        u[j] = (-scale if upper else scale) * math.log((2.0 - x - x) if upper else (x + x))
    return u


@nb.njit(cache=True, nogil=True, error_model="numpy")
def privatize_row(kind, g, out, gen, epsilon, clip, reduced_dim, scale_param, matrix):
    """Write mechanism(g) into ``out``; g is already sanitized (the non-finite rule).

    kind: MECH_NONE (clip = inf: unclipped), MECH_LAPLACE (Alg. 2), MECH_LAPLACE_SECURE (snapping
    to the grid ``scale_param``), MECH_PRS (Alg. 3 with d̂ = ``reduced_dim``; ``matrix`` is (d̂, d)
    scratch), MECH_GAUSSIAN (L2 clip to C/2, then N(0, σ²) per coordinate, σ = ``scale_param``).
    """
    d = g.shape[0]
    if kind == MECH_NONE:
        if math.isinf(clip):
            for j in range(d):
                out[j] = g[j]
        else:
            _l1_clip_row(g, out, clip / 2.0)
    elif kind == MECH_LAPLACE or kind == MECH_LAPLACE_SECURE:
        _l1_clip_row(g, out, clip / 2.0)  # eq. 19, sensitivity C (eq. 20)
        scale = clip / epsilon  # eq. 21
        noise = _laplace_row(gen, scale, d)
        if kind == MECH_LAPLACE:
            for j in range(d):
                out[j] = out[j] + noise[j]
        else:  # Mironov's snapping: clamp, add noise, round to the grid, clamp
            bound = clip / 2.0 + SNAP_BOUND_SCALES * scale
            for j in range(d):
                x = min(max(out[j], -bound), bound) + noise[j]
                out[j] = min(max(np.rint(x / scale_param) * scale_param, -bound), bound)
    elif kind == MECH_GAUSSIAN:
        _l2_clip_row(g, out, clip / 2.0)
        for j in range(d):  # numpy's normal(0, σ): 0 + σ·z, z by the ziggurat, in coordinate order
            out[j] = out[j] + gen.normal(0.0, scale_param)
    else:  # MECH_PRS
        sqrt3 = math.sqrt(3.0)
        for r in range(reduced_dim):  # eq. 5: fresh Achlioptas matrix
            for j in range(d):
                u = gen.random()
                matrix[r, j] = -sqrt3 if u < 1.0 / 6.0 else (sqrt3 if u < 1.0 / 3.0 else 0.0)
        e = epsilon / reduced_dim
        low = 1.0 / (1.0 + math.exp(e))  # expit(-ε')
        slope = math.tanh(e / 2.0)
        for j in range(d):
            out[j] = 0.0
        signs = np.empty(reduced_dim)
        for r in range(reduced_dim):
            ur = 0.0
            for j in range(d):
                ur += matrix[r, j] * g[j]
            ur = min(max(ur, -clip), clip)  # eq. 23
            signs[r] = low + (ur + clip) / (2.0 * clip) * slope  # eq. 24: P(ũ_r = +C)
        for r in range(reduced_dim):
            sign = clip if gen.random() < signs[r] else -clip
            for j in range(d):
                out[j] += matrix[r, j] * sign  # Mᵀũ


@nb.njit(cache=True, inline="always", error_model="numpy")
def laplace_scalar(gen, scale):
    """One draw of Lap(0, scale), numpy's ``Generator.laplace`` formula (U = 0 redrawn)."""
    x = gen.random()
    while x == 0.0:
        x = gen.random()
    if x >= 0.5:
        return -scale * math.log(2.0 - x - x)
    return scale * math.log(x + x)
