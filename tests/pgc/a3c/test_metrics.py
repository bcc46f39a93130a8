"""Metrics of §4 against hand-computed numbers."""

import math

import numpy as np
import pytest

from pgc.a3c.metrics import average_scores, first_success_time, relative_auc, success_ratio, success_ratio_auc


def test_average_scores_window():
    np.testing.assert_allclose(average_scores([1, 2, 3, 4, 5], window=2), [1.5, 2.5, 3.5, 4.5])
    assert average_scores([1, 2], window=3).size == 0


def test_first_success_time():
    scores = [10] * 20 + [200] * 9 + [100] + [200] * 10
    # windows of 10 ending at 1-based n: first all-200 window ends at n = 40 (the 100 at n = 30)
    assert first_success_time(scores) == 40.0
    assert first_success_time([200] * 10) == 10.0
    assert first_success_time([194] * 50) == math.inf
    assert first_success_time(np.r_[[0], [195] * 10], target=195) == 11.0


def test_success_ratio_and_auc():
    fsts = np.array([10.0, 20.0, math.inf, 40.0])
    np.testing.assert_allclose(success_ratio(fsts, [5, 10, 25, 100]), [0, 0.25, 0.5, 0.75])
    # AUC over 1..40: trial 1 counts at 31 submissions, trial 2 at 21, trial 4 at 1
    assert success_ratio_auc(fsts, 40) == pytest.approx((31 + 21 + 1) / 4)
    assert relative_auc(fsts, np.array([1.0, 1.0]), 40) == pytest.approx(((31 + 21 + 1) / 4) / 40)
    assert math.isnan(relative_auc(fsts, np.array([math.inf]), 40))
    with pytest.raises(ValueError):
        success_ratio([], 3)
