"""Pure math of attack evaluation against hand-computed values."""

import math

import pytest

from attacks.bounds import chance_level, clopper_pearson, ldp_ceiling, normalized_advantage, regression_baseline


@pytest.mark.parametrize(
    "eps,k,n,expected",
    [
        (1.0, 1, 3, math.e / (math.e + 2)),  # the 0.576
        (0.0, 1, 3, 1 / 3),  # ε = 0: chance
        (math.log(3), 1, 2, 0.75),  # e^ε = 3: 3 / (3 + 1)
        (math.log(2), 2, 5, 0.5),  # e^{kε} = 4: 4 / (4 + 4)
        (0.1, 10, 3, math.e / (math.e + 2)),  # k linked submissions compose to kε
        (math.inf, 1, 3, 1.0),
    ],
)
def test_ldp_ceiling_hand_computed(eps, k, n, expected):
    assert ldp_ceiling(eps, k, n) == pytest.approx(expected, abs=1e-12)


def test_ldp_ceiling_is_0576_at_paper_setting_and_stable_for_large_k_eps():
    assert round(ldp_ceiling(1.0, 1, 3), 3) == 0.576
    assert ldp_ceiling(1000.0, 10, 3) == 1.0  # no overflow


@pytest.mark.parametrize("args", [(1.0, 0, 3), (1.0, 1, 1), (-1.0, 1, 3), (math.nan, 1, 3), (1.0, 1.5, 3)])
def test_ldp_ceiling_rejects_bad_input(args):
    with pytest.raises(ValueError):
        ldp_ceiling(*args)


def test_clopper_pearson_known_values():
    lo, hi = clopper_pearson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-9)  # 0.3085
    lo, hi = clopper_pearson(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 10), abs=1e-9)
    lo, hi = clopper_pearson(5, 10)
    assert (lo, hi) == pytest.approx((0.187086, 0.812914), abs=1e-6)
    with pytest.raises(ValueError):
        clopper_pearson(11, 10)


def test_chance_advantage_and_regression_baseline():
    assert chance_level(3) == pytest.approx(1 / 3)
    assert normalized_advantage(1 / 3, 1 / 3) == 0.0
    assert normalized_advantage(1.0, 1 / 3) == pytest.approx(1.0)
    assert normalized_advantage(2 / 3, 1 / 3) == pytest.approx(0.5)
    base = regression_baseline(9.0, 11.0)
    assert base["mae"] == pytest.approx(0.5) and base["rmse"] == pytest.approx(2 / math.sqrt(12))
