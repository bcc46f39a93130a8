"""The DP-Sniper re-implementation's pieces on known numbers: the feature transform, the threshold and its tie
probability, the estimate and the Clopper–Pearson bound, the scaled stage sizes, one training step, and DD-Search on
a pair of known ε."""

import math

import numpy as np
import pytest
from scipy.stats import beta
from statsmodels.stats.proportion import proportion_confint

from audit.peers import dp_sniper as ds
from pgc.errors import UserError


def test_flags_features_is_dpsnipers_example():
    x = np.array([[-3.0, -1.0, 4.0], [-3.0, 2.0, -3.0]])
    assert ds.flags_features(x, [-1.0]).tolist() == [[-3, 0, 4, 0, 1, 0], [-3, 2, -3, 0, 0, 0]]
    assert ds.flags_features(x, []) is x


def test_threshold_and_tie_probability_on_known_counts():
    """Descending [0.9, 0.8, 0.8, 0.8, 0.5], target 2.5: t = 0.8, one above it, three at it: q = 1.5/3."""
    p = np.array([0.9, 0.8, 0.8, 0.8, 0.5])
    assert ds.find_threshold(p, 2.5) == (0.8, 0.5)
    assert ds.attack_probabilities(p, 0.8, 0.5).sum() == pytest.approx(2.5)
    assert ds.find_threshold(p, 0.0) == (0.9, 0.0)
    assert ds.find_threshold(p, 7.0) == (0.5, 3.0)  # past the end: the smallest, as the authors index


def test_epsilon_estimate_cases():
    assert ds.epsilon_estimate(0.02, 0.01) == pytest.approx(math.log(2))
    assert ds.epsilon_estimate(0.01, 0.0) == math.inf and ds.epsilon_estimate(0.0, 0.01) == 0.0
    assert ds.epsilon_estimate(0.01, 0.02) == pytest.approx(-math.log(2))  # reported as it falls


def test_clopper_pearson_bounds_and_the_lower_bound():
    assert ds.clopper_pearson_lower(100, 0, 0.05) == 0.0 and ds.clopper_pearson_upper(100, 100, 0.05) == 1.0
    lo, hi = proportion_confint(30, 1000, alpha=0.1, method="beta")  # each end at 0.05
    assert ds.clopper_pearson_lower(1000, 30, 0.05) == pytest.approx(lo)
    assert ds.clopper_pearson_upper(1000, 30, 0.05) == pytest.approx(hi)
    # p1 = 0.02, p2 = 0.01 on 1e6 per side at confidence 0.9: each bound at 0.05, counts 20,000 and 10,000
    want = math.log(beta.ppf(0.05, 20_000, 980_001)) - math.log(beta.ppf(0.95, 10_001, 990_000))
    assert ds.epsilon_lower_bound(0.02, 0.01, 1_000_000, 0.9) == pytest.approx(want)
    assert 0.6 < want < math.log(2)


def test_scaled_config_keeps_the_authors_proportions():
    config = ds.scaled_config(100_000, 16, confidence=0.95)
    assert config.n_train == config.n == config.n_check == 1703
    assert config.n_final == int(1703 * 2e8 / 10.7e6)
    assert 0.99 * 100_000 <= config.releases_per_side(16) <= 100_000 and config.confidence == 0.95
    with pytest.raises(UserError):
        ds.scaled_config(1_000, 16)


def test_one_training_step_is_a_gradient_step():
    """From zero weights, one SGD step: θ = −lr·(Xᵀ(σ(0) − y)/N) on the standardised features (+ a bias column)."""
    x = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0.0, 0.0, 1.0, 1.0])
    config = ds.DPSniperConfig(epochs=1)
    model = ds.train_logistic(iter([(x, y)]), lambda d: (np.zeros(d), 0.0), config)
    z = np.hstack([(x - 1.5) / x.std(), np.ones((4, 1))])
    theta = -0.3 * z.T @ (0.5 - y) / 4
    assert np.allclose(np.append(model.weights, model.bias), theta)
    assert ds.class0_probabilities(model, np.array([[0.0], [3.0]])).tolist() == [
        round(1 - 1 / (1 + math.exp(-(w))), 3)
        for w in (theta[0] * -1.5 / x.std() + theta[1], theta[0] * 1.5 / x.std() + theta[1])
    ]


def test_dd_search_bounds_a_known_epsilon(rng):
    """Laplace(0, 1) vs Laplace(1, 1): ε = 1; DD-Search's bound lies below it and well above 0 (seeded)."""
    pairs = {"near": (0.0, 1.0), "same": (0.0, 0.0)}
    draw = ds.pair_draw(pairs, lambda mu, n: mu + rng.laplace(0.0, 1.0, size=(n, 1)))
    config = ds.DPSniperConfig(n_train=20_000, n=20_000, n_check=20_000, n_final=200_000, c=0.05)
    result = ds.dd_search(list(pairs), draw, config, ds.torch_like_init(rng))
    assert result.pair == "near" and 0.5 < result.epsilon_lower_bound < 1.0
    assert abs(result.per_pair["same"]) < 0.2
