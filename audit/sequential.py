"""Sampling until decisive: an audit grown in stages with α-spending.

Stage k (k = 1, 2, ...) certifies on n_k = n_first·2^(k−1) FRESH releases per side at level
α_k = α·2^−k. Since Σ α_k ≤ α, the chance that any stage flags a true claim is at most α (union
bound over the stages; each stage's releases are its own, drawn from its own child of the seed).
The audit stops when a stage flags the claim (``violated``), when a stage could have flagged any
leak of ε > 1.1 × the claim with probability ≥ 0.8 and flagged none (``consistent``), or when the
next stage would exceed the budget of certification releases per side (``inconclusive``).

:func:`run_stages` is the stopping rule; :func:`audit_system_until_decisive` runs it with
:func:`audit.system_audit.audit_system` as the stage, :func:`sequential_curve_audit` with the curve
test on one-dimensional scores (the null simulation of :mod:`audit.power_study`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .curves import gdp_mu_for, mu_lower_bound, select_curve_threshold
from .power import DECISIVE_MARGIN, curve_detectable_epsilon

Draw = Callable[[int, np.random.Generator], tuple]


@dataclass(frozen=True)
class Stage:
    n_per_side: int
    alpha: float
    decision: str  # "violated", "decisive" (consistent, and decisive) or "undecided"
    detail: Any = None  # the stage's own result (a SystemAuditResult, or the curve test's numbers)


@dataclass(frozen=True)
class SequentialResult:
    decision: str  # "violated", "consistent" or "inconclusive"
    stages: tuple

    @property
    def samples_per_side(self) -> int:
        return sum(s.n_per_side for s in self.stages)


def stage_alpha(alpha: float, k: int) -> float:
    """α_k = α·2^−k for stage k ≥ 1."""
    return alpha * 2.0 ** (-k)


def stage_sizes(n_first: int, budget: int) -> list[int]:
    """n_k = n_first·2^(k−1) while the stages' total stays within ``budget`` per side."""
    if n_first < 100 or budget < n_first:
        raise ValueError(f"need a first stage of at least 100 releases and a budget >= it, got {n_first}, {budget}")
    sizes, total = [], 0
    while total + n_first * 2 ** len(sizes) <= budget:
        sizes.append(n_first * 2 ** len(sizes))
        total += sizes[-1]
    return sizes


def run_stages(run_stage: Callable[[int, int, float], Stage], alpha: float, n_first: int, budget: int,
               on_stage: Callable[[Stage], None] | None = None) -> SequentialResult:
    """Stages k = 1, 2, ... of ``run_stage(k, n_k, α_k)`` until one is violated or decisive, or the budget
    is spent."""
    stages = []
    for k, n in enumerate(stage_sizes(n_first, budget), start=1):
        stage = run_stage(k, n, stage_alpha(alpha, k))
        stages.append(stage)
        if on_stage is not None:
            on_stage(stage)
        if stage.decision == "violated":
            return SequentialResult("violated", tuple(stages))
        if stage.decision == "decisive":
            return SequentialResult("consistent", tuple(stages))
    return SequentialResult("inconclusive", tuple(stages))


def decisive(rows, margin: float = DECISIVE_MARGIN) -> bool:
    """Every covered row could have flagged a leak of margin × its claim (and none was flagged)."""
    covered = [r for r in rows if r.covered]
    return bool(covered) and all(r.detectable_epsilon is not None and r.detectable_epsilon <= margin * r.claimed_epsilon
                                 for r in covered)


def audit_system_until_decisive(system: Any, secret: Any, secret_prime: Any, *, budget: int, n_first: int = 10_000,
                                seed: int = 0, confidence: float = 0.95, progress: bool = False,
                                **audit_options) -> SequentialResult:
    """:func:`audit.system_audit.audit_system` in stages (see the module docstring). Stage k draws from the
    k-th child of ``SeedSequence(seed)``; ``audit_options`` go to every stage (channels, broadcast, ...).
    With ``progress``, the plan and a time estimate (from a timed draw of releases) are printed first and
    a bar counts the stages."""
    from .progress import progress_bar
    from .system_audit import audit_system

    alpha = 1.0 - confidence
    sizes = stage_sizes(n_first, budget)
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(len(sizes))]
    if progress:
        per_release = _seconds_per_release(system, secret)
        worst = per_release * 2 * sum(1.25 * n for n in sizes)  # both sides, training split included
        print(f"sampling until decisive: stages of {', '.join(f'{n:,}' for n in sizes)} releases per side at "
              f"α_k = α·2^-k; at most {sum(sizes):,} per side, about {_duration(worst)} if every stage runs",
              flush=True)
    bar = progress_bar(len(sizes), "stage", f"auditing {system.name} until decisive", progress)

    def run_stage(k: int, n: int, alpha_k: float) -> Stage:
        result = audit_system(system, secret, secret_prime, samples=n, seed=seeds[k - 1],
                              confidence=1.0 - alpha_k, progress=False, **audit_options)
        decision = ("violated" if result.verdict == "violated" else
                    "decisive" if result.verdict == "consistent" and decisive(result.rows) else "undecided")
        return Stage(n, alpha_k, decision, result)

    try:
        return run_stages(run_stage, alpha, n_first, budget, on_stage=lambda stage: bar.update(1))
    finally:
        bar.close()


def _seconds_per_release(system: Any, secret: Any, n: int = 2000) -> float:
    start = time.perf_counter()
    system.release(secret, n, np.random.default_rng(0))
    return (time.perf_counter() - start) / n


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def sequential_curve_audit(draw: Draw, claim_eps: float, delta: float, alpha: float,
                           rng: np.random.Generator, n_first: int = 2000,
                           budget: int = 10**6, margin: float = DECISIVE_MARGIN) -> SequentialResult:
    """The curve test on one-dimensional scores in stages: ``draw(2n, rng) -> (pos_scores, neg_scores)``;
    each stage selects its threshold on one half and certifies μ on the other."""
    claimed_mu = gdp_mu_for(claim_eps, delta)

    def run_stage(k: int, n: int, alpha_k: float) -> Stage:
        pos, neg = (np.asarray(s, dtype=float) for s in draw(2 * n, rng))
        threshold = select_curve_threshold(pos[:n], neg[:n], n, alpha_k)
        fp, fn = int((neg[n:] >= threshold).sum()), int((pos[n:] < threshold).sum())
        mu_lb = mu_lower_bound(fp, fn, n, n, alpha_k)
        detectable = curve_detectable_epsilon(claimed_mu, delta, n, alpha_k)
        decision = ("violated" if mu_lb > claimed_mu else
                    "decisive" if detectable <= margin * claim_eps else "undecided")
        return Stage(n, alpha_k, decision, {"mu_lower_bound": mu_lb, "detectable_epsilon": detectable})

    return run_stages(run_stage, alpha, n_first, budget)

