"""pure-ldp's frequency-oracle clients (``pure_ldp.frequency_oracles``) as oracles, one ``privatise`` call per
report (the clients are Python classes drawing from ``random`` and numpy's global generator).

Every client is built with ``index_mapper=lambda x: x`` (values 0..k−1; pure-ldp's default maps x to x − 1) and,
where it needs hash functions, with the ones its server would hand it: ``generate_hash_funcs(K, m)`` (CMS,
HCMS, PCS, SR build theirs that way; CMSServer and PCSServer themselves fail on numpy ≥ 2, ``np.zeros(None)``),
RAPPORServer's family and HadamardResponseServer's permutation (both drawn from the global generators at
construction, seeded here with ``hash_seed``). Reports as ``privatise`` returns them: DE → the value; UE → the
bit vector; LH → (y, seed) as y and four 16-bit limbs; FLH → (y, seed); HE → the noisy vector (SHE, THE: the
same client, THE's ``support`` with HEServer's θ); RAPPOR → the m filter bits and the cohort; HR → the output
symbol; HM → the t pairs (j, coefficient); CMS → the ±1 vector and j; HCMS → (b·w_l, j, l); SR → (y, FLH
seed, j); PCS → the ±1 vector and the hash index.
"""

from __future__ import annotations

import numpy as np
from pure_ldp.frequency_oracles import DEClient, FastLHClient, HEClient, HEServer, LHClient, UEClient

from .direct import GRR, HistogramEncoding
from .hashed import FastLocalHashing, LocalHashing
from .hashing import xxh32_mod
from .library import LibraryOracle, hashed_reports
from .oracle import integer_from_limbs
from .unary import UnaryEncoding


def identity(x):
    return x


class PureOracle(LibraryOracle):
    distribution = "pure-ldp"
    source = "pure-ldp"

    def client_block(self, values):
        return np.array([self.layout(self.client.privatise(int(v))) for v in values], dtype=np.float64).reshape(
            len(values), self.width
        )

    def layout(self, report) -> np.ndarray:
        return np.atleast_1d(np.asarray(report, dtype=np.float64))


class PureDE(PureOracle):
    name, width = "DE", 1

    def __init__(self, k, epsilon):
        super().__init__(k, epsilon)
        self.client = DEClient(self.epsilon, self.k, index_mapper=identity)

    def make_reference(self):
        return GRR(self.k, self.epsilon)


class PureUE(PureOracle):
    def __init__(self, k, epsilon, optimized: bool):
        super().__init__(k, epsilon)
        self.name, self.width = ("OUE" if optimized else "SUE"), self.k
        self.client = UEClient(self.epsilon, self.k, use_oue=bool(optimized), index_mapper=identity)

    def make_reference(self):
        return UnaryEncoding(self.k, self.epsilon, optimized=self.name == "OUE")


class PureLH(PureOracle):
    width = 5

    def __init__(self, k, epsilon, optimized: bool):
        super().__init__(k, epsilon)
        self.name = "OLH" if optimized else "BLH"
        self.client = LHClient(self.epsilon, self.k, g=2, use_olh=bool(optimized), index_mapper=identity)
        self.g = self.client.g

    def parameters(self):
        return {**super().parameters(), "g": self.g}

    def client_block(self, values):
        return hashed_reports(self.client.privatise(int(v)) for v in values)

    def make_reference(self):
        return LocalHashing(self.k, self.epsilon, optimized=self.name == "OLH")

    def support(self, reports, candidates):
        r = np.asarray(reports)
        seeds = integer_from_limbs(r[:, 1:5])
        return (xxh32_mod(candidates, seeds, self.g) == r[:, :1].astype(np.int64)).astype(np.float64)


class PureFLH(PureOracle):
    name, width = "FLH", 2

    def __init__(self, k, epsilon, hash_count: int = 100):
        super().__init__(k, epsilon)
        self.hash_count = int(hash_count)
        self.client = FastLHClient(self.epsilon, self.k, self.hash_count, use_olh=True, index_mapper=identity)
        self.g = self.client.g
        self.table = xxh32_mod(range(self.k), np.arange(self.hash_count), self.g)  # (seed, value)

    def parameters(self):
        return {**super().parameters(), "g": self.g, "hash_count": self.hash_count}

    def make_reference(self):
        return FastLocalHashing(self.k, self.epsilon, self.hash_count, table=self.table)


class PureHE(PureOracle):
    def __init__(self, k, epsilon, thresholded: bool):
        super().__init__(k, epsilon)
        self.thresholded = bool(thresholded)
        self.name, self.width = ("THE" if self.thresholded else "SHE"), self.k
        self.client = HEClient(self.epsilon, self.k, index_mapper=identity)
        self.theta = (
            HEServer(self.epsilon, self.k, use_the=True, index_mapper=identity).theta if self.thresholded else None
        )

    def parameters(self):
        return {**super().parameters(), **({"theta": self.theta} if self.thresholded else {})}

    def make_reference(self):
        return HistogramEncoding(self.k, self.epsilon, thresholded=self.thresholded)

    def support(self, reports, candidates):
        y = np.asarray(reports)[:, np.asarray(candidates)]
        return (y > self.theta).astype(np.float64) if self.thresholded else np.abs(y) - np.abs(y - 1.0)
