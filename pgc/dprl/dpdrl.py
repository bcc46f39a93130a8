"""Ch. 5: DP-DRL, the exponential-mechanism obfuscation of a grid agent's observation (Algorithms 9-10,
§5.4.2-5.4.3, Theorem 5.1).

The agent observes its 8 neighbouring cells (1 free, 0 wall: §5.6.1.3). At every visited state:

* Algorithm 9 (score function): d_i = ‖Q(O'_(i)) - Q(O)‖₂ with O'_(i) = O with element i obfuscated;
  d'_i = (d_i - d_min)/(d_max - d_min); sr_i = N^(1 - d'_i), N = 10 (§5.6.2.3);
* Algorithm 10: ε = arctan(d_max - d_min) (dynamic, line 4) or a fixed ε ∈ [0.1, 1]; S = sr_k - sr_m, the gap
  between the largest and second-largest score (line 5); p_i ∝ exp(ε sr_i / (2S)) (lines 7-11); the element
  drawn by roulette (lines 14-15) is obfuscated (lines 16-17).

Claim (Theorem 5.1): ε-DP for observations that differ in one element (the dynamic ε never exceeds π/2).
"Obfuscated" for a 0/1 cell reads as *flipped* (Fig. 5.3, the default) or as *replaced by a fair random bit*
(``obfuscation="resample"``); both are audited. Q is the agent's network at the time of the release: a
fixed 8-16-4 ReLU network drawn from ``q_seed`` (the auditor may pass its own weights as the broadcast).
``reference=True`` releases each of the 8 cells by randomized response at ε: the textbook ε-DP release for
the same relation and claim.
"""

from __future__ import annotations

import math

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError

from .found_pairs import FOUND_PAIRS
from .spaces import SecretSpace, index_from, sample_rows, softmax_rows

CELLS = 8  # the 8 neighbouring cells of §5.6.1.3
ACTIONS = 4
HIDDEN = 16
OBFUSCATIONS = ("flip", "resample")
SCORE_GAP_FLOOR = 1e-300  # S = 0 (tied top scores): the limit S -> 0+, a uniform draw among the tied maxima


def q_network(seed: int = 0) -> tuple[np.ndarray, ...]:
    """A fixed 8-16-4 ReLU Q network (weights ~ N(0, 1/fan_in)) drawn from ``seed``."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    w1 = rng.normal(0.0, 1.0 / math.sqrt(CELLS), (CELLS, HIDDEN))
    w2 = rng.normal(0.0, 1.0 / math.sqrt(HIDDEN), (HIDDEN, ACTIONS))
    return w1, np.zeros(HIDDEN), w2, np.zeros(ACTIONS)


def q_values(weights, observations: np.ndarray) -> np.ndarray:
    w1, b1, w2, b2 = weights
    return np.maximum(observations @ w1 + b1, 0.0) @ w2 + b2


def obfuscated_each(o: np.ndarray) -> np.ndarray:
    """(n, n) rows O'_(i): O with element i flipped (Algorithm 9 line 5)."""
    return np.where(np.eye(o.size, dtype=bool), 1.0 - o[None, :], o[None, :])


def scores_from_distances(d: np.ndarray, big_n: float = 10.0) -> tuple[np.ndarray, float, float]:
    """Algorithm 9 lines 10-17 from the distances d_i: (SR, d_min, d_max). Equal distances (d_max = d_min)
    give d' = 0: every score N."""
    d_min, d_max = float(d.min()), float(d.max())
    d_norm = (d - d_min) / (d_max - d_min) if d_max > d_min else np.zeros_like(d)
    return big_n ** (1.0 - d_norm), d_min, d_max


def probabilities_from_distances(d: np.ndarray, epsilon: float | None, big_n: float = 10.0) -> np.ndarray:
    """Algorithm 10 lines 3-13 from the distances d_i: the probability of obfuscating each element
    (``epsilon`` None: the dynamic ε of line 4)."""
    sr, d_min, d_max = scores_from_distances(d, big_n)
    eps = math.atan(d_max - d_min) if epsilon is None else epsilon  # line 4
    top = np.sort(sr)[::-1]
    gap = max(float(top[0] - top[1]), SCORE_GAP_FLOOR)  # line 5: S = sr_k - sr_m
    return softmax_rows((eps * sr / (2.0 * gap))[None, :])[0]


def distances(weights, o: np.ndarray) -> np.ndarray:
    """Algorithm 9 lines 3-9: d_i = ‖Q(O'_(i)) - Q(O)‖₂."""
    return np.linalg.norm(q_values(weights, obfuscated_each(o)) - q_values(weights, o[None, :]), axis=1)


def scores(weights, o: np.ndarray, big_n: float = 10.0) -> tuple[np.ndarray, float, float]:
    """Algorithm 9: (SR, d_min, d_max)."""
    return scores_from_distances(distances(weights, o), big_n)


def selection_probabilities(weights, o: np.ndarray, epsilon: float | None, big_n: float = 10.0) -> np.ndarray:
    """Algorithm 10 lines 3-13: the probability of obfuscating each element (``epsilon`` None: dynamic)."""
    return probabilities_from_distances(distances(weights, o), epsilon, big_n)


def observation(secret) -> np.ndarray:
    try:
        o = np.asarray(secret, dtype=np.float64)
    except (TypeError, ValueError):
        raise UserError("a secret is an observation: 8 cells, each 0 (wall) or 1 (free)") from None
    if o.shape != (CELLS,) or not np.all((o == 0.0) | (o == 1.0)):
        raise UserError("a secret is an observation: 8 cells, each 0 (wall) or 1 (free)")
    return o


class DpDrlObservationSystem:
    report_section = "published-claims"  # pgc report: the "Published claims" section
    channels = ("observation",)

    def __init__(
        self,
        epsilon: float | str = 0.1,
        big_n: float = 10.0,
        obfuscation: str = "flip",
        q_seed: int = 0,
        reference: bool = False,
    ):
        self.dynamic = epsilon == "dynamic"
        if not self.dynamic and not (isinstance(epsilon, (int, float)) and 0 < float(epsilon) < math.inf):
            raise UserError(f"epsilon is a positive number or 'dynamic', got {epsilon!r}")
        if obfuscation not in OBFUSCATIONS or big_n <= 1:
            raise UserError(f"obfuscation is one of {OBFUSCATIONS}; N > 1")
        self.epsilon = None if self.dynamic else float(epsilon)
        self.big_n, self.obfuscation, self.reference = float(big_n), obfuscation, bool(reference)
        self.weights = q_network(q_seed)
        claimed = math.pi / 2 if self.dynamic else self.epsilon  # arctan(·) < π/2
        self.claim = PrivacyClaim(claimed, 0.0, ("observation",))
        label = "dynamic" if self.dynamic else f"{epsilon:g}"
        self.name = ("dpdrl-randomized-response-reference" if reference else f"dpdrl-{obfuscation}") + f" ε={label}"
        self.relation = "Theorem 5.1: two observations that differ in one element (one cell of the map)"
        self.secret_space = SecretSpace(self.relation, CELLS + 1, _observation_pair)

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        o = observation(secret)
        if self.reference:
            eps = self.claim.epsilon
            keep = rng.random((n, CELLS)) < math.exp(eps) / (1.0 + math.exp(eps))
            return {"observation": np.where(keep, o[None, :], 1.0 - o[None, :])}
        weights = self.weights if broadcast is None else unpack_weights(broadcast)
        p = selection_probabilities(weights, o, self.epsilon, self.big_n)
        chosen = sample_rows(p[None, :], n, rng)[:, 0]  # lines 14-15: roulette wheel
        out = np.repeat(o[None, :], n, axis=0)
        rows = np.arange(n)
        if self.obfuscation == "flip":
            out[rows, chosen] = 1.0 - o[chosen]
        else:
            out[rows, chosen] = (rng.random(n) < 0.5).astype(np.float64)
        return {"observation": out}

    def canaries(self) -> dict:
        o = np.array([1, 1, 1, 0, 1, 1, 0, 1], dtype=np.float64)
        o2 = o.copy()
        o2[0] = 0.0
        return {"one element differs": (o, o2), **FOUND_PAIRS["dpdrl"]}

    def describe_secret(self, secret) -> str:
        return "cells " + "".join(str(int(v)) for v in np.asarray(secret, dtype=float))


def unpack_weights(flat) -> tuple[np.ndarray, ...]:
    """A flat vector (the broadcast) as the Q network's weights."""
    flat = np.asarray(flat, dtype=np.float64).reshape(-1)
    sizes = (CELLS * HIDDEN, HIDDEN, HIDDEN * ACTIONS, ACTIONS)
    if flat.size != sum(sizes):
        raise UserError(f"a Q network broadcast has {sum(sizes)} numbers, got {flat.size}")
    parts = np.split(flat, np.cumsum(sizes)[:-1])
    return parts[0].reshape(CELLS, HIDDEN), parts[1], parts[2].reshape(HIDDEN, ACTIONS), parts[3]


def _observation_pair(x: np.ndarray):
    o = (x[:CELLS] >= 0.5).astype(np.float64)
    o2 = o.copy()
    j = index_from(x[CELLS], CELLS)
    o2[j] = 1.0 - o2[j]
    return o, o2


def system(
    epsilon: float | str = 0.1, big_n: float = 10.0, obfuscation: str = "flip", q_seed: int = 0, reference: bool = False
):
    """DP-DRL's observation release at §5.6.2.3's setting (N = 10; ε = 0.1, or "dynamic")."""
    return DpDrlObservationSystem(epsilon, big_n, obfuscation, q_seed, reference)
