"""multi-freq-ldpy's frequency-oracle clients (``multi_freq_ldpy.pure_frequency_oracles``) as oracles.

Reports exactly as the clients return them:

* GRR_Client → the value (1 column); UE_Client (SUE: ``optimal=False``, OUE: ``optimal=True``) → the bit vector
  (k columns); HE_Client → the noisy histogram (k columns; THE and SHE share this client and differ in the
  aggregator, so they differ here only in ``support``, THE's with the aggregator's own threshold);
  SS_Client → the subset as the array it returns (s columns, **in its order**: the client writes the true value
  first whenever the subset holds it); LH_Client (BLH: ``optimal=False``, OLH: ``optimal=True``) → the tuple
  (y, seed) as y and the seed's four 16-bit limbs; ADP_Client → GRR's value or UE's vector, whichever it picks.

Batching: GRR_Client, UE_Client, SS_Client and HE_Client are numba-compiled, so a block of reports is drawn by
one compiled loop that calls the same compiled client (same code, same generator stream as one Python call
per report, checked by the tests). LH_Client and ADP_Client are Python functions: one call per report.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
from multi_freq_ldpy.pure_frequency_oracles.ADP import ADP_Client
from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Client
from multi_freq_ldpy.pure_frequency_oracles.LH import LH_Client
from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Client
from numba import njit

from pgc.errors import UserError

from .direct import GRR, Adaptive, HistogramEncoding, SubsetSelection, subset_size
from .hashed import LocalHashing, olh_range
from .hashing import xxh32_mod
from .library import LibraryOracle, hashed_reports
from .oracle import integer_from_limbs
from .seeding import seeded_library_generators
from .unary import UnaryEncoding

# Releases before 0.2.5 (pgc bench versions reads 0.2.3 and 0.2.4): no histogram encoding (HE); no subset
# selection (SS) before 0.2.4; LH_Client(value, ε, optimal) without k before 0.2.5
try:
    from multi_freq_ldpy.pure_frequency_oracles.HE import HE_Client, find_tresh
except ImportError:
    HE_Client = find_tresh = None
try:
    from multi_freq_ldpy.pure_frequency_oracles.SS import SS_Client
except ImportError:
    SS_Client = None
LH_TAKES_K = "k" in inspect.signature(LH_Client).parameters


def _missing(protocols: str, module: str, since: str) -> UserError:
    from .library import library_version

    return UserError(
        f"multi-freq-ldpy {library_version('multi-freq-ldpy')} has no {module} client (pure_frequency_oracles."
        f"{module}, from {since}): for {protocols}, install multi-freq-ldpy>={since}"
    )


@njit(cache=True)
def _grr_block(values, k, epsilon):
    out = np.empty(values.size)
    for i in range(values.size):
        out[i] = GRR_Client(values[i], k, epsilon)
    return out


@njit(cache=True)
def _ue_block(values, k, epsilon, optimal):
    out = np.empty((values.size, k))
    for i in range(values.size):
        out[i] = UE_Client(values[i], k, epsilon, optimal)
    return out


@njit(cache=True)
def _ss_block(values, k, epsilon, size):
    out = np.empty((values.size, size))
    for i in range(values.size):
        out[i] = SS_Client(values[i], k, epsilon)
    return out


@njit(cache=True)
def _he_block(values, k, epsilon):
    out = np.empty((values.size, k))
    for i in range(values.size):
        out[i] = HE_Client(values[i], k, epsilon)
    return out


class MflOracle(LibraryOracle):
    distribution = "multi-freq-ldpy"
    source = "multi-freq-ldpy"

    @property
    def batching(self) -> str:
        return "a compiled loop per block of reports over the library's numba-compiled client"


class MflGRR(MflOracle):
    name, width = "GRR", 1

    def client_block(self, values):
        return _grr_block(values, self.k, self.epsilon)[:, None]

    def make_reference(self):
        return GRR(self.k, self.epsilon)


class MflUE(MflOracle):
    def __init__(self, k, epsilon, optimized: bool):
        super().__init__(k, epsilon)
        self.optimized = bool(optimized)
        self.name, self.width = ("OUE" if self.optimized else "SUE"), self.k

    def client_block(self, values):
        return _ue_block(values, self.k, self.epsilon, self.optimized)

    def make_reference(self):
        return UnaryEncoding(self.k, self.epsilon, optimized=self.optimized)


class MflHE(MflOracle):
    def __init__(self, k, epsilon, thresholded: bool):
        from scipy.optimize import minimize_scalar

        if HE_Client is None:
            raise _missing("THE and SHE", "HE", "0.2.5")
        super().__init__(k, epsilon)
        self.thresholded = bool(thresholded)
        self.name, self.width = ("THE" if self.thresholded else "SHE"), self.k
        # the aggregator's threshold, as HE_Aggregator_MI computes it
        self.theta = (
            float(minimize_scalar(find_tresh, bounds=[0.5, 1], method="bounded", args=(self.epsilon,)).x)
            if self.thresholded
            else None
        )

    def parameters(self):
        return {**super().parameters(), **({"theta": self.theta} if self.thresholded else {})}

    def client_block(self, values):
        return _he_block(values, self.k, self.epsilon)

    def make_reference(self):
        return HistogramEncoding(self.k, self.epsilon, thresholded=self.thresholded)

    def support(self, reports, candidates):
        y = np.asarray(reports)[:, np.asarray(candidates)]
        return (y > self.theta).astype(np.float64) if self.thresholded else np.abs(y) - np.abs(y - 1.0)

    def exact_epsilon(self, v=0, v_prime=None):
        return self.epsilon  # Laplace(2/ε) on a one-hot vector


class MflSS(MflOracle):
    name = "SS"

    def __init__(self, k, epsilon):
        if SS_Client is None:
            raise _missing("SS", "SS", "0.2.4")
        super().__init__(k, epsilon)
        self.s = subset_size(self.k, self.epsilon)  # SS_Client's int(max(1, np.rint(k/(e^ε + 1))))
        self.width = self.s

    def parameters(self):
        return {**super().parameters(), "subset_size": self.s}

    def client_block(self, values):
        return _ss_block(values, self.k, self.epsilon, self.s)

    def make_reference(self):
        return SubsetSelection(self.k, self.epsilon)

    def support(self, reports, candidates):
        r = np.asarray(reports)
        return np.any(r[:, :, None] == np.asarray(candidates)[None, None, :], axis=1).astype(np.float64)

    def exact_epsilon(self, v=0, v_prime=None):
        """ε for s = 1 (GRR); ∞ for s ≥ 2: an array that starts with v and holds v′ elsewhere has probability
        p_v·(s − 1)/(k − 1) under v and 0 under v′ (under v′ the array starts with v′ or lacks it)."""
        return math.inf if self.s >= 2 else self.reference().exact_epsilon()


class MflLH(MflOracle):
    width = 5  # y, then the seed's four 16-bit limbs

    def __init__(self, k, epsilon, optimized: bool):
        super().__init__(k, epsilon)
        self.optimized = bool(optimized)
        self.name = "OLH" if self.optimized else "BLH"
        self.g = olh_range(self.epsilon) if self.optimized else 2

    def parameters(self):
        return {**super().parameters(), "g": self.g}

    @property
    def batching(self):
        return "a Python call of LH_Client per report (a Python function: xxhash and numpy's global generator)"

    def client_block(self, values):
        if LH_TAKES_K:
            return hashed_reports(LH_Client(int(v), self.k, self.epsilon, self.optimized) for v in values)
        return hashed_reports(LH_Client(int(v), self.epsilon, self.optimized) for v in values)

    def make_reference(self):
        return LocalHashing(self.k, self.epsilon, optimized=self.optimized)

    def support(self, reports, candidates):
        r = np.asarray(reports)
        seeds = integer_from_limbs(r[:, 1:5])  # xxh32 reads the seed modulo 2³²
        return (xxh32_mod(candidates, seeds, self.g) == r[:, :1].astype(np.int64)).astype(np.float64)


class MflADP(MflOracle):
    name = "ADP"

    def __init__(self, k, epsilon):
        super().__init__(k, epsilon)
        with seeded_library_generators(0):  # one report to see which protocol ADP_Client picks here
            probe = ADP_Client(0, self.k, self.epsilon)
        self.chosen = "OUE" if np.ndim(probe) else "GRR"
        self.width = self.k if self.chosen == "OUE" else 1

    def parameters(self):
        return {**super().parameters(), "chosen": self.chosen}

    def client_block(self, values):
        return np.array(
            [np.atleast_1d(ADP_Client(int(v), self.k, self.epsilon)) for v in values], dtype=np.float64
        ).reshape(len(values), self.width)

    @property
    def batching(self):
        return "a Python call of ADP_Client per report (a Python function)"

    def make_reference(self):
        return Adaptive(self.k, self.epsilon)

    def support(self, reports, candidates):
        inner = UnaryEncoding(self.k, self.epsilon, True) if self.chosen == "OUE" else GRR(self.k, self.epsilon)
        return inner.support(reports, candidates)


PROTOCOLS = {
    "GRR": MflGRR,
    "SUE": lambda k, epsilon: MflUE(k, epsilon, False),
    "OUE": lambda k, epsilon: MflUE(k, epsilon, True),
    "SS": MflSS,
    "THE": lambda k, epsilon: MflHE(k, epsilon, True),
    "SHE": lambda k, epsilon: MflHE(k, epsilon, False),
    "BLH": lambda k, epsilon: MflLH(k, epsilon, False),
    "OLH": lambda k, epsilon: MflLH(k, epsilon, True),
    "ADP": MflADP,
}
