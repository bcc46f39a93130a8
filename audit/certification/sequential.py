"""Sampling until decisive: an audit grown in stages with α-spending.

Stage k (k = 1 .. K) certifies on n_k = n_first·2^(k−1) FRESH releases per side, the sizes planned up front
within the budget (:func:`stage_sizes`), at level α_k = α·n_k / Σ_j n_j (:func:`stage_alphas`): the levels are
fixed before any data and sum to α, so the chance that any stage flags a true claim is at most α (union bound
over the stages; each stage's certification releases are its own, drawn from its own child of the seed). The
larger a stage, the more of α it gets: the last stages, which decide most audits, certify nearly at α.

Each stage selects its test on its own training split PLUS every release the earlier stages drew
(:class:`audit.engine.releases.SelectionPool`): selection grows more stable from stage to stage instead of starting
over on a small split, and the certification stays on fresh releases.

A stage decides on its certified result (:func:`decisive`): ``violated`` when the family verdict of its rows is
(Holm, :func:`audit.verdicts.family_verdict`); ``consistent`` and decisive when every row held to the claim
is consistent — its certified test separated the two secrets — and would have caught a leak of 1.1 × its
claim (``detectable_epsilon``, the power of the test that ran). The result's verdict is the deciding stage's,
or, when the budget runs out first, the last stage's family verdict (``decisive`` False): never a verdict the
certified stages did not show.

:func:`run_stages` is the stopping rule; :func:`audit_system_until_decisive` runs it with
:func:`audit.engine.system_audit.audit_system` as the stage, :func:`sequential_curve_audit` with the curve test on
one-dimensional scores (the null simulation of :mod:`audit.power.study`). :func:`estimate_seconds` times the
system once warmed up, so a printed estimate excludes compile time.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from audit.certification.curves import gdp_mu_for, mu_lower_bound, select_curve_threshold
from audit.power import DECISIVE_MARGIN
from audit.power.measured import curve_event_detectable_epsilon
from pgc.errors import UserError
from pgc.schemas.audit_rows import Verdict

Draw = Callable[[int, np.random.Generator], tuple]


@dataclass(frozen=True)
class Stage:
    n_per_side: int
    alpha: float
    decision: str  # "violated", "decisive" (consistent, and decisive) or "undecided"
    detail: Any = None  # the stage's own result (a SystemAuditResult, or the curve test's numbers)
    verdict: Verdict = Verdict.INCONCLUSIVE  # the stage's family verdict


@dataclass(frozen=True)
class SequentialResult:
    verdict: Verdict  # the deciding stage's family verdict, else the last stage's
    decisive: bool  # a stage decided (violated, or consistent with power within the margin)
    stages: tuple

    @property
    def decision(self) -> str:
        """``violated``, ``consistent`` (decided), or the last stage's verdict with "(budget spent)"."""
        return str(self.verdict) if self.decisive else f"{self.verdict} (budget spent)"

    @property
    def samples_per_side(self) -> int:
        return sum(s.n_per_side for s in self.stages)


def stage_sizes(n_first: int, budget: int) -> list[int]:
    """n_k = n_first·2^(k−1) while the stages' total stays within ``budget`` per side."""
    if n_first < 100 or budget < n_first:
        raise UserError(f"need a first stage of at least 100 releases and a budget >= it, got {n_first}, {budget}")
    sizes, total = [], 0
    while total + n_first * 2 ** len(sizes) <= budget:
        sizes.append(n_first * 2 ** len(sizes))
        total += sizes[-1]
    return sizes


def stage_alphas(alpha: float, sizes: list[int]) -> list[float]:
    """α_k = α·n_k / Σ n_j: planned with the sizes, summing to α."""
    total = float(sum(sizes))
    return [alpha * n / total for n in sizes]


def run_stages(
    run_stage: Callable[[int, int, float], Stage],
    alpha: float,
    sizes: list[int],
    on_stage: Callable[[Stage], None] | None = None,
    through: int | None = None,
) -> SequentialResult:
    """Stages k = 1, 2, ... of ``run_stage(k, n_k, α_k)`` until one is violated or decisive, or the planned
    stages are spent; ``through``: stages 1 .. ``through`` whatever they decide (a recorded sequence re-run), at
    the levels planned for all of ``sizes``."""
    stages = []
    for k, (n, alpha_k) in enumerate(zip(sizes, stage_alphas(alpha, sizes), strict=True), start=1):
        stage = run_stage(k, n, alpha_k)
        stages.append(stage)
        if on_stage is not None:
            on_stage(stage)
        if through is not None:
            if k == through:
                return SequentialResult(stage.verdict, stage.decision in ("violated", "decisive"), tuple(stages))
            continue
        if stage.decision in ("violated", "decisive"):
            return SequentialResult(stage.verdict, True, tuple(stages))
    return SequentialResult(stages[-1].verdict if stages else Verdict.INCONCLUSIVE, False, tuple(stages))


def decisive(rows, margin: float = DECISIVE_MARGIN) -> bool:
    """Every row held to the claim is consistent and would have caught a leak of ``margin`` × its claim."""
    held = [r for r in rows if r.covered is not False or r.held_to_claim]
    return bool(held) and all(
        r.verdict == Verdict.CONSISTENT
        and r.detectable_epsilon is not None
        and r.detectable_epsilon <= margin * r.claimed_epsilon
        for r in held
    )


def audit_system_until_decisive(
    system: Any,
    secret: Any,
    secret_prime: Any,
    *,
    budget: int,
    n_first: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    progress: bool = False,
    recertify_stage: int | None = None,
    earlier_certification_seed: int | None = None,
    **audit_options,
) -> SequentialResult:
    """:func:`audit.engine.system_audit.audit_system` in stages (see the module docstring). Stage k draws from the
    k-th child of ``SeedSequence(seed)``; ``audit_options`` go to every stage (channels, broadcast, ...).
    With ``progress``, the plan and a time estimate (:func:`estimate_seconds`) are printed first and a bar
    counts the stages. ``recertify_stage`` k: a recorded sequence's deciding stage counted on fresh releases —
    stages 1 .. k as recorded, whatever they decide, and only stage k's certification releases from the
    ``certification_seed`` in ``audit_options`` (the earlier stages' releases are its selection pool; they draw their
    certification releases from ``earlier_certification_seed`` as the recorded audit did, None: the stages' own)."""
    certification_seed = audit_options.pop("certification_seed", None)
    if recertify_stage is not None and (certification_seed is None or recertify_stage < 1):
        raise UserError("recertify_stage needs a certification_seed and a stage number >= 1")
    from audit.engine.progress import progress_bar
    from audit.engine.releases import SelectionPool
    from audit.engine.system_audit import audit_system

    sizes = stage_sizes(n_first, budget)
    if recertify_stage is not None and recertify_stage > len(sizes):
        raise UserError(f"recertify_stage {recertify_stage}: the budget plans {len(sizes)} stages")
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(len(sizes))]
    one_pair = not (audit_options.get("adversarial") or audit_options.get("search_pair") or audit_options.get("pairs"))
    pool = SelectionPool() if one_pair else None  # a pool serves one fixed pair and broadcast
    if progress:
        worst = estimate_seconds(system, secret, secret_prime, sizes, audit_options)
        print(
            f"sampling until decisive: stages of {', '.join(f'{n:,}' for n in sizes)} releases per side, "
            f"α_k = α·n_k/{sum(sizes):,}; at most {sum(sizes):,} per side, about {_duration(worst)} if every "
            "stage runs",
            flush=True,
        )
    bar = progress_bar(len(sizes), "stage", f"auditing {system.name} until decisive", progress)

    def run_stage(k: int, n: int, alpha_k: float) -> Stage:
        result = audit_system(
            system,
            secret,
            secret_prime,
            samples=n,
            seed=seeds[k - 1],
            confidence=1.0 - alpha_k,
            progress=False,
            selection_pool=pool,
            certification_seed=certification_seed if recertify_stage in (None, k) else earlier_certification_seed,
            **audit_options,
        )
        verdict = Verdict(result.verdict)
        decision = (
            "violated"
            if verdict == Verdict.VIOLATED
            else "decisive"
            if verdict == Verdict.CONSISTENT and decisive(result.rows)
            else "undecided"
        )
        return Stage(n, alpha_k, decision, result, verdict)

    try:
        return run_stages(
            run_stage, 1.0 - confidence, sizes, on_stage=lambda stage: bar.update(1), through=recertify_stage
        )
    finally:
        bar.close()


PROBE_SIZES = (2_500, 20_000)  # releases per side of the two timed probe audits


def _power_law(x: tuple[float, float], y: tuple[float, float]):
    """size ↦ c·size^p through two timings (p clamped to [0, 1.2]): a part whose cost saturates (a threshold grid
    of capped size, fixed set-up) grows sublinearly, drawing and counting releases linearly."""
    if min(y) <= 0.0:
        return lambda size: max(y) * size / x[1]
    p = min(1.2, max(0.0, math.log(y[1] / y[0]) / math.log(x[1] / x[0])))
    return lambda size: y[1] * (size / x[1]) ** p


def estimate_seconds(system: Any, secret: Any, secret_prime: Any, sizes: list[int], audit_options: dict) -> float:
    """Wall seconds if every stage runs, from two probe audits of the same pair (:data:`PROBE_SIZES`) after a
    warm-up release (which absorbs a compiled system's compile time). Each part of an audit is timed in the probes
    (drawing releases, selecting on the training split, counting the certification releases, the rest) and fitted
    as a power of its size; each stage is costed at its own size, its selection at its training split plus the releases
    pooled from earlier stages."""
    from audit.certification.tester import SYSTEM_SPLIT
    from audit.engine.releases import SelectionPool
    from audit.engine.system_audit import audit_system

    warm = system.release(secret, 100, np.random.default_rng(0))  # compile and caches, not timed
    width = sum(np.asarray(v).reshape(100, -1).shape[1] for v in warm.values())
    options = {k: v for k, v in audit_options.items() if k not in ("adversarial", "search_pair")}
    parts = []
    for n in PROBE_SIZES:
        start = time.perf_counter()
        t = audit_system(system, secret, secret_prime, samples=n, seed=0, progress=False, **options).timings
        wall, train = time.perf_counter() - start, SYSTEM_SPLIT.size(n)
        draw = t.get("draw_training", 0.0) + t.get("draw_certification", 0.0)
        count = max(0.0, t.get("certify", 0.0) - t.get("draw_certification", 0.0))
        rest = max(0.0, wall - draw - t.get("select", 0.0) - count)
        parts.append(((n + train, draw), (train, t.get("select", 0.0)), (n, count), rest))
    draw, select, count = (_power_law(*zip(*(p[i] for p in parts), strict=True)) for i in range(3))
    rest = sum(p[3] for p in parts) / len(parts)
    cap = SelectionPool().capacity(width)  # the pool keeps at most this many releases per side
    total, pooled = 0.0, 0
    for size in sizes:
        stage_train = SYSTEM_SPLIT.size(size)
        total += draw(size + stage_train) + select(stage_train + min(pooled, cap)) + count(size) + rest
        pooled += size + stage_train
    return total


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def sequential_curve_audit(
    draw: Draw,
    claim_eps: float,
    delta: float,
    alpha: float,
    rng: np.random.Generator,
    n_first: int = 2000,
    budget: int = 10**6,
    margin: float = DECISIVE_MARGIN,
) -> SequentialResult:
    """The curve test on one-dimensional scores in stages: ``draw(2n, rng) -> (pos_scores, neg_scores)``;
    each stage selects its threshold on one half and certifies μ on the other; its power is that of its
    certified event (:func:`audit.power.measured.curve_event_detectable_epsilon`)."""
    claimed_mu = gdp_mu_for(claim_eps, delta)

    def run_stage(k: int, n: int, alpha_k: float) -> Stage:
        pos, neg = (np.asarray(s, dtype=float) for s in draw(2 * n, rng))
        threshold = select_curve_threshold(pos[:n], neg[:n], n, alpha_k)
        fp, fn = int((neg[n:] >= threshold).sum()), int((pos[n:] < threshold).sum())
        mu_lb = mu_lower_bound(fp, fn, n, n, alpha_k)
        detectable = curve_event_detectable_epsilon(fp, n, alpha_k, claimed_mu, delta) if mu_lb > 0 else math.inf
        if mu_lb > claimed_mu:
            return Stage(n, alpha_k, "violated", {"mu_lower_bound": mu_lb}, Verdict.VIOLATED)
        verdict = Verdict.CONSISTENT if math.isfinite(detectable) else Verdict.INCONCLUSIVE
        decision = "decisive" if detectable <= margin * claim_eps else "undecided"
        return Stage(n, alpha_k, decision, {"mu_lower_bound": mu_lb, "detectable_epsilon": detectable}, verdict)

    return run_stages(run_stage, alpha, stage_sizes(n_first, budget))
