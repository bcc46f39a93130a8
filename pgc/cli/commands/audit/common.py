"""What the modes of ``pgc audit`` share: a row of the result's flat ``channels`` list and its printed line,
and a mechanism's canary audit printed (the mechanism and its audit: :mod:`pgc.audits.mechanism`)."""

from __future__ import annotations

import math


def fmt(x: float) -> str:
    return "∞" if isinstance(x, float) and math.isinf(x) else f"{x:.3f}"


def row_record(row, **context) -> dict:
    """One row of the result's flat ``channels`` list: the audit's judged row as JSON, with ``context`` (scope,
    model, protect, theta_file, ...) set on it."""

    return row.updated(**context).to_dict() if context else row.to_dict()


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
