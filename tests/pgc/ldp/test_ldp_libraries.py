"""multi-freq-ldpy's and pure-ldp's clients as oracles: their reports identical in distribution to the reference
twins (after the protocol's decoding), the seeding of the libraries' global generators, and the two clients
whose reports are not what the protocol promises (multi-freq-ldpy's SS order, pure-ldp's RAPPOR)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy.stats import chi2_contingency, ks_2samp

pytest.importorskip("multi_freq_ldpy")
pytest.importorskip("pure_ldp")

from pgc.ldp.registry import protocols  # noqa: E402
from pgc.ldp.seeding import seeded_library_generators  # noqa: E402
from pgc.ldp.system import ldp_system  # noqa: E402

K, EPSILON, N = 6, 0.5, 3000
P_MIN = 1e-4  # per comparison; about 30 comparisons: false-failure rate ≤ 0.3 %
CASES = [(lib, name, EPSILON) for lib in ("multi-freq-ldpy", "pure-ldp") for name in protocols(lib)] + [
    ("pure-ldp", "HR", 2.0)
]  # HR's general scheme (ε > 1) with the server's permutation


def rng(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))


def same_distribution(a: np.ndarray, b: np.ndarray) -> float:
    """The smallest p-value of the comparisons of two (n, m) decoded samples: a χ² test of homogeneity on their
    joint cells when they are discrete, else one Kolmogorov–Smirnov test per column."""
    cells, inverse = np.unique(np.concatenate([a, b]), axis=0, return_inverse=True)
    if len(cells) <= 64:
        inverse = inverse.ravel()
        table = np.stack(
            [np.bincount(inverse[: len(a)], minlength=len(cells)), np.bincount(inverse[len(a) :], minlength=len(cells))]
        )
        table = table[:, table.sum(axis=0) > 0]
        return 1.0 if table.shape[1] < 2 else float(chi2_contingency(table)[1])
    return min(float(ks_2samp(a[:, j], b[:, j]).pvalue) for j in range(a.shape[1]))


@pytest.mark.parametrize("library, name, epsilon", CASES)
def test_library_reports_match_the_reference_twin(library, name, epsilon):
    oracle = ldp_system(f"{library}:{name}", K, epsilon).oracle
    twin = oracle.reference()
    ours = oracle.release(np.zeros(N, dtype=int), rng(1))
    theirs = twin.release(np.zeros(N, dtype=int), rng(2))
    assert ours.shape == (N, oracle.width)
    # the reference's local hashing is 2-universal, xxhash a random function: they agree on every pair of values
    # (all an audit of one pair sees), not on the joint over the whole domain
    candidates = [0, K - 1] if name in ("BLH", "OLH") else np.arange(K)
    decoded_ours, decoded_twin = oracle.support(ours, candidates), twin.support(theirs, candidates)
    if (library, name) == ("pure-ldp", "RAPPOR"):  # a set bit is never cleared: P(S = 1 | B = 1) = 1, not 1 − f/2
        cohort = ours[:, -1].astype(int)
        own = ours[np.arange(N), oracle.positions[cohort, 0, 0]]
        assert own.min() == 1.0 and math.isinf(oracle.exact_epsilon())
        assert abs(decoded_twin[:, 0].mean() - (1 - twin.f / 2)) < 5 * math.sqrt(0.25 / N)
        return
    assert same_distribution(decoded_ours, decoded_twin) > P_MIN


def test_multi_freq_ldpy_ss_writes_the_true_value_first():
    system = ldp_system("multi-freq-ldpy:SS", 25, 1.0)
    reports = system.oracle.release(np.full(4000, 3), rng(3))
    holds = np.any(reports == 3, axis=1)
    assert system.oracle.s == 7 and np.all(reports[holds, 0] == 3) and holds.mean() > 0.2
    assert math.isinf(system.exact_epsilon()) and ldp_system(
        "multi-freq-ldpy:SS", 25, 8.0
    ).exact_epsilon() == pytest.approx(8.0)


def test_pure_ldp_rappor_rounds_f_to_two_decimals():
    oracle = ldp_system("pure-ldp:RAPPOR", 10, 6.0).oracle
    assert oracle.f == 0.09  # round(2/(1 + e³), 2): the paper's 0.0949, rounded down
    assert oracle.reference().exact_epsilon() == pytest.approx(2 * math.log(0.955 / 0.045))  # 6.11 > 6


def test_releases_come_from_the_audit_stream_and_leave_the_globals_alone():
    oracle = ldp_system("pure-ldp:OUE", 8, 1.0).oracle
    np_state, py_state = np.random.get_state()[1].copy(), random.getstate()
    a = oracle.release(np.zeros(20_000, dtype=int), rng(4))
    b = oracle.release(np.zeros(20_000, dtype=int), rng(4))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.random.get_state()[1], np_state)
    assert random.getstate() == py_state


def test_the_compiled_batch_draws_what_one_call_per_report_draws():
    from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Client
    from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Client

    values = np.arange(40) % 7
    for name, call in (
        ("GRR", lambda v: GRR_Client(int(v), 7, 1.0)),
        ("OUE", lambda v: UE_Client(int(v), 7, 1.0, True)),
    ):
        oracle = ldp_system(f"multi-freq-ldpy:{name}", 7, 1.0).oracle
        with seeded_library_generators(11):
            batch = oracle.client_block(values)
        with seeded_library_generators(11):
            one_by_one = np.array([np.atleast_1d(call(v)) for v in values], dtype=np.float64)
        np.testing.assert_array_equal(batch, one_by_one.reshape(batch.shape))


def test_the_library_record_says_where_the_claim_comes_from():
    record = ldp_system("pure-ldp:RAPPOR", 10, 1.0).library_record()
    assert record["library"] == "pure-ldp" and record["version"] and record["protocol"] == "RAPPOR"
    assert "convert_eps_to_f" in record["claim_reading"] and record["exact_epsilon"] == "inf"
    assert "seeded" in record["seeding"]
