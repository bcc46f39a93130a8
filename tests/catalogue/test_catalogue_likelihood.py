"""The exact likelihoods of the broken catalogue algorithms (pgc.catalogue.likelihood) against the algorithms'
own samplers, and the oracle bound of ``pgc bench catalogue-oracle`` against hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pgc.benchmarks.catalogue_oracle import event_probabilities, split_oracle_bound
from pgc.catalogue import BROKEN, BY_NAME, input_pairs
from pgc.catalogue.likelihood import log_likelihood

N = 40_000


@pytest.mark.parametrize("name", BROKEN)
def test_the_likelihood_ratio_has_mean_one_under_the_other_input(name):
    """E_{o ~ a′}[p_a(o)/p_a′(o)] = P_a(outputs a′ can produce) ≤ 1, = 1 where every output of a is one of a′'s:
    a wrong normalisation, a swapped sign or a misread parameter moves the mean by far more than its sampling
    error (computed from the same draws; 6 standard errors: a false failure below 1e-8 per algorithm)."""
    algorithm = BY_NAME[name]
    f = log_likelihood(name, algorithm.parameters)
    for a, b in list(input_pairs(algorithm.domain).values())[:2]:
        a, b = np.asarray(a, float), np.asarray(b, float)
        out = algorithm.run(b, N, np.random.default_rng(7))
        ratio = np.exp(np.clip(f(a, out) - f(b, out), -700, 50))
        mean, se = ratio.mean(), ratio.std() / math.sqrt(N)
        assert mean <= 1 + 6 * se + 2e-3, (name, a, b, mean, se)
        if name not in ("SVT5", "ReportNoisyMax4"):  # both reach outputs one input cannot produce
            assert abs(mean - 1) <= 6 * se + 2e-3, (name, a, b, mean, se)


def test_svt4_pattern_masses_match_the_sampler():
    """SVT4's answer patterns (first above at query i, or none): the integrated masses against frequencies of
    200,000 runs, each within 5 binomial standard errors."""
    algorithm = BY_NAME["SVT4"]
    a = np.asarray([1.0] * 5 + [0.0] * 5)
    out = algorithm.run(a, 200_000, np.random.default_rng(3))
    codes = np.where(np.isnan(out), 2, out).astype(int)
    patterns, counts = np.unique(codes, axis=0, return_counts=True)
    mass = np.exp(log_likelihood("SVT4", algorithm.parameters)(a, np.where(patterns == 2, np.nan, patterns)))
    assert abs(mass.sum() - 1) < 1e-3  # every pattern that occurs (all 11 do at this size)
    freq = counts / counts.sum()
    assert np.all(np.abs(freq - mass) <= 5 * np.sqrt(mass * (1 - mass) / counts.sum()) + 1e-4)


def test_oracle_bound_of_a_known_event_matches_clopper_pearson():
    """An event of probability 0.5 under a and 0.5·e^−1 under a′ at 10⁴ per side: the bound is the larger of the
    two exact certificates of the expected counts (the split one at its best α split, the paired one at the
    expected discordant pairs), a little below 1, and grows towards 1 with n."""
    from audit.certification.bounds import epsilon_lower_bound
    from audit.certification.paired import expected_discordant, paired_epsilon_lower_bound

    p_a, p_b = np.array([0.5]), np.array([0.5 * math.exp(-1)])
    split = max(
        epsilon_lower_bound(1e4 * p_b[0], 1e4, 5e3, 1e4, 0.05, 0.0, share)
        for share in (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
    )
    paired = paired_epsilon_lower_bound(*expected_discordant(5e3, 1e4 * p_b[0], 1e4), 1e4 * p_b[0], 1e4, 0.05)
    expected = max(split, paired)
    assert paired > split
    known = (p_a, p_b)  # the same probabilities choose the event and bound it

    def bound(n: int) -> float:
        return split_oracle_bound(known, known, n, 0.05)

    assert bound(10_000) == pytest.approx(expected)
    assert 0.9 < bound(10_000) < bound(1_000_000) < 1.0


def test_event_probabilities_are_tail_rates_of_the_losses():
    taus, p_a, p_b = event_probabilities(np.array([0.0, 1.0, 2.0, 3.0]), np.array([-1.0, 0.0, 1.0, 2.0]), points=5)
    i = int(np.flatnonzero(taus == 2.0)[0])
    assert (p_a[i], p_b[i]) == (0.5, 0.25)
    assert taus[-1] == math.inf and p_a[-1] == 0.0 and p_b[-1] == 0.0
