"""The named-pair race's ranking: a classifier's held-out log-likelihood gain (audit.engine.separability) and the
race score that puts a decisive projected ε first (audit.engine.pair_search.race_score). Seeded generators; each
inequality below holds with a margin of several standard errors of the gain at these sizes."""

import re

import numpy as np
import pytest

from audit.engine.pair_search import DECISIVE_PROJECTION, choose_named_pair, race_score
from audit.engine.separability import (
    RACE_COLUMNS,
    TAIL_RANKING_RELEASES,
    SeparabilityFeatures,
    held_out_log_likelihood_gain,
    separation,
)

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
    decisive, _, _ = race_score(impossible, never, ["y"], 20_000, ALPHA, {"y": 0.0})
    assert decisive >= DECISIVE_PROJECTION
    small = {"y": (rng.standard_normal(n) + 0.1)[:, None]}
    decisive, tail, gain = race_score(small, never, ["y"], 20_000, ALPHA, {"y": 0.0})
    assert decisive == 0.0 and tail == 0.0 and gain > -0.01  # 2,000 releases: below the tail's ranking size


def _with_tail_leak(y, rng):
    """Standard normal releases ``y`` with a share (e^0.5 − 1) · 2 % / 98 % of them redrawn from the top 2 %: the
    top 2 % then holds e^0.5 times the mass it holds under the standard normal, every other release e^−0.013 times."""
    from scipy.stats import norm

    moved = rng.random(y.size) < 0.02 * (np.exp(0.5) - 1.0) / (1.0 - 0.02)
    y[moved] = norm.isf(0.02 * rng.random(moved.sum()))
    return y


def test_the_tail_projection_prefers_the_tail_that_certifies_over_the_larger_whole_divergence():
    """A pair whose leak lies in the top 2 % of a Gaussian (likelihood ratio e^0.5 there, KL 0.0036 nats) against a
    pair shifted by 0.095 everywhere (KL 0.0045): over seeds 0–39 the gain ranks the shift first in all 40 (held-out
    means 0.0003 and 0.0011 nats), the tail projection at 2·10⁵ certified releases the tail in all 40 (means 0.39 and
    0.16)."""
    rng = np.random.default_rng(5)
    n = 40_000
    assert n >= TAIL_RANKING_RELEASES
    tail = _with_tail_leak(rng.standard_normal(n), rng)
    shift = rng.standard_normal(n) + 0.095
    tail_score, tail_gain = separation(tail[:, None], rng.standard_normal((n, 1)), 200_000, ALPHA)
    shift_score, shift_gain = separation(shift[:, None], rng.standard_normal((n, 1)), 200_000, ALPHA)
    assert tail_score > shift_score
    assert shift_gain > tail_gain


def test_below_its_size_the_tail_ranks_nothing_and_noise_projects_far_less_than_a_leak():
    """At 10⁴ releases per side over 40 seeds two identical sides project a mean 0.023 (at most 0.145), a shift of 0.2
    of both coordinates a mean 0.56 (at least 0.37): the leak first in 40 of 40."""
    rng = np.random.default_rng(6)
    below = TAIL_RANKING_RELEASES - 1
    pos, neg = rng.standard_normal((below, 2)) + 0.2, rng.standard_normal((below, 2))
    tail, gain = separation(pos, neg, 50_000, ALPHA)
    assert tail == 0.0 and gain == held_out_log_likelihood_gain(pos, neg) > 0.005
    n = TAIL_RANKING_RELEASES
    noise, _ = separation(rng.standard_normal((n, 2)), rng.standard_normal((n, 2)), 50_000, ALPHA)
    leak, _ = separation(rng.standard_normal((n, 2)) + 0.2, rng.standard_normal((n, 2)), 50_000, ALPHA)
    assert noise < 0.2 < leak


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


class TailOrShift:
    """A Gaussian release: "base" as it is, "shift" moved by 0.095, "tail" with an extra e^0.5 − 1 of its top 2 %
    (the pairs of the tail-projection test above)."""

    name, channels = "tail-or-shift", ("y",)

    def release(self, secret, n, rng, *, broadcast=None):
        y = rng.standard_normal(n)
        if secret == "shift":
            y += 0.095
        elif secret == "tail":
            y = _with_tail_leak(y, rng)
        return {"y": y}


def test_a_race_of_enough_releases_keeps_the_pair_whose_tail_certifies():
    """Two pairs raced on 4·10⁴ releases each: the tail pair survives (in 40 of 40 races, seeds 0–39), though the
    shift's releases differ more in the whole (its held-out gain is the larger: the gain alone would keep it)."""
    pairs = {"shift": ("shift", "base"), "tail": ("tail", "base")}
    name, found, _ = choose_named_pair(
        TailOrShift(),
        ("y",),
        ("y",),
        pairs,
        np.random.SeedSequence(7),
        n=40_000,
        n_cert=200_000,
        alpha=ALPHA,
        deltas={"y": 0.0},
    )
    assert name == "tail" and "held-out tail projection" in found.relation
    scores = {
        m[0]: (float(m[1]), float(m[2])) for m in re.findall(r"(shift|tail) (-?[\d.]+) / (-?[\d.]+) /", found.relation)
    }
    assert scores["shift"][0] > scores["tail"][0]  # gain
    assert scores["tail"][1] > scores["shift"][1]  # tail projection


class CountingDraws(Shifted):
    """:class:`Shifted`, counting the releases drawn of each secret."""

    def __init__(self):
        self.drawn: dict[float, list[int]] = {}

    def release(self, secret, n, rng, *, broadcast=None):
        self.drawn.setdefault(secret, []).append(n)
        return super().release(secret, n, rng)


def test_pairs_that_share_an_input_share_its_releases_within_the_same_budget():
    """Four pairs of one base input and its four neighbours: the race draws each of the five inputs once per round
    (the base for all four pairs), all within the 2·P·n releases ranking each pair on n per side would cost, and the
    survivor's pool holds every release its two inputs drew."""
    system = CountingDraws()
    pairs = {name: (0.0, shift) for name, shift in (("a", 0.02), ("b", 0.04), ("c", 0.3), ("d", 0.06))}
    n = 1_000
    name, _, pool = choose_named_pair(
        system, ("y",), ("y",), pairs, np.random.SeedSequence(5), n=n, n_cert=20_000, alpha=ALPHA, deltas={"y": 0.0}
    )
    assert name == "c"
    assert len(system.drawn[0.0]) == 2  # one draw of the base per round (two rounds), not one per pair
    assert system.drawn[0.0][0] == 2 * n * 4 // 2 // 5  # the first round's releases over the five inputs
    assert sum(sum(v) for v in system.drawn.values()) <= 2 * n * len(pairs)
    pooled = [sum(len(rows) for rows in pool.sides[side]["y"]) for side in (0, 1)]
    assert pooled == [sum(system.drawn[0.0]), sum(system.drawn[0.3])]


def test_a_secret_key_meets_equal_values_and_only_the_same_object():
    from audit.engine.pair_search import secret_key

    class Opaque:
        def __repr__(self):
            return "same"

    one, other = Opaque(), Opaque()
    assert secret_key((1, 2)) == secret_key((1, 2)) != secret_key((1.0, 2))
    assert secret_key(np.array([0.5, 1.0])) == secret_key(np.array([0.5, 1.0])) != secret_key(np.array([0.5, 2.0]))
    assert secret_key({"b": [1], "a": 2}) == secret_key({"a": 2, "b": [1]})
    assert secret_key(one) == secret_key(one) != secret_key(other)


def test_a_pairs_two_inputs_draw_on_different_streams_and_its_neighbours_share_one():
    """DP-Sniper's 16 pairs (each pattern and its swap, 10 inputs): the two inputs of every pair on different
    streams; the base on stream 0, every input it is paired with on stream 1; a triangle needs a third."""
    from audit.engine.pair_search import input_streams, secret_key
    from pgc.catalogue import catalogue_system

    pairs = [tuple(secret_key(s) for s in pair) for pair in catalogue_system("SVT6").canaries().values()]
    streams = input_streams(pairs)
    assert len(streams) == 10
    assert all(streams[a] != streams[b] for a, b in pairs)
    base = secret_key((1.0,) * 10)  # the all-ones input, in 14 of the 16 pairs
    assert streams[base] == 0
    assert {streams[b] for a, b in pairs if a == base} == {1}
    assert sorted(set(input_streams([("a", "b"), ("b", "c"), ("c", "a")]).values())) == [0, 1, 2]
