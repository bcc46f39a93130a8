"""Gradient-boosted trees as data: :class:`TreeEnsemble` holds the trees of a fitted scikit-learn
``HistGradientBoostingClassifier`` as flat arrays (each node's feature, threshold, side for a missing value,
children and leaf value) and computes its log-odds from them — the baseline, then each tree's leaf added in the
booster's order, the same sum to the last bit as ``decision_function`` — so a learned statistic's witness saves
its classifier without pickle and rebuilds it without scikit-learn."""

from __future__ import annotations

from typing import Any

import numpy as np

from audit.statistics.fitted import FittedScore


class TreeEnsemble(FittedScore):
    """The log-odds ``baseline + Σ_trees leaf(x)``: a tree starts at its ``roots`` entry; at a split node a row goes
    to ``left`` when its value of ``feature`` is at most ``threshold`` (a missing value: where ``missing_left``
    says), else to ``right``; a leaf (``is_leaf``) adds its ``value``. Node indices are global over all trees."""

    KIND = "tree-ensemble"
    ARRAYS = {
        "roots": "i:t",
        "feature": "i:v",
        "threshold": "f:v",
        "missing_left": "b:v",
        "left": "i:v",
        "right": "i:v",
        "is_leaf": "b:v",
        "value": "f:v",
    }

    @classmethod
    def check(cls, parameters: dict) -> str | None:
        """Every node's children lie after it (so a walk down a tree ends), every index among the nodes."""
        nodes = parameters["value"].size
        split = np.flatnonzero(~parameters["is_leaf"])
        roots, left, right = parameters["roots"], parameters["left"][split], parameters["right"][split]
        if roots.size and roots.max() >= nodes:
            return "a root outside the nodes"
        if np.any(left <= split) or np.any(right <= split) or np.any(left >= nodes) or np.any(right >= nodes):
            return "a split node's children must lie after it, among the nodes"
        return None

    def __init__(
        self,
        baseline: Any,
        roots: np.ndarray,
        feature: np.ndarray,
        threshold: np.ndarray,
        missing_left: np.ndarray,
        left: np.ndarray,
        right: np.ndarray,
        is_leaf: np.ndarray,
        value: np.ndarray,
    ):
        self.baseline = float(baseline)
        self.roots, self.feature, self.threshold = roots, feature, threshold
        self.missing_left, self.left, self.right, self.is_leaf, self.value = missing_left, left, right, is_leaf, value

    @classmethod
    def of_model(cls, model: Any) -> TreeEnsemble:
        """The trees of a fitted binary ``HistGradientBoostingClassifier`` on numerical features."""
        nodes = [iteration[0].nodes for iteration in model._predictors]
        if any(len(iteration) != 1 for iteration in model._predictors) or any(n["is_categorical"].any() for n in nodes):
            raise ValueError("a binary classifier on numerical features has one tree per iteration, no categories")
        offsets = np.cumsum([0] + [len(n) for n in nodes])[:-1].astype(np.int64)
        joined = np.concatenate(nodes) if nodes else np.zeros(0, dtype=model._predictors[0][0].nodes.dtype)
        shift = np.concatenate([np.full(len(n), o, np.int64) for n, o in zip(nodes, offsets, strict=True)])
        return cls(
            baseline=np.asarray(model._baseline_prediction, np.float64).reshape(-1)[0],
            roots=offsets,
            feature=joined["feature_idx"].astype(np.int64),
            threshold=joined["num_threshold"].astype(np.float64),
            missing_left=joined["missing_go_to_left"].astype(bool),
            left=joined["left"].astype(np.int64) + shift,
            right=joined["right"].astype(np.int64) + shift,
            is_leaf=joined["is_leaf"].astype(bool),
            value=joined["value"].astype(np.float64),
        )

    def parameters(self) -> dict:
        return {
            "baseline": np.float64(self.baseline),
            "roots": self.roots,
            "feature": self.feature,
            "threshold": self.threshold,
            "missing_left": self.missing_left,
            "left": self.left,
            "right": self.right,
            "is_leaf": self.is_leaf,
            "value": self.value,
        }

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, np.float64)
        out = np.zeros(len(x)) + self.baseline
        rows = np.arange(len(x))
        for root in self.roots:
            node = np.full(len(x), root, np.int64)
            active = rows[~self.is_leaf[node]]
            while active.size:
                at = node[active]
                v = x[active, self.feature[at]]
                go_left = np.where(np.isnan(v), self.missing_left[at], v <= self.threshold[at])
                node[active] = np.where(go_left, self.left[at], self.right[at])
                active = active[~self.is_leaf[node[active]]]
            out += self.value[node]
        return out
