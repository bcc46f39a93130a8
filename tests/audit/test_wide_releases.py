"""Wide releases (model updates of 10⁴–10⁵ numbers) in bounded memory and time: the auditor rounds, stacks, scores
and summarizes them a block at a time with the same numbers as on the whole array, holds a joint channel's numbers
once, sizes its certification chunks by bytes, and finds a dependence leak's direction without forming the
covariance matrix. Every assertion is exact (the same numbers) or deterministic (fixed seeds)."""

import numpy as np
import pytest

from audit.certification import tester
from audit.certification.tester import CHUNK, chunk_rows
from audit.engine.releases import draw_releases, round_significant, stack_draws
from audit.statistics import LaplaceLogLikelihood, SignVote, SupportMembership, memo
from audit.statistics.hashing import _row_hash, row_hash
from audit.statistics.memo import column_medians, once_per_split
from audit.statistics.shapes import (
    DENSE_EIGEN_MAX,
    CovarianceDirections,
    GaussianScaleLikelihoodRatio,
    SquaredStandardizedSum,
    _standardizer,
    covariance_difference_directions,
    wide_covariance_difference_directions,
)
from pgc.contracts import ALL


def _rounded_at_once(values, bits=30):
    mantissa, exponent = np.frexp(values)
    rounded = np.ldexp(np.round(mantissa * 2.0**bits) / 2.0**bits, exponent)
    return np.where(values == np.round(values), values, rounded)


def test_rounding_a_block_at_a_time_gives_the_numbers_of_one_call(monkeypatch):
    monkeypatch.setattr(memo, "SCORE_BLOCK", 1_000)
    values = np.random.default_rng(0).normal(0, 3, (257, 97))
    values[::7, 3] = np.round(values[::7, 3])  # integers stay exact
    assert np.array_equal(round_significant(values), _rounded_at_once(values))
    wide = np.zeros((257, 100))
    round_significant(values, out=wide[:, 2:99])  # into a view of a wider array
    assert np.array_equal(wide[:, 2:99], _rounded_at_once(values)) and not wide[:, :2].any()
    assert np.array_equal(round_significant(values[:, 0]), _rounded_at_once(values[:, 0]))


class _TwoChannels:
    name, channels = "two-channels", ("update", "examples")

    def release(self, secret, n, rng, *, broadcast=None):
        return {"update": rng.normal(secret, 1.0, (n, 40)), "examples": np.full(n, 200.0 - secret)}


def test_an_assembled_joint_channel_holds_its_base_channels_numbers_once():
    system = _TwoChannels()
    channels = ["update", "examples", ALL]
    drawn = draw_releases(system, 1, 30, np.random.default_rng(3), None, channels, ("update", "examples"))
    again = system.release(1, 30, np.random.default_rng(3))
    assert np.array_equal(drawn["update"], _rounded_at_once(again["update"]))
    assert np.array_equal(drawn[ALL], np.concatenate([drawn["update"], drawn["examples"]], axis=1))
    assert np.shares_memory(drawn["update"], drawn[ALL]) and np.shares_memory(drawn["examples"], drawn[ALL])
    parts = [draw_releases(system, 1, m, np.random.default_rng(m), None, channels, system.channels) for m in (5, 7, 9)]
    stacked = stack_draws(iter(parts), 21, channels)
    for ch in channels:
        assert np.array_equal(stacked[ch], np.concatenate([p[ch] for p in parts]))
    assert np.shares_memory(stacked["update"], stacked[ALL])
    with pytest.raises(AssertionError):
        stack_draws(iter(parts), 22, channels)


def test_certification_chunks_are_sized_by_bytes_for_wide_releases_only(monkeypatch):
    assert chunk_rows(1) == CHUNK and chunk_rows(2_048) == CHUNK  # every release of 2,048 numbers or fewer
    assert chunk_rows(2_049) == (1 << 25) // (8 * 2_049) == 2_047
    assert chunk_rows(201_885) == 20  # a 100,942-parameter update and its joint channel: 32 MiB a chunk
    assert chunk_rows(10**7) == 1
    monkeypatch.setattr(tester, "CHUNK_BYTES", 8)
    assert chunk_rows(1) == CHUNK and chunk_rows(1_024) == 4_096


def test_block_wise_scores_hashes_and_medians_are_the_numbers_of_one_call(monkeypatch):
    rng = np.random.default_rng(1)
    pos, neg = rng.laplace(0.02, 1.0, (600, 300)), rng.laplace(0.0, 1.1, (600, 300))
    pos[:, :10] += 1.0  # informative columns for the sign vote
    y = rng.laplace(0.0, 1.0, (500, 300))
    whole = {}
    statistics = (
        LaplaceLogLikelihood(dense=True),
        SignVote(),
        GaussianScaleLikelihoodRatio(),
        SquaredStandardizedSum(),
    )
    for stat in statistics:
        monkeypatch.setattr(memo, "SCORE_BLOCK", 10**9)
        whole[stat.name] = stat.fit(pos, neg)(y)
        monkeypatch.setattr(memo, "SCORE_BLOCK", 1_000)  # blocks of 3 rows
        assert np.array_equal(stat.fit(pos, neg)(y), whole[stat.name]), stat.name
    repeated = np.repeat(y[:50], 3, axis=0)
    assert np.array_equal(row_hash(repeated), _row_hash(repeated))  # 150 × 300 values: blocks of 873 rows at most
    assert np.array_equal(row_hash(np.tile(y, (20, 1))), _row_hash(np.tile(y, (20, 1))))  # 3e6 values: blocks
    assert SupportMembership("row").fit(repeated, repeated + 1.0) is not None
    odd, even = rng.normal(size=(101, 5_000)), np.round(rng.normal(size=(100, 5_000)))  # ties
    odd[4, 7] = np.nan
    for values in (odd, even):
        assert np.array_equal(column_medians(values), np.median(values, axis=0), equal_nan=True)


def test_a_split_summary_is_computed_once_per_pair_of_arrays():
    calls = []
    summary = once_per_split(lambda p, n: calls.append(1) or (p.sum() - n.sum()))
    a, b, c = np.ones((3, 2)), np.zeros((3, 2)), np.ones((3, 2))
    assert summary(a, b) == summary(a, b) == 6.0 and len(calls) == 1
    assert summary(c, b) == 6.0 and len(calls) == 2  # equal numbers, another array: computed again
    assert summary(a, b) == 6.0 and len(calls) == 2  # the last two pairs are kept
    assert summary(b, c) == -6.0 and summary(a, b) == 6.0 and len(calls) == 4


def test_the_wide_standardizer_sums_side_by_side_to_the_pooled_numbers(monkeypatch):
    import audit.statistics.shapes as shapes

    rng = np.random.default_rng(2)
    pos, neg = rng.normal(1.0, 2.0, (700, 50)), rng.normal(0.0, 1.0, (300, 50))
    pos[:, 0] = 4.0  # a constant column: spread 1
    pooled = _standardizer(pos, neg)
    monkeypatch.setattr(shapes, "POOLED_COPY_BYTES", 0)
    side_by_side = _standardizer(pos, neg)
    for a, b in zip(pooled, side_by_side, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def _equicorrelated(n, k, rho, rng, block):
    """Gaussian releases whose first ``block`` coordinates share a common factor (correlation rho), the rest white."""
    out = rng.standard_normal((n, k))
    out[:, :block] = np.sqrt(1 - rho) * out[:, :block] + np.sqrt(rho) * rng.standard_normal((n, 1))
    return out


def test_wide_releases_find_a_dependence_leaks_direction_without_the_matrix():
    rng = np.random.default_rng(5)
    k, block = 3 * DENSE_EIGEN_MAX, 60
    pos, neg = _equicorrelated(1_500, k, 0.3, rng, block), rng.standard_normal((1_500, k))
    truth = np.zeros(k)
    truth[:block] = 1 / np.sqrt(block)
    centre = np.concatenate([pos, neg]).mean(axis=0)
    spread = np.concatenate([pos, neg]).std(axis=0)
    wide = wide_covariance_difference_directions(pos, neg, centre, spread, 4)
    assert wide.shape == (k, 4) and abs(wide[:, 0] @ truth) > 0.95
    np.testing.assert_allclose(wide.T @ wide, np.eye(4), atol=1e-10)
    exact = covariance_difference_directions((pos - centre) / spread, (neg - centre) / spread, 1)[:, 0]
    assert abs(wide[:, 0] @ exact) > 0.99
    scorer = CovarianceDirections().fit(pos[:750], neg[:750])
    held_pos, held_neg = scorer(pos[750:]), scorer(neg[750:])
    assert np.mean(held_pos > np.median(held_neg)) > 0.7  # the leak separates the held-out releases
    assert wide_covariance_difference_directions(neg, neg, centre, spread, 4).shape == (k, 0)  # no difference


def test_dense_statistics_read_summaries_of_every_column_instead_of_gathering_the_columns():
    from audit.statistics import ColumnSummary, SparseProjection

    rng = np.random.default_rng(7)
    pos, neg = rng.laplace(0.01, 1.0, (401, 500)), rng.laplace(0.0, 1.0, (400, 500))
    cols = ColumnSummary.of(pos, neg).columns(dense=True)
    gathered_means = pos[:, cols].mean(axis=0) - neg[:, cols].mean(axis=0)  # pairwise sums: a gather is F-ordered
    np.testing.assert_allclose(ColumnSummary.of(pos, neg).diff[cols], gathered_means, rtol=1e-12, atol=1e-15)
    assert np.array_equal(column_medians(pos)[cols], np.median(pos[:, cols], axis=0))
    y = rng.laplace(0.0, 1.0, (300, 500))
    m_pos, m_neg = np.median(pos[:, cols], axis=0), np.median(neg[:, cols], axis=0)
    gathered_first = (np.abs(y[:, cols] - m_neg) - np.abs(y[:, cols] - m_pos)).sum(axis=1)
    assert np.array_equal(LaplaceLogLikelihood(dense=True).fit(pos, neg)(y), gathered_first)
    np.testing.assert_allclose(SparseProjection(dense=True).fit(pos, neg)(y), y[:, cols] @ gathered_means, rtol=1e-9)
