"""``pgc bench shapes``: one planted leak per shape — scale, dependence, count, location — audited by ``audit_system``
beside the best one-line oracle statistic for that shape on the same releases and the same split.

Every case is a System of one channel ``value`` that claims (ε, δ) = (1, 10⁻⁵) and leaks through one shape only
(secret 1 vs secret 0):

* **scale** — N(0, σ²) vs N(0, (1.1σ)²) on 1,020 coordinates (a noise scale that depends on the data); oracle: the
  squared norm Σ y_j²;
* **dependence** — 64 unit Gaussians, equicorrelated (ρ = 0.01) vs independent: every marginal the same; oracle:
  the sum of the coordinate-pair products Σ_{i<j} y_i·y_j;
* **count** — a Poisson number of reports (rate 10 vs 8, at most 32 slots; absent entries NaN), each report a unit
  Gaussian; oracle: the count of present entries;
* **location** — 64 unit Gaussians whose mean moves by 0.25 in every coordinate (d′ = 2); oracle: the mean of the
  coordinates (the projection on the true shift).

Per case the audit draws ``--samples`` releases per side in all: a fifth of them (a quarter of the certification
size) for its training split, the rest for certification (``audit_system(..., samples=, train_fraction=)``). A
recorder between the audit and the System keeps the oracle statistic of every release the audit drew (rounded as
the audit reads it): the oracle's orientation and threshold are chosen on the audit's training releases
(:func:`audit.statistics.selection.choose_threshold`, the audit's α, δ and rate bounds), its bound counted on the
audit's
certification releases (:func:`audit.certification.tester.bound_from_counts`). Each case is audited ``--repeats``
times, each from
its own seed (:func:`case_seed`). The goal: the median over the repeats of ours / the oracle's ε_LB ≥ 0.8 per case,
and the scale case VIOLATED at 2·10⁴ per side. The JSON result is written atomically, a Markdown table beside it.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError
from pgc.options import add_confidence, add_out, add_samples, add_seed, positive_int
from pgc.schemas.audit_rows import RowClaim, Verdict
from pgc.schemas.bench_study_results import (
    ShapeCaseSummary,
    ShapeCell,
    ShapeOracle,
    ShapesBench,
    ShapeSplit,
    ShapesSettings,
    ShapesSummary,
)

help = "planted leaks of every shape (scale, dependence, count, location): our audit vs the shape's oracle statistic"

CLAIM = PrivacyClaim(1.0, 1e-5, ("value",))
TRAIN_SHARE = 0.25  # the training split, as a fraction of the certification releases
GOAL = 0.8  # ours ≥ GOAL × the oracle's ε_LB
SAMPLES = 20_000
REPEATS = 5


@dataclass(frozen=True)
class Case:
    """One planted leak: its shape, the releases of each secret, the shape's oracle statistic."""

    name: str
    shape: str
    leak: str
    draw: Callable[[int, int, np.random.Generator], np.ndarray]  # (secret, n, rng) -> (n, k) releases
    oracle: str
    statistic: Callable[[np.ndarray], np.ndarray]


def _scale(secret: int, n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.normal(0.0, 1.1 if secret else 1.0, size=(n, 1020))


def _dependence(secret: int, n: int, rng: np.random.Generator, rho: float = 0.01) -> np.ndarray:
    rho = rho if secret else 0.0
    return math.sqrt(1.0 - rho) * rng.standard_normal((n, 64)) + math.sqrt(rho) * rng.standard_normal((n, 1))


def _count(secret: int, n: int, rng: np.random.Generator, slots: int = 32) -> np.ndarray:
    counts = np.minimum(rng.poisson(10.0 if secret else 8.0, size=n), slots)
    values = rng.standard_normal((n, slots))
    return np.where(np.arange(slots)[None, :] < counts[:, None], values, np.nan)


def _location(secret: int, n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal((n, 64)) + (0.25 if secret else 0.0)


def _pair_products(y: np.ndarray) -> np.ndarray:
    total = y.sum(axis=1)
    return 0.5 * (total**2 - np.einsum("ij,ij->i", y, y))


CASES = {
    c.name: c
    for c in (
        Case(
            "scale",
            "scale",
            "Gaussian σ vs 1.1σ on 1,020 coordinates",
            _scale,
            "norm² Σ y_j²",
            lambda y: np.einsum("ij,ij->i", y, y),
        ),
        Case(
            "dependence",
            "dependence",
            "64 unit Gaussians, equicorrelated ρ = 0.01 vs independent",
            _dependence,
            "Σ_{i<j} y_i·y_j",
            _pair_products,
        ),
        Case(
            "count",
            "structure",
            "Poisson(10) vs Poisson(8) reports in 32 slots (absent: NaN)",
            _count,
            "count of present entries",
            lambda y: (~np.isnan(y)).sum(axis=1).astype(np.float64),
        ),
        Case(
            "location",
            "location",
            "64 unit Gaussians, every mean + 0.25 (d′ = 2)",
            _location,
            "mean of the coordinates",
            lambda y: y.mean(axis=1),
        ),
    )
}


class PlantedLeakSystem:
    """A case as a System: channel ``value``, the claim :data:`CLAIM`, secrets 1 and 0."""

    channels = ("value",)
    claim = CLAIM

    def __init__(self, case: Case):
        self.case, self.name = case, f"planted-{case.name}"

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        if secret not in (0, 1):
            raise UserError(f"{self.name}: a secret is 0 or 1, got {secret!r}")
        return {"value": self.case.draw(int(secret), n, rng)}


class OracleRecorder:
    """The System the audit reads, keeping the oracle statistic of every release it draws, per secret and in
    order (the releases rounded as the audit reads them: :func:`audit.engine.releases.round_significant`)."""

    def __init__(self, system: PlantedLeakSystem):
        self.system = system
        self.scores: dict[int, list[np.ndarray]] = {0: [], 1: []}

    def __getattr__(self, attribute):
        return getattr(self.system, attribute)

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        from audit.engine.releases import round_significant

        out = self.system.release(secret, n, rng, broadcast=broadcast)
        self.scores[int(secret)].append(self.system.case.statistic(round_significant(out["value"])))
        return out

    def split(self, secret: int, train: int, certification: int) -> tuple[np.ndarray, np.ndarray]:
        """(training, certification) oracle scores of one secret, as the audit drew them."""
        scores = np.concatenate(self.scores[secret])
        if scores.size != train + certification:
            raise RuntimeError(f"the audit drew {scores.size} releases of secret {secret}, not {train + certification}")
        return scores[:train], scores[train:]


def oracle_bound(
    recorder: OracleRecorder, train: int, certification: int, confidence: float, delta: float, two_sided: bool
) -> ShapeOracle:
    """The oracle statistic's certified bound: orientation and threshold chosen on the audit's training releases,
    counted on its certification releases. The threshold is chosen at the selection's own levels only: where no
    threshold projects above 0 the oracle keeps the trivial event and certifies 0, where the audit would select again
    at the plug-in level (:func:`audit.certification.choice.select_test`)."""
    from audit.certification.tester import CandidateTest, bound_from_counts
    from audit.statistics.selection import choose_threshold

    (pos_train, pos_cert), (neg_train, neg_cert) = (recorder.split(s, train, certification) for s in (1, 0))
    alpha = 1.0 - confidence
    best = (0.0, math.inf, 0.5, -math.inf)
    for sign in (1.0, -1.0):
        threshold, share, projected = choose_threshold(
            sign * pos_train, sign * neg_train, certification, alpha, delta, two_sided
        )
        if projected > best[3]:
            best = (sign, threshold, share, projected)
    sign, threshold, share, projected = best
    case = recorder.system.case
    test = CandidateTest(f"oracle {case.oracle}", case.oracle, lambda y: y, threshold, share, projected, train)
    bound = bound_from_counts(
        test,
        int(np.count_nonzero(sign * pos_cert >= threshold)),
        certification,
        int(np.count_nonzero(sign * neg_cert >= threshold)),
        certification,
        confidence,
        delta,
    )
    return ShapeOracle(
        epsilon_lower_bound=bound.epsilon_lower_bound,
        statistic=case.oracle,
        orientation=sign,
        threshold=sign * threshold,
        false_positives=bound.false_positives,
        false_negatives=bound.false_negatives,
        projected_epsilon=projected,
    )


def audit_case(case: Case, total: int, confidence: float, seed: int, repeat: int = 0) -> ShapeCell:
    """One case (its ``repeat``): the System audit at ``total`` releases per side in all, and the oracle on the same
    releases."""
    from audit.engine.system_audit import AuditSettings, audit_system

    certification = max(100, round(total / (1.0 + TRAIN_SHARE)))
    settings = AuditSettings(
        samples=certification,
        train_fraction=(total - certification) / certification,
        train_minimum=100,
        seed=seed,
        confidence=confidence,
    )
    recorder = OracleRecorder(PlantedLeakSystem(case))
    start = time.perf_counter()
    result = audit_system(recorder, 1, 0, settings)
    wall = time.perf_counter() - start
    row = result.rows[0]
    train = settings.train_samples
    oracle = oracle_bound(
        recorder, train, certification, confidence, float(CLAIM.delta), bool(settings.two_sided_rates)
    )
    ratio = (
        row.epsilon_lower_bound / oracle.epsilon_lower_bound
        if oracle.epsilon_lower_bound > 0
        else (math.inf if row.epsilon_lower_bound > 0 else 1.0)
    )
    return ShapeCell(
        repeat=repeat,
        case=case.name,
        shape=case.shape,
        leak=case.leak,
        split=ShapeSplit(
            samples_per_side=train + certification, train_per_side=train, certification_per_side=certification
        ),
        claim=RowClaim(epsilon=float(CLAIM.epsilon), delta=float(CLAIM.delta)),
        epsilon_lower_bound=row.epsilon_lower_bound,
        statistic=row.statistic,
        verdict=Verdict(row.verdict),
        max_certifiable_epsilon=row.max_certifiable_epsilon,
        oracle=oracle,
        ratio=ratio,
        meets_goal=ratio >= GOAL,
        wall_s=wall,
    )


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cases", nargs="+", default=list(CASES), help=f"which cases (default: {' '.join(CASES)})")
    add_samples(p, default=SAMPLES, help="releases per side in all (training + certification)")
    p.add_argument(
        "--repeats",
        type=positive_int,
        default=REPEATS,
        help=f"audits per case, each from its own seed (default {REPEATS}): the goal is read on the median",
    )
    add_confidence(p, default=0.95)
    add_seed(p, default=0)
    add_out(p, default="runs/bench/shapes.json", help="JSON result (a .md table beside it)")


def _check(args: argparse.Namespace) -> None:
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        raise UserError(f"unknown cases {unknown}; known: {', '.join(CASES)}")
    if not (0.0 < args.confidence < 1.0):
        raise UserError(f"--confidence must lie in (0, 1), got {args.confidence}")
    if args.samples < 200:
        raise UserError(f"--samples must be at least 200 per side, got {args.samples}")


def case_seed(seed: int, case: str, repeat: int) -> int:
    """One audit's seed, fixed by the run's seed, the case and the repeat alone (not by which other cases run)."""
    return int(np.random.SeedSequence([seed, zlib.crc32(case.encode()), repeat]).generate_state(1)[0])


def summary(cells: list[ShapeCell]) -> ShapesSummary:
    """Per case: the medians over its repeats of ours, the oracle's and their ratio, whether the median ratio meets
    the goal, and the verdicts."""
    per_case = {}
    for name in dict.fromkeys(c.case for c in cells):
        runs = [c for c in cells if c.case == name]
        ratio = float(np.median([c.ratio for c in runs]))
        per_case[name] = ShapeCaseSummary(
            repeats=len(runs),
            median_epsilon_lower_bound=float(np.median([c.epsilon_lower_bound for c in runs])),
            median_oracle_epsilon_lower_bound=float(np.median([c.oracle.epsilon_lower_bound for c in runs])),
            median_ratio=ratio,
            min_ratio=min(c.ratio for c in runs),
            max_ratio=max(c.ratio for c in runs),
            meets_goal=ratio >= GOAL,
            runs_meeting_goal=sum(c.meets_goal for c in runs),
            verdicts=sorted({c.verdict for c in runs}),
            statistics=sorted({c.statistic for c in runs}),
        )
    return ShapesSummary(
        goal=GOAL,
        cases=per_case,
        meets_goal=[n for n, c in per_case.items() if c.meets_goal],
        below_goal=[n for n, c in per_case.items() if not c.meets_goal],
    )


def write_table(path: Path, result: ShapesBench) -> None:
    from pgc.files import write_text_atomic

    s = result.summary
    lines = [
        f"# pgc bench shapes: {result.settings.samples:,} releases per side, confidence "
        f"{result.settings.confidence:g}, claim (ε, δ) = (1, 1e-5)",
        "",
        f"`{result.command}`",
        "",
        "| case | planted leak | ours: median ε_LB | oracle: median ε_LB | ours/oracle: median (range) | "
        f"runs ≥ {GOAL:g} × oracle | verdicts | our statistics |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, c in s.cases.items():
        leak, oracle = next((x.leak, x.oracle.statistic) for x in result.cells if x.case == name)
        lines.append(
            f"| {name} | {leak} | {c.median_epsilon_lower_bound:.3f} | "
            f"{c.median_oracle_epsilon_lower_bound:.3f} [{oracle}] | {c.median_ratio:.2f} "
            f"({c.min_ratio:.2f}–{c.max_ratio:.2f}) | {c.runs_meeting_goal} of {c.repeats} | "
            f"{', '.join(map(str, c.verdicts))} | {', '.join(c.statistics)} |"
        )
    lines += [
        "",
        f"Median ours ≥ {GOAL:g} × the oracle's ε_LB in {len(s.meets_goal)} of {len(s.cases)} cases"
        + (f" (not in: {', '.join(s.below_goal)})" if s.below_goal else "")
        + ".",
        "",
        "| case | repeat | ours ε_LB [statistic] | oracle ε_LB | ours/oracle | verdict | wall |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {c.case} | {c.repeat} | {c.epsilon_lower_bound:.3f} [{c.statistic}] | "
        f"{c.oracle.epsilon_lower_bound:.3f} | {c.ratio:.2f} | {c.verdict} | {c.wall_s:.1f} s |"
        for c in result.cells
    ]
    write_text_atomic(path, "\n".join(lines) + "\n")


def run(args: argparse.Namespace) -> int:
    from pgc.files import write_json_atomic

    _check(args)
    out = Path(args.out)
    cells: list[ShapeCell] = []
    for name in args.cases:
        for repeat in range(args.repeats):
            cell = audit_case(CASES[name], args.samples, args.confidence, case_seed(args.seed, name, repeat), repeat)
            cells.append(cell)
            print(
                f"{name} #{repeat}: ours {cell.epsilon_lower_bound:.3f} [{cell.statistic}], oracle "
                f"{cell.oracle.epsilon_lower_bound:.3f}, ratio {cell.ratio:.2f}; {cell.verdict}; "
                f"{cell.wall_s:.1f} s",
                flush=True,
            )
    result = ShapesBench(
        settings=ShapesSettings(samples=args.samples, repeats=args.repeats, confidence=args.confidence, seed=args.seed),
        command="pgc " + " ".join(sys.argv[1:]),
        cells=cells,
        summary=summary(cells),
    )
    write_json_atomic(out, result.to_dict())
    write_table(out.with_suffix(".md"), result)
    s = result.summary
    print(
        f"median ours ≥ {GOAL:g} × oracle in {len(s.meets_goal)} of {len(s.cases)} cases; wrote {out}, "
        f"{out.with_suffix('.md')}"
    )
    return 0
