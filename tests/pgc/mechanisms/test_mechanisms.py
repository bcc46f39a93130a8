"""Mechanisms: clip bounds, noise laws, bit-flip probabilities, M's law, non-finite rule, registry.

Statistical tests use seeded generators; each states its false-failure probability (α = 1e-4 unless said).
"""

import math

import numpy as np
import pytest
from scipy import stats

from pgc.mechanisms import (
    MECHANISMS,
    SQRT3,
    Gaussian,
    Laplace,
    Mechanism,
    NoNoise,
    ProjectedRandomSign,
    achlioptas_matrices,
    bit_flip_plus_probability,
    l1_clip,
    make_mechanism,
    prs_reduced_dim,
    register_mechanism,
    sanitize,
    split_rounds,
)

ALPHA = 1e-4


def test_protocol_is_satisfied_by_builtins():
    for m in (Laplace(1.0), ProjectedRandomSign(2.0), NoNoise()):
        assert isinstance(m, Mechanism)


def test_l1_clip_exact(rng):
    g = rng.normal(size=(500, 112)) * rng.choice([1e-4, 1.0, 100.0], size=(500, 1))
    out = l1_clip(g, 0.005)
    norms = np.abs(out).sum(axis=1)
    assert np.all(norms <= 0.005 * (1 + 1e-12))
    big = np.abs(g).sum(axis=1) > 0.005
    np.testing.assert_allclose(norms[big], 0.005, rtol=1e-12)  # scaled exactly onto the sphere
    np.testing.assert_array_equal(out[~big], g[~big])  # small gradients untouched
    # direction kept
    np.testing.assert_allclose(out[big] / norms[big, None], g[big] / np.abs(g[big]).sum(1, keepdims=True), rtol=1e-12)


def test_laplace_clip_is_half_C_and_sensitivity_C(rng):
    m = Laplace(epsilon=1.0, clip=0.01)
    a = m.clip_only(rng.normal(size=(100, 112)))
    b = m.clip_only(rng.normal(size=(100, 112)))
    assert np.all(np.abs(a - b).sum(axis=1) <= 0.01 + 1e-15)  # eq. 20


def test_laplace_noise_law_ks(rng):
    m = Laplace(epsilon=2.0, clip=0.01)
    g = np.zeros((2000, 112))
    g[:, 3] = 1.0  # clipped to 0.005 on coordinate 3
    out = m(g, rng)
    noise = out.copy()
    noise[:, 3] -= 0.005
    # scale C/ε = 0.005, all 224000 coordinates i.i.d.: KS test at α = 1e-4
    assert stats.kstest(noise.ravel(), stats.laplace(scale=0.005).cdf).pvalue > ALPHA
    # a 5% wrong scale is detected by the same test
    assert stats.kstest(noise.ravel(), stats.laplace(scale=0.00525).cdf).pvalue < ALPHA


def test_mechanisms_never_mutate_input(rng):
    g = rng.normal(size=(20, 112))
    g[3, 5] = np.nan
    keep = g.copy()
    for m in (Laplace(1.0), ProjectedRandomSign(10.0), NoNoise(), NoNoise(clip=None)):
        m(g, rng)
        np.testing.assert_array_equal(g, keep)


def test_prs_reduced_dim_rule():
    assert [prs_reduced_dim(e, 112) for e in (0.5, 1, 2, 2.5, 5, 7.4, 10, 1000)] == [1, 1, 1, 1, 2, 2, 4, 112]


def test_bit_flip_probability_matches_eq24():
    e = 0.7
    ub = np.array([-1.0, -0.3, 0.0, 0.4, 1.0])
    expected = 1 / (math.exp(e) + 1) + (ub + 1) / 2 * (math.exp(e) - 1) / (math.exp(e) + 1)
    np.testing.assert_allclose(bit_flip_plus_probability(ub, 1.0, e), expected, rtol=1e-13)
    # the extreme ratio is exactly e^ε'
    p = bit_flip_plus_probability(np.array([1.0, -1.0]), 1.0, e)
    assert math.isclose(p[0] / p[1], math.exp(e), rel_tol=1e-12)
    assert math.isclose((1 - p[1]) / (1 - p[0]), math.exp(e), rel_tol=1e-12)
    # no overflow for huge ε'
    assert bit_flip_plus_probability(np.array([1.0]), 1.0, 5000.0)[0] == 1.0


def test_achlioptas_law_chi_square(rng):
    m = achlioptas_matrices(rng, 200, 4, 112)
    values, counts = np.unique(m, return_counts=True)
    np.testing.assert_allclose(values, [-SQRT3, 0.0, SQRT3])
    expected = m.size * np.array([1 / 6, 2 / 3, 1 / 6])
    assert stats.chisquare(counts, expected).pvalue > ALPHA


def test_prs_fresh_matrix_per_submission(rng):
    rel = ProjectedRandomSign(epsilon=10.0).release(np.zeros((2000, 112)), rng)
    assert rel.matrices.shape == (2000, 4, 112)
    # entries of different submissions are independent: the agreement rate of M_i and M_{i+1}
    # equals that of independent draws (2/3)^2 + 2 (1/6)^2 = 1/2 (binomial test, α = 1e-4)
    agree = (rel.matrices[1:] == rel.matrices[:-1]).sum()
    n = rel.matrices[1:].size
    assert stats.binomtest(int(agree), n, 0.5).pvalue > ALPHA


def test_prs_bit_probabilities_match_eq24(rng):
    # fixed projected values ū: feed g so that M g is whatever it is, then compare frequencies with
    # eq. 24 given the recorded ū (per-sample probabilities -> compare the sum with a normal approx)
    mech = ProjectedRandomSign(epsilon=5.0, clip=1.0)  # d̂ = 2, ε' = 2.5
    g = rng.normal(size=(40000, 112)) * 0.05
    rel = mech.release(g, rng)
    p = bit_flip_plus_probability(rel.clipped, 1.0, 2.5)
    plus = rel.signs > 0
    assert np.all(np.abs(rel.signs) == 1.0)
    z = (plus.sum() - p.sum()) / math.sqrt((p * (1 - p)).sum())
    assert abs(z) < stats.norm.isf(ALPHA / 2)
    # saturated inputs: exactly e^ε'/(1+e^ε') for +C (binomial test)
    big = np.zeros((20000, 112))
    big[:, :] = 10.0
    rel = ProjectedRandomSign(epsilon=1.0, clip=1.0).release(big, rng)  # d̂ = 1
    sat = np.abs(rel.clipped) == 1.0
    k = int(((rel.signs == rel.clipped) & sat).sum())
    assert stats.binomtest(k, int(sat.sum()), math.e / (1 + math.e)).pvalue > ALPHA


def test_prs_output_is_m_transpose_signs(rng):
    rel = ProjectedRandomSign(epsilon=10.0, clip=0.5).release(rng.normal(size=(5, 112)), rng)
    np.testing.assert_allclose(rel.output, np.einsum("nkd,nk->nd", rel.matrices, rel.signs))
    assert set(np.unique(rel.signs)) <= {-0.5, 0.5}
    assert np.all(np.abs(rel.clipped) <= 0.5)  # eq. 23


def test_nonfinite_rule_rows_become_zero(rng):
    g = rng.normal(size=(6, 112))
    g[1, 0] = np.nan
    g[4, 111] = -np.inf
    s = sanitize(g)
    assert np.all(s[[1, 4]] == 0) and np.array_equal(s[[0, 2, 3, 5]], g[[0, 2, 3, 5]])
    for m in (Laplace(1.0), ProjectedRandomSign(2.0), NoNoise()):
        out = m(g, rng)
        assert np.all(np.isfinite(out))
    # a NaN row is released exactly like a zero row (same noise draws)
    a = Laplace(1.0)(g[[1]], np.random.default_rng(5))
    b = Laplace(1.0)(np.zeros((1, 112)), np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)


def test_nonoise_clip_readings(rng):
    g = rng.normal(size=(3, 112))
    np.testing.assert_allclose(np.abs(NoNoise()(g, rng)).sum(1), 0.005)
    np.testing.assert_array_equal(NoNoise(clip=None)(g, rng), g)
    assert NoNoise().epsilon == math.inf


def test_split_rounds():
    assert split_rounds(Laplace(2.0, clip=0.1), 4) == Laplace(0.5, clip=0.1)
    assert split_rounds(ProjectedRandomSign(10.0, reduced_dim=3), 5).epsilon == 2.0
    assert split_rounds(NoNoise(), 3) == NoNoise()
    with pytest.raises(ValueError):
        split_rounds(Laplace(1.0), 0)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, "1"])
def test_bad_epsilon(bad):
    with pytest.raises(ValueError, match="epsilon"):
        Laplace(bad)
    with pytest.raises(ValueError, match="epsilon"):
        ProjectedRandomSign(bad)


@pytest.mark.parametrize("bad", [0.0, -0.1, math.nan, math.inf])
def test_bad_clip(bad):
    with pytest.raises(ValueError, match="clip"):
        Laplace(1.0, clip=bad)
    with pytest.raises(ValueError, match="clip"):
        make_mechanism("prs", 1.0, clip=bad)


def test_bad_shapes_and_rng(rng):
    m = Laplace(1.0)
    with pytest.raises(ValueError, match="2-D"):
        m(np.zeros(112), rng)
    with pytest.raises(ValueError, match="2-D"):
        m(np.zeros((2, 3, 4)), rng)
    with pytest.raises(TypeError, match="Generator"):
        m(np.zeros((2, 112)), 42)
    with pytest.raises(ValueError, match="exceeds"):
        ProjectedRandomSign(1.0, reduced_dim=10)(np.zeros((2, 5)), rng)


def test_registry():
    assert set(MECHANISMS) >= {"laplace", "prs", "none"}
    assert make_mechanism("laplace", 2.0) == Laplace(2.0, clip=0.01)
    assert make_mechanism("prs", 2.0) == ProjectedRandomSign(2.0, clip=1.0)
    assert make_mechanism("none") == NoNoise(clip=0.01)
    assert make_mechanism("none", clip=math.inf) == NoNoise(clip=None)
    with pytest.raises(ValueError, match="unknown mechanism"):
        make_mechanism("no-such-mechanism", 1.0)
    register_mechanism(
        "test-scaled-laplace", lambda epsilon, clip=None, reduced_dim=None: Laplace(epsilon, clip or 1.0)
    )
    try:
        assert make_mechanism("test-scaled-laplace", 1.0).clip == 1.0
        with pytest.raises(ValueError, match="already"):
            register_mechanism("laplace", lambda **kw: None)
    finally:
        del MECHANISMS["test-scaled-laplace"]


def test_secure_laplace_snaps_to_grid_and_keeps_the_law(rng):
    from pgc.mechanisms import SNAP_BOUND_SCALES, snapping_grid

    m = Laplace(epsilon=2.0, clip=0.01, secure=True)
    assert snapping_grid(0.005) == 2.0**-7 and snapping_grid(0.0078125) == 0.0078125
    g = np.zeros((3000, 112))
    g[:, 0] = 1.0
    out = m(g, rng)
    grid = snapping_grid(m.noise_scale)
    np.testing.assert_array_equal(out, np.round(out / grid) * grid)  # every output is a grid point
    assert np.abs(out).max() <= 0.005 + SNAP_BOUND_SCALES * m.noise_scale
    # rounding to Λ adds at most Λ/2 per coordinate: the mean stays the clipped input (z-test, α = 1e-4)
    col = out[:, 0]
    z = (col.mean() - 0.005) / (col.std(ddof=1) / math.sqrt(col.size))
    assert abs(z) < stats.norm.isf(ALPHA / 2)
    assert make_mechanism("laplace-secure", 2.0) == m
    assert isinstance(m, Mechanism)


@pytest.mark.slow
def test_float_exact_audit_passes_secure_laplace():
    """In float-exact mode the auditor certifies ε_LB = 7.08 > 4 for the textbook float64 Laplace
    (`pgc bench audit --only float-exact`, results/audit/float-exact.txt); the snapping version must
    stay within its claim (flagged with probability ≤ 5 % at 95 % confidence)."""
    from audit import audit_mechanism

    secure = audit_mechanism(Laplace(4.0, secure=True), dim=112, samples=300_000, seed=0, float_exact=True)
    assert not secure.violation and secure.epsilon_lower_bound <= 4.0
    assert secure.epsilon_lower_bound > 3.0  # and the audit still has power: the bound is nearly tight


def test_compiled_laplace_draws_are_numpys_bit_for_bit():
    from pgc.a3c import kernel

    out = np.empty(112)
    kernel.privatize_row(
        kernel.MECH_LAPLACE, np.zeros(112), out, np.random.default_rng(9), 0.5, 0.01, 1, 0.0, np.zeros((1, 112))
    )
    np.testing.assert_array_equal(out, np.random.default_rng(9).laplace(0.0, 0.02, size=112))


@pytest.mark.parametrize(
    "mechanism, dim",
    [
        (Laplace(1.0), 112),
        (Laplace(0.7, clip=0.3, secure=True), 112),
        (ProjectedRandomSign(10.0), 112),
        (ProjectedRandomSign(3.0, clip=0.2, reduced_dim=5), 112),
        (NoNoise(), 112),
        (NoNoise(clip=None), 112),
        (Gaussian(2.0, 1e-5), 112),
        (Gaussian(0.5, 1e-3, clip=0.3, analytic=False), 112),
        (Gaussian(2.0, 1e-5), 131),
    ],
)
def test_compiled_row_equals_the_numpy_mechanism(mechanism, dim):
    """Same draws, same arithmetic: the L1 and L2 norms even follow numpy's pairwise summation order."""
    from pgc.a3c import kernel
    from pgc.a3c.twins import compiled_spec

    rows = np.random.default_rng(1).normal(size=(40, dim)) * np.logspace(-6, 1, 40)[:, None]  # clip off and on
    kind, eps, clip, d_hat, scale = compiled_spec(mechanism, dim)
    out = np.empty(dim)
    fast_rng, numpy_rng = np.random.default_rng(4), np.random.default_rng(4)
    for g in rows:  # one submission at a time, as the trainer calls it: the generators stay in step
        kernel.privatize_row(kind, g, out, fast_rng, eps, clip, d_hat, scale, np.zeros((d_hat, dim)))
        np.testing.assert_array_equal(out, mechanism(g[None, :], numpy_rng)[0])  # bit for bit
    assert compiled_spec(type("Sub", (Laplace,), {})(1.0), 112) is None  # subclasses take the Protocol path
