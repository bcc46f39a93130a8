"""White-box audit of projected random sign (Algorithm 3) from its internal report (ũ, M).

A black-box observer of Mᵀũ never sees which of the d̂ hidden rows of M produced which part of the
output, so for d̂ > 1 part of each row's vote is lost in the sum. The white-box view uses
``ProjectedRandomSign.release()``: for a canary x each row k votes
``v_k = sign(ũ_k) · sign((M x)_k)`` ∈ {−1, +1} (0 when (M x)_k = 0). Under x each vote agrees with
probability e^{ε/d̂}/(1+e^{ε/d̂}) (eq. 24, saturated), under −x it disagrees with that probability,
so the number of agreeing votes is the exact likelihood-ratio statistic and ε is reached when all
d̂ votes agree. The canary G·(1 + j·10⁻³)_j makes (M x)_k = 0 practically impossible.
"""

from __future__ import annotations

import math
import time

import numpy as np

from audit.certification.claims import mechanism_claim
from audit.certification.tester import MECHANISM_SPLIT, CertifiedTest, HypothesisPair
from audit.engine.blackbox import MechanismAuditResult, _candidates, _check_common, describe
from audit.engine.mechanism_result import mechanism_row
from audit.statistics import HistogramLikelihoodRatio, default_statistics
from pgc.contracts import ProjectsDimension, ReleasesInternals


class PRSVoteSampler:
    """Per-row votes v_k of a PRS release for input ``row``, relative to the canary ``reference``,
    followed by each row's (sign ũ_k, direction sign (M x)_k) as one category sign ũ_k + 2·direction_k
    (a correct mechanism's evidence is all in the votes; a wrong flip law can hide in the pairs)."""

    def __init__(self, mechanism, row: np.ndarray, reference: np.ndarray):
        self.mechanism = mechanism
        self.row = row
        self.reference = reference

    def __call__(self, n: int, rng: np.random.Generator) -> np.ndarray:
        release = self.mechanism.release(np.repeat(self.row[None, :], n, axis=0), rng)
        direction = np.sign(np.einsum("nkd,d->nk", release.matrices, self.reference))
        signs = np.sign(release.signs)
        return np.concatenate([signs * direction, signs + 2.0 * direction], axis=1)


def audit_prs_whitebox(
    mechanism,
    dim: int = 112,
    samples: int = 1_000_000,
    confidence: float = 0.95,
    seed: int = 0,
    *,
    delta: float = 0.0,
    train_fraction: float = 0.1,
    progress: bool = False,
) -> MechanismAuditResult:
    """White-box audit of any mechanism with PRS's ``release(g, rng) -> PRSRelease`` report."""
    claimed = _check_common(mechanism, dim, samples, confidence)
    if not isinstance(mechanism, ReleasesInternals):
        raise TypeError(f"{type(mechanism).__name__} has no release() report; use the black-box audit_mechanism")
    scale = float(getattr(mechanism, "clip", None) or 1.0)
    canary = 1e4 * scale * (1.0 + 1e-3 * np.arange(dim))
    pair = HypothesisPair(
        "+G·1 vs −G·1 (white-box votes)",
        PRSVoteSampler(mechanism, canary, canary),
        PRSVoteSampler(mechanism, -canary, canary),
    )
    train = MECHANISM_SPLIT.size(samples, train_fraction)
    start, cpu = time.perf_counter(), time.process_time()
    d_hat = mechanism.reduced_dim_for(dim) if isinstance(mechanism, ProjectsDimension) else None
    statistics = default_statistics()
    if d_hat is not None:
        statistics += [
            HistogramLikelihoodRatio(fixed=slice(0, d_hat)),
            HistogramLikelihoodRatio(fixed=slice(d_hat, None)),
        ]
    test = CertifiedTest(
        [pair],
        samples=samples,
        train_samples=train,
        confidence=confidence,
        delta=delta,
        seed=seed,
        statistics=statistics,
        detectable_delta_at=claimed if math.isfinite(claimed) else 0.0,
        progress=progress,
    )
    bound = test.lower_bound()
    row = mechanism_row(describe(mechanism), mechanism_claim(mechanism, delta), bound, confidence, "white-box", None)
    return MechanismAuditResult(
        describe(mechanism),
        row,
        bound,
        "white-box",
        time.perf_counter() - start,
        _candidates(test),
        time.process_time() - cpu,
    )
