"""The honesty suite: four audits where a verdict could say more than the audit saw, each with the verdict it
must give (part of ``pgc audit --self-test``).

* ``gaussian-own-curve`` — a Gaussian (2, 1e-5) mechanism whose σ is 1.5 times too small, which declares that σ
  and states the μ of the noise it really adds (0.752): at 5e4 per side it is **violated** by its own accounting
  (the σ it declares gives ε = 3.16 at δ = 1e-5), whatever the samples say; the stated μ is a promise of its own,
  tested by the curve test, never a contradiction of the (ε, δ) (module :mod:`audit.certification.claims`).
* ``point-mass-gaussian`` — a correct Gaussian (2, 1e-5) that returns its input exactly 1 time in 1,000: at 5e4
  per side no statement may exclude a 10⁻³ point mass (the row's smallest catchable point mass is above it, or it
  is flagged), and at 2e5 per side it is **violated**.
* ``hash-seed-report`` — binary local hashing at true ε = 8 claiming 1, its report left as a library returns it
  (bit, hash seed): at 5e4 per side **not consistent** (no statistic that ignores the hash separates the two
  values: no power can be claimed); offered the hash-aware decoder, the same audit is **violated**.
* ``small-eps-unary-encoding`` — optimized unary encoding at ε = 0.25 (k = 25, values 0 vs 24) sampled until
  decisive (budget 10⁶ per side): **consistent**, with ε_LB ≥ 0.8 × a fixed audit's at 1e5 per side.

The systems come through the registry by name (``toy-hashed-report``, ``toy-oue``: :mod:`pgc.toysystems.frequency`),
as ``pgc audit --system`` reaches them; the mechanisms are planted in :mod:`audit.selftest.mutants`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from audit.selftest import mutants
from pgc.schemas.audit_rows import AuditRow, Verdict

POINT_MASS = 1e-3


@dataclass(frozen=True)
class HonestyOutcome:
    case: str
    expected: str  # the verdict the case must give, in words
    passed: bool
    shown: str  # what the audit said, in numbers and words
    rows: tuple[AuditRow, ...]


def _own_curve(seed: int, progress: bool) -> HonestyOutcome:
    from audit.engine.blackbox import audit_mechanism

    res = audit_mechanism(
        mutants.GaussianStatingItsOwnCurve(2.0, 1e-5, clip=1.0), samples=50_000, seed=seed, progress=progress
    )
    row = res.row
    passed = row.verdict == Verdict.VIOLATED and "its own accounting" in (row.claim_contradiction or "")
    return HonestyOutcome(
        "gaussian-own-curve",
        "violated at 5e4: the claim contradicts its own accounting",
        passed,
        f"{row.verdict}: {row.verdict_reason}",
        (row,),
    )


def _point_mass(seed: int, progress: bool) -> HonestyOutcome:
    from audit.engine.blackbox import audit_mechanism

    small, large = (
        audit_mechanism(
            mutants.PointMassGaussian(2.0, 1e-5, clip=1.0, leak_rate=POINT_MASS),
            samples=n,
            seed=seed,
            progress=progress,
        ).row
        for n in (50_000, 200_000)
    )
    excludes = (
        small.verdict != Verdict.VIOLATED
        and small.detectable_delta is not None
        and small.detectable_delta <= POINT_MASS
    )
    passed = not excludes and large.verdict == Verdict.VIOLATED
    shown = (
        f"5e4: {small.verdict}, smallest catchable point mass {small.detectable_delta:.2g}; "
        f"2e5: {large.verdict} ({large.verdict_reason})"
    )
    return HonestyOutcome(
        "point-mass-gaussian",
        "at 5e4 no statement excludes a 1e-3 point mass; violated at 2e5",
        passed,
        shown,
        (small, large),
    )


def _hash_report(seed: int, progress: bool) -> HonestyOutcome:
    from audit.engine.system_audit import audit_system
    from pgc.systems.registry import make_system

    raw, decoded = (
        audit_system(
            make_system("toy-hashed-report", epsilon=8.0, claimed_epsilon=1.0, decoder=d),
            0,
            24,
            samples=50_000,
            seed=seed,
            progress=progress,
            channels=["report"],
        )
        for d in (False, True)
    )
    row, decoded_row = raw.rows[0], decoded.rows[0]
    passed = (
        row.verdict != Verdict.CONSISTENT
        and raw.verdict != Verdict.CONSISTENT
        and decoded_row.verdict == Verdict.VIOLATED
    )
    shown = (
        f"raw (bit, seed): {row.verdict}, ε_LB {row.epsilon_lower_bound:.3f} — {row.verdict_reason}; with the "
        f"decoder: {decoded_row.verdict}, ε_LB {decoded_row.epsilon_lower_bound:.3f}"
    )
    return HonestyOutcome(
        "hash-seed-report",
        "not consistent on the raw report; violated with the decoder",
        passed,
        shown,
        (row, decoded_row),
    )


def _unary_auto(seed: int, progress: bool) -> HonestyOutcome:
    from audit.certification.sequential import audit_system_until_decisive
    from audit.engine.system_audit import audit_system
    from pgc.systems.registry import make_system

    system = make_system("toy-oue", epsilon=0.25, k=25)
    fixed = audit_system(system, 0, 24, samples=100_000, seed=seed, progress=progress, channels=["report"]).rows[0]
    staged = audit_system_until_decisive(
        system, 0, 24, budget=1_000_000, n_first=10_000, seed=seed, progress=progress, channels=["report"]
    )
    last = staged.stages[-1].detail.rows[0]
    passed = (
        staged.verdict == Verdict.CONSISTENT
        and fixed.verdict == Verdict.CONSISTENT
        and last.epsilon_lower_bound >= 0.8 * fixed.epsilon_lower_bound
    )
    shown = (
        f"sampled until decisive: {staged.decision} after {len(staged.stages)} stage(s), ε_LB "
        f"{last.epsilon_lower_bound:.3f} at {last.samples_per_side:,} per side; fixed 1e5: {fixed.verdict}, "
        f"ε_LB {fixed.epsilon_lower_bound:.3f}"
    )
    return HonestyOutcome(
        "small-eps-unary-encoding",
        "consistent, ε_LB ≥ 0.8 × a fixed 1e5 audit's",
        passed,
        shown,
        (last.updated(scope="sampled until decisive"), fixed.updated(scope="fixed 1e5")),
    )


HONESTY_CASES: dict[str, Callable[[int, bool], HonestyOutcome]] = {
    "gaussian-own-curve": _own_curve,
    "point-mass-gaussian": _point_mass,
    "hash-seed-report": _hash_report,
    "small-eps-unary-encoding": _unary_auto,
}


def run_honesty_cases(
    seed: int = 0, progress: bool = False, only=None, on_case: Callable[[HonestyOutcome], None] | None = None
) -> list[HonestyOutcome]:
    """Every honesty case (``only``: these names), case i at seed ``seed + i``."""
    outcomes = []
    for i, (name, run) in enumerate(HONESTY_CASES.items()):
        if only is not None and name not in only:
            continue
        outcome = run(seed + i, progress)
        outcomes.append(outcome)
        if on_case is not None:
            on_case(outcome)
    return outcomes
