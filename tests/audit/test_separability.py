"""The named-pair race's ranking: a classifier's held-out log-likelihood gain (audit.engine.separability) and the
race score that puts a decisive projected ε first (audit.engine.pair_search.race_score). Seeded generators; each
inequality below holds with a margin of several standard errors of the gain at these sizes."""

import numpy as np
import pytest

from audit.engine.pair_search import DECISIVE_PROJECTION, choose_named_pair, race_score
from audit.engine.separability import RACE_COLUMNS, SeparabilityFeatures, held_out_log_likelihood_gain

ALPHA = 0.05


def _gain(pos, neg):
    return held_out_log_likelihood_gain(np.asarray(pos), np.asarray(neg))


def test_the_gain_grows_with_the_shift_and_is_nothing_where_the_sides_agree():
    rng = np.random.default_rng(0)
    base = rng.standard_normal((4_000, 3))
    gains = [_gain(rng.standard_normal((4_000, 3)) + shift, base) for shift in (0.0, 0.2, 0.5)]
    assert abs(gains[0]) < 0.003
    assert 0.003 < gains[1] < gains[2]
    assert gains[2] < np.log(2.0)


def test_the_gain_sees_a_spread_that_differs_and_entries_that_go_missing():
    rng = np.random.default_rng(1)
    n = 4_000
    same = _gain(rng.standard_normal((n, 4)), rng.standard_normal((n, 4)))
    scale = _gain(1.4 * rng.standard_normal((n, 4)), rng.standard_normal((n, 4)))
    assert scale > same + 0.02
    pos, neg = rng.standard_normal((n, 4)), rng.standard_normal((n, 4))
    pos[rng.random((n, 4)) < 0.3] = np.nan
    neg[rng.random((n, 4)) < 0.1] = np.nan
    assert _gain(pos, neg) > same + 0.02


def test_a_wide_release_keeps_its_most_telling_columns_and_its_norm():
    rng = np.random.default_rng(2)
    width, n = 5 * RACE_COLUMNS, 2_000
    pos, neg = 1.1 * rng.standard_normal((n, width)), rng.standard_normal((n, width))
    features = SeparabilityFeatures(pos, neg)
    assert features.columns.size == RACE_COLUMNS and features.summarize
    assert features(pos).shape == (n, 2 * RACE_COLUMNS + 2)
    assert _gain(pos, neg) > 0.05  # the squared norm sums a spread of 1.1 over 320 columns


def test_too_few_releases_rank_nothing_and_huge_ones_still_rank():
    assert held_out_log_likelihood_gain(np.ones((3, 2)), np.zeros((3, 2))) == 0.0
    rng = np.random.default_rng(4)
    huge = 1e200 * rng.standard_normal((500, 70))  # its squares and its squared norm overflow
    gain = held_out_log_likelihood_gain(huge + 1e200, huge)
    assert np.isfinite(gain) and gain > 0.1


def test_a_decisive_projection_ranks_first_and_a_small_leak_leaves_it_to_the_gain():
    rng = np.random.default_rng(3)
    n = 2_000
    impossible = {"y": np.concatenate([rng.standard_normal(n - 200), np.full(200, 10.0)])[:, None]}
    never = {"y": rng.standard_normal(n)[:, None]}
    decisive, _ = race_score(impossible, never, ["y"], 20_000, ALPHA, {"y": 0.0})
    assert decisive >= DECISIVE_PROJECTION
    small = {"y": (rng.standard_normal(n) + 0.1)[:, None]}
    decisive, gain = race_score(small, never, ["y"], 20_000, ALPHA, {"y": 0.0})
    assert decisive == 0.0 and gain > -0.01


class Shifted:
    """A Gaussian release shifted by the secret."""

    name, channels = "shifted", ("y",)

    def release(self, secret, n, rng, *, broadcast=None):
        return {"y": secret + rng.standard_normal(n)}


@pytest.mark.parametrize("seed", range(4))
def test_the_race_keeps_the_pair_that_lies_furthest_apart(seed):
    pairs = {"near": (0.0, 0.05), "middle": (0.0, 0.1), "far": (0.0, 0.3), "same": (0.0, 0.0)}
    name, found, pool = choose_named_pair(
        Shifted(),
        ("y",),
        ("y",),
        pairs,
        np.random.SeedSequence(seed),
        n=1_000,
        n_cert=20_000,
        alpha=ALPHA,
        deltas={"y": 0.0},
    )
    assert name == "far" and pool.raced
    assert found.objective > 0.0 and "held-out log-likelihood gain" in found.relation
