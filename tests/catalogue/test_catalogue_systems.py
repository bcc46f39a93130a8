"""The catalogue's Systems: shapes and the NaN format of every algorithm, DP-Sniper's input pairs, and known
numbers of the Laplace mechanism, report noisy max, the truncated geometric mechanism and RAPPOR."""

import math

import numpy as np
import pytest

from pgc.catalogue import BROKEN, CATALOGUE, CORRECT, catalogue_system
from pgc.catalogue.algorithms import geometric_cdf_table, rappor_epsilon, report_noisy_max1, report_noisy_max2
from pgc.catalogue.murmur import murmur3_32
from pgc.contracts import HasCanaries, System
from pgc.errors import UserError

N = 2_000


def test_twenty_algorithms_nine_broken():
    assert len(CATALOGUE) == 20 and len(BROKEN) == 9 and len(CORRECT) == 11
    assert set(BROKEN) == {
        "NoisyHist2",
        "ReportNoisyMax3",
        "ReportNoisyMax4",
        "SVT3",
        "SVT4",
        "SVT5",
        "SVT6",
        "SVT34Parallel",
        "PrefixSum",
    }


@pytest.mark.parametrize("algorithm", CATALOGUE, ids=lambda a: a.name)
def test_release_shape_and_nan_format(algorithm, rng):
    system = catalogue_system(algorithm.name)
    assert isinstance(system, System) and isinstance(system, HasCanaries)
    pairs = system.canaries()
    assert len(pairs) == (16 if algorithm.domain.component_wise else 4)
    for secret in next(iter(pairs.values())):
        out = system.release(secret, N, rng)["output"]
        assert out.shape == (N, algorithm.width) and out.dtype == np.float64
        assert not np.any(np.isinf(out))
        assert np.any(np.isnan(out)) == algorithm.has_nan  # NaN only where ⊥ or an entry after stopping
        theirs = system.to_dpsniper(out)
        assert theirs.shape == out.shape and not np.any(np.isnan(theirs))


@pytest.mark.parametrize("name, c", [("SVT1", 1), ("SVT2", 1), ("SVT4", 1)])
def test_boolean_svt_stops_after_c_answers_above(name, c, rng):
    out = catalogue_system(name).release((2.0,) * 10, N, rng)["output"]
    assert set(np.unique(out[~np.isnan(out)])) <= {0.0, 1.0}
    ones_before = np.cumsum(out == 1.0, axis=1) - (out == 1.0)
    assert np.array_equal(np.isnan(out), ones_before >= c)  # absent exactly after the c-th answer above


def test_svt3_releases_values_and_dpsniper_sentinels(rng):
    system = catalogue_system("SVT3")
    out = system.release((2.0,) * 10, N, rng)["output"]
    assert np.all(np.sum(~np.isnan(out), axis=1) <= 1)  # c = 1: at most one value per run
    theirs = system.to_dpsniper(out)
    answered = np.cumsum(~np.isnan(out), axis=1)
    assert np.all(theirs[np.isnan(out) & (answered == 0)] == -1000.0)  # ⊥ before the answer
    assert np.all(theirs[np.isnan(out) & (answered >= 1)] == -2000.0)  # absent after it


def test_first_pairs_are_dpsniper_patterns():
    pairs = catalogue_system("SVT1").canaries()
    assert list(pairs)[:4] == ["one above", "one above, swapped", "one below", "one below, swapped"]
    assert pairs["one above"] == ((1.0,) * 10, (0.0,) + (1.0,) * 9)
    assert pairs["X shape"] == ((1.0,) * 5 + (0.0,) * 5, (0.0,) * 5 + (1.0,) * 5)
    assert catalogue_system("RAPPOR").canaries()["one below"] == ((1,), (2,))


def test_laplace_mean_and_scale(rng):
    """Lap(1/0.1) around the input: mean 1 and mean absolute deviation 10 (5 standard errors each)."""
    out = catalogue_system("LaplaceMechanism").release((1.0,), 200_000, rng)["output"][:, 0]
    assert abs(out.mean() - 1.0) < 5 * 10 * math.sqrt(2 / 200_000)
    assert abs(np.abs(out - 1.0).mean() - 10.0) < 5 * 10 / math.sqrt(200_000)


def test_noisy_max_argmax_frequencies(rng):
    """Equal inputs: each index 1/5 (5 standard errors); a gap of 500 over Lap(20) noise: always the largest."""
    for fn in (report_noisy_max1, report_noisy_max2):
        idx = fn(np.zeros(5), 100_000, rng)[:, 0]
        freq = np.bincount(idx.astype(int), minlength=5) / idx.size
        assert np.all(np.abs(freq - 0.2) < 5 * math.sqrt(0.16 / idx.size))
        assert np.all(fn(np.array([0.0, 500.0, 0.0, 0.0, 0.0]), 10_000, rng)[:, 0] == 1.0)


def test_truncated_geometric_meets_its_claim_exactly():
    """GeoSample(0.1, 5): the largest log-ratio over neighbouring counts is ln(1 + 2^−3), the claim."""
    pmf = [np.diff(np.concatenate([[0], f])) / d for f, d in (geometric_cdf_table(c) for c in range(6))]
    exact = max(abs(math.log(pmf[c][z] / pmf[c + 1][z])) for c in range(5) for z in range(6))
    assert exact == pytest.approx(math.log(1.125), rel=1e-12)
    assert catalogue_system("TruncatedGeometric").claim.epsilon == pytest.approx(math.log(1.125))


def test_rappor_epsilons():
    """q* = 0.5125, p* = 0.4875 for f = 0.75, p = 0.45, q = 0.55: 8·ln(0.5125/0.4875); one-time 8·ln(0.525/0.475)."""
    assert rappor_epsilon(4, 0.75, 0.45, 0.55) == pytest.approx(8 * math.log(0.5125 / 0.4875))
    assert rappor_epsilon(4, 0.95, None, None) == pytest.approx(8 * math.log(0.525 / 0.475))


def test_murmur3_matches_mmh3_vectors():
    assert murmur3_32("") == 0 and murmur3_32("", 1) == 1364076727
    assert murmur3_32("foo") == -156908512 and murmur3_32("hello") == 613153351
    assert murmur3_32("-10", 3) == -2053170016


def test_bad_secret_and_name_are_user_errors(rng):
    with pytest.raises(UserError, match="5 number"):
        catalogue_system("NoisyHist1").release((1, 2), 10, rng)
    with pytest.raises(UserError, match="ints in"):
        catalogue_system("NoisyHist1").release((1, 2, 3, 4, 0.5), 10, rng)
    with pytest.raises(UserError, match="unknown catalogue algorithm"):
        catalogue_system("SVT7")
