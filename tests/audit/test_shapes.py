"""Leaks of every shape: scale, dependence, structure (absent entries, variable lengths) and a learned statistic,
read by the certified test; releases with absent entries accepted as algorithms produce them; the training split
that fits a small claim; a finite set of named pairs chosen on the search stream.

False-failure rates: every "violated" or "leaks" assertion is on a system whose leak is far above what the audit
needs at its size (seeded; the certified bound holds at 95 %, and each leak certifies several times its claim at
these sizes); every "consistent" or "not violated" assertion runs at STRICT = 1 − 1e-4.
"""

import re

import numpy as np
import pytest

from audit.certification.tester import SMALL_CLAIM_TRAINING, auto_train_fraction
from audit.engine.system_audit import AuditSettings, audit_system
from audit.statistics import SparseProjection, default_statistics, location_statistics, search_statistics
from audit.statistics.learned import LearnedClassifier
from audit.statistics.selection import select_statistic
from audit.statistics.shapes import (
    FITTED_FORM_MARGIN,
    SHAPES,
    AbsencePattern,
    AbsentAware,
    CovarianceDirections,
    GaussianScaleLikelihoodRatio,
    NormStatistic,
    PresenceCount,
    SquaredDeviation,
    SquaredStandardizedSum,
    covariance_difference_directions,
    for_absent_entries,
    shapes_of,
)
from pgc.contracts import PrivacyClaim

STRICT = 1 - 1e-4


class ScaleLeak:
    """Gaussian noise whose scale depends on the secret (a data-dependent normalizer)."""

    name, channels = "scale-leak", ("update",)

    def __init__(self, k=200, ratio=1.2, epsilon=1.0):
        self.k, self.ratio, self.claim = k, ratio, PrivacyClaim(epsilon, 1e-5, ("update",))

    def release(self, secret, n, rng, *, broadcast=None):
        return {"update": (self.ratio if secret else 1.0) * rng.standard_normal((n, self.k))}


class DependenceLeak:
    """Every marginal N(0, 1); under secret 1 the coordinates share a common factor (equicorrelation ρ)."""

    name, channels = "dependence-leak", ("update",)

    def __init__(self, k=20, rho=0.3, epsilon=1.0):
        self.k, self.rho, self.claim = k, rho, PrivacyClaim(epsilon, 0.0, ("update",))

    def release(self, secret, n, rng, *, broadcast=None):
        z = rng.standard_normal((n, self.k))
        if secret:
            z = np.sqrt(1 - self.rho) * z + np.sqrt(self.rho) * rng.standard_normal((n, 1))
        return {"update": z}


class CountLeak:
    """A Poisson number of Laplace reports (at most 10; absent ones NaN) whose rate depends on the secret."""

    name, channels = "count-leak", ("reports",)

    def __init__(self, rates=(1.0, 4.0), epsilon=0.5, ragged=False):
        self.rates, self.ragged, self.claim = rates, ragged, PrivacyClaim(epsilon, 0.0, ("reports",))

    def release(self, secret, n, rng, *, broadcast=None):
        m = np.minimum(rng.poisson(self.rates[secret], n), 10)
        if self.ragged:
            return {"reports": [rng.laplace(0.0, 1.0, k) for k in m]}
        values = rng.laplace(0.0, 1.0, (n, 10))
        values[np.arange(10)[None, :] >= m[:, None]] = np.nan
        return {"reports": values}


def test_a_scale_leak_is_violated_by_a_scale_statistic():
    res = audit_system(ScaleLeak(), 0, 1, samples=4_000, seed=3)
    row = res.rows[0]
    assert str(row.verdict) == "violated" and row.epsilon_lower_bound > 2.0
    assert row.statistic in (
        "norm-l2",
        "norm-l1",
        "norm-linf",
        "squared-deviation",
        "gaussian-scale-llr",
        "learned-gbt",
    )
    assert "scale" in row.shapes_searched and "location" in row.shapes_searched


def test_a_dependence_only_leak_is_seen_by_the_covariance_directions():
    res = audit_system(DependenceLeak(), 0, 1, samples=4_000, seed=4)
    row = res.rows[0]
    assert str(row.verdict) == "violated" and row.epsilon_lower_bound > 1.5
    # every marginal is the same: no location statistic tells them apart
    pos, neg = (DependenceLeak().release(s, 4_000, np.random.default_rng(s))["update"] for s in (0, 1))
    assert SparseProjection(dense=True).fit(pos[:2000], neg[:2000]) is not None
    direction = covariance_difference_directions(pos, neg, 1)[:, 0]
    assert abs(abs(direction.sum()) / np.sqrt(direction.size) - 1.0) < 0.05  # the all-ones direction


@pytest.mark.parametrize("ragged", [False, True])
def test_absent_entries_and_variable_lengths_are_releases_and_their_count_leaks(ragged):
    res = audit_system(CountLeak(ragged=ragged), 0, 1, samples=4_000, seed=5)
    row = res.rows[0]
    assert str(row.verdict) == "violated" and row.epsilon_lower_bound > 1.0
    assert "structure" in row.shapes_searched


def test_inf_is_refused_with_a_clear_error_and_nan_is_not():
    class Infinite(CountLeak):
        def release(self, secret, n, rng, *, broadcast=None):
            return {"reports": np.full((n, 2), np.inf)}

    with pytest.raises(ValueError, match="holds inf"):
        audit_system(Infinite(), 0, 1, samples=200)


def test_a_correct_system_with_absent_entries_stays_consistent():
    """The same number of reports under both secrets: nothing to find (STRICT)."""
    res = audit_system(CountLeak(rates=(3.0, 3.0), epsilon=1.0), 0, 1, samples=4_000, seed=6, confidence=STRICT)
    assert str(res.rows[0].verdict) != "violated"


def test_variable_length_rows_keep_the_width_of_the_first_draw():
    from audit.engine.releases import release_array

    class Named:
        name = "ragged"

    widths: dict[str, int] = {}
    first = release_array(Named(), "x", [[1.0], [1.0, 2.0, 3.0]], 2, widths)
    later = release_array(Named(), "x", [[1.0, 2.0, 3.0, 4.0, 5.0], []], 2, widths)
    assert first.shape == later.shape == (2, 4) and widths == {"x": 3}  # three entries and the length
    assert np.isnan(first[0, 1:3]).all() and list(first[:, 3]) == [1.0, 3.0]
    assert list(later[0]) == [1.0, 2.0, 3.0, 5.0] and np.isnan(later[1, :3]).all() and later[1, 3] == 0.0
    padded = np.array([[1.0, 2.0, 3.0, 4.0, np.nan], [np.nan] * 5])  # the same channel as a NaN-padded array
    again = release_array(Named(), "x", padded, 2, widths)
    assert list(again[0]) == [1.0, 2.0, 3.0, 4.0] and np.isnan(again[1, :3]).all() and again[1, 3] == 0.0


def test_a_release_is_encoded_alike_whatever_else_its_call_returned():
    """A release with a trailing absent entry reads the same in a call of rows of different lengths and in a call of
    equal rows: its length is its own len(row) either way, so the encoding is a function of the release alone, as a
    certified event must be; in a NaN-padded array, where trailing NaN is padding, up to its last present entry."""
    from audit.engine.releases import release_array

    class Named:
        name = "ragged"

    widths: dict[str, int] = {}
    ragged = release_array(Named(), "x", [[1.0, np.nan], [1.0, 2.0, 3.0]], 2, widths)
    equal = release_array(Named(), "x", [[1.0, np.nan], [1.0, np.nan]], 2, widths)  # rectangular: an array
    assert ragged.shape == equal.shape == (2, 4)
    np.testing.assert_array_equal(ragged[0], equal[0])
    np.testing.assert_array_equal(ragged[0], [1.0, np.nan, np.nan, 2.0])  # [x, ⊥] is not [x]: its length is 2
    short = release_array(Named(), "x", [[1.0], [1.0, 2.0, 3.0]], 2, widths)
    assert short[0, 3] == 1.0  # a trailing ⊥ sent is information
    padded = release_array(Named(), "x", np.array([[1.0, np.nan], [1.0, 2.0]]), 2, widths)
    np.testing.assert_array_equal(padded[0], [1.0, np.nan, np.nan, 1.0])  # an array: trailing NaN is padding


def test_the_encoding_of_absent_entries_and_cut_rows_is_stated():
    from audit.engine.releases import ChannelWidths, release_array

    class Named:
        name = "ragged"

    widths = ChannelWidths()
    release_array(Named(), "x", [[1.0], [1.0, 2.0, 3.0]], 2, widths)
    release_array(Named(), "x", [[1.0, 2.0, 3.0, 4.0, 5.0], [], [1.0] * 4], 3, widths)
    padded = np.full((2, 6), np.nan)
    padded[0, :5] = 1.0
    release_array(Named(), "x", padded, 2, widths)  # a NaN-padded array wider than the width: one row cut
    release_array(Named(), "y", np.array([[1.0, np.nan]]), 1, widths)
    release_array(Named(), "z", np.ones((1, 2)), 1, widths)
    assert widths.encoding(["x"]) == (
        "x: variable length, padded with NaN (absent) to 3 entries, its length in one more column; 3 longer "
        "releases (up to 5 entries) cut to 3 entries, their length kept: the entries beyond were not read"
    )
    assert widths.encoding(["y", "z"]) == "y: absent entries as NaN, their presence read as information"
    assert widths.encoding(["z"]) is None


def test_an_audit_row_states_how_variable_length_releases_were_read():
    res = audit_system(CountLeak(ragged=True), 0, 1, samples=2_000, seed=5)
    assert res.rows[0].encoding.startswith("reports: variable length, padded with NaN (absent) to ")
    assert res.training.train_per_side == 1_000 and res.training.train_fraction == 0.25
    fixed = audit_system(DependenceLeak(), 0, 1, samples=2_000, seed=4, train_fraction="auto")
    assert fixed.rows[0].encoding is None and fixed.training.train_fraction == 0.25
    with pytest.raises(ValueError, match="a number in \\(0, 1\\] or 'auto'"):
        audit_system(DependenceLeak(), 0, 1, samples=2_000, train_fraction="half")


def test_scale_statistics_orient_themselves_and_read_the_scale():
    rng = np.random.default_rng(0)
    wide, narrow = 1.3 * rng.standard_normal((3000, 50)), rng.standard_normal((3000, 50))
    for stat in (
        NormStatistic(1),
        NormStatistic(2),
        NormStatistic(np.inf),
        SquaredDeviation(),
        GaussianScaleLikelihoodRatio(),
    ):
        for pos, neg in ((wide, narrow), (narrow, wide)):
            scorer = stat.fit(pos[:1500], neg[:1500])
            assert np.mean(scorer(pos[1500:]) > np.median(scorer(neg[1500:]))) > 0.9, stat.name
    assert {NormStatistic(2).shape, SquaredDeviation().shape} == {"scale"}
    assert CovarianceDirections().shape == "dependence" and PresenceCount().shape == "structure"


def test_a_one_number_scale_leak_is_read_by_the_gaussian_scale_likelihood_ratio_not_a_norm():
    """Of one number every norm is |y|: no norm is fitted, and the Gaussian scale likelihood ratio, a monotone function
    of (y − m)² when the means agree, ranks a one-column scale leak's releases as |y| does (rank correlation ≥ 0.98
    on held-out releases; 0.987–0.99997 over seeds 0–4)."""
    from scipy.stats import spearmanr

    rng = np.random.default_rng(1)
    wide, narrow = 1.5 * rng.laplace(size=(4000, 1)), rng.laplace(size=(4000, 1))
    assert all(NormStatistic(order).fit(wide, narrow) is None for order in (1, 2, np.inf))
    scorer = GaussianScaleLikelihoodRatio().fit(wide[:2000], narrow[:2000])
    held_out = np.concatenate([wide[2000:], narrow[2000:]])
    assert spearmanr(scorer(held_out), np.abs(held_out[:, 0])).statistic > 0.98
    assert NormStatistic(1).fit(wide.repeat(2, axis=1), narrow.repeat(2, axis=1)) is not None


def test_sums_are_ranked_held_out_and_a_fitted_quadratic_form_must_win_clearly_even_behind_absent_entries():
    """The sums (norms, squared deviation, squared standardized sum) are ranked by their held-out projection
    whatever their number of values, and the covariance directions replace a test of a few exact events only when
    they project :data:`FITTED_FORM_MARGIN` more: the wrapper that reads absent entries keeps both."""
    sums = [NormStatistic(1), NormStatistic(2), SquaredDeviation(), SquaredStandardizedSum()]
    assert all(stat.held_out_ranking for stat in sums)
    assert not getattr(GaussianScaleLikelihoodRatio(), "held_out_ranking", False)
    full = np.random.default_rng(4).standard_normal((400, 3))
    holes = full.copy()
    holes[:200, 2] = np.nan
    wrapped = for_absent_entries([NormStatistic(1), CovarianceDirections(), SparseProjection()], full, holes)
    assert [(w.held_out_ranking, w.selection_margin, w.event_margin) for w in wrapped] == [
        (True, 0.0, 0.0),
        (False, 0.0, FITTED_FORM_MARGIN),
        (False, 0.0, 0.0),
    ]


def test_structure_statistics_apply_only_to_releases_with_absent_entries():
    rng = np.random.default_rng(1)
    full = rng.standard_normal((500, 4))
    assert PresenceCount().fit(full, full) is None and AbsencePattern().fit(full, full) is None
    holes = full.copy()
    holes[:250, 3] = np.nan
    scorer = PresenceCount().fit(full, holes)
    assert scorer(full).min() > scorer(holes[:250]).max()
    wrapped = for_absent_entries([SparseProjection(), PresenceCount()], full, holes)
    assert isinstance(wrapped[0], AbsentAware) and isinstance(wrapped[1], PresenceCount)
    assert for_absent_entries([SparseProjection()], full, full)[0].__class__ is SparseProjection
    assert np.isfinite(wrapped[0].fit(full, holes)(holes)).all()  # presence reaches the projection as a column


def test_the_learned_statistic_sees_a_leak_no_linear_or_norm_statistic_sees():
    """Under secret 1 the release is (a, b) with sign(a·b) > 0 twice as often; marginals, norms and correlation
    of the two coordinates' magnitudes alike: a non-linear boundary (an XOR)."""
    rng = np.random.default_rng(2)
    n = 8000
    a, b = np.abs(rng.standard_normal((2, 2 * n)))
    sign_a = rng.choice([-1.0, 1.0], 2 * n)
    agree = rng.random(2 * n) < np.r_[np.full(n, 0.5), np.full(n, 0.8)]
    pos = np.stack([sign_a * a, np.where(agree, sign_a, -sign_a) * b], axis=1)
    first, second = pos[n:], pos[:n]  # secret 1 (agreeing signs), secret 0
    scorer = LearnedClassifier().fit(first[: n // 2], second[: n // 2])
    accuracy = 0.5 * (np.mean(scorer(first[n // 2 :]) > 0) + np.mean(scorer(second[n // 2 :]) <= 0))
    assert accuracy > 0.6
    again = LearnedClassifier().fit(first[: n // 2], second[: n // 2])
    assert np.array_equal(scorer(first[:100]), again(first[:100]))  # a fit is a function of its data


def test_selection_records_the_shapes_it_could_fit_and_the_defaults_hold_every_shape():
    assert SHAPES == ("location", "scale", "dependence", "structure", "learned")
    assert shapes_of(default_statistics()) == SHAPES
    assert "learned" not in shapes_of(search_statistics())
    assert shapes_of(location_statistics()) == ("location", "structure")
    rng = np.random.default_rng(3)
    data = rng.standard_normal((4, 1000, 3))
    applied: list = []
    select_statistic(
        default_statistics(learned=False),
        data[0],
        data[1],
        data[2],
        data[3],
        lambda s_p, s_n, _held_out: (float(np.mean(s_p) - np.mean(s_n)),),
        applied=applied,
    )
    assert "presence-count" not in [s.name for s in applied] and "norm-l2" in [s.name for s in applied]


def test_a_small_claim_gets_a_training_split_that_can_find_its_plateau():
    assert auto_train_fraction(100_000, 1.0) == 0.25
    assert auto_train_fraction(40_000, 0.1) * 40_000 == SMALL_CLAIM_TRAINING
    assert auto_train_fraction(10_000, 0.1) == 1.0
    assert AuditSettings(samples=40_000).for_claim(0.1).train_samples == SMALL_CLAIM_TRAINING
    assert AuditSettings(samples=40_000, train_fraction=0.1).for_claim(0.1).train_samples == 4_000
    with pytest.raises(ValueError, match="train_fraction"):
        AuditSettings(train_fraction=1.5)


def test_the_audit_chooses_among_named_pairs_on_its_search_stream():
    pairs = {"same": (0, 0), "leaking": (0, 1)}
    res = audit_system(ScaleLeak(), None, None, samples=2_000, seed=7, pairs=pairs)
    assert res.pair.startswith("leaking (chosen among 2") and str(res.rows[0].verdict) == "violated"
    with pytest.raises(ValueError, match="not both"):
        audit_system(ScaleLeak(), None, None, samples=2_000, pairs=pairs, search_pair=True)


class CountingScaleLeak(ScaleLeak):
    """ScaleLeak that counts the releases drawn per secret."""

    def __init__(self):
        super().__init__()
        self.drawn = {0: 0, 1: 0}

    def release(self, secret, n, rng, *, broadcast=None):
        self.drawn[secret] += n
        return super().release(secret, n, rng, broadcast=broadcast)


def test_the_named_pair_race_spends_its_floor_per_pair():
    """Two pairs race for one round on the releases that max(search_samples, samples / pair_race_share) per side each
    would cost, drawn per input (their two inputs, 0 and 1, draw half of them each); the rest of the audit (training
    split, certification) draws the same whatever the floor."""
    pairs = {"same": (0, 0), "leaking": (0, 1)}
    drawn = {}
    for race_share in (10, 25):
        system = CountingScaleLeak()
        res = audit_system(
            system, None, None, samples=4_000, seed=7, pairs=pairs, search_samples=20, pair_race_share=race_share
        )
        assert res.pair.startswith("leaking (chosen among 2")
        drawn[race_share] = system.drawn
    per_pair = {share: 4_000 // share for share in drawn}  # 400 and 160 releases per side of each pair
    # 2 pairs × 2 sides × per_pair releases in all, over the two inputs: secret 0 (in both pairs) and secret 1
    assert drawn[10][1] - drawn[25][1] == 2 * (per_pair[10] - per_pair[25])
    assert drawn[10][0] - drawn[25][0] == 2 * (per_pair[10] - per_pair[25])
    with pytest.raises(ValueError, match="pair_race_share"):
        AuditSettings(pair_race_share=0)


def test_a_certification_seed_keeps_the_selection_and_draws_fresh_releases():
    first = audit_system(ScaleLeak(ratio=1.1), 0, 1, samples=2_000, seed=8).rows[0]
    again = audit_system(ScaleLeak(ratio=1.1), 0, 1, samples=2_000, seed=8, certification_seed=1).rows[0]
    assert (first.statistic, first.threshold) == (again.statistic, again.threshold)
    assert (first.false_positives, first.false_negatives) != (again.false_positives, again.false_negatives)


def test_a_consistent_row_states_its_power_against_planted_leaks_of_every_shape():
    class Wide(ScaleLeak):
        def release(self, secret, n, rng, *, broadcast=None):
            return {"update": 0.05 * secret + rng.standard_normal((n, 4))}

    row = audit_system(Wide(k=4), 0, 1, samples=2_000, seed=9, shape_power=True, confidence=STRICT).rows[0]
    assert str(row.verdict) != "violated"
    assert [p.shape for p in row.planted_power] == ["location", "scale", "dependence", "structure"]
    assert all(p.samples_per_side == 250 and p.repeats == 5 for p in row.planted_power)
    scale = next(p for p in row.planted_power if p.shape == "scale")
    assert scale.smallest is None or 0.0 < scale.smallest <= scale.largest_tried


def test_an_oriented_score_states_its_event_on_the_release_itself():
    from audit.certification.tester import event_words

    rng = np.random.default_rng(2)
    wide, narrow = 1.3 * rng.standard_normal((2000, 20)), rng.standard_normal((2000, 20))
    scorer = NormStatistic(2).fit(narrow, wide)  # larger under the second: oriented by −1
    threshold = float(np.median(scorer(narrow)))
    words = event_words(scorer, threshold)
    assert words == f"‖y‖₂² ≤ {-threshold:.6g}"
    assert np.array_equal(scorer(wide) >= threshold, np.einsum("ij,ij->i", wide, wide) <= -threshold)
    assert event_words(PresenceCount().fit(np.array([[1.0, np.nan]] * 4), np.ones((4, 2))), -1.0) == (
        "the number of present (not NaN) entries ≤ 1"
    )
    assert event_words(lambda y: y[:, 0], 0.5) is None  # a scorer that does not say its event


def test_a_projection_states_its_event_on_the_release():
    from audit.certification.tester import event_words
    from audit.statistics import LinearScore

    rng = np.random.default_rng(3)
    low, high = rng.laplace(0.0, 1.0, (3000, 1)), rng.laplace(1.0, 1.0, (3000, 1))
    scorer = SparseProjection().fit(low, high)  # larger under the second: a negative weight
    threshold = float(np.quantile(scorer(low), 0.9))
    words = event_words(scorer, threshold)
    bound = float(words.removeprefix("y ≤ "))
    assert words.startswith("y ≤ ") and np.array_equal(scorer(high) >= threshold, high[:, 0] <= bound)
    two = LinearScore(np.array([3, 7]), np.array([-0.5, 0.25]), 10)
    assert two.event(0.2) == "−0.5·y[3] + 0.25·y[7] ≥ 0.2 (weights to 4 significant digits)"
    assert LinearScore(np.arange(9), np.ones(9), 10).event(0.2).startswith("Σ_j w_j·y[j] ≥ 0.2 over 9 columns")


@pytest.mark.parametrize(
    "first, second, shape",
    [((0.0, 1.5), (0.0, 1.0), "two tails"), ((0.0, 1.0), (0.0, 1.5), "interval"), ((0.5, 1.0), (0.0, 1.0), None)],
)
def test_the_gaussian_ratio_on_one_number_states_its_event_as_an_interval_or_two_tails(first, second, shape):
    """The event in words selects the same releases as the fitted score's test (10⁵ draws; the words round to six
    significant digits, far finer than the draws' spacing near the edges)."""
    from audit.certification.tester import event_words
    from audit.statistics.scores import quadratic_event

    rng = np.random.default_rng(6)
    pos, neg = rng.normal(*first, (4000, 1)), rng.normal(*second, (4000, 1))
    scorer = GaussianScaleLikelihoodRatio().fit(pos, neg)
    threshold = float(np.quantile(scorer(neg), 0.9))
    words = event_words(scorer, threshold)
    y = rng.normal(0.0, 1.3, 100_000)
    assert shape is None or (" or " in words) == (shape == "two tails")  # a mean shift: either, as fitted
    if " or " in words:
        low, high = (float(x) for x in words.removeprefix("y ≤ ").split(" or y ≥ "))
        event = (y <= low) | (y >= high)
    else:
        low, high = (float(x) for x in words.split(" ≤ y ≤ "))
        event = (y >= low) & (y <= high)
    assert np.array_equal(event, scorer(y[:, None]) >= threshold)
    assert quadratic_event(0.0, 2.0, -1.0) == "y ≥ 0.5" and quadratic_event(-1.0, 0.0, -1.0) == "no release"
    assert event_words(GaussianScaleLikelihoodRatio().fit(rng.normal(size=(50, 2)), rng.normal(size=(50, 2))), 1.0)


def test_a_vote_states_its_event_column_by_column():
    from audit.certification.tester import event_words
    from audit.statistics import SignVote

    rng = np.random.default_rng(7)
    pos = (rng.random((3000, 6)) < [0.6, 0.4, 0.5, 0.5, 0.6, 0.5]).astype(float)
    neg = (rng.random((3000, 6)) < 0.5).astype(float)
    scorer = SignVote("strongest").fit(pos, neg)
    words = event_words(scorer, 2.0)
    conditions = re.findall(r"y\[(\d+)\] ([<>]) ([\d.]+)", words)
    assert words.startswith("votes ≥ 2, where each of y[") and len(conditions) == len(scorer.cols) >= 2
    assert ("0", ">") in [(c, op) for c, op, _ in conditions] and ("1", "<") in [(c, op) for c, op, _ in conditions]
    y = (rng.random((20_000, 6)) < 0.5).astype(float)
    votes = sum(
        np.where(y[:, int(c)] > float(m), 1, np.where(y[:, int(c)] < float(m), -1, 0)) * (1 if op == ">" else -1)
        for c, op, m in conditions
    )
    assert np.array_equal(votes >= 2.0, scorer(y) >= 2.0)
