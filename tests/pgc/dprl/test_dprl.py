"""The thesis' four systems (dprl): each mechanism against values computed by hand from the thesis' equations,
the privacy claims at the thesis' own relation, the worst-pair search, and the CLI path with bad input refused."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from audit.engine.system_audit import audit_system
from pgc.dprl import advising, dpdrl, oneparam, planning
from pgc.systems import make_system


def rng(seed=0):
    return np.random.default_rng(np.random.SeedSequence(seed))


# --- ch. 6: Algorithm 12 and eq. 6.2 -----------------------------------------------------------------------


def test_algorithm_12_sub_ranges_and_candidates_by_hand():
    y = np.array([0.2, 0.3, 0.5])
    lower, upper = oneparam.sub_ranges(y)
    np.testing.assert_allclose(lower, [0.0, 0.25, 0.4])
    np.testing.assert_allclose(upper, [0.25, 0.4, 1.0])
    np.testing.assert_allclose(oneparam.candidates(y, 5)[1], [0.25, 0.28, 0.31, 0.34, 0.37])  # ρ = 0.15 / 5


def test_exponential_mechanism_probabilities_by_hand():
    y = np.array([0.2, 0.3, 0.5])
    _, probs = oneparam.phase_one_probabilities(y, epsilon=0.1, m=5)
    # sub-range 2: candidates 0.25 .. 0.37, distances to 0.3: .05 .02 .01 .04 .07 -> u = 1/d
    u = 1.0 / np.array([0.05, 0.02, 0.01, 0.04, 0.07])
    expected = np.exp(0.1 * u / 2.0) / np.exp(0.1 * u / 2.0).sum()
    np.testing.assert_allclose(probs[1], expected, rtol=1e-12)
    assert probs[0][-1] == pytest.approx(1.0)  # 0.2 is a candidate itself: infinite utility, certain pick


def test_eq_6_2_and_its_inverse():
    y_prime = np.array([[0.1, 0.3, 0.6]])
    z = oneparam.normalise(y_prime, 0.7)
    np.testing.assert_allclose(z, np.exp(0.35 * y_prime) / np.exp(0.35 * y_prime).sum())
    back = 2.0 / 0.7 * np.log(z)
    np.testing.assert_allclose(back - back[0, 0], y_prime - y_prime[0, 0], atol=1e-12)  # y' up to a constant


def exact_phase_one_epsilon(y, y_hat, epsilon, m=5):
    """Exact privacy loss of phase 1 between two vectors with the same sub-ranges: the sub-ranges draw
    independently, so the worst output's log-ratio is the sum of each sub-range's worst log-ratio."""
    _, p = oneparam.phase_one_probabilities(np.sort(y), epsilon, m)
    _, q = oneparam.phase_one_probabilities(np.sort(y_hat), epsilon, m)
    with np.errstate(divide="ignore"):
        ratio = np.abs(np.log(p) - np.log(q))
    return float(np.sum(np.max(ratio, axis=1)))


def test_the_claim_fails_at_the_thesis_own_relation_and_the_audit_stays_below_the_exact_loss():
    system = oneparam.system(epsilon=0.1)
    y, y_hat = system.canaries()["thesis: alternating shift (equal neighbour sums)"]
    assert np.abs(y - y_hat).sum() <= 1.0
    np.testing.assert_allclose(y[:-1] + y[1:], y_hat[:-1] + y_hat[1:])  # the proof's relation holds
    exact = exact_phase_one_epsilon(y, y_hat, 0.1)
    assert exact > system.claim.epsilon  # Theorem 6.1's k·ε = 1 does not hold for this pair
    result = audit_system(system, y, y_hat, samples=5_000, seed=3, channels=["scores"])
    assert result.verdict == "violated"
    assert result.row("scores").epsilon_lower_bound <= exact


def test_the_textbook_reference_passes_at_its_claim():
    system = oneparam.system(epsilon=0.1, relation="member", reference=True)
    pair = system.canaries()["member: near-certain predictions of two different classes"]
    result = audit_system(system, *pair, samples=20_000, seed=1, channels=["scores"])
    assert result.verdict == "consistent"
    assert 0.6 < result.row("scores").epsilon_lower_bound <= 1.0


# --- ch. 5: Algorithms 9-10 --------------------------------------------------------------------------------


def test_algorithm_9_scores_and_algorithm_10_probabilities_by_hand():
    weights = dpdrl.q_network(0)
    o = np.array([1, 1, 1, 0, 1, 1, 0, 1], dtype=float)
    q0 = dpdrl.q_values(weights, o[None, :])
    d = np.array(
        [np.linalg.norm(dpdrl.q_values(weights, np.where(np.arange(8) == i, 1 - o, o)[None, :]) - q0) for i in range(8)]
    )
    sr_expected = 10.0 ** (1.0 - (d - d.min()) / (d.max() - d.min()))
    sr, d_min, d_max = dpdrl.scores(weights, o)
    np.testing.assert_allclose(sr, sr_expected)
    top = np.sort(sr_expected)[::-1]
    for eps in (0.1, None):
        e_value = math.atan(d_max - d_min) if eps is None else eps
        w = np.exp(e_value * sr_expected / (2.0 * (top[0] - top[1])))
        np.testing.assert_allclose(dpdrl.selection_probabilities(weights, o, eps), w / w.sum(), rtol=1e-10)


def test_a_flip_always_changes_the_parity_so_neighbours_never_share_an_output():
    system = dpdrl.system(0.1)
    o, o2 = system.canaries()["one element differs"]
    a, b = system.release(o, 2_000, rng(1))["observation"], system.release(o2, 2_000, rng(2))["observation"]
    assert np.all(a.sum(1) % 2 != o.sum() % 2) and np.all(b.sum(1) % 2 != o2.sum() % 2)
    assert not set(map(tuple, a)) & set(map(tuple, b))


# --- ch. 4: Algorithm 7 and eq. 4.2 ------------------------------------------------------------------------


def test_figure_4_4a_degree_distribution_as_the_thesis_counts_it():
    nodes, edges = planning.parse_map(planning.FIGURE_4_4A)
    np.testing.assert_array_equal(planning.degree_distribution(nodes, edges, 4), [0, 4, 2, 1])  # §4.5.2.1


def test_eq_4_2_matches_the_thesis_worked_example():
    np.testing.assert_allclose(planning.redistribute(np.array([0.7, 0.3]), 2.0), [0.6, 0.4], atol=0.002)  # §4.5.2.3


def test_removing_one_node_moves_the_histogram_by_more_than_the_stated_sensitivity():
    fig, without = planning.system().canaries()["Fig. 4.4(a) vs without (b,1)"]
    p = planning.degree_distribution(*planning.parse_map(fig), 4)
    q = planning.degree_distribution(*planning.parse_map(without), 4)
    assert np.abs(p - q).sum() == 5  # ΔS = 1 in the thesis; the node's neighbours move bins too


# --- ch. 3: Algorithms 4-5 ---------------------------------------------------------------------------------


def test_algorithm_4_normalisation_by_hand():
    rho = (0.5 - 0.001) / (0.5 + 0.2)
    lifted = np.array([0.5, 0.5 - rho * 0.7, 0.5 + rho * 0.2])
    np.testing.assert_allclose(advising.normalise(np.array([0.5, -0.2, 0.7])), lifted / lifted.sum())
    np.testing.assert_allclose(advising.normalise(np.array([0.2, 0.3])), [0.4, 0.6])  # no lift above Δ


@pytest.mark.parametrize(
    "teacher,expected,raw",
    [
        (["A", "B", "C", "E"], [1, 2, 3, 4], True),  # line 3: the same actions, no noise
        (["A", "B", "C", "E", "F"], [1, 2, 3, 4], False),  # line 5: the teacher's extra action dropped
        (["A", "B", "C"], [1, 2, 3, 0], False),  # line 8: the missing action at Q = 0
        (["A", "B", "C", "D"], [1, 2, 3, 4], False),  # line 12: D's value in E's slot
    ],
)
def test_algorithm_5_cases(teacher, expected, raw):
    q = [1.0, 2.0, 3.0, 4.0, 5.0][: len(teacher)]
    aligned, same = advising.aligned_q(teacher, q, ("A", "B", "C", "E"))
    np.testing.assert_array_equal(aligned, expected)
    assert same is raw


# --- every system: claims, the worst-pair search, the CLI ---------------------------------------------------


@pytest.mark.parametrize(
    "name,claim", [("dprl-advising", 1.0), ("dprl-planning", 0.5), ("dprl-dpdrl", 0.1), ("dprl-oneparam", 1.0)]
)
def test_factories_default_to_the_thesis_main_setting(name, claim):
    system = make_system(name)
    assert system.claim.epsilon == pytest.approx(claim) and system.claim.delta == 0.0
    assert system.report_section == "published-claims"
    secret, secret_prime = system.secret_space.pair(np.full(system.secret_space.dim, 0.37))
    system.release(secret, 3, rng()), system.release(secret_prime, 3, rng())


@pytest.mark.slow
def test_the_search_finds_a_violating_pair_by_itself():
    system = dpdrl.system(0.1, obfuscation="resample")
    result = audit_system(system, None, None, samples=3_000, seed=0, search_pair=True, search_samples=500)
    assert result.searched_pair is not None and result.pair.startswith("searched")
    o, o2 = (np.asarray(getattr(result.searched_pair, k)) for k in ("secret", "secret_prime"))
    assert np.abs(o - o2).sum() == 1  # a neighbouring pair under the stated relation
    assert result.verdict == "violated"


def test_a_system_without_a_secret_space_cannot_be_searched():
    with pytest.raises(ValueError, match="secret_space"):
        audit_system(make_system("toy-laplace-count"), 1.0, 0.0, samples=200, search_pair=True)


def pgc(*argv):
    return subprocess.run(
        [sys.executable, "-m", "pgc.cli", *argv, "--no-progress"]
        if argv[0] == "audit"
        else [sys.executable, "-m", "pgc.cli", *argv],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_audits_a_thesis_system_end_to_end(tmp_path):
    out = tmp_path / "a.json"
    done = pgc(
        "audit",
        "--system",
        "pgc.dprl.dpdrl:system",
        "--setting",
        'epsilon="dynamic"',
        "--samples",
        "2000",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["verdict"] == "violated" and data["claim"]["epsilon"] == pytest.approx(math.pi / 2)
    assert data["report_section"] == "published-claims"


@pytest.mark.parametrize(
    "argv",
    [
        ["--system", "dprl-oneparam", "--setting", "epsilon=-1"],
        ["--system", "dprl-oneparam", "--setting", "no_such_setting=1"],
        ["--system", "dprl-oneparam", "--setting", "epsilon"],
        ["--system", "dprl-planning", "--secrets", '{"edges": [["a", "a", 1]]}', '{"edges": []}'],
        ["--system", "dprl-advising", "--secrets", "[1, 2]", "[3]"],
        ["--system", "toy-laplace-count", "--search-pair"],
    ],
)
def test_cli_refuses_bad_input_in_one_line(argv, tmp_path, capsys):
    from pgc.cli.main import main

    out = tmp_path / "x.json"
    code = main(["audit", *argv, "--samples", "200", "--no-progress", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "error" in err
    assert not out.exists()
