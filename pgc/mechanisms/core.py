"""ε-LDP gradient mechanisms behind one public interface (:class:`Mechanism`).

The trainer, the auditor, the attacker and third-party code all use the same contract::

    class Mechanism(Protocol):
        epsilon: float  # claimed ε of ONE submission (math.inf for none)
        def __call__(self, gradients: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...

``gradients`` is a float array ``(n, d)``: n independent submissions. The result is the privatized
``(n, d)`` array; the input is never mutated. All randomness comes from the ``rng`` passed in.

Non-finite rule (all built-in mechanisms): a row with any NaN or ±inf entry is replaced by the zero
vector *before* clipping, then privatized like any other row. A NaN that appears only under some ψ
would otherwise pass straight into the output (or poison θ) and reveal ψ; the zero row's output
distribution is that of a legal input, so the ε guarantee is unchanged. The trainer counts such rows
(evaluation-only) so a user can see that it happened.

Mechanisms:

* :class:`Laplace` — Algorithm 2: L1 clip to C/2 (eq. 19, sensitivity C by eq. 20), then
  Lap(C/ε) noise per coordinate (eq. 21). Paper: C = 0.01. ``secure=True`` (registry name
  ``laplace-secure``) snaps the output to a power-of-two grid against floating-point attacks.
* :class:`ProjectedRandomSign` — Algorithm 3: fresh Achlioptas matrix M per submission (eq. 5),
  u = M g, element-wise clip to [-C, C] (eq. 23), bit flip to ±C spending ε/d̂ per coordinate
  (eq. 24), output Mᵀũ. d̂ = max{1, min{d, ⌊ε/2.5⌋}} unless given. Paper: C = 1.
* :class:`Gaussian` — (ε, δ)-LDP: L2 clip to C/2 (sensitivity Δ₂ = C), add N(0, σ²) per coordinate,
  σ from the classic calibration Δ₂·√(2 ln(1.25/δ))/ε (``gaussian``, ε ≤ 1) or the analytic one of
  Balle & Wang 2018 (``gaussian-analytic``, any ε); see :mod:`pgc.mechanisms.calibration`. C = 0.01 default.
* :class:`NoNoise` — ε = ∞. By default it keeps Laplace's L1 clipping to C/2 (C = 0.01): with the
  paper's η = 0.5 an unclipped A3C gradient (norms in the hundreds) diverges, so the paper's
  non-private baseline must have been clipped; ``clip=None`` gives the unclipped reading.
* :func:`split_rounds` — §3.2.1: an agent submitting T times spends ε/T per submission.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit

from pgc.contracts import Mechanism  # noqa: F401  (the contract the classes below meet)
from pgc.errors import UserError

SNAP_BOUND_SCALES = 40.0  # secure Laplace clamps outputs to ±(C/2 + 40·C/ε): P(|Lap| > 40 b) = e^-40
SQRT3 = math.sqrt(3.0)


# ---------------------------------------------------------------------------------------------
# Pure building blocks (tested against hand-computed numbers)
# ---------------------------------------------------------------------------------------------


def claimed_delta(mechanism: object) -> float:
    """The δ a mechanism claims: its ``delta`` attribute, 0.0 when it has none (pure ε-DP)."""
    delta = getattr(mechanism, "delta", 0.0)
    delta = 0.0 if delta is None else float(delta)
    if not (0.0 <= delta < 1.0):
        raise UserError(f"a mechanism's delta must lie in [0, 1), got {delta!r}")
    return delta


def check_gradients(gradients: np.ndarray) -> np.ndarray:
    """Validate a ``(n, d)`` gradient batch and return it as float64 (a copy is not guaranteed)."""
    arr = np.asarray(gradients)
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise UserError(f"gradients must be a 2-D array (n, d), got shape {arr.shape}")
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise UserError(f"gradients must be numeric, got dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)


def check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def nonfinite_rows(gradients: np.ndarray) -> np.ndarray:
    """Boolean mask of rows holding any NaN or ±inf."""
    return ~np.all(np.isfinite(gradients), axis=1)


def sanitize(gradients: np.ndarray) -> np.ndarray:
    """A float64 copy with every non-finite row replaced by zeros (the non-finite rule)."""
    out = np.array(gradients, dtype=np.float64, copy=True)
    out[nonfinite_rows(out)] = 0.0
    return out


def l1_clip(gradients: np.ndarray, bound: float) -> np.ndarray:
    """Eq. 19: g / max{1, ||g||_1 / bound} per row (bound = C/2)."""
    norms = np.abs(gradients).sum(axis=1, keepdims=True)
    return gradients / np.maximum(1.0, norms / bound)


def l2_clip(gradients: np.ndarray, bound: float) -> np.ndarray:
    """g / max{1, ||g||_2 / bound} per row (the Gaussian mechanism's clip, bound = C/2)."""
    norms = np.sqrt(np.square(gradients).sum(axis=1, keepdims=True))
    return gradients / np.maximum(1.0, norms / bound)


def prs_reduced_dim(epsilon: float, dim: int) -> int:
    """The paper's d̂ = max{1, min{d, ⌊ε/2.5⌋}} (§4, following [28])."""
    if math.isinf(epsilon):
        return dim
    return max(1, min(dim, math.floor(epsilon / 2.5)))


def bit_flip_plus_probability(clipped: np.ndarray, clip: float, epsilon_per_coordinate: float) -> np.ndarray:
    """Eq. 24: P(ũ_i = +C) = 1/(e^ε'+1) + (ū_i + C)/(2C) · (e^ε'−1)/(e^ε'+1), ε' = ε/d̂.

    Written with expit/tanh so that large ε' does not overflow.
    """
    e = epsilon_per_coordinate
    return expit(-e) + (clipped + clip) / (2.0 * clip) * np.tanh(e / 2.0)


def achlioptas_matrices(rng: np.random.Generator, n: int, rows: int, dim: int) -> np.ndarray:
    """n independent matrices (eq. 5): ±√3 with probability 1/6 each, 0 with probability 2/3."""
    u = rng.random((n, rows, dim))
    return np.where(u < 1.0 / 6.0, -SQRT3, np.where(u < 1.0 / 3.0, SQRT3, 0.0))


def _check_epsilon(epsilon: float, allow_inf: bool = False) -> float:
    if not isinstance(epsilon, (int, float, np.floating)) or math.isnan(epsilon) or epsilon <= 0:
        raise UserError(f"epsilon must be a positive number, got {epsilon!r}")
    if math.isinf(epsilon) and not allow_inf:
        raise UserError("epsilon = inf means no privacy: use the 'none' mechanism (NoNoise)")
    return float(epsilon)


def _check_clip(clip: float | None, allow_none: bool = False) -> float | None:
    if clip is None and allow_none:
        return None
    if not isinstance(clip, (int, float, np.floating)) or not math.isfinite(clip) or clip <= 0:
        raise UserError(f"clip C must be a positive finite number, got {clip!r}")
    return float(clip)


# ---------------------------------------------------------------------------------------------
# Mechanisms
# ---------------------------------------------------------------------------------------------


def snapping_grid(noise_scale: float) -> float:
    """Λ of the snapping mechanism: the smallest power of two ≥ the noise scale (Mironov 2012)."""
    return 2.0 ** math.ceil(math.log2(noise_scale))


@dataclass(frozen=True)
class Laplace:
    """Algorithm 2: L1 clip to C/2 (eq. 19), add Lap(C/ε) per coordinate (eq. 21).

    ``secure=False`` (the paper's mechanism) adds textbook floating-point noise: the set of float64
    values x + noise can reach depends on x, which leaks beyond ε (Mironov 2012; our auditor
    certifies ε_LB = 7.08 at a claim of 4 in float-exact mode). ``secure=True`` is Mironov's
    snapping mechanism: clamp to ±B, add the noise, round to the grid Λ = 2^⌈log2(C/ε)⌉, clamp to
    ±B, with B = C/2 + 40·C/ε; the output is then a grid point whose law does not carry the
    rounding fingerprint (its ε grows by a negligible O(B·2^-52/λ) term). Caveat: Mironov's analysis
    assumes the noise's log is taken of an exactly uniform real; numpy draws 53-bit uniforms, so
    the bound is argued, not proven, for this sampler (the auditor's float-exact test passes).
    """

    epsilon: float
    clip: float = 0.01
    secure: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _check_epsilon(self.epsilon))
        object.__setattr__(self, "clip", _check_clip(self.clip))
        if not isinstance(self.secure, (bool, np.bool_)):
            raise UserError(f"secure must be True or False, got {self.secure!r}")

    @property
    def noise_scale(self) -> float:
        return self.clip / self.epsilon  # eq. 21: sensitivity C (eq. 20) over ε

    def clip_only(self, gradients: np.ndarray) -> np.ndarray:
        return l1_clip(sanitize(check_gradients(gradients)), self.clip / 2.0)

    def __call__(self, gradients: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        clipped = self.clip_only(gradients)
        noise = check_rng(rng).laplace(0.0, self.noise_scale, size=clipped.shape)
        if not self.secure:
            return clipped + noise
        bound = self.clip / 2.0 + SNAP_BOUND_SCALES * self.noise_scale
        grid = snapping_grid(self.noise_scale)
        snapped = np.round((np.clip(clipped, -bound, bound) + noise) / grid) * grid
        return np.clip(snapped, -bound, bound)


@dataclass(frozen=True)
class PRSRelease:
    """What a PRS submission is made of (for white-box audits): output = Mᵀũ."""

    output: np.ndarray  # (n, d)
    matrices: np.ndarray  # (n, d̂, d)
    signs: np.ndarray  # (n, d̂), ũ ∈ {−C, +C}
    clipped: np.ndarray  # (n, d̂), ū


@dataclass(frozen=True)
class ProjectedRandomSign:
    """Algorithm 3 (projected random sign). ``reduced_dim=None`` applies the paper's d̂ rule."""

    epsilon: float
    clip: float = 1.0
    reduced_dim: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _check_epsilon(self.epsilon))
        object.__setattr__(self, "clip", _check_clip(self.clip))
        if self.reduced_dim is not None and (
            not isinstance(self.reduced_dim, (int, np.integer)) or self.reduced_dim < 1
        ):
            raise UserError(f"reduced_dim d̂ must be a positive integer, got {self.reduced_dim!r}")

    def reduced_dim_for(self, dim: int) -> int:
        if self.reduced_dim is None:
            return prs_reduced_dim(self.epsilon, dim)
        if self.reduced_dim > dim:
            raise UserError(f"reduced_dim d̂={self.reduced_dim} exceeds the gradient dimension d={dim}")
        return int(self.reduced_dim)

    def release(self, gradients: np.ndarray, rng: np.random.Generator) -> PRSRelease:
        g = sanitize(check_gradients(gradients))
        rng = check_rng(rng)
        n, d = g.shape
        d_hat = self.reduced_dim_for(d)
        m = achlioptas_matrices(rng, n, d_hat, d)  # eq. 5, fresh per submission
        u = np.einsum("nkd,nd->nk", m, g)
        clipped = np.clip(u, -self.clip, self.clip)  # eq. 23
        p_plus = bit_flip_plus_probability(clipped, self.clip, self.epsilon / d_hat)  # eq. 24
        signs = np.where(rng.random(p_plus.shape) < p_plus, self.clip, -self.clip)
        return PRSRelease(np.einsum("nkd,nk->nd", m, signs), m, signs, clipped)

    def __call__(self, gradients: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.release(gradients, rng).output


@dataclass(frozen=True)
class Gaussian:
    """(ε, δ)-LDP Gaussian mechanism: L2 clip to C/2 (two clipped gradients differ by at most Δ₂ = C),
    then N(0, σ²) per coordinate with σ = ``noise_scale``: the classic calibration
    C·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm. A.1; ε ≤ 1 only) or, with ``analytic=True``, the
    smallest σ meeting (ε, δ) exactly (Balle & Wang 2018, Thm. 8)."""

    epsilon: float
    delta: float = 1e-5
    clip: float = 0.01
    analytic: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _check_epsilon(self.epsilon))
        object.__setattr__(self, "clip", _check_clip(self.clip))
        if not isinstance(self.delta, (int, float, np.floating)) or not (0.0 < self.delta < 1.0):
            raise UserError(f"delta must lie in (0, 1) for the Gaussian mechanism, got {self.delta!r}")
        object.__setattr__(self, "delta", float(self.delta))
        if not isinstance(self.analytic, (bool, np.bool_)):
            raise UserError(f"analytic must be True or False, got {self.analytic!r}")
        _ = self.noise_scale  # validates the calibration (the classic one refuses ε > 1)

    @functools.cached_property
    def noise_scale(self) -> float:
        """σ for sensitivity Δ₂ = C (computed once per instance)."""
        from .calibration import analytic_gaussian_sigma, classic_gaussian_sigma

        calibrate = analytic_gaussian_sigma if self.analytic else classic_gaussian_sigma
        return calibrate(self.epsilon, self.delta, self.clip)

    @property
    def gdp_mu(self) -> float:
        """The μ-GDP curve this mechanism promises: Δ₂/σ of its calibration for (ε, δ) (Dong, Roth & Su 2022,
        Thm. 2.7). A statement of the claim, read by the auditor's curve test."""
        return self.clip / self.noise_scale

    def clip_only(self, gradients: np.ndarray) -> np.ndarray:
        return l2_clip(sanitize(check_gradients(gradients)), self.clip / 2.0)

    def __call__(self, gradients: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        clipped = self.clip_only(gradients)
        return clipped + check_rng(rng).normal(0.0, self.noise_scale, size=clipped.shape)


@dataclass(frozen=True)
class NoNoise:
    """ε = ∞: no noise. Keeps L1 clipping to C/2 unless ``clip=None`` (see module docstring)."""

    clip: float | None = 0.01
    epsilon: float = math.inf

    def __post_init__(self) -> None:
        object.__setattr__(self, "clip", _check_clip(self.clip, allow_none=True))
        if self.epsilon != math.inf:
            raise UserError("NoNoise always has epsilon = inf")

    def __call__(self, gradients: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        g = sanitize(check_gradients(gradients))
        return g if self.clip is None else l1_clip(g, self.clip / 2.0)


def split_rounds(mechanism: Mechanism, rounds: int) -> Mechanism:
    """§3.2.1: the per-submission mechanism when an agent submits ``rounds`` times under a total ε
    (and a total δ for an (ε, δ) mechanism: each round gets ε/T and δ/T, basic composition).

    Works for any mechanism that is a dataclass with an ``epsilon`` field (all built-in ones).
    """
    if not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise UserError(f"rounds must be a positive integer, got {rounds!r}")
    if rounds == 1 or math.isinf(mechanism.epsilon):
        return mechanism
    try:
        if claimed_delta(mechanism) > 0:
            return replace(
                mechanism,
                epsilon=mechanism.epsilon / rounds,  # type: ignore[type-var]
                delta=claimed_delta(mechanism) / rounds,
            )
        return replace(mechanism, epsilon=mechanism.epsilon / rounds)  # type: ignore[type-var]
    except TypeError:
        raise TypeError(
            f"{type(mechanism).__name__} is not a dataclass with an epsilon field; "
            "build its per-round instance yourself"
        ) from None
