"""Pure privacy math: the tree-based mechanism's indices and noise, the regularizer, the DP accuracy
ceiling. Plain functions, tested against hand-computed numbers."""

from __future__ import annotations

import math

import numpy as np

from pgc.errors import UserError


def lowest_set_bit(k: int | np.ndarray) -> int | np.ndarray:
    """i_k = min{j : Bin_j(k) = 1}, the p-sum node a tree step k ≥ 1 writes (slides, Local Randomizer R)."""
    k_arr = np.asarray(k, dtype=np.int64)
    if np.any(k_arr < 1):
        raise UserError("tree steps start at k = 1")
    low = k_arr & -k_arr
    out = np.log2(low).astype(np.int64)
    return int(out) if np.ndim(out) == 0 else out


def set_bits(k: int, levels: int) -> np.ndarray:
    """Bin_j(k) for j < levels as a 0/1 array (Analyzer A: s̃_k = Σ_{j: Bin_j(k)=1} α̃_j)."""
    return np.array([(k >> j) & 1 for j in range(levels)], dtype=bool)


def tree_levels(n_steps: int) -> int:
    """Nodes one silo's tree needs for n_steps syncs: ⌊log₂ n⌋ + 1."""
    if n_steps < 1:
        raise UserError("a tree needs at least one step")
    return int(math.floor(math.log2(n_steps))) + 1


def private_fedlinucb_sigma(epsilon: float, delta: float, horizon: int, batch: int) -> float:
    """Per-node Gaussian noise std of Private-FedLinUCB (Zhou & Chowdhury, Theorem 1 / Theorem 5.1):
    σ² = 8κ(log(2/δ) + ε)/ε², κ = 1 + log(T/B) (natural log), for features and rewards bounded by 1."""
    if not (epsilon > 0 and 0 < delta < 1 and 1 <= batch <= horizon):
        raise UserError("need epsilon > 0, delta in (0, 1) and 1 <= B <= T")
    kappa = 1.0 + math.log(horizon / batch)
    return math.sqrt(8.0 * kappa * (math.log(2.0 / delta) + epsilon) / epsilon**2)


def regularizer(sigma: float, n_silos: int, levels: int, dim: int, confidence: float) -> float:
    """λ that keeps λI + the noisy Gram matrix positive definite with probability ≥ 1 − α: the shift
    λ = σ √(M N) (√(N + log(1/α)) + √d) with N tree levels (the public reimplementation's choice,
    after Zhou & Chowdhury, Lemma on the regularity of the noise). σ = 0 gives the non-private λ = √M."""
    if sigma <= 0:
        return math.sqrt(n_silos)
    return sigma * math.sqrt(n_silos * levels) * (math.sqrt(levels + math.log(1.0 / confidence)) + math.sqrt(dim))


def confidence_width(
    t: np.ndarray | int,
    lam: float,
    n_silos: int,
    dim: int,
    noise_std: float,
    confidence: float,
    theta_norm: float = 1.0,
) -> np.ndarray:
    """β_t = √λ S + R √(d log(1 + t M / (d λ)) + log(1/α)) (Abbasi-Yadkori et al. 2011, Theorem 2,
    with M silos' samples by round t; ‖x‖ ≤ L = 1)."""
    t = np.asarray(t, dtype=float)
    return math.sqrt(lam) * theta_norm + noise_std * np.sqrt(
        dim * np.log1p(t * n_silos / (dim * lam)) + math.log(1.0 / confidence)
    )


def accuracy_ceiling(epsilon: float, delta: float) -> float:
    """The best accuracy any test can reach on a balanced binary secret under (ε, δ)-DP:
    (e^ε + δ) / (1 + e^ε). For a test with type-I error α and type-II error β, (ε, δ)-DP forces
    1 − β ≤ e^ε α + δ and 1 − α ≤ e^ε β + δ (Kairouz, Oh & Viswanath 2015, Theorem 2.1); summing,
    (1 − α) + (1 − β) ≤ e^ε(α + β) + 2δ, so with error P_e = (α + β)/2: 1 − P_e ≤ e^ε P_e + δ,
    i.e. accuracy 1 − P_e ≤ (e^ε + δ)/(1 + e^ε). Capped at 1."""
    if not (epsilon >= 0 and 0 <= delta <= 1):
        raise UserError("need epsilon >= 0 and delta in [0, 1]")
    if math.isinf(epsilon):
        return 1.0
    return min(1.0, (math.exp(epsilon) + delta) / (1.0 + math.exp(epsilon)))
