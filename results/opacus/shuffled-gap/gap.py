"""Shuffled batches accounted as Poisson: can an audit of Opacus's releases certify ε_LB above the reported ε?

For a white-box gradient canary of norm C in shuffled DP-SGD (each pass over the data puts the canary in exactly one
of its T batches; every step adds N(0, σ²C²)), the auditor's best simple tests of one canary are:

* one pass, every step seen: the maximum over the T steps of the canary coordinate (in units of C) exceeds t;
* E passes: the number of passes whose maximum exceeds t is at least k.

This script computes, exactly (no sampling), the largest ε each test can show at δ = 1e-5 with unlimited releases
(max over t, k of log((P_in − δ) / P_out)), beside the ε Opacus reports for the same configuration accounted as
Poisson at q = 1/T (dp-accounting's PLD, add/remove; Opacus's PRV agrees within 0.01), and the ε_LB a
Clopper–Pearson audit at 95 % could certify with the best threshold of the one-pass test at 2e4 and 1e5 releases per
side (expected counts). Run from the repository root:

    .venv/bin/python results/opacus/shuffled-gap/gap.py > results/opacus/shuffled-gap/gap.txt
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom, norm
from statsmodels.stats.proportion import proportion_confint

from pgc.opacus.claims import pld_epsilon

DELTA = 1e-5


def one_pass_rates(t: float, steps: int, mu: float) -> tuple[float, float]:
    """(P_in, P_out) of "the maximum of the T steps' canary coordinate exceeds t"."""
    p_out = -math.expm1(steps * norm.logcdf(t))
    p_in = -math.expm1(norm.logcdf(t - mu) + (steps - 1) * norm.logcdf(t))
    return p_in, p_out


def certified(p_in: float, p_out: float, n: int) -> float:
    lower = proportion_confint(round(p_in * n), n, alpha=0.05, method="beta")[0]
    upper = proportion_confint(round(p_out * n), n, alpha=0.05, method="beta")[1]
    return math.log(lower / upper) if lower > 0 and upper > 0 else 0.0


def one_pass(steps: int, sigma: float) -> tuple[float, float, float]:
    best, at = 0.0, {20_000: 0.0, 100_000: 0.0}
    for t in np.linspace(0.0, 9.0, 361):
        p_in, p_out = one_pass_rates(t, steps, 1.0 / sigma)
        if p_in > DELTA and p_out > 0:
            best = max(best, math.log((p_in - DELTA) / p_out))
        for n in at:
            at[n] = max(at[n], certified(p_in, p_out, n))
    return best, at[20_000], at[100_000]


def passes(steps: int, epochs: int, sigma: float) -> float:
    best = 0.0
    for t in np.linspace(0.0, 6.0, 121):
        p_in, p_out = one_pass_rates(t, steps, 1.0 / sigma)
        for k in range(1, epochs + 1):
            a, b = binom.sf(k - 1, epochs, p_in), binom.sf(k - 1, epochs, p_out)
            if a > DELTA and b > 0:
                best = max(best, math.log((a - DELTA) / b))
    return best


def main() -> None:
    print("one pass (T steps, q = 1/T): Poisson-accounted ε vs the max test's ε (no sampling limit) and what 2e4 /")
    print("1e5 releases per side could certify with it")
    print("| T | σ | reported ε (Poisson, PLD) | max test ε | certifiable at 2e4 | at 1e5 |")
    print("|---|---|---|---|---|---|")
    for steps in (2, 10, 50, 100, 400, 1000, 5000):
        for sigma in (0.4, 0.5, 0.6, 0.8, 1.0):
            claim = pld_epsilon("add-remove", 1.0 / steps, sigma, steps, DELTA)
            best, n1, n2 = one_pass(steps, sigma)
            print(f"| {steps} | {sigma} | {claim:.2f} | {best:.2f} | {n1:.2f} | {n2:.2f} |", flush=True)
    print()
    print("E passes: Poisson-accounted ε of E·T steps vs the test 'at least k passes exceed t' (no sampling limit)")
    print("| T | E | σ | reported ε | pass-count test ε |")
    print("|---|---|---|---|---|")
    for steps in (10, 50):
        for epochs in (4, 16, 64):
            for sigma in (0.6, 0.8, 1.0):
                claim = pld_epsilon("add-remove", 1.0 / steps, sigma, steps * epochs, DELTA)
                print(
                    f"| {steps} | {epochs} | {sigma} | {claim:.2f} | {passes(steps, epochs, sigma):.2f} |", flush=True
                )


if __name__ == "__main__":
    main()
