"""Dynamics-inference attacks: power where the answer is known, the ε-LDP ceiling where it binds,
the violation flag, linking, reproducibility, and the transcript target.

Statistical assertions use Clopper–Pearson intervals at confidence 1 − 1e-4 (false-failure rate
≤ 1e-4 per assertion for a correct implementation); all randomness is seeded.
"""

import math

import numpy as np
import pytest

from attacks import ldp_ceiling
from attacks.a3c import ThreatModel, draw_truth, fresh_submissions, run_attack
from attacks.a3c.likelihood import recover_prs_release
from attacks.a3c.runner import link_loglik, rank_in_group
from attacks.a3c.targets import run_submissions, trial_config
from attacks.a3c.threat import AttackView, parse_channels
from attacks.bounds import clopper_pearson
from pgc.a3c.model import glorot_uniform_theta
from pgc.a3c.rundir import load_run, save_run
from pgc.a3c.trainer import TrainConfig, train
from pgc.mechanisms import Laplace, NoNoise, ProjectedRandomSign

WIDE = (5.0, 9.8, 20.0)
PAPER = (9.7, 9.8, 9.9)
STRICT = 1 - 1e-4


@pytest.fixture(scope="module")
def theta():
    return glorot_uniform_theta(np.random.default_rng(np.random.SeedSequence(0)))


def _attack(
    theta,
    mech,
    cands,
    *,
    targets,
    k,
    budget,
    seed,
    channels=("gradient",),
    attackers=("likelihood", "learned"),
    epochs=25,
    psi_range=None,
):
    threat = ThreatModel(
        mechanism=mech, channels=channels, candidates=None if psi_range else cands, psi_range=psi_range, budget=budget
    )
    a, b, c = np.random.SeedSequence(seed).spawn(3)
    truth = draw_truth(threat, targets, np.random.default_rng(a))
    view = fresh_submissions(threat, theta, truth, max(k), np.random.default_rng(b))
    return run_attack(threat, view, truth, seed=c, attackers=attackers, ks=k, learned_kwargs={"epochs": epochs})


def _row(res, attacker, k):
    return next(r for r in res["rows"] if r["attacker"] == attacker and r["k"] == k)


@pytest.fixture(scope="module")
def eps_inf_wide(theta):
    return _attack(theta, NoNoise(), WIDE, targets=300, k=(1, 10), budget=150, seed=11)


def test_eps_inf_wide_psi_beats_chance_clearly(eps_inf_wide):
    for attacker in ("likelihood", "learned"):
        for k in (1, 10):
            r = _row(eps_inf_wide, attacker, k)
            lo, _ = clopper_pearson(r["correct"], r["n_targets"], STRICT)
            assert lo > 1 / 3 + (0.1 if k == 1 else 0.4), (attacker, k, r["accuracy"])
            assert r["verdict"] == "n/a" and r["ceiling"] == 1.0
    # canary where the ceiling (1.0) is reachable: many linked submissions
    best = max(_row(eps_inf_wide, a, 10)["accuracy"] for a in ("likelihood", "learned"))
    assert best >= 0.95


def test_linking_helps_at_eps_inf(eps_inf_wide):
    for attacker in ("likelihood", "learned"):
        assert _row(eps_inf_wide, attacker, 10)["accuracy"] > _row(eps_inf_wide, attacker, 1)["accuracy"]


@pytest.mark.parametrize("cands", [PAPER, WIDE])
def test_small_eps_never_beats_ceiling(theta, cands):
    eps = 0.3
    res = _attack(theta, Laplace(eps), cands, targets=300, k=(1, 3), budget=100, seed=5)
    for r in res["rows"]:
        lo, _ = clopper_pearson(r["correct"], r["n_targets"], STRICT)
        assert r["ceiling"] == pytest.approx(ldp_ceiling(eps, r["k"], 3))
        assert lo <= r["ceiling"], r
        assert r["verdict"] == "ok"


class _LyingMechanism:
    """Claims ε = 0.05 but adds no noise: the evaluator must flag a gradient-only attack on it."""

    epsilon = 0.05

    def __call__(self, gradients, rng):
        return NoNoise()(gradients, rng)


def test_broken_mechanism_is_flagged_as_violation(theta):
    res = _attack(theta, _LyingMechanism(), WIDE, targets=150, k=(10,), budget=150, seed=3, attackers=("learned",))
    r = _row(res, "learned", 10)
    assert r["ceiling"] == pytest.approx(ldp_ceiling(0.05, 10, 3))  # 0.452
    assert r["verdict"] == "VIOLATION"


def test_score_channel_above_ceiling_is_an_unprotected_finding(theta):
    res = _attack(
        theta,
        Laplace(0.02),
        WIDE,
        targets=150,
        k=(10,),
        budget=150,
        seed=4,
        channels=("gradient", "score"),
        attackers=("side-channel",),
    )
    r = _row(res, "side-channel", 10)
    assert r["channels"] == ["score"]
    assert r["verdict"] == "unprotected-channel-above-ceiling", r["accuracy"]


def test_seeds_reproduce_and_differ(theta):
    import torch

    kw = dict(targets=60, k=(1, 2), budget=40, epochs=5, attackers=("likelihood", "learned"))
    torch_state = torch.random.get_rng_state().clone()
    a = _attack(theta, Laplace(5.0), WIDE, seed=9, **kw)
    assert torch.equal(torch_state, torch.random.get_rng_state())  # no global torch RNG used
    b = _attack(theta, Laplace(5.0), WIDE, seed=9, **kw)
    c = _attack(theta, Laplace(5.0), WIDE, seed=10, **kw)
    assert a["rows"] == b["rows"]
    assert a["rows"] != c["rows"]


def test_regression_over_range_beats_prior_at_eps_inf(theta):
    res = _attack(
        theta,
        NoNoise(),
        None,
        targets=120,
        k=(5,),
        budget=100,
        seed=2,
        psi_range=(5.0, 20.0),
        attackers=("likelihood", "learned"),
        epochs=15,
    )
    for attacker in ("likelihood", "learned"):
        r = _row(res, attacker, 5)
        assert r["mae"] < 0.8 * r["prior_mae"], (attacker, r)
        assert r["rmse"] < r["prior_rmse"]


def test_prs_bit_likelihood_from_output_only(theta, rng):
    mech = ProjectedRandomSign(1.0)  # d̂ = 1: (M, ũ) recoverable from Mᵀũ
    g = rng.normal(size=(20, 112))
    rel = mech.release(g, rng)
    m, s = recover_prs_release(rel.output, mech)
    assert np.allclose(np.einsum("nkd,nk->nd", m, s), rel.output)
    res = _attack(theta, mech, PAPER, targets=150, k=(1,), budget=40, seed=6, attackers=("likelihood",))
    r = _row(res, "likelihood", 1)
    assert r["channels"] == ["gradient"] and r["verdict"] == "ok"
    with pytest.raises(ValueError):
        recover_prs_release(ProjectedRandomSign(10.0).release(g, rng).output, ProjectedRandomSign(10.0))


def test_linking_sums_log_likelihoods_per_group():
    group = np.array([1, 0, 1, 0, 1])
    rank = rank_in_group(group)
    assert rank.tolist() == [0, 0, 1, 1, 2]
    ll = np.arange(10.0).reshape(5, 2)
    assert link_loglik(ll, group, rank, 2, 2).tolist() == [[2 + 6, 3 + 7], [0 + 4, 1 + 5]]
    assert link_loglik(ll, group, rank, 1, 2).tolist() == [[2, 3], [0, 1]]


def test_threat_model_validation():
    with pytest.raises(ValueError):
        ThreatModel(mechanism=Laplace(1.0), candidates=(9.8,))
    with pytest.raises(ValueError):
        ThreatModel(mechanism=Laplace(1.0), candidates=PAPER, psi_range=(1.0, 2.0))
    with pytest.raises(ValueError):
        ThreatModel(mechanism=Laplace(1.0), candidates=None, psi_range=(2.0, 1.0))
    with pytest.raises(ValueError):
        ThreatModel(mechanism=Laplace(1.0), channels=("gradient", "prs_internals"))
    with pytest.raises(ValueError):
        parse_channels("gradient,telepathy")
    assert ThreatModel(mechanism=Laplace(1.0), channels="score,gradient").channels == ("gradient", "score")
    assert not ThreatModel(mechanism=Laplace(1.0), channels="gradient,timing").protected_only


def test_attack_view_first_k():
    n = 6
    v = AttackView(
        np.zeros((n, 3)),
        np.zeros((n, 112)),
        np.zeros(n),
        np.arange(n, dtype=float),
        np.zeros(n),
        np.array([0, 1, 0, 1, 0, 1]),
    )
    assert v.first_k(2).scores.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        AttackView(np.zeros((2, 3)), np.zeros((2, 112)), np.zeros(2), np.zeros(2), np.zeros(2), np.array([0, 2]))


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    cfg = TrainConfig(mechanism="laplace", epsilon=2.0, submissions=240, rounds=2, seed=3)
    out = tmp_path_factory.mktemp("attack") / "run"
    save_run([train(cfg, record_transcript=True)], out, wall_time=0.0)
    return out


def test_transcript_target_links_rounds_and_keeps_truth_apart(small_run):
    _, trials = load_run(small_run)
    cfg = trial_config(trials[0])
    view, truth = run_submissions(trials[0], cfg, k=2, max_targets=50, rng=np.random.default_rng(0))
    assert view.n_targets == len(truth.psi) <= 50
    assert np.all(view.group_sizes() == 2)
    assert set(np.unique(truth.psi)) <= set(cfg.gravities)
    assert not hasattr(view, "psi")
    gt = trials[0].ground_truth()
    tr = trials[0].transcript()
    # a submission's view row equals the transcript row (the noisy gradient), not a clean gradient
    i = int(np.flatnonzero(np.isin(tr.score, view.scores))[0])
    assert tr.gradient.dtype == np.float32 and gt.psi.shape == tr.score.shape and i >= 0
    per_sub = cfg.build_mechanism().epsilon
    assert per_sub == pytest.approx(1.0)  # ε = 2 split over 2 rounds (§3.2.1)
    assert math.isclose(ldp_ceiling(per_sub, 2, 3), ldp_ceiling(2.0, 1, 3))


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_laplace_likelihood_is_bayes_optimal_on_worst_case_inputs(eps):
    """Two clipped inputs ±(C/2)e₁ at L1 distance C (the sensitivity): the MAP test's success is exactly
    1 − ½e^{−ε/2}, below the ceiling e^ε/(1+e^ε). The attacker must hit the former within its CI."""
    from attacks.a3c.likelihood import LikelihoodAttacker
    from attacks.a3c.shadow import Contexts, ShadowBank

    mech = Laplace(eps, clip=0.01)
    n, d = 4000, 112
    rng = np.random.default_rng(np.random.SeedSequence([7, int(eps * 10)]))
    clean = np.zeros((2, d))
    clean[0, 0], clean[1, 0] = 0.005, -0.005
    truth = np.arange(n) % 2
    view = AttackView(mech(clean[truth], rng), np.zeros((n, 112)), np.zeros(n), np.zeros(n), np.zeros(n), np.arange(n))
    threat = ThreatModel(mechanism=mech, candidates=(1.0, 2.0), budget=2)
    bank = ShadowBank(np.array([1.0, 2.0]), clean[None, :, None, :], np.zeros((1, 2, 1)))
    ll = LikelihoodAttacker().loglik(threat, view, Contexts.of(view), bank, rng)
    correct = int(np.sum(ll.argmax(axis=1) == truth))
    lo, hi = clopper_pearson(correct, n, STRICT)
    optimum = 1 - 0.5 * math.exp(-eps / 2)
    assert lo <= optimum <= hi
    assert hi < ldp_ceiling(eps, 1, 2) + 0.03


def test_every_registered_attacker_meets_the_protocol_and_a_new_one_plugs_in():
    from attacks import Attacker, AttackScores
    from attacks.a3c import ATTACKERS, register_attacker
    from attacks.a3c.runner import attack_step

    for name, cls in ATTACKERS.items():
        assert isinstance(cls(), Attacker), name

    class Nothing:
        """Applies to nothing: the runner must skip it, never call it."""

        name = "nothing"

        def applies_to(self, threat):
            return False

        def channels_used(self, threat):
            return []

        def scores(self, threat, view, contexts, shadow, rng):
            raise AssertionError("called")

    register_attacker("nothing-test", Nothing)
    try:
        assert isinstance(Nothing(), Attacker)
        assert attack_step(None, None, None, None, "nothing-test", 2, np.random.SeedSequence(0)) is None
        with pytest.raises(ValueError, match="already registered"):
            register_attacker("nothing-test", Nothing)
    finally:
        ATTACKERS.pop("nothing-test")
    assert AttackScores().loglik is None
