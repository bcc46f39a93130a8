"""A certified row's statistic saved as data: every default statistic's fitted score written as a witness, read back
through JSON and rebuilt computes the same scores to the last bit; the learned classifier's trees without
scikit-learn; a malformed witness is refused in one line; a system audit's row carries its witness."""

from __future__ import annotations

import base64
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from audit.statistics import ChannelSumLikelihoodRatio, ExactRelease, LaplaceLogLikelihood, default_statistics
from audit.statistics.fitted import REGISTRY, same_witness, scorer_from_witness, witness_of
from audit.statistics.learned import LearnedClassifier
from audit.statistics.scores import GaussianRatioScore, LinearScore, OrientedScore
from audit.statistics.shapes import for_absent_entries
from pgc.errors import UserError


def _pairs(rng: np.random.Generator, n: int = 5_000) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Releases of each shape a statistic reads: location and scale, dependence, wide (the covariance directions
    found without forming the matrix), boolean answers, absent entries, one number, a lattice."""
    z = rng.normal(size=(n, 1))
    absent_p, absent_n = rng.normal(size=(n, 6)), rng.normal(size=(n, 6)) + 0.2
    absent_p[rng.random(absent_p.shape) < 0.1] = np.nan
    absent_n[rng.random(absent_n.shape) < 0.2] = np.nan
    return {
        "scale": (rng.normal(size=(n, 12)), 1.2 * rng.normal(size=(n, 12)) + 0.1),
        "dependence": (rng.normal(size=(n, 8)), 0.8 * rng.normal(size=(n, 8)) + 0.6 * z),
        "wide": (rng.normal(size=(n, 300)), rng.normal(size=(n, 300)) + np.r_[np.full(5, 0.1), np.zeros(295)]),
        "boolean": ((rng.random((n, 10)) < 0.5).astype(float), (rng.random((n, 10)) < 0.56).astype(float)),
        "absent": (absent_p, absent_n),
        "one number": (rng.laplace(size=(n, 1)), rng.laplace(size=(n, 1)) + 0.3),
        "lattice": (rng.integers(0, 4, (n, 3)).astype(float), rng.integers(0, 5, (n, 3)).astype(float)),
    }


STATISTICS = default_statistics() + [
    ExactRelease("row", 0.0, 1.0),
    ExactRelease("column", 1e-9, 1.0),
    ChannelSumLikelihoodRatio((slice(0, 1), slice(1, 2), slice(2, None))),
    LaplaceLogLikelihood(scaled=True),
]


@pytest.mark.parametrize("shape", list(_pairs(np.random.default_rng(0), 10)))
def test_every_default_statistic_rebuilds_from_its_json_witness_bit_for_bit(shape):
    rng = np.random.default_rng(20261207)
    pos, neg = _pairs(rng)[shape]
    fresh = np.concatenate(_pairs(rng)[shape])
    fitted = 0
    for statistic in for_absent_entries(STATISTICS, pos, neg):
        scorer = statistic.fit(pos, neg)
        if scorer is None:
            continue
        fitted += 1
        witness = witness_of(scorer)
        assert witness is not None, statistic.name
        saved = json.loads(json.dumps(witness))  # as a result file holds it
        assert same_witness(witness, saved)
        rebuilt = scorer_from_witness(saved)
        assert np.array_equal(rebuilt(fresh), scorer(fresh), equal_nan=True), statistic.name
        assert same_witness(witness_of(rebuilt), witness)  # rebuilt, it saves the same witness again
    assert fitted >= 5  # of one number, the projection, the Gaussian ratio, the histograms, the δ test


def test_the_learned_trees_give_scikit_learns_log_odds_to_the_last_bit_missing_values_included():
    from sklearn.ensemble import HistGradientBoostingClassifier

    from audit.statistics.trees import TreeEnsemble

    rng = np.random.default_rng(7)
    x = rng.normal(size=(6_000, 6))
    x[rng.random(x.shape) < 0.1] = np.nan
    labels = (np.nan_to_num(x[:, 0]) + np.nan_to_num(x[:, 1]) ** 2 + rng.normal(size=6_000) > 1).astype(float)
    model = HistGradientBoostingClassifier(max_iter=40, max_leaf_nodes=15, random_state=0).fit(x, labels)
    test = rng.normal(size=(20_000, 6))
    test[rng.random(test.shape) < 0.1] = np.nan
    trees = TreeEnsemble.of_model(model)
    assert len(trees.roots) == model.n_iter_
    assert np.array_equal(trees(test), model.decision_function(test))


def _array(values, dtype) -> dict:
    array = np.asarray(values, dtype)
    return {"dtype": array.dtype.str, "shape": list(array.shape), "base64": base64.b64encode(array.tobytes()).decode()}


def test_a_malformed_witness_is_refused_in_one_line_before_it_allocates_or_loops():
    good = witness_of(ExactRelease("row", 0.0, 1.0).fit(np.zeros((50, 2)), np.ones((50, 2))))
    assert good is not None
    ratio = witness_of(GaussianRatioScore(*(np.ones(3) for _ in range(4))))
    tree = {"baseline": {"number": 0.0}, "roots": _array([0], np.int64), "feature": _array([0, 0], np.int64)}
    tree |= {"threshold": _array([0.0, 0.0], np.float64), "missing_left": _array([True, True], bool)}
    tree |= {"left": _array([0, 0], np.int64), "right": _array([0, 0], np.int64)}
    tree |= {"is_leaf": _array([False, True], bool), "value": _array([0.0, 1.0], np.float64)}
    cases = {
        "unknown fitted score kind": {**good, "kind": "pickle"},
        "not a saved fitted score": {"kind": "membership"},
        "does not fit its": {
            **good,
            "parameters": {**good["parameters"], "set_pos": {**_array([1], np.uint64), "shape": [3]}},
        },
        "dtype object": {
            **good,
            "parameters": {**good["parameters"], "set_pos": {**_array([0], np.uint64), "dtype": "|O"}},
        },
        "not a finite number": {"kind": "norm", "parameters": {"order": {"number": 10**400}}},
        "not a saved array": {
            **good,
            "parameters": {**good["parameters"], "set_pos": {**_array([0], np.uint64), "shape": [math.inf]}},
        },
        r"shape \(1, 1, 1\)": {**good, "parameters": {**good["parameters"], "set_pos": _array([[[0]]], np.uint64)}},
        "negative index": {**good, "parameters": {**good["parameters"], "cols": _array([-1], np.int64)}},
        # a (m, 1) and a (1, m) variance would broadcast to m × m: refused by its shape
        "must be a 1-dimensional array": {
            **ratio,
            "parameters": {**ratio["parameters"], "v_neg": _array(np.ones((1, 3)), np.float64)},
        },
        "has 2 entries where": {
            **ratio,
            "parameters": {**ratio["parameters"], "v_neg": _array(np.ones(2), np.float64)},
        },
        # a split node that is its own child would never end a walk down the tree
        "children must lie after it": {"kind": "tree-ensemble", "parameters": tree},
        "cannot be built": {**good, "parameters": {"cols": {"value": None}}},
    }
    for words, witness in cases.items():
        with pytest.raises(UserError, match=words):
            scorer_from_witness(witness, "row update")
    nested = {"kind": "absent-aware", "parameters": {}}
    for _ in range(12):
        nested = {"kind": "absent-aware", "parameters": {"inner": {"score": nested}}}
    with pytest.raises(UserError, match="nested more than"):
        scorer_from_witness(nested)
    assert witness_of(lambda y: y[:, 0]) is None  # a statistic a system brings: its code, no witness


def test_a_subclass_a_system_defines_has_no_witness_and_takes_no_kind():
    class Squared(LinearScore):  # a system's own score: its code, not ours
        KIND = "linear"

        def __call__(self, y):
            return super().__call__(y) ** 2

    score = Squared(np.array([0]), np.array([1.0]), 1)
    assert witness_of(score) is None
    assert witness_of(OrientedScore(score, 1.0, "y²")) is None  # nor a fitted score holding it
    assert REGISTRY["linear"] is LinearScore


def test_channel_groups_keep_their_step():
    rng = np.random.default_rng(11)
    pos, neg = rng.normal(size=(4_000, 6)), rng.normal(size=(4_000, 6)) + np.array([0.3, 0, 0.3, 0, 0.3, 0])
    scorer = ChannelSumLikelihoodRatio((slice(0, None, 2), slice(1, None, 2))).fit(pos, neg)
    rebuilt = scorer_from_witness(json.loads(json.dumps(witness_of(scorer))))
    assert np.array_equal(rebuilt(neg), scorer(neg))


def test_a_learned_witness_rebuilds_in_a_fresh_process(tmp_path):
    """The kinds register when the witness is read, whatever the process imported before."""
    rng = np.random.default_rng(5)
    pos, neg = rng.normal(size=(5_000, 4)), rng.normal(size=(5_000, 4))
    neg[:, 1] = np.abs(neg[:, 1]) * np.sign(neg[:, 0])
    scorer = LearnedClassifier().fit(pos, neg)
    (tmp_path / "w.json").write_text(json.dumps(witness_of(scorer)))
    np.save(tmp_path / "y.npy", neg[:100])
    code = (
        "import json, sys, numpy as np; from audit import scorer_from_witness; "
        f"s = scorer_from_witness(json.load(open({str(tmp_path / 'w.json')!r}))); "
        f"np.save({str(tmp_path / 'out.npy')!r}, s(np.load({str(tmp_path / 'y.npy')!r})))"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)
    assert np.array_equal(np.load(tmp_path / "out.npy"), scorer(neg[:100]))


def test_every_fitted_score_kind_is_registered_once():
    scorer_from_witness(witness_of(ExactRelease("row", 0.0, 1.0).fit(np.zeros((50, 2)), np.ones((50, 2)))))
    assert {"linear", "vote", "oriented", "gaussian-ratio", "learned", "tree-ensemble", "channel-sum"} <= set(REGISTRY)
    assert all(cls.KIND == kind for kind, cls in REGISTRY.items())


@pytest.mark.parametrize("shape", list(_pairs(np.random.default_rng(0), 10)))
def test_every_statistic_of_the_audit_states_its_event_in_words(shape):
    """Each fitted score of the audit's own says its event [score ≥ t] as a comparison (or that it always or never
    holds); a release with absent entries says how they were read."""
    from audit.certification.tester import event_words

    rng = np.random.default_rng(20261208)
    pos, neg = _pairs(rng)[shape]
    for statistic in for_absent_entries(STATISTICS, pos, neg):
        scorer = statistic.fit(pos, neg)
        if scorer is None:
            continue
        threshold = float(np.median(scorer(np.concatenate([pos, neg]))))
        words = event_words(scorer, threshold)
        assert words, (shape, statistic.name)
        assert words.startswith(("always", "never")) or any(w in words for w in ("≥", "≤", "is one of", "none of")), (
            words
        )
        if shape == "absent" and statistic.name not in ("presence-count", "absence-pattern"):
            assert "absent entry filled by its column's training median" in words, (statistic.name, words)


def test_a_membership_event_in_words_holds_exactly_where_the_score_reaches_the_threshold():
    from audit.statistics.fitted_scores import MembershipScore, cell_hashes

    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, (2_000, 1)).astype(np.float64)
    hashes = cell_hashes(y[:3], None)
    score = MembershipScore(None, np.unique(hashes[:2]), np.unique(hashes[1:]))
    s = score(y)
    for threshold, words in [(1.5, "never"), (-1.0, "always"), (1.0, "is one of"), (0.0, "is none of")]:
        assert score.event(threshold).startswith(words) or words in score.event(threshold), threshold
        if words == "never":
            assert not (s >= threshold).any()
        if words == "always":
            assert (s >= threshold).all()
    empty = MembershipScore(None, np.unique(hashes[:2]), np.array([], np.uint64))
    assert empty.event(0.0).startswith("always") and (empty(y) >= 0.0).all()
