"""SVT3 at one pair with learned statistics fitted on the whole fit half at the bench's sizes for 10⁶ per side: the
audit's gradient-boosted classifier (:class:`audit.statistics.learned.LearnedClassifier`, through the encoding of
absent entries the audit gives it) fitted on FIT_ROWS releases per side instead of its cap of 20,000, and a logistic
regression on the release's likelihood structure written out by hand (its answer's position one-hot, the answer's
value per position, |value|), each fitted on 105,500 releases per side, its threshold chosen on 105,500 more
(audit.statistics.selection.choose_threshold) and certified on 529,101 fresh releases per side; one line per seed
and statistic: projected ε on the selection half, certified ε_LB, false positives, false negatives. Usage, from the
repository root:

    python results/catalogue/million/svt3_learned.py "all above" 3
"""

import argparse
import sys

import numpy as np

from audit.certification.bounds import epsilon_lower_bound
from audit.engine.releases import AuditTarget
from audit.statistics.selection import choose_threshold
from pgc.catalogue import CHANNEL, catalogue_system
from pgc.options import positive_int

FIT, CERT = 105_500, 529_101  # releases per side: the fit (and as many to choose the threshold), certified


def position_value_features(y: np.ndarray) -> np.ndarray:
    """The answer's position (one-hot, or none), its value per position and |value|, scaled by the noise's 20."""
    present = ~np.isnan(y)
    answered = present.any(axis=1)
    value = np.where(answered, np.nanmax(np.where(present, y, -np.inf), axis=1), 0.0) / 20.0
    onehot = np.eye(y.shape[1] + 1)[np.where(answered, present.argmax(axis=1), y.shape[1])]
    return np.concatenate([onehot, onehot * value[:, None], np.abs(value)[:, None]], axis=1)


def learned_scorers(fit_pos: np.ndarray, fit_neg: np.ndarray) -> dict:
    """The two statistics' fitted scores (name → callable)."""
    from sklearn.linear_model import LogisticRegression

    import audit.statistics.learned as learned
    from audit.statistics.shapes import for_absent_entries

    learned.FIT_ROWS = FIT
    boosted = for_absent_entries([learned.LearnedClassifier()], fit_pos, fit_neg)[0].fit(fit_pos, fit_neg)
    x = np.concatenate([position_value_features(fit_pos), position_value_features(fit_neg)])
    labels = np.concatenate([np.ones(len(fit_pos)), np.zeros(len(fit_neg))])
    logistic = LogisticRegression(max_iter=500).fit(x, labels)
    return {
        "boosted trees": boosted,
        "position × value logistic": lambda y: logistic.decision_function(position_value_features(y)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pair", help="one of SVT3's named pairs, e.g. 'all above'")
    parser.add_argument("seeds", type=positive_int, help="seeds 0 .. SEEDS − 1")
    args = parser.parse_args()
    system = catalogue_system("SVT3")
    target = AuditTarget(system, *system.canaries()[args.pair], (CHANNEL,), False)
    bounds: dict[str, list[float]] = {}
    for seed in range(args.seeds):
        pos, neg = target.release_pair(2 * FIT, np.random.SeedSequence(50 + seed), None, [CHANNEL])
        p, q = pos[CHANNEL], neg[CHANNEL]
        cert_pos, cert_neg = target.release_pair(CERT, np.random.SeedSequence(900 + seed), None, [CHANNEL])
        for name, score in learned_scorers(p[:FIT], q[:FIT]).items():
            threshold, share, projected = choose_threshold(score(p[FIT:]), score(q[FIT:]), CERT, 0.05, 0.0, True)
            fp = int(np.count_nonzero(score(cert_neg[CHANNEL]) >= threshold))
            fn = int(np.count_nonzero(score(cert_pos[CHANNEL]) < threshold))
            bound = float(epsilon_lower_bound(fp, CERT, fn, CERT, 0.05, 0.0, share))
            bounds.setdefault(name, []).append(bound)
            print(seed, name, round(projected, 3), round(bound, 3), fp, fn, flush=True)
    for name, values in bounds.items():
        print(args.pair, name, "median", round(float(np.median(values)), 3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
