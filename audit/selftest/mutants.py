"""Planted-bug catalogue: mechanisms that claim ε but violate it in realistic ways.

Each mutant satisfies :class:`pgc.mechanisms.Mechanism` and documents its TRUE ε (per submission,
for the worst neighbouring inputs) next to the claim. ``pgc audit --self-test`` audits all of them
next to the correct mechanisms (:mod:`audit.selftest`).

========================  ==========================================  ==============================
mutant                    bug                                         true ε
========================  ==========================================  ==============================
noise-too-small           Lap(C/(2ε)): sensitivity taken as the clip  2ε
                          bound C/2 instead of C (eq. 20)
l2-clip-l1-noise          L2 clip to C/2, noise calibrated for L1     ε·√d (√112 ε ≈ 10.6ε)
clip-after-noise          clip(x + Lap(C/ε)) instead of clip, then    ∞ (unbounded input moves the
                          noise                                       clipped output)
prs-full-eps-per-coord    PRS bit flip spends ε, not ε/d̂, per row     d̂·ε
prs-flip-swapped          eq. 24 with 1/(e^ε'+1) and e^ε'/(e^ε'+1)    ∞ (saturated rows never flip
                          swapped (probability clipped to [0, 1])     towards the truth's opposite)
multi-round-no-split      T submissions per agent, each spending ε    T·ε per agent
                          (no §3.2.1 split)
seed-reuse                noise generator re-seeded with a constant   ∞ for an aggregator that sees
                          on every call                               another submission with a
                                                                      known input (y − y' = x − x')
float16-textbook-laplace  the textbook inverse-CDF sampler             ∞ (finite support: x + N and
                          −b·sgn(u)·ln(1−2|u|) evaluated in float16    x' + N are disjoint; Mironov
                          (mixed precision)                           2012's attack, coarse lattice)
rare-noiseless-release    1 in 1,000 submissions released without     ∞ (it is (ε, 10⁻³)-DP: a δ-type
                          noise (the clipped gradient exactly), the   leak that a threshold on a
                          rest Lap(C/ε); claims pure ε                projection barely sees)
gaussian-noise-shrunk     Gaussian with σ/1.5 claiming (ε, δ), stating ≈ 3.16 at (2, 10⁻⁵)
                          the curve of the correct calibration
gaussian-own-curve        the same, stating the μ of the noise it     ≈ 3.16; the σ it declares
                          adds (μ = 0.752 at (2, 10⁻⁵))               contradicts its claim
point-mass-gaussian       a correct Gaussian (ε, δ) returning its     δ ≥ 10⁻³ at the claimed ε
                          input exactly 1 time in 1,000
========================  ==========================================  ==============================
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from pgc.errors import UserError
from pgc.mechanisms import (
    ProjectedRandomSign,
    PRSRelease,
    achlioptas_matrices,
    bit_flip_plus_probability,
    check_gradients,
    check_rng,
    l1_clip,
    l2_clip,
    sanitize,
)


@dataclass(frozen=True)
class NoiseTooSmall:
    """Alg. 2 with Lap(C/(2ε)): the L1 clip bound C/2 mistaken for the sensitivity C. True ε = 2ε."""

    epsilon: float
    clip: float = 0.01

    def true_epsilon(self, dim: int) -> float:
        return 2.0 * self.epsilon

    def __call__(self, gradients, rng):
        g = l1_clip(sanitize(check_gradients(gradients)), self.clip / 2.0)
        return g + check_rng(rng).laplace(0.0, self.clip / (2.0 * self.epsilon), size=g.shape)


@dataclass(frozen=True)
class GaussianNoiseShrunk:
    """The Gaussian mechanism with σ/``shrink`` while claiming (ε, δ): its true ε at the claimed δ is
    :func:`pgc.mechanisms.calibration.gaussian_epsilon` of the smaller σ (ε ≈ 3.16 for σ/1.5 claiming (2, 1e-5)).
    It states the curve of the mechanism it claims to be (``gdp_mu``: Δ₂/σ of the analytic calibration for
    (ε, δ)); the noise it declares (``noise_scale``) is the shrunk one, which the accountant reads."""

    epsilon: float
    delta: float = 1e-5
    clip: float = 0.01
    shrink: float = 1.5

    @property
    def gdp_mu(self) -> float:
        from pgc.mechanisms.calibration import analytic_gaussian_sigma

        return self.clip / analytic_gaussian_sigma(self.epsilon, self.delta, self.clip)

    @property
    def noise_scale(self) -> float:
        from pgc.mechanisms.calibration import analytic_gaussian_sigma

        return analytic_gaussian_sigma(self.epsilon, self.delta, self.clip) / self.shrink

    def true_epsilon(self, dim: int) -> float:
        from pgc.mechanisms.calibration import gaussian_epsilon

        return gaussian_epsilon(self.noise_scale, self.delta, self.clip)

    def __call__(self, gradients, rng):
        g = l2_clip(sanitize(check_gradients(gradients)), self.clip / 2.0)
        return g + check_rng(rng).normal(0.0, self.noise_scale, size=g.shape)


@dataclass(frozen=True)
class L2ClipL1Noise:
    """L2 clip to C/2 with Lap(C/ε) noise (calibrated for L1). True ε = ε·√d."""

    epsilon: float
    clip: float = 0.01

    def true_epsilon(self, dim: int) -> float:
        return self.epsilon * math.sqrt(dim)

    def __call__(self, gradients, rng):
        g = sanitize(check_gradients(gradients))
        norms = np.linalg.norm(g, axis=1, keepdims=True)
        g = g / np.maximum(1.0, norms / (self.clip / 2.0))
        return g + check_rng(rng).laplace(0.0, self.clip / self.epsilon, size=g.shape)


@dataclass(frozen=True)
class ClipAfterNoise:
    """Noise first, then the L1 clip: the input is never bounded. True ε = ∞."""

    epsilon: float
    clip: float = 0.01

    def true_epsilon(self, dim: int) -> float:
        return math.inf

    def __call__(self, gradients, rng):
        g = sanitize(check_gradients(gradients))
        return l1_clip(g + check_rng(rng).laplace(0.0, self.clip / self.epsilon, size=g.shape), self.clip / 2.0)


def _prs_release(mech: ProjectedRandomSign, gradients, rng, per_coordinate_epsilon: float, swapped: bool) -> PRSRelease:
    g = sanitize(check_gradients(gradients))
    rng = check_rng(rng)
    n, d = g.shape
    d_hat = mech.reduced_dim_for(d)
    m = achlioptas_matrices(rng, n, d_hat, d)
    clipped = np.clip(np.einsum("nkd,nd->nk", m, g), -mech.clip, mech.clip)
    if swapped:  # eq. 24 with the two constants exchanged, then clipped to a probability
        e = per_coordinate_epsilon
        p_plus = np.clip(expit(e) + (clipped + mech.clip) / (2.0 * mech.clip) * np.tanh(e / 2.0), 0.0, 1.0)
    else:
        p_plus = bit_flip_plus_probability(clipped, mech.clip, per_coordinate_epsilon)
    signs = np.where(rng.random(p_plus.shape) < p_plus, mech.clip, -mech.clip)
    return PRSRelease(np.einsum("nkd,nk->nd", m, signs), m, signs, clipped)


@dataclass(frozen=True)
class PRSFullEpsilonPerCoordinate(ProjectedRandomSign):
    """Alg. 3 whose bit flip spends the whole ε on each of the d̂ rows. True ε = d̂·ε."""

    def true_epsilon(self, dim: int) -> float:
        return self.reduced_dim_for(dim) * self.epsilon

    def release(self, gradients, rng) -> PRSRelease:
        return _prs_release(self, gradients, rng, self.epsilon, swapped=False)


@dataclass(frozen=True)
class PRSSwappedFlip(ProjectedRandomSign):
    """Alg. 3 with the bit-flip constants of eq. 24 swapped. True ε = ∞."""

    def true_epsilon(self, dim: int) -> float:
        return math.inf

    def release(self, gradients, rng) -> PRSRelease:
        n, d = np.shape(gradients)
        return _prs_release(self, gradients, rng, self.epsilon / self.reduced_dim_for(d), swapped=True)


@dataclass(frozen=True)
class SeedReuseLaplace:
    """Alg. 2 whose noise generator is re-seeded with a constant on every call ("reproducibility").

    Each single output is still x + Lap(C/ε), but every call reuses the same noise, so any two
    submissions differ by exactly the difference of their inputs. True ε = ∞ against an aggregator
    that sees one other submission with a known input (a colluding agent).
    """

    epsilon: float
    clip: float = 0.01
    noise_seed: int = 1234

    def true_epsilon(self, dim: int) -> float:
        return math.inf

    def __call__(self, gradients, rng):
        g = l1_clip(sanitize(check_gradients(gradients)), self.clip / 2.0)
        fixed = np.random.Generator(np.random.PCG64(self.noise_seed))  # the bug: ignores rng
        return g + fixed.laplace(0.0, self.clip / self.epsilon, size=g.shape)


@dataclass(frozen=True)
class Float16TextbookLaplace:
    """Alg. 2 with the textbook sampler −b·sgn(u)·ln(1 − 2|u|), u ~ U(−½, ½), in float16.

    The noise takes only a few tens of thousands of values (and is truncated near 7.6·b), so the
    outputs for x and x' lie on two disjoint finite lattices (Mironov 2012). True ε = ∞.
    """

    epsilon: float
    clip: float = 0.01

    def true_epsilon(self, dim: int) -> float:
        return math.inf

    def __call__(self, gradients, rng):
        g = l1_clip(sanitize(check_gradients(gradients)), self.clip / 2.0)
        u = (check_rng(rng).random(g.shape, dtype=np.float32) - np.float32(0.5)).astype(np.float16)
        b = np.float16(self.clip / self.epsilon)
        with np.errstate(divide="ignore"):
            noise = -b * np.sign(u) * np.log(np.float16(1.0) - np.float16(2.0) * np.abs(u))
        noise = np.where(np.isfinite(noise), noise, np.float16(0.0))  # u = ±½ would give ∞
        return g + noise.astype(np.float64)


@dataclass(frozen=True)
class RepeatedSubmissions:
    """One agent submitting ``rounds`` times (§3.2.1): output = the ``rounds`` releases side by side.

    ``epsilon`` is the claim for the agent as a whole. ``per_round`` is the mechanism each
    submission uses: ``split_rounds(mech, T)`` is correct (ε/T each), ``mech`` itself is the
    multi-round-without-split bug (true ε = T·ε by composition).
    """

    per_round: object
    rounds: int
    epsilon: float

    def __post_init__(self) -> None:
        if not isinstance(self.rounds, (int, np.integer)) or self.rounds < 1:
            raise UserError(f"rounds must be a positive integer, got {self.rounds!r}")

    @property
    def clip(self):
        return getattr(self.per_round, "clip", None)

    def true_epsilon(self, dim: int) -> float:
        return self.rounds * self.per_round.epsilon

    def __call__(self, gradients, rng):
        return np.concatenate([self.per_round(gradients, rng) for _ in range(self.rounds)], axis=1)


@dataclass(frozen=True)
class RareNoiselessRelease:
    """Alg. 2 that, with probability ``leak_rate``, returns the clipped gradient WITHOUT noise.

    (A "fast path" that skips the noise on some branch.) Every other release is correct, so the
    outputs look like Lap(C/ε) noise to any threshold on a projection (ε_LB ≈ ε); but the
    noiseless release is a point mass at the clipped input, which x' never produces: the mechanism
    is (ε, leak_rate)-DP, not ε-DP. True ε (δ = 0) = ∞; true δ at the claimed ε = ``leak_rate``.
    """

    epsilon: float
    clip: float = 0.01
    leak_rate: float = 1e-3

    def true_epsilon(self, dim: int) -> float:
        return math.inf

    def true_delta(self, dim: int) -> float:
        return self.leak_rate

    def __call__(self, gradients, rng):
        rng = check_rng(rng)
        g = l1_clip(sanitize(check_gradients(gradients)), self.clip / 2.0)
        noisy = g + rng.laplace(0.0, self.clip / self.epsilon, size=g.shape)
        leak = rng.random(g.shape[0]) < self.leak_rate
        return np.where(leak[:, None], g, noisy)


@dataclass(frozen=True)
class GaussianStatingItsOwnCurve(GaussianNoiseShrunk):
    """The Gaussian mechanism with σ/``shrink`` while claiming (ε, δ), stating the μ-GDP curve of the noise it
    really adds (``gdp_mu`` = Δ₂/σ of the shrunk σ: μ ≈ 0.752 for σ/1.5 at (2, 1e-5)), as a library that reports μ
    from its own σ does. The σ it declares (``noise_scale``) contradicts its claim: the accountant gives ε ≈ 3.16 at
    δ = 1e-5. The stated μ alone contradicts nothing: it is a promise of its own, which the shrunk noise keeps."""

    epsilon: float = 2.0
    clip: float = 1.0

    @property
    def gdp_mu(self) -> float:
        return self.clip / self.noise_scale


@dataclass(frozen=True)
class PointMassGaussian:
    """A correct analytic Gaussian (ε, δ) that, with probability ``leak_rate``, returns its clipped input
    exactly (no noise): a point mass x' never produces. It states the curve of its Gaussian part. True δ at
    the claimed ε ≥ ``leak_rate`` (10⁻³ against a claimed 10⁻⁵)."""

    epsilon: float = 2.0
    delta: float = 1e-5
    clip: float = 1.0
    leak_rate: float = 1e-3

    @property
    def noise_scale(self) -> float:
        from pgc.mechanisms.calibration import analytic_gaussian_sigma

        return analytic_gaussian_sigma(self.epsilon, self.delta, self.clip)

    @property
    def gdp_mu(self) -> float:
        return self.clip / self.noise_scale

    def true_epsilon(self, dim: int) -> float:
        return math.inf

    def true_delta(self, dim: int) -> float:
        return self.leak_rate + self.delta

    def __call__(self, gradients, rng):
        rng = check_rng(rng)
        g = l2_clip(sanitize(check_gradients(gradients)), self.clip / 2.0)
        out = g + rng.normal(0.0, self.noise_scale, size=g.shape)
        exact = rng.random(len(g)) < self.leak_rate
        out[exact] = g[exact]
        return out
