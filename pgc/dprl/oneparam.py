"""Ch. 6: the one-parameter defence (Algorithm 12, eqs. 6.1-6.2, Theorem 6.1).

A classifier's confidence vector y (k classes) is released as z:

* Phase 1 (Algorithm 12): sort y; split [0, 1) at the midpoints of neighbouring scores (line 4); discretise
  sub-range i into m candidates lower_i + (j-1)ρ_i, ρ_i = width_i / m (line 6); pick one candidate per
  sub-range with the exponential mechanism, utility u_j^i = 1 / |y_i - r_j| (the text below the algorithm)
  and probability ∝ exp(ε u / (2Δu)) (lines 8-9);
* Phase 2 (eq. 6.2): z = softmax(ε y' / 2), returned in the classes' own order.

Claim (Theorem 6.1): k·ε-DP per query, over confidence vectors ŷ with ‖ŷ - y‖₁ ≤ 1 and equal neighbour sums
y_i + y_{i+1} (the proof's relation). ``relation="member"`` holds the claim to any two confidence vectors
(one member of the training set in or out changes the prediction arbitrarily). ``reference=True`` releases
y + Lap(Δ₁/(kε)) per class instead: the textbook kε-DP mechanism at the same claim (Δ₁ = 1 for the
thesis' relation, 2 for two probability vectors).
"""

from __future__ import annotations

import math

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError
from pgc.schemas.channels import ChannelFamily, ChannelKind

from .found_pairs import FOUND_PAIRS
from .spaces import SecretSpace, index_from, sample_rows, softmax_rows

DISTANCE_FLOOR = 1e-290  # |y_i - r_j| = 0 (a candidate equals the score) gives the largest finite utility
RELATIONS = ("thesis", "member")
UTILITY_ORIGINS = ("algorithm", "text")


def sub_ranges(y_sorted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 12 line 4: the lower and upper ends of the k sub-ranges of [0, 1) (scores sorted ascending)."""
    mid = 0.5 * (y_sorted[:-1] + y_sorted[1:])
    return np.concatenate([[0.0], mid]), np.concatenate([mid, [1.0]])


def candidates(y_sorted: np.ndarray, m: int) -> np.ndarray:
    """Algorithm 12 line 6: (k, m) candidates lower_i + (j-1)ρ_i with ρ_i = (upper_i - lower_i) / m."""
    lower, upper = sub_ranges(y_sorted)
    rho = (upper - lower) / m
    return lower[:, None] + np.arange(m)[None, :] * rho[:, None]


def phase_one_probabilities(
    y_sorted: np.ndarray,
    epsilon: float,
    m: int = 5,
    utility_sensitivity: float = 1.0,
    utility_origin: str = "algorithm",
) -> tuple[np.ndarray, np.ndarray]:
    """The candidates and their exponential-mechanism probabilities, (k, m) each. ``utility_origin``:
    "algorithm" measures |y_i - r_j| to the candidates of line 6; "text" to (i-1)/k + (j-1)ρ_i as the
    utility's equation writes it."""
    k = y_sorted.shape[0]
    cands = candidates(y_sorted, m)
    if utility_origin == "algorithm":
        anchors = cands
    else:
        lower, upper = sub_ranges(y_sorted)
        anchors = (np.arange(k) / k)[:, None] + np.arange(m)[None, :] * ((upper - lower) / m)[:, None]
    utility = 1.0 / np.maximum(np.abs(y_sorted[:, None] - anchors), DISTANCE_FLOOR)  # u_j^i
    logits = np.minimum(epsilon * utility / (2.0 * utility_sensitivity), 1e300)
    return cands, softmax_rows(logits)


def normalise(y_prime: np.ndarray, epsilon: float) -> np.ndarray:
    """Eq. 6.2: z_i = exp(ε y'_i / 2) / Σ_j exp(ε y'_j / 2), row-wise."""
    return softmax_rows(epsilon * y_prime / 2.0)


def confidence_vector(secret, k: int) -> np.ndarray:
    try:
        y = np.asarray(secret, dtype=np.float64)
    except (TypeError, ValueError):
        raise UserError("a secret is a confidence vector (a list of k numbers)") from None
    if y.shape != (k,) or not np.all(np.isfinite(y)) or np.any(y < 0) or np.any(y >= 1.0 + 1e-9):
        raise UserError(f"a secret is a confidence vector of {k} scores in [0, 1)")
    return y


class OneParameterDefenceSystem:
    report_section = "published-claims"  # pgc report: the "Published claims" section
    channels = ("scores",)
    channel_kinds = {"scores": ChannelKind.single(ChannelFamily.SCORE, "scores")}

    def __init__(
        self,
        epsilon: float = 0.1,
        k: int = 10,
        m: int = 5,
        utility_sensitivity: float = 1.0,
        utility_origin: str = "algorithm",
        relation: str = "thesis",
        reference: bool = False,
    ):
        if not (epsilon > 0 and math.isfinite(epsilon)) or k < 2 or m < 1 or utility_sensitivity <= 0:
            raise UserError("need epsilon > 0, k >= 2, m >= 1 and utility_sensitivity > 0")
        if utility_origin not in UTILITY_ORIGINS or relation not in RELATIONS:
            raise UserError(f"utility_origin is one of {UTILITY_ORIGINS}, relation one of {RELATIONS}")
        if relation == "thesis" and k % 2:
            raise UserError("the thesis' relation (equal neighbour sums, equal totals) needs an even k")
        self.epsilon, self.k, self.m = float(epsilon), int(k), int(m)
        self.utility_sensitivity, self.utility_origin = float(utility_sensitivity), utility_origin
        self.relation_name, self.reference = relation, bool(reference)
        self.claim = PrivacyClaim(self.k * self.epsilon, 0.0, ("scores",))  # Theorem 6.1: k·ε-DP
        self.name = f"oneparam-{'laplace-reference' if reference else 'defence'} ε={epsilon:g} k={k}" + (
            "" if utility_origin == "algorithm" else " utility-as-text"
        )
        self.relation = (
            "thesis (Theorem 6.1's proof): ‖ŷ - y‖₁ ≤ 1 with equal neighbour sums y_i + y_{i+1}"
            if relation == "thesis"
            else "member: any two confidence vectors (one training member in or out)"
        )
        self.secret_space = thesis_space(self.k) if relation == "thesis" else member_space(self.k)

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        y = confidence_vector(secret, self.k)
        order = np.argsort(y, kind="stable")
        if self.reference:
            sensitivity = 1.0 if self.relation_name == "thesis" else 2.0
            z_sorted = y[order][None, :] + rng.laplace(0.0, sensitivity / (self.k * self.epsilon), size=(n, self.k))
        else:
            cands, probs = phase_one_probabilities(
                y[order], self.epsilon, self.m, self.utility_sensitivity, self.utility_origin
            )
            picks = sample_rows(probs, n, rng)  # Algorithm 12 lines 8-9, one draw per sub-range
            y_prime = cands[np.arange(self.k)[None, :], picks]
            z_sorted = normalise(y_prime, self.epsilon)
        z = np.empty_like(z_sorted)
        z[:, order] = z_sorted  # back to the classes' own order
        return {"scores": z}

    def canaries(self) -> dict:
        y = example_confidences(self.k)
        shifted = y + 0.4 * min_gap(y) * alternating(self.k)
        confident = np.full(self.k, 0.02 / (self.k - 1))
        confident[-1] = 0.98
        certain = np.full(self.k, 1e-4)
        certain[-1] = 1.0 - 1e-4 * (self.k - 1)
        other = certain[::-1].copy()
        return {
            "thesis: alternating shift (equal neighbour sums)": (y, shifted),
            "member: confident vs typical prediction": (confident, y),
            "member: near-certain predictions of two different classes": (certain, other),
            **{name: pair for name, pair in FOUND_PAIRS["oneparam"].items() if len(pair[0]) == self.k},
        }

    def describe_secret(self, secret) -> str:
        return "y = [" + ", ".join(f"{v:.4g}" for v in np.asarray(secret, dtype=float)) + "]"


def example_confidences(k: int) -> np.ndarray:
    """k ascending scores 0.01, 0.02, ... with the rest on the last class."""
    y = 0.01 * np.arange(1, k, dtype=np.float64)
    return np.concatenate([y, [1.0 - y.sum()]])


def alternating(k: int) -> np.ndarray:
    """+1, -1, +1, ...: adding t·this keeps every neighbour sum y_i + y_{i+1} (and, k even, the total)."""
    return np.where(np.arange(k) % 2 == 0, 1.0, -1.0)


def min_gap(y_sorted: np.ndarray) -> float:
    """The largest t for which y + t·alternating stays sorted, non-negative and within ‖·‖₁ ≤ 1."""
    gaps = np.diff(y_sorted)
    return float(min(0.5 * gaps.min(initial=1.0), y_sorted[0] if y_sorted.size else 1.0, 1.0 / y_sorted.size))


def _scores_from(x: np.ndarray) -> np.ndarray:
    w = 0.02 + x
    return np.sort(w / w.sum() * (1.0 - 1e-9))


def thesis_space(k: int) -> SecretSpace:
    """y from the first k coordinates (sorted), ŷ = y + t·alternating with t ∈ [-t_max, t_max] from the last."""

    def make_pair(x):
        y = _scores_from(x[:k])
        t = (2.0 * x[k] - 1.0) * min_gap(y)
        y_hat = y + t * alternating(k)
        return y, np.clip(y_hat, 0.0, 1.0 - 1e-9)

    return SecretSpace("thesis: ‖ŷ - y‖₁ ≤ 1, equal neighbour sums", k + 1, make_pair)


def member_space(k: int) -> SecretSpace:
    """Two confidence vectors, each from k coordinates (the class of the top score from one more)."""

    def make_pair(x):
        y, y2 = _scores_from(x[:k]), _scores_from(x[k : 2 * k])
        top = index_from(x[2 * k], k)
        y2[[top, k - 1]] = y2[[k - 1, top]]
        return y, y2

    return SecretSpace("member: any two confidence vectors", 2 * k + 1, make_pair)


def system(
    epsilon: float = 0.1,
    k: int = 10,
    m: int = 5,
    utility_sensitivity: float = 1.0,
    utility_origin: str = "algorithm",
    relation: str = "thesis",
    reference: bool = False,
):
    """The one-parameter defence at the thesis' §6.5 setting (k = 10, m = 5; ε ∈ {0.1, 0.7, 1.4, 2.0})."""
    return OneParameterDefenceSystem(epsilon, k, m, utility_sensitivity, utility_origin, relation, reference)


def defend_rows(scores: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Each confidence vector (a row) through the one-parameter defence at ``epsilon``, one release each; a
    score of exactly 1 is moved just inside [0, 1), the range Algorithm 12 divides."""
    defence = system(epsilon=epsilon, k=scores.shape[1])
    out = np.empty_like(scores)
    for i, y in enumerate(np.minimum(scores, 1.0 - 1e-12)):
        out[i] = defence.release(y, 1, rng)["scores"][0]
    return out
