"""Reference oracles that report a value, a subset or a noisy histogram: GRR, subset selection, histogram
encoding (SHE and THE) and the adaptive choice between GRR and OUE.

* **GRR** (generalized randomized response, k-RR; Kairouz, Bonawitz & Ramage ICML 2016; Wang et al.
  USENIX Security 2017 §4.1, "direct encoding"): the true value w.p. p = e^ε/(e^ε + k − 1), each other value
  w.p. q = 1/(e^ε + k − 1). Exact ε = ln(p/q) = ε.
* **SS** (k-subset; Ye & Barg IEEE T-IT 2018, Wang et al. arXiv:1607.08025): a subset of size
  s = max(1, round(k/(e^ε + 1))) that holds the true value w.p. p_v = s·e^ε/(s·e^ε + k − s), the other
  members uniform. Reported as a set (its membership vector). Exact ε: a set with v but not v′ against one
  with v′ but not v, ln(p_v·(k − s)/((1 − p_v)·s)) = ε.
* **HE** (histogram encoding; Wang et al. §4.3): the one-hot vector plus Laplace(2/ε) noise per entry
  (L1 sensitivity 2): exact ε = ε. **SHE** sums the noisy vectors; **THE** counts the entries above θ, the θ in
  (1/2, 1) that minimises the estimator's variance q*(1 − q*)/(p* − q*)² with p* = 1 − ½e^{ε(θ−1)/2},
  q* = ½e^{−εθ/2}. Both send the same report; they differ in the aggregator's decoding (``support``).
* **ADP** (adaptive; Wang et al. §5, as multi-freq-ldpy's ADP_Client): GRR when its estimator variance
  q(1 − q)/(p − q)² is at most OUE's, else OUE.
"""

from __future__ import annotations

import math

import numpy as np

from .oracle import Oracle, checked_values, log_ratio


class GRR(Oracle):
    name = "GRR"
    width = 1

    def __init__(self, k: int, epsilon: float):
        super().__init__(k, epsilon)
        e = math.exp(self.epsilon)
        self.p, self.q = e / (e + self.k - 1), 1.0 / (e + self.k - 1)

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        v = checked_values(values, self.k)
        keep = rng.random(v.size) < self.p
        other = rng.integers(0, self.k - 1, size=v.size)
        other += other >= v  # uniform over the k − 1 other values
        return np.where(keep, v, other).astype(np.float64)[:, None]

    def support(self, reports, candidates) -> np.ndarray:
        return (np.asarray(reports)[:, :1] == np.asarray(candidates)[None, :]).astype(np.float64)

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        return log_ratio(self.p, self.q)


def subset_size(k: int, epsilon: float) -> int:
    """s = max(1, round(k/(e^ε + 1))): the subset size that minimises the estimator's variance."""
    return max(1, int(np.rint(k / (math.exp(epsilon) + 1.0))))


def uniform_members(v: np.ndarray, counts: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """(n, k) membership of ``counts[i]`` values drawn uniformly without replacement from range(k) minus v[i]."""
    keys = rng.random((v.size, k))
    keys[np.arange(v.size), v] = 2.0  # never among the first counts[i] (keys lie in [0, 1))
    order = np.argsort(keys, axis=1)
    chosen = np.arange(k)[None, :] < counts[:, None]
    member = np.zeros((v.size, k), dtype=bool)
    member[np.nonzero(chosen)[0], order[chosen]] = True
    return member


class SubsetSelection(Oracle):
    name = "SS"

    def __init__(self, k: int, epsilon: float):
        super().__init__(k, epsilon)
        self.s = subset_size(self.k, self.epsilon)
        e = math.exp(self.epsilon)
        self.p_v = self.s * e / (self.s * e + self.k - self.s)
        self.width = self.k

    def parameters(self) -> dict:
        return {**super().parameters(), "subset_size": self.s}

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        v = checked_values(values, self.k)
        holds = rng.random(v.size) < self.p_v
        member = uniform_members(v, self.s - holds.astype(np.int64), self.k, rng)
        member[np.arange(v.size), v] = holds
        return member.astype(np.float64)

    def support(self, reports, candidates) -> np.ndarray:
        return np.asarray(reports)[:, np.asarray(candidates)].astype(np.float64)

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        return log_ratio(self.p_v * (self.k - self.s), (1.0 - self.p_v) * self.s)


def the_threshold(epsilon: float) -> float:
    """THE's θ in (1/2, 1): the minimiser of q*(1 − q*)/(p* − q*)² (Wang et al. 2017, §4.3)."""
    from scipy.optimize import minimize_scalar

    def variance(theta: float) -> float:
        p = 1.0 - 0.5 * math.exp(epsilon * (theta - 1.0) / 2.0)
        q = 0.5 * math.exp(-epsilon * theta / 2.0)
        return q * (1.0 - q) / (p - q) ** 2

    return float(minimize_scalar(variance, bounds=(0.5, 1.0), method="bounded").x)


class HistogramEncoding(Oracle):
    """SHE (``thresholded=False``: the aggregator sums the noisy vectors) or THE (``thresholded=True``: it counts
    the entries above θ); the report is the same noisy one-hot vector."""

    def __init__(self, k: int, epsilon: float, thresholded: bool = False):
        super().__init__(k, epsilon)
        self.thresholded = bool(thresholded)
        self.name = "THE" if self.thresholded else "SHE"
        self.scale = 2.0 / self.epsilon
        self.theta = the_threshold(self.epsilon) if self.thresholded else None
        self.width = self.k

    def parameters(self) -> dict:
        extra = {"theta": self.theta} if self.thresholded else {}
        return {**super().parameters(), "laplace_scale": self.scale, **extra}

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        v = checked_values(values, self.k)
        out = rng.laplace(0.0, self.scale, size=(v.size, self.k))
        out[np.arange(v.size), v] += 1.0
        return out

    def support(self, reports, candidates) -> np.ndarray:
        y = np.asarray(reports, dtype=np.float64)[:, np.asarray(candidates)]
        if self.thresholded:
            return (y > self.theta).astype(np.float64)
        return np.abs(y) - np.abs(y - 1.0)  # the Laplace log-likelihood of "this entry holds the one", ×scale

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        return 2.0 / self.scale  # two entries differ by 1, each Laplace(2/ε)


def pure_variance(p: float, q: float) -> float:
    """The frequency estimator's variance per user, q(1 − q)/(p − q)² (Wang et al. 2017, eq. 2)."""
    return q * (1.0 - q) / (p - q) ** 2


class Adaptive(Oracle):
    """ADP: GRR where its variance is at most OUE's, else OUE (the chosen oracle in ``chosen``)."""

    name = "ADP"

    def __init__(self, k: int, epsilon: float):
        from .unary import UnaryEncoding

        super().__init__(k, epsilon)
        grr, oue = GRR(self.k, self.epsilon), UnaryEncoding(self.k, self.epsilon, optimized=True)
        self.chosen = grr if pure_variance(grr.p, grr.q) <= pure_variance(oue.p, oue.q) else oue
        self.width = self.chosen.width

    def parameters(self) -> dict:
        return {**super().parameters(), "chosen": self.chosen.name}

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        return self.chosen.release(values, rng)

    def support(self, reports, candidates) -> np.ndarray:
        return self.chosen.support(reports, candidates)

    def exact_epsilon(self, v: int = 0, v_prime: int | None = None) -> float:
        return self.chosen.exact_epsilon(v, v_prime)
