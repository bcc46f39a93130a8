"""A frequency oracle as a System: one user's value is the secret, one report the release.

Under local DP any two values of the domain are neighbours; the audited pair is (0, k − 1) unless ``pair`` says
otherwise (LDP-Auditor's pair). The claim is the ε the protocol promises per report (``claimed_epsilon``,
δ = 0) on the channel ``report``, which holds the report as the oracle returns it. The System offers the
auditor statistics on the protocol's own decoding (:mod:`pgc.ldp.statistics`) and, for the report, the
library, its version, the protocol, its parameters and the reading of the claim
(:meth:`OracleSystem.library_record`).

Factories for ``pgc audit --system`` and the registry: :func:`ldp_system` (``spec="LIBRARY:PROTOCOL"``),
:func:`reference_system`, :func:`multi_freq_ldpy_system`, :func:`pure_ldp_system`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from pgc.contracts import ALL, PrivacyClaim
from pgc.errors import UserError

from .registry import make_oracle, parse_spec
from .statistics import support_statistics

CHANNEL = "report"
SECTION = "library-audits"  # the report section that renders these audits
SEEDING = (
    "the library's global generators (Python's random, numpy's global generator, numba's compiled-code "
    "generator) seeded from the audit's stream per block of reports, restored afterwards"
)


class OracleSystem:
    channels = (CHANNEL,)
    report_section = SECTION

    def __init__(self, oracle, pair: tuple[int, int] | None = None, name: str | None = None, decoders: bool = True):
        """``decoders=False``: offer the auditor no statistic on the protocol's decoding (the raw columns only)."""
        self.oracle, self.decoders = oracle, bool(decoders)
        self.pair = tuple(int(x) for x in (pair or oracle.pair()))
        for value in self.pair:
            self.value(value)
        if self.pair[0] == self.pair[1]:
            raise UserError("the audited pair needs two different values")
        self.name = name or f"{oracle.source}:{oracle.name} (k={oracle.k}, ε={oracle.epsilon:g})"
        self.claim = PrivacyClaim(oracle.claimed_epsilon, 0.0, (CHANNEL,))
        self.relation = f"local DP: any two values of 0..{oracle.k - 1} (value {self.pair[0]} vs {self.pair[1]})"

    def value(self, secret) -> int:
        if (
            isinstance(secret, bool)
            or not isinstance(secret, numbers.Real)
            or secret != int(secret)
            or not 0 <= int(secret) < self.oracle.k
        ):
            raise UserError(f"a secret is a value in 0..{self.oracle.k - 1}, got {secret!r}")
        return int(secret)

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        return {CHANNEL: self.oracle.release(np.full(int(n), self.value(secret), dtype=np.int64), rng)}

    def canaries(self) -> dict:
        return {f"{self.pair[0]} vs {self.pair[1]}": self.pair}

    def describe_secret(self, secret) -> str:
        return f"value {secret}"

    def audit_statistics(self, channel: str) -> list:
        """The decoders of the report, offered for the report and for the joint channel (the report alone)."""
        return support_statistics(self.oracle) if channel in (CHANNEL, ALL) and self.decoders else []

    def exact_epsilon(self) -> float:
        return float(self.oracle.exact_epsilon(*self.pair))

    def library_record(self) -> dict:
        """What the report's library section shows: library, version, protocol, parameters, the claim and its
        reading, the exact ε of the audited pair, and how the reports were drawn."""
        exact = self.exact_epsilon()
        record = {
            "library": self.oracle.source,
            "version": self.oracle.version,
            "protocol": self.oracle.name,
            "parameters": {k: v for k, v in self.oracle.parameters().items()},
            "claimed_epsilon": float(self.claim.epsilon),
            "claim_reading": self.oracle.claim_reading,
            "pair": list(self.pair),
            "exact_epsilon": exact if math.isfinite(exact) else "inf",
        }
        if self.oracle.source != "reference":
            record["batching"] = self.oracle.batching
            record["seeding"] = SEEDING
        return record


def ldp_system(
    spec: str = "reference:GRR", k: int = 25, epsilon: float = 1.0, pair=None, decoders: bool = True, **parameters
) -> OracleSystem:
    """The oracle ``LIBRARY:PROTOCOL`` at (k, ε) as a System (``parameters``: the protocol's own, e.g. hashes=2;
    ``decoders=False``: the auditor sees the raw columns only)."""
    library, protocol = parse_spec(spec)
    return OracleSystem(make_oracle(library, protocol, k, epsilon, **parameters), pair, decoders=decoders)


def reference_system(protocol: str = "GRR", k: int = 25, epsilon: float = 1.0, **parameters) -> OracleSystem:
    return ldp_system(f"reference:{protocol}", k, epsilon, **parameters)


def multi_freq_ldpy_system(protocol: str = "GRR", k: int = 25, epsilon: float = 1.0, **parameters) -> OracleSystem:
    return ldp_system(f"multi-freq-ldpy:{protocol}", k, epsilon, **parameters)


def pure_ldp_system(protocol: str = "DE", k: int = 25, epsilon: float = 1.0, **parameters) -> OracleSystem:
    return ldp_system(f"pure-ldp:{protocol}", k, epsilon, **parameters)
