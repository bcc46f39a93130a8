"""The sparse vector variants of the catalogue: SVT1–6 (Lyu, Su & Li, VLDB 2017, Algs. 1–6), numerical SVT (Wang
et al., PLDI 2019) and SVT3 beside SVT4, as DP-Sniper implements them (``dpsniper/mechanisms/
sparse_vector_technique.py``, ``parallel.py``), vectorised over n runs.

Output format, one column per query: a boolean answer is 1.0 (above the threshold) or 0.0; a numeric answer is
the noisy value, ⊥ (below the threshold) is NaN; after the c-th answer above the threshold the algorithm stops
and every later entry is absent: NaN. DP-Sniper writes these as sentinel values (−1 aborted; −1000 ⊥, −2000
aborted; −1000 aborted for numerical SVT); :func:`dpsniper_encoding` maps one format onto the other (absence
follows from the earlier answers, so the NaN format loses nothing).
"""

from __future__ import annotations

import numpy as np


def _stop_after(above: np.ndarray, c: int | None) -> np.ndarray:
    """Which entries come after the c-th answer above the threshold (absent); none when c is None."""
    if c is None:
        return np.zeros_like(above, dtype=bool)
    before = np.cumsum(above, axis=1) - above
    return before >= c


def _booleans(above: np.ndarray, c: int | None) -> np.ndarray:
    out = above.astype(np.float64)
    out[_stop_after(above, c)] = np.nan
    return out


def svt1(a, n, rng, eps: float = 0.1, c: int = 1, t: float = 0.5) -> np.ndarray:
    """Lyu et al. Alg. 1: ρ ~ Lap(2/ε), ν_i ~ Lap(4c/ε); answer q_i + ν_i ≥ t + ρ; stop after c answers above."""
    eps1 = eps / 2.0
    rho = rng.laplace(0.0, 1.0 / eps1, size=(n, 1))
    nu = rng.laplace(0.0, 2 * c / (eps - eps1), size=(n, a.shape[0]))
    return _booleans(a[None, :] + nu >= rho + t, c)


def svt2(a, n, rng, eps: float = 0.1, c: int = 1, t: float = 1.0) -> np.ndarray:
    """Lyu et al. Alg. 2: as Alg. 1 with ρ ~ Lap(c/ε₁) drawn afresh after every answer above the threshold."""
    eps1 = eps / 2.0
    rho = rng.laplace(0.0, c / eps1, size=n)
    nu = rng.laplace(0.0, 2 * c / (eps - eps1), size=(n, a.shape[0]))
    m = a[None, :] + nu
    above = np.empty(m.shape, dtype=bool)
    for j in range(m.shape[1]):
        above[:, j] = m[:, j] >= rho + t
        fresh = rng.laplace(0.0, c / eps1, size=n)
        rho = np.where(above[:, j], fresh, rho)
    return _booleans(above, c)


def svt3(a, n, rng, eps: float = 0.1, c: int = 1, t: float = 1.0) -> np.ndarray:
    """Lyu et al. Alg. 3: ν_i ~ Lap(c/ε₂) and the noisy answer q_i + ν_i itself released above the threshold
    (⊥ below); stop after c answers above."""
    eps1 = eps / 2.0
    rho = rng.laplace(0.0, 1.0 / eps1, size=(n, 1))
    m = a[None, :] + rng.laplace(0.0, c / (eps - eps1), size=(n, a.shape[0]))
    above = m >= rho + t
    out = np.where(above, m, np.nan)
    out[_stop_after(above, c)] = np.nan
    return out


def svt4(a, n, rng, eps: float = 0.1, c: int = 1, t: float = 1.0) -> np.ndarray:
    """Lyu et al. Alg. 4: ε₁ = ε/4 and ν_i ~ Lap(1/ε₂), without the factor c; stop after c answers above."""
    eps1 = eps / 4.0
    rho = rng.laplace(0.0, 1.0 / eps1, size=(n, 1))
    nu = rng.laplace(0.0, 1.0 / (eps - eps1), size=(n, a.shape[0]))
    return _booleans(a[None, :] + nu >= rho + t, c)


def svt5(a, n, rng, eps: float = 0.1, c: int = 1, t: float = 1.0) -> np.ndarray:
    """Lyu et al. Alg. 5: no noise on the queries and no stopping: answer q_i ≥ t + ρ."""
    rho = rng.laplace(0.0, 2.0 / eps, size=(n, 1))
    return _booleans(a[None, :] >= rho + t, None)


def svt6(a, n, rng, eps: float = 0.1, c: int = 1, t: float = 1.0) -> np.ndarray:
    """Lyu et al. Alg. 6: ν_i ~ Lap(1/ε₂) and no stopping."""
    eps1 = eps / 2.0
    rho = rng.laplace(0.0, 1.0 / eps1, size=(n, 1))
    nu = rng.laplace(0.0, 1.0 / (eps - eps1), size=(n, a.shape[0]))
    return _booleans(a[None, :] + nu >= rho + t, None)


def numerical_svt(a, n, rng, eps: float = 0.1, c: int = 2, t: float = 1.0) -> np.ndarray:
    """Numerical SVT (Wang et al. 2019): compare q_i + Lap(6c/ε) with t + Lap(3/ε); above, release q_i + Lap(3c/ε)
    (fresh noise), below 0; stop after c answers above."""
    k = a.shape[0]
    rho1 = rng.laplace(0.0, 3.0 / eps, size=(n, 1))
    rho2 = rng.laplace(0.0, 6.0 * c / eps, size=(n, k))
    rho3 = rng.laplace(0.0, 3.0 * c / eps, size=(n, k))
    above = a[None, :] + rho2 >= t + rho1
    out = np.where(above, a[None, :] + rho3, 0.0)
    out[_stop_after(above, c)] = np.nan
    return out


def svt34_parallel(a, n, rng, eps: float = 0.1, c: int = 2, t: float = 1.0) -> np.ndarray:
    """SVT3 and SVT4 run side by side on the same queries (their outputs concatenated)."""
    return np.concatenate([svt3(a, n, rng, eps, c, t), svt4(a, n, rng, eps, c, t)], axis=1)


# --- DP-Sniper's sentinel format ------------------------------------------------------------------------------


def aborted_to(out: np.ndarray, value: float) -> np.ndarray:
    """NaN (absent) written as ``value`` (SVT1, 2, 4: −1; numerical SVT: −1000)."""
    return np.where(np.isnan(out), value, out)


def svt3_sentinels(out: np.ndarray, c: int) -> np.ndarray:
    """SVT3's NaN written as DP-Sniper writes it: −1000 for ⊥ (before the c-th answer), −2000 for absent."""
    answered = ~np.isnan(out)
    gone = (np.cumsum(answered, axis=1) - answered) >= c
    return np.where(answered, out, np.where(gone, -2000.0, -1000.0))


def svt34_sentinels(out: np.ndarray, c: int = 2) -> np.ndarray:
    half = out.shape[1] // 2
    return np.concatenate([svt3_sentinels(out[:, :half], c), aborted_to(out[:, half:], -1.0)], axis=1)
