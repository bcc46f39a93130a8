"""``pgc audit --self-test``: the auditor against every correct mechanism and every planted bug.

A correct mechanism must come out "consistent" (ε_LB ≤ claimed ε and δ_LB ≤ claimed δ at the claimed ε; by
construction this fails with probability ≤ α = 1 − confidence), every mutant "violated" (ε_LB > claim,
or, for the δ-type leak, δ_LB above the claimed δ at the claimed ε). The cases claim pure ε but two Gaussian
mechanisms claiming (ε, δ), whose rows also read the noise they declare through the accountant.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from audit.engine.blackbox import MechanismAuditResult, audit_mechanism
from audit.engine.whitebox import audit_prs_whitebox
from audit.selftest import mutants
from pgc.errors import UserError
from pgc.mechanisms import Gaussian, Laplace, ProjectedRandomSign, split_rounds
from pgc.tasks import map_tasks


@dataclass(frozen=True)
class SelfTestCase:
    name: str
    mechanism: object
    correct: bool
    mode: str = "black-box"
    note: str = ""

    def true_epsilon(self, dim: int) -> float:
        fn = getattr(self.mechanism, "true_epsilon", None)
        return fn(dim) if fn is not None else float(self.mechanism.epsilon)


def self_test_cases() -> list[SelfTestCase]:
    return [
        SelfTestCase("laplace", Laplace(1.0), True),
        SelfTestCase("laplace", Laplace(8.0), True),
        SelfTestCase("prs", ProjectedRandomSign(1.0), True),
        SelfTestCase("prs", ProjectedRandomSign(10.0), True),
        SelfTestCase("prs (white-box)", ProjectedRandomSign(10.0), True, mode="white-box"),
        SelfTestCase(
            "laplace, 3 rounds, split", mutants.RepeatedSubmissions(split_rounds(Laplace(1.0), 3), 3, 1.0), True
        ),
        SelfTestCase("noise-too-small", mutants.NoiseTooSmall(1.0), False),
        SelfTestCase("l2-clip-l1-noise", mutants.L2ClipL1Noise(1.0), False),
        SelfTestCase("clip-after-noise", mutants.ClipAfterNoise(1.0), False),
        SelfTestCase("prs-full-eps-per-coord", mutants.PRSFullEpsilonPerCoordinate(5.0), False),
        SelfTestCase("prs-full-eps-per-coord", mutants.PRSFullEpsilonPerCoordinate(5.0), False, mode="white-box"),
        SelfTestCase(
            "prs-flip-swapped",
            mutants.PRSSwappedFlip(5.0),
            False,
            mode="white-box",
            note="black-box nearly blind: the hidden M randomises which rows flip",
        ),
        SelfTestCase("multi-round-no-split", mutants.RepeatedSubmissions(Laplace(1.0), 3, 1.0), False),
        SelfTestCase("seed-reuse", mutants.SeedReuseLaplace(1.0), False),
        SelfTestCase("float16-textbook-laplace", mutants.Float16TextbookLaplace(1.0), False),
        SelfTestCase(
            "rare-noiseless-release",
            mutants.RareNoiselessRelease(1.0),
            False,
            note="1 in 1,000 released without noise: caught by the δ test (ε_LB ≈ ε)",
        ),
        SelfTestCase("gaussian", Gaussian(2.0, delta=1e-5), True),
        SelfTestCase(
            "gaussian-noise-shrunk",
            mutants.GaussianNoiseShrunk(2.0),
            False,
            note="σ/1.5 under a (2, 1e-5) claim: its declared noise gives the accountant ε ≈ 3.16",
        ),
    ]


@dataclass(frozen=True)
class SelfTestRow:
    case: SelfTestCase
    result: MechanismAuditResult
    true_epsilon: float

    @property
    def passed(self) -> bool:
        return self.result.violation != self.case.correct


def run_self_test(
    samples: int = 1_000_000,
    confidence: float = 0.95,
    seed: int = 0,
    dim: int = 112,
    progress: bool = False,
    on_row: Callable[[SelfTestRow], None] | None = None,
    only: Sequence[str] | None = None,
    executor=None,
) -> list[SelfTestRow]:
    """Audit every case (``only``: the cases with these names); a case keeps its seed (seed + its
    index in the full catalogue) whichever cases are selected. ``executor`` (``Executor.map``'s
    meaning, e.g. a Ray engine) audits the cases as independent tasks, one case per task, with the
    same results."""
    cases = self_test_cases()
    if only is not None:
        unknown = sorted(set(only) - {c.name for c in cases})
        if unknown:
            raise UserError(f"unknown self-test case(s) {unknown}; known: {', '.join(sorted({c.name for c in cases}))}")
    chosen = [(i, case) for i, case in enumerate(cases) if only is None or case.name in only]
    task = functools.partial(audit_case, dim=dim, samples=samples, confidence=confidence, progress=progress)
    rows = []
    for row in map_tasks(executor, task, [case for _, case in chosen], [seed + i for i, _ in chosen]):
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows


def audit_case(
    case: SelfTestCase, seed: int, *, dim: int, samples: int, confidence: float, progress: bool = False
) -> SelfTestRow:
    """One self-test case: its black-box or white-box audit (a task of :func:`run_self_test`)."""
    audit = audit_prs_whitebox if case.mode == "white-box" else audit_mechanism
    result = audit(case.mechanism, dim=dim, samples=samples, confidence=confidence, seed=seed, progress=progress)
    return SelfTestRow(case, result, case.true_epsilon(dim))


def format_row(row: SelfTestRow) -> str:
    true = "∞" if math.isinf(row.true_epsilon) else f"{row.true_epsilon:.3g}"
    kind = "correct" if row.case.correct else "mutant"
    dlb = row.result.delta_lower_bound
    dlb = "—" if dlb is None else ("0" if dlb == 0 else f"{dlb:.2e}")
    return (
        f"| {row.case.name:<26} | {kind:<7} | {row.case.mode:<9} | {row.result.claimed_epsilon:>5g} | {true:>6} "
        f"| {row.result.epsilon_lower_bound:>7.3f} | {dlb:>8} | {row.result.bound.max_certifiable_epsilon:>6.2f} "
        f"| {row.result.verdict:<10} | {'ok' if row.passed else 'FAIL':<4} | {row.result.wall_time_s:>5.1f} |"
    )


TABLE_HEADER = (
    "| mechanism                  | kind    | mode      | claim | true ε |   ε_LB  |   δ_LB   |  cap   "
    "| verdict    | test | time s |\n"
    "|----------------------------|---------|-----------|------:|-------:|--------:|---------:|-------:"
    "|------------|------|-------:|"
)
