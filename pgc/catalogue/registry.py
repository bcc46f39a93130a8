"""The catalogue: the 20 algorithms of DP-Sniper's evaluation (Bichsel et al., IEEE S&P 2021; the authors'
``dpsniper/experiments/exp_default.py``), each with DP-Sniper's parameters, input domain, neighbourhood and
feature transform, the ε it claims, and whether it keeps that claim.

The claim is ε = 0.1 (DP-Sniper's target) except where the algorithm's own analysis states another ε for the
parameters DP-Sniper runs it with: the truncated geometric mechanism (ln(1 + 2^−3) ≈ 0.118 at ε = 0.1), RAPPOR
(h = 4, f = 0.75, p = 0.45, q = 0.55: ≈ 0.400 per report) and one-time RAPPOR (f = 0.95: ≈ 0.801). ``broken``:
the algorithm does not satisfy its claim under DP-Sniper's neighbourhood (nine do, eleven do not).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from . import algorithms as alg
from . import svt
from .patterns import InputDomain

EPSILON = 0.1  # DP-Sniper's target ε

LAPLACE_DOMAIN = InputDomain(1, "float", -10, 10, False)
COUNT_DOMAIN = InputDomain(1, "int", 0, 5, False)
HIST_DOMAIN = InputDomain(5, "int", 0, 10, False)
MAX_DOMAIN = InputDomain(5, "float", -10, 10, True)
QUERY_DOMAIN = InputDomain(10, "float", -10, 10, True)
RAPPOR_DOMAIN = InputDomain(1, "int", -10, 10, False)

LYU = "Lyu, Su & Li, Understanding the Sparse Vector Technique for DP, VLDB 2017"
DING = "Ding et al., Detecting Violations of Differential Privacy, CCS 2018"
WANG = "Wang et al., Proving Differential Privacy with Shadow Execution, PLDI 2019"
RAPPOR = "Erlingsson, Pihur & Korolova, RAPPOR, CCS 2014"


def _identity(out: np.ndarray) -> np.ndarray:
    return out


@dataclass(frozen=True)
class Algorithm:
    """One entry: ``run(a, n, rng)`` → (n, width) outputs (NaN where an entry is ⊥ or absent); ``dpsniper_class``:
    the class name in DP-Sniper's code; ``encode``: our outputs in DP-Sniper's sentinel format; ``flags``: the
    special values of DP-Sniper's ``FlagsFeatureTransformer`` for it (none: the raw outputs)."""

    name: str
    dpsniper_class: str
    run: Callable[..., np.ndarray]
    domain: InputDomain
    width: int
    claimed_epsilon: float
    broken: bool
    why: str
    source: str
    parameters: dict = field(default_factory=dict)
    encode: Callable[[np.ndarray], np.ndarray] = _identity
    flags: tuple[float, ...] = ()

    @property
    def has_nan(self) -> bool:
        """Whether the outputs can hold NaN (⊥ or an absent entry)."""
        return self.encode is not _identity


def _entry(name, cls, fn, domain, width, claimed, broken, why, source, params, **extra) -> Algorithm:
    return Algorithm(
        name, cls, partial(fn, **params), domain, width, claimed, broken, why, source, dict(params), **extra
    )


def _svt(name, cls, fn, broken, why, params, width=10, encode=None, flags=(), source=LYU) -> Algorithm:
    extra = {"encode": encode, "flags": flags} if encode is not None else {}
    return _entry(name, cls, fn, QUERY_DOMAIN, width, EPSILON, broken, why, source, params, **extra)


_ABORT = partial(svt.aborted_to, value=-1.0)

CATALOGUE: tuple[Algorithm, ...] = (
    _entry(
        "LaplaceMechanism",
        "LaplaceMechanism",
        alg.laplace,
        LAPLACE_DOMAIN,
        1,
        EPSILON,
        False,
        "Lap(1/ε) on a sensitivity-1 query",
        "Dwork et al. 2006",
        {"eps": EPSILON},
    ),
    _entry(
        "TruncatedGeometric",
        "TruncatedGeometricMechanism",
        alg.truncated_geometric,
        COUNT_DOMAIN,
        1,
        alg.geometric_epsilon(EPSILON),
        False,
        "GeoSample(ε, 5) is ln(1 + 2^−⌈ln(2/ε)⌉)-DP (Thm. 4.7)",
        "Balcer & Vadhan, DP on Finite Computers, 2018, Alg. 4.8",
        {"eps": EPSILON, "size": 5},
    ),
    _entry(
        "NoisyHist1",
        "NoisyHist1",
        alg.noisy_hist1,
        HIST_DOMAIN,
        5,
        EPSILON,
        False,
        "Lap(1/ε) per bin, one bin changes",
        f"{DING}, Alg. 9",
        {"eps": EPSILON},
    ),
    _entry(
        "NoisyHist2",
        "NoisyHist2",
        alg.noisy_hist2,
        HIST_DOMAIN,
        5,
        EPSILON,
        True,
        "Lap(ε) instead of Lap(1/ε): 1/ε-DP = 10-DP",
        f"{DING}, Alg. 10",
        {"eps": EPSILON},
    ),
    _entry(
        "ReportNoisyMax1",
        "ReportNoisyMax1",
        alg.report_noisy_max1,
        MAX_DOMAIN,
        1,
        EPSILON,
        False,
        "argmax under Lap(2/ε)",
        f"{DING}, Alg. 5",
        {"eps": EPSILON},
    ),
    _entry(
        "ReportNoisyMax2",
        "ReportNoisyMax2",
        alg.report_noisy_max2,
        MAX_DOMAIN,
        1,
        EPSILON,
        False,
        "argmax under Exp(2/ε)",
        f"{DING}, Alg. 6",
        {"eps": EPSILON},
    ),
    _entry(
        "ReportNoisyMax3",
        "ReportNoisyMax3",
        alg.report_noisy_max3,
        MAX_DOMAIN,
        1,
        EPSILON,
        True,
        "releases the noisy maximum itself, not its index",
        f"{DING}, Alg. 7",
        {"eps": EPSILON},
    ),
    _entry(
        "ReportNoisyMax4",
        "ReportNoisyMax4",
        alg.report_noisy_max4,
        MAX_DOMAIN,
        1,
        EPSILON,
        True,
        "releases the noisy maximum itself (one-sided noise)",
        f"{DING}, Alg. 8",
        {"eps": EPSILON},
    ),
    _svt(
        "SVT1",
        "SparseVectorTechnique1",
        svt.svt1,
        False,
        "the SVT of Dwork & Roth, correct",
        {"eps": EPSILON, "c": 1, "t": 0.5},
        encode=_ABORT,
        flags=(-1.0,),
        source=f"{LYU}, Alg. 1",
    ),
    _svt(
        "SVT2",
        "SparseVectorTechnique2",
        svt.svt2,
        False,
        "threshold redrawn after each ⊤, correct",
        {"eps": EPSILON, "c": 1, "t": 1.0},
        encode=_ABORT,
        flags=(-1.0,),
        source=f"{LYU}, Alg. 2",
    ),
    _svt(
        "SVT3",
        "SparseVectorTechnique3",
        svt.svt3,
        True,
        "releases the noisy query answer above the threshold",
        {"eps": EPSILON, "c": 1, "t": 1.0},
        encode=partial(svt.svt3_sentinels, c=1),
        flags=(-1000.0, -2000.0),
        source=f"{LYU}, Alg. 3",
    ),
    _svt(
        "SVT4",
        "SparseVectorTechnique4",
        svt.svt4,
        True,
        "query noise without the factor c: ((1 + 6c)/4)ε-DP",
        {"eps": EPSILON, "c": 1, "t": 1.0},
        encode=_ABORT,
        flags=(-1.0,),
        source=f"{LYU}, Alg. 4",
    ),
    _svt(
        "SVT5",
        "SparseVectorTechnique5",
        svt.svt5,
        True,
        "no noise on the queries: not ε′-DP for any ε′",
        {"eps": EPSILON, "c": 1, "t": 1.0},
        source=f"{LYU}, Alg. 5",
    ),
    _svt(
        "SVT6",
        "SparseVectorTechnique6",
        svt.svt6,
        True,
        "never stops: its ε grows with the number of queries",
        {"eps": EPSILON, "c": 1, "t": 1.0},
        source=f"{LYU}, Alg. 6",
    ),
    _entry(
        "RAPPOR",
        "Rappor",
        alg.rappor,
        RAPPOR_DOMAIN,
        20,
        alg.rappor_epsilon(4, 0.75, 0.45, 0.55),
        False,
        "within RAPPOR's own ε for h = 4, f = 0.75, p = 0.45, q = 0.55",
        f"{RAPPOR}, Steps 1–3",
        {"n_hashes": 4, "filter_size": 20, "f": 0.75, "p": 0.45, "q": 0.55},
    ),
    _entry(
        "OneTimeRAPPOR",
        "OneTimeRappor",
        alg.one_time_rappor,
        RAPPOR_DOMAIN,
        20,
        alg.rappor_epsilon(4, 0.95, None, None),
        False,
        "within one-time RAPPOR's own ε for h = 4, f = 0.95",
        f"{RAPPOR}, Steps 1–2",
        {"n_hashes": 4, "filter_size": 20, "f": 0.95},
    ),
    _entry(
        "LaplaceParallel",
        "LaplaceParallel",
        alg.laplace_parallel,
        LAPLACE_DOMAIN,
        20,
        EPSILON,
        False,
        "20 Laplace mechanisms at ε = 0.005: 0.1 by composition",
        "DP-Sniper (S&P 2021)",
        {"eps": 0.005, "n_parallel": 20},
    ),
    _svt(
        "SVT34Parallel",
        "SVT34Parallel",
        svt.svt34_parallel,
        True,
        "contains SVT3 (and SVT4)",
        {"eps": EPSILON, "c": 2, "t": 1.0},
        width=20,
        encode=svt.svt34_sentinels,
        flags=(-1.0, -1000.0, -2000.0),
        source="DP-Sniper (S&P 2021): SVT3 and SVT4 side by side",
    ),
    _entry(
        "PrefixSum",
        "PrefixSum",
        alg.prefix_sum,
        QUERY_DOMAIN,
        10,
        EPSILON,
        True,
        "Lap(1/ε) per entry while every entry may change: 10ε-DP",
        WANG,
        {"eps": EPSILON},
    ),
    _svt(
        "NumericalSVT",
        "NumericalSVT",
        svt.numerical_svt,
        False,
        "correct",
        {"eps": EPSILON, "c": 2, "t": 1.0},
        encode=partial(svt.aborted_to, value=-1000.0),
        source=WANG,
    ),
)

BY_NAME = {a.name: a for a in CATALOGUE}
BROKEN = tuple(a.name for a in CATALOGUE if a.broken)
CORRECT = tuple(a.name for a in CATALOGUE if not a.broken)
