"""Measured, not landed: the threshold of the chosen statistic taken by the paired certificate's projection.

The audit chooses its threshold by the split certificate's projection and then certifies by whichever certificate
projects more at that threshold. This probe wraps the engine's ``fit_candidate`` and, for a pure ε claim, scans the
chosen statistic's thresholds on the selection split by the paired projection instead: ``MODE=insample`` takes the
largest, ``MODE=heldout`` takes it only where each half's choice projects more on the other half than the current
test does. The arguments are those of ``scripts/catalogue_fixed_pair.py``. Usage, from the repository root:

    MODE=insample python results/catalogue/paired-certificate/threshold_by_paired.py --algorithm SVT4 \\
        --pair "X shape" --seeds 0-15 --samples 52915 --train-fraction 0.4
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path[:0] = [ROOT, os.path.join(ROOT, "scripts")]

import numpy as np  # noqa: E402

import audit.certification.choice as choice  # noqa: E402
import audit.certification.tester as tester  # noqa: E402
import audit.engine.releases as releases  # noqa: E402
from audit.certification.paired import (  # noqa: E402
    expected_discordant,
    paired_epsilon_lower_bound,
    projected_certificates,
)
from audit.statistics.selection import (  # noqa: E402
    SELECTION_PESSIMISM,
    SELECTION_PESSIMISM_TWO_SIDED,
    _threshold_grid,
    rate_upper,
)

MODE = os.environ.get("MODE", "insample")
CAPTURED: dict = {}
ENGINE_SELECT, ENGINE_FIT = choice.select_statistic, tester.fit_candidate


def select(*args, **kwargs):
    CAPTURED["chosen"] = ENGINE_SELECT(*args, **kwargs)
    return CAPTURED["chosen"]


def paired_curve(s_pos, s_neg, grid, n_cert, alpha, two_sided):
    """The paired certificate's projection of every threshold of ``grid`` (the engine's pessimistic rates)."""
    sp, sn = np.sort(s_pos), np.sort(s_neg)
    fp = sn.size - np.searchsorted(sn, grid, side="left")
    fn = np.searchsorted(sp, grid, side="left")
    level = SELECTION_PESSIMISM_TWO_SIDED if two_sided else SELECTION_PESSIMISM
    fpr = np.minimum(1.0, rate_upper(fp, sn.size, level, two_sided))
    fnr = np.minimum(1.0, rate_upper(fn, sp.size, level, two_sided))
    only_pos, only_neg = expected_discordant((1 - fnr) * n_cert, fpr * n_cert, n_cert)
    return paired_epsilon_lower_bound(only_pos, only_neg, fpr * n_cert, n_cert, alpha)


def best_paired(s_pos, s_neg, grid, n_cert, alpha, two_sided):
    curve = paired_curve(s_pos, s_neg, grid, n_cert, alpha, two_sided)
    return float(grid[int(np.argmax(curve))]), float(np.max(curve))


def fit(label, train_pos, train_neg, n_cert, alpha, delta, statistics=None, two_sided=False, curve=False, *rest, **kw):
    cand = ENGINE_FIT(label, train_pos, train_neg, n_cert, alpha, delta, statistics, two_sided, curve, *rest, **kw)
    if cand is None or delta != 0 or curve:
        return cand
    s_pos, s_neg = (np.asarray(s, float) for s in CAPTURED["chosen"][2:4])
    grid = _threshold_grid(np.concatenate([s_pos, s_neg]))
    now = max(projected_certificates(s_pos, s_neg, cand.threshold, cand.fp_share, n_cert, alpha, two_sided))
    threshold, best = best_paired(s_pos, s_neg, grid, n_cert, alpha, two_sided)
    if MODE == "heldout":
        held, current = [], []
        for a, b in ((0, 1), (1, 0)):
            t, _ = best_paired(s_pos[a::2], s_neg[a::2], grid, n_cert, alpha, two_sided)
            held.append(paired_curve(s_pos[b::2], s_neg[b::2], np.array([t]), n_cert, alpha, two_sided)[0])
            args = (s_pos[b::2], s_neg[b::2], cand.threshold, cand.fp_share, n_cert, alpha, two_sided)
            current.append(max(projected_certificates(*args)))
        take = np.mean(held) > np.mean(current)
    else:
        take = best > now
    if take:
        cand.threshold, cand.paired = threshold, True
    return cand


choice.select_statistic = select
tester.fit_candidate = releases.fit_candidate = fit

if __name__ == "__main__":
    import catalogue_fixed_pair

    sys.exit(catalogue_fixed_pair.main(sys.argv[1:]))
