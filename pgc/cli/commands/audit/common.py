"""What the modes of ``pgc audit`` share: the fields every result of theirs starts from, a row's printed line,
and a mechanism's canary audit as its result records it and as it is printed (the mechanism and its audit:
:mod:`pgc.audits.mechanism`)."""

from __future__ import annotations

import math
from typing import Any


def fmt(x: float) -> str:
    return "∞" if isinstance(x, float) and math.isinf(x) else f"{x:.3f}"


def header(args) -> dict[str, Any]:
    """The fields every audit result starts from: its confidence, δ and seed (the command stamps the rest)."""
    return {"confidence": args.confidence, "delta": getattr(args, "delta", None) or 0.0, "seed": args.seed}


def canary_record(result):
    """A mechanism's canary audit (:class:`audit.engine.mechanism_result.MechanismAuditResult`) as its result
    records it: the judged row and what the selection and the δ test saw (the ε test's counts are the row's)."""
    import pgc.schemas as schemas

    dt = result.delta_test
    delta_test = None
    if dt is not None:
        delta_test = schemas.DeltaTest(
            **{f: getattr(dt, f) for f in schemas.DeltaTest.json_keys()},
        )
    return schemas.CanaryAudit(
        mechanism=result.mechanism,
        mode=result.mode,
        row=result.row,
        wall_time_s=result.wall_time_s,
        cpu_time_s=result.cpu_time_s,
        delta_time_s=result.delta_time_s,
        delta_test=delta_test,
        candidates=[schemas.SelectionCandidate(**c) for c in result.candidates],
    )


def row_line(row, width: int = 20) -> str:
    """A row in one line: channel, claim, ε_LB, budget and verdict."""
    return (
        f"  {row.channel:<{width}} claim {fmt(row.claimed_epsilon):>6}  ε_LB {row.epsilon_lower_bound:7.3f}  "
        f"(n={row.samples_per_side:,}, cap {row.max_certifiable_epsilon:.2f})  {row.verdict}"
    )


def reason_line(row, indent: int = 4) -> str:
    """The row's verdict in words (what exceeded what, or what the test could and could not have caught)."""
    return f"{' ' * indent}{row.verdict}: {row.verdict_reason}" if row.verdict_reason else ""


def print_rows(rows, width: int = 20) -> None:
    """Each row's line and, under it, its verdict's reason."""
    for row in rows:
        print(row_line(row, width))
        if row.verdict_reason:
            print(reason_line(row, 6))


def print_mechanism(result) -> None:
    b, row = result.bound, result.row
    print(
        f"{result.mechanism} [{result.mode}]: claimed ε = {fmt(row.claimed_epsilon)}, "
        f"ε_LB = {row.epsilon_lower_bound:.3f} at {100 * row.confidence:g}% confidence "
        f"(n = {b.samples_per_side:,}/side, cap {b.max_certifiable_epsilon:.2f}) -> {str(row.verdict).upper()}"
    )
    print(
        f"  ε test: {b.hypothesis}, statistic {b.statistic}, FP {b.false_positives}, FN {b.false_negatives}; "
        f"{result.wall_time_s:.1f}s"
    )
    dt = result.delta_test
    if dt is not None:
        if dt.certified:
            print(
                f"  δ test: {dt.statistic} on {dt.hypothesis} ({dt.direction}), {dt.hits} hits vs {dt.false_hits} "
                f"of {dt.samples_per_side:,}/side -> δ_LB = {dt.delta_lower_bound:.2e} at ε = "
                f"{fmt(dt.claimed_epsilon)} (claimed δ {dt.claimed_delta:g}; alone at "
                f"{100 * dt.confidence:g}%)"
            )
        else:
            print("  δ test: no point mass or exact release seen on the training split (δ_LB = 0)")
    if row.mu_lower_bound is not None:
        print(
            f"  curve test: μ_LB = {row.mu_lower_bound:.3f} vs the claimed curve's μ = {row.claimed_mu:.3f}"
            + (
                ""
                if row.curve_epsilon is None
                else f" (ε ≥ {row.curve_epsilon:.3f} at δ = {row.claimed_delta:g} if the curve is Gaussian)"
            )
        )
    if row.accountant_epsilon is not None:
        print(
            f"  accountant: the noise it declares gives ε = {row.accountant_epsilon:.3f} at δ = {row.claimed_delta:g}"
        )
    print(f"  verdict: {row.verdict_reason}")
