"""pure-ldp's RAPPOR, Hadamard (HR, HM) and sketch (CMS, HCMS, SR, PCS) clients as oracles (see
:mod:`pgc.ldp.pure_ldp_clients` for the layout and the seeding). Each one's reference twin is the
reference protocol with the library's own public hash functions (and, for RAPPOR, its f), so the twin's
exact ε is the library's."""

from __future__ import annotations

import numpy as np
from pure_ldp.core import generate_hash_funcs
from pure_ldp.frequency_oracles import (
    CMSClient,
    HadamardMechClient,
    HadamardResponseClient,
    HadamardResponseServer,
    PCSClient,
    RAPPORClient,
    RAPPORServer,
    SketchResponseClient,
)

from .hadamard import HadamardMechanism, HadamardResponse, hr_blocks
from .hashed import SketchResponse
from .hashing import hash_table, xxh32_mod
from .oracle import log_ratio
from .pure_ldp_clients import PureDE, PureFLH, PureHE, PureLH, PureOracle, PureUE, identity
from .seeding import seeded_library_generators
from .sketches import CountMeanSketch, PrivateCountSketch
from .unary import Rappor, bloom_pair_epsilon


class PureRappor(PureOracle):
    """RAPPORClient with f = convert_eps_to_f(ε), the library's helper: round(1/(0.5·e^{ε/2} + 0.5), 2), the f of
    ε∞ = ε for one hash function, rounded to two decimals.

    Its ``_perturb`` sets a bit to 1 w.p. 1 − f/2 where the filter has a 1 and w.p. f/2 where it has a 0, and
    otherwise leaves the bit as it is: a 1 stays 1. So P(S_i = 1 | B_i = 1) = 1 and P(S_i = 1 | B_i = 0) = f/2, and
    a report whose bit at B(v′) but not in B(v) is 0 has probability 0 under v′: the exact ε is ∞ wherever the two
    filters differ. The reference twin is the protocol as the paper writes it (1 − f/2 and f/2) with the same f and hash
    functions."""

    name = "RAPPOR"

    def __init__(self, k, epsilon, hashes: int = 1, bits: int = 128, cohorts: int = 8, hash_seed: int = 0):
        super().__init__(k, epsilon)
        self.hashes, self.bits, self.cohorts, self.hash_seed = int(hashes), int(bits), int(cohorts), int(hash_seed)
        self.f = RAPPORClient.convert_eps_to_f(None, self.epsilon)  # the helper reads no client state
        with seeded_library_generators(self.hash_seed):  # the server draws its hash family from ``random``
            server = RAPPORServer(
                self.f, self.bits, self.hashes, self.k, num_of_cohorts=self.cohorts, index_mapper=identity
            )
        family = server.get_hash_funcs()
        self.client = RAPPORClient(self.f, self.bits, family, self.cohorts, index_mapper=identity)
        self.positions = np.stack([hash_table(functions, self.k) for functions in family])  # (cohort, hash, value)
        self.width = self.bits + 1

    @property
    def claim_reading(self):
        return (
            f"epsilon={self.epsilon:g} → f = convert_eps_to_f(ε) = {self.f:g} (one hash function's f, rounded to "
            f"2 decimals), {self.hashes} hash function(s) → claim ε = {self.epsilon:g} per report (what the user "
            f"asked for; the server's own formula 2h·ln((1 − f/2)/(f/2)) gives "
            f"{self.client.convert_f_to_eps(self.f, self.hashes):.4g})"
        )

    def parameters(self):
        return {
            **super().parameters(),
            "f": self.f,
            "hashes": self.hashes,
            "bits": self.bits,
            "cohorts": self.cohorts,
            "hash_seed": self.hash_seed,
        }

    def layout(self, report):
        bits, cohort = report
        return np.array([*bits, cohort], dtype=np.float64)

    def make_reference(self):
        return Rappor(self.k, self.epsilon, self.hashes, self.bits, self.cohorts, f=self.f, positions=self.positions)

    def exact_epsilon(self, v=0, v_prime=None):
        """From the client's own bit probabilities: 1 where the filter is 1, f/2 where it is 0."""
        half = self.f / 2.0
        return bloom_pair_epsilon(
            self.positions,
            v,
            self.k - 1 if v_prime is None else v_prime,
            log_ratio(1.0, half),
            log_ratio(1.0 - half, 0.0),
        )


class PureHR(PureOracle):
    """HadamardResponseClient: the high-privacy scheme (one block) for ε ≤ 1, else the general scheme on the
    value permuted by the server's random permutation (its ``get_hash_funcs()``). The high-privacy encoder calls
    ``random.randint(0, math.pow(2, outbit) - 1)`` with a float bound: deprecated since Python 3.10 (a warning,
    silenced here) and refused by newer Pythons."""

    name, width = "HR", 1

    def __init__(self, k, epsilon, hash_seed: int = 0):
        super().__init__(k, epsilon)
        self.hash_seed = int(hash_seed)
        with seeded_library_generators(self.hash_seed):  # the server draws its permutation from np.random
            server = HadamardResponseServer(self.epsilon, self.k, index_mapper=identity)
        permutation = server.get_hash_funcs()
        self.client = HadamardResponseClient(self.epsilon, self.k, permutation, index_mapper=identity)
        self.permutation = np.arange(self.k) if permutation is None else np.asarray(permutation, dtype=np.int64)

    def parameters(self):
        return {**super().parameters(), "blocks": self.reference().blocks, "hash_seed": self.hash_seed}

    def client_block(self, values):
        import warnings

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "non-integer arguments to randrange", DeprecationWarning)
            return super().client_block(values)

    def make_reference(self):
        return HadamardResponse(
            self.k,
            self.epsilon,
            blocks=1 if self.epsilon <= 1 else hr_blocks(self.k, self.epsilon),
            permutation=self.permutation,
        )


class PureHM(PureOracle):
    name = "HM"

    def __init__(self, k, epsilon):
        super().__init__(k, epsilon)
        self.client = HadamardMechClient(self.epsilon, self.k, None, use_optimal_t=True, index_mapper=identity)
        self.t = self.client.t
        self.width = 2 * self.t

    def parameters(self):
        return {**super().parameters(), "coefficients": self.t}

    def layout(self, report):
        return np.array([x for pair in report for x in pair], dtype=np.float64)  # a list or a zip of (j, ±1)

    def make_reference(self):
        return HadamardMechanism(self.k, self.epsilon, coefficients=self.t)


class PureCMS(PureOracle):
    def __init__(self, k, epsilon, hadamard: bool, sketch_hashes: int = 8, width: int = 128):
        super().__init__(k, epsilon)
        self.hadamard, self.sketch_hashes, self.m = bool(hadamard), int(sketch_hashes), int(width)
        self.name = "HCMS" if self.hadamard else "CMS"
        functions = generate_hash_funcs(self.sketch_hashes, self.m)  # what CMSServer hands its clients
        self.client = CMSClient(self.epsilon, functions, self.m, is_hadamard=self.hadamard)
        self.table = hash_table(functions, self.k)
        self.width = 3 if self.hadamard else self.m + 1

    def parameters(self):
        return {**super().parameters(), "sketch_hashes": self.sketch_hashes, "sketch_width": self.m}

    def layout(self, report):
        if self.hadamard:
            return np.array(report, dtype=np.float64)
        vector, j = report
        return np.array([*vector, j], dtype=np.float64)

    def make_reference(self):
        return CountMeanSketch(self.k, self.epsilon, self.sketch_hashes, self.m, self.hadamard, table=self.table)


class PureSR(PureOracle):
    name, width = "SR", 3

    def __init__(self, k, epsilon, sketch_hashes: int = 8, width: int = 128, hash_count: int = 100):
        super().__init__(k, epsilon)
        self.sketch_hashes, self.m, self.hash_count = int(sketch_hashes), int(width), int(hash_count)
        functions = generate_hash_funcs(self.sketch_hashes, self.m)  # what SketchResponseServer uses
        self.client = SketchResponseClient(self.epsilon, self.m, functions, index_mapper=identity, lh_k=self.hash_count)
        self.sketch_table = hash_table(functions, self.k)
        self.inner_table = xxh32_mod(range(self.m), np.arange(self.hash_count), self.client.client.g)

    def parameters(self):
        return {
            **super().parameters(),
            "sketch_hashes": self.sketch_hashes,
            "sketch_width": self.m,
            "hash_count": self.hash_count,
        }

    def layout(self, report):
        (y, seed), j = report
        return np.array([y, seed, j], dtype=np.float64)

    def make_reference(self):
        return SketchResponse(
            self.k,
            self.epsilon,
            self.sketch_hashes,
            self.m,
            self.hash_count,
            sketch_table=self.sketch_table,
            inner_table=self.inner_table,
        )


class PurePCS(PureOracle):
    name = "PCS"

    def __init__(self, k, epsilon, sketch_hashes: int = 8, width: int = 128):
        super().__init__(k, epsilon)
        self.sketch_hashes, self.m = int(sketch_hashes), int(width)
        where, sign = generate_hash_funcs(self.sketch_hashes, self.m), generate_hash_funcs(self.sketch_hashes, 2)
        self.client = PCSClient(self.epsilon, self.sketch_hashes, self.m, list(zip(where, sign, strict=True)))
        self.table, self.signs = hash_table(where, self.k), 2 * hash_table(sign, self.k) - 1
        self.width = self.m + 1

    def parameters(self):
        return {**super().parameters(), "sketch_hashes": self.sketch_hashes, "sketch_width": self.m}

    def layout(self, report):
        vector, j = report
        return np.array([*vector, j], dtype=np.float64)

    def make_reference(self):
        return PrivateCountSketch(self.k, self.epsilon, self.sketch_hashes, self.m, table=self.table, signs=self.signs)


PROTOCOLS = {
    "DE": PureDE,
    "SUE": lambda k, epsilon: PureUE(k, epsilon, False),
    "OUE": lambda k, epsilon: PureUE(k, epsilon, True),
    "BLH": lambda k, epsilon: PureLH(k, epsilon, False),
    "OLH": lambda k, epsilon: PureLH(k, epsilon, True),
    "FLH": PureFLH,
    "SHE": lambda k, epsilon: PureHE(k, epsilon, False),
    "THE": lambda k, epsilon: PureHE(k, epsilon, True),
    "RAPPOR": PureRappor,
    "HR": PureHR,
    "HM": PureHM,
    "CMS": lambda k, epsilon, **kw: PureCMS(k, epsilon, False, **kw),
    "HCMS": lambda k, epsilon, **kw: PureCMS(k, epsilon, True, **kw),
    "SR": PureSR,
    "PCS": PurePCS,
}
