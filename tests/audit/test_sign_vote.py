"""The dense sign vote: a count of the boolean answers that lean towards one secret, where each answer is nudged too
little to be informative alone (SVT's ⊤/⊥ vector), offered by the system it suits. Fixed seeds; each assertion held
in 19 of 20 seeds tried (0–19)."""

import numpy as np

from audit.engine.system_audit import audit_system
from audit.statistics import SignVote
from pgc.contracts import PrivacyClaim

COLUMNS, BASE, NUDGE = 12, 0.3, 0.01


def nudged_answers(secret: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``COLUMNS`` independent 0/1 answers; the secret moves the first half's rate up by ``NUDGE`` and the second
    half's down (and the other secret the reverse): no column alone tells the secrets apart at ten thousand."""
    up = np.where(np.arange(COLUMNS) < COLUMNS // 2, 1.0, -1.0) * (1.0 if secret else -1.0)
    return (rng.random((n, COLUMNS)) < BASE + NUDGE * up).astype(np.float64)


class NudgedAnswers:
    name, channels = "nudged-answers", ("answers",)
    claim = PrivacyClaim(0.05, 0.0, ("answers",))

    def release(self, secret, n, rng, *, broadcast=None):
        return {"answers": nudged_answers(secret, n, rng)}

    def audit_statistics(self, channel):
        return [SignVote(dense=True)]


def test_the_dense_vote_counts_every_leaning_column_with_its_sign():
    rng = np.random.default_rng(0)
    pos, neg = nudged_answers(1, 10_000, rng), nudged_answers(0, 10_000, rng)
    dense, sparse = SignVote(dense=True).fit(pos, neg), SignVote().fit(pos, neg)
    fresh = nudged_answers(1, 100, rng)
    signed_count = fresh[:, : COLUMNS // 2].sum(axis=1) - fresh[:, COLUMNS // 2 :].sum(axis=1)
    # every column's median is 0 on both sides: the vote is the count of the answers, each with its side's sign
    assert np.array_equal(dense(fresh), signed_count)
    # the informative columns (|z| > 4) are at most a few: the plain vote reads fewer answers
    assert sparse is None or np.ptp(sparse(fresh)) < np.ptp(dense(fresh))


def test_one_column_has_no_dense_vote():
    rng = np.random.default_rng(1)
    assert SignVote(dense=True).fit(rng.random((50, 1)), rng.random((50, 1)) + 0.1) is None


def test_many_answers_each_nudged_a_little_are_violated_through_the_offered_dense_vote():
    row = audit_system(NudgedAnswers(), 0, 1, samples=20_000, seed=5).rows[0]
    assert str(row.verdict) == "violated" and row.epsilon_lower_bound > 0.05
    assert row.statistic == "sign-vote-dense"
