"""Canary agents inside a real run (pgc.a3c.trainer with TrainConfig.canaries) and the one-run audit of them."""

from pathlib import Path

import numpy as np
import pytest

from audit.one_run import one_run_audit
from pgc.a3c.system import PGCA3CSystem
from pgc.a3c.trainer import TrainConfig, train
from pgc.a3c.transcript import transcript_releases

CRAFTED = Path(__file__).resolve().parents[2] / "results/audit/one-run/crafted_theta_5_15.npy"


def crafted_config(**changes) -> TrainConfig:
    theta = tuple(float(x) for x in np.load(CRAFTED))
    return TrainConfig(
        submissions=60, seed=3, canaries=1500, canary_pair=(5.0, 15.0), canary_model="crafted", canary_theta=theta
    ).replace(**changes)


def audit_gradient(result, samples=6000):
    c = result.config
    positions = result.canaries.positions
    truth = (result.ground_truth.psi[positions] == c.canary_pair[1]).astype(np.int64)
    system = PGCA3CSystem(c.build_mechanism(), result.canaries.theta, hyper=c.hyper)  # the claimed mechanism
    observed = transcript_releases(result.transcript, positions)
    return one_run_audit(
        system,
        *c.canary_pair,
        observed,
        truth,
        [result.canaries.theta],
        channels=("gradient",),
        samples=samples,
        seed=11,
    )[0]


def test_canaries_are_recorded_and_kept_out_of_the_update():
    result = train(crafted_config(canary_model="live", canary_theta=None), record_transcript=True)
    pos = result.canaries.positions
    assert pos.size == 1500 and 60 + 1500 <= result.scores.size <= 60 + 1500 + result.config.workers
    psi = result.ground_truth.psi[pos]
    assert set(np.unique(psi)) == {5.0, 15.0}
    assert 0.45 < np.mean(psi == 15.0) < 0.55  # fair coins: |deviation| > 0.05 has probability < 1e-4
    regular = np.setdiff1d(np.arange(result.scores.size), pos)
    assert result.updates == regular.size  # |B| = 1: one update per regular submission, none per canary
    assert set(result.ground_truth.psi[regular]) <= set(result.config.gravities)
    assert np.unique(result.transcript.agent[pos]).size == pos.size  # each canary its own agent
    included = train(
        crafted_config(canary_model="live", canary_theta=None, canary_update="include"), record_transcript=True
    )
    assert included.updates == included.scores.size


def test_protected_canaries_go_through_the_protections():
    result = train(crafted_config(canaries=300, protect=("all",)), record_transcript=True)
    t, pos = result.transcript, result.canaries.positions
    assert pos.size == 300 and np.all(t.worker[pos] == -1)  # the shuffler
    assert np.all(t.arrival_tick[pos] - t.start_tick[pos] == result.config.hyper.cap)  # the fixed schedule
    true = result.ground_truth.true_score[pos]
    assert not np.array_equal(t.score[pos], true)  # the privatized score


def test_canaries_begin_after_canary_start_regular_agents():
    result = train(crafted_config(canary_start=40, canaries=200), record_transcript=True)
    pos = result.canaries.positions
    assert pos.size == 200 and pos.min() >= 40 - result.config.workers
    assert result.canaries.setup["canary_start"] == 40


def test_regular_agents_play_the_same_gravities_with_and_without_canaries():
    plain = train(TrainConfig(submissions=60, seed=3), record_transcript=True)
    with_canaries = train(crafted_config(), record_transcript=True)
    regular = with_canaries.transcript.agent[with_canaries.transcript.agent < 10_000]
    first = {int(a): p for a, p in zip(plain.transcript.agent, plain.ground_truth.psi, strict=False)}
    other = {
        int(a): p
        for a, p in zip(with_canaries.transcript.agent, with_canaries.ground_truth.psi, strict=False)
        if int(a) in first
    }
    assert other and all(first[a] == p for a, p in other.items())
    assert regular.size > 0


def test_config_without_canaries_has_no_canary_keys_and_bad_canary_settings_are_refused():
    d = TrainConfig().to_dict()
    assert not any(k.startswith("canary") or k == "planted_noise_factor" for k in d)
    round_trip = TrainConfig.from_dict(crafted_config().to_dict())
    assert round_trip == crafted_config()
    with pytest.raises(ValueError, match="canary_pair"):
        TrainConfig(canaries=10)
    with pytest.raises(ValueError, match="canary_theta"):
        TrainConfig(canaries=10, canary_pair=(5, 15), canary_model="crafted")
    with pytest.raises(ValueError, match="rounds"):
        TrainConfig(canaries=10, canary_pair=(5, 15), rounds=2)


def test_one_run_audit_is_consistent_on_the_correct_pipeline_and_catches_the_planted_twin_bug():
    # correct pipeline: ε_LB ≤ ε = 1 except with probability α = 5 % (the theorem; fixed seeds here)
    honest = audit_gradient(train(crafted_config(), record_transcript=True))
    assert 0.2 < honest.epsilon_lower_bound <= 1.0 and honest.verdict == "consistent"
    # planted bug: the compiled twin draws its noise for 8ε; the run still records and claims ε = 1,
    # and the auditor simulates the claimed mechanism, so only the canaries can show it
    planted = train(crafted_config(planted_noise_factor=8.0), record_transcript=True)
    assert planted.mechanism["factory_args"]["epsilon"] == 1.0
    flagged = audit_gradient(planted)
    assert flagged.epsilon_lower_bound > 1.5 and flagged.verdict == "violated"


def test_one_run_audit_of_a_gaussian_claim_reports_both_bounds_at_half_alpha():
    from audit.one_run.bounds import epsilon_lower_bound as steinke_bound
    from pgc.toysystems import GaussianVectorSystem

    # a Gaussian at μ = 4 (very leaky) claiming its own (4-ish, 1e-5) curve from a tenth of its sensitivity
    system = GaussianVectorSystem(1.0, 1e-5, dim=1, sensitivity_factor=0.1)
    rng = np.random.default_rng(np.random.SeedSequence(8))
    secret, secret_prime = next(iter(system.canaries().values()))
    truth = rng.integers(0, 2, size=400)
    pos = system.release(secret_prime, 400, rng)["value"]
    neg = system.release(secret, 400, rng)["value"]
    observed = {"value": np.where(truth[:, None] == 1, pos, neg)}
    row = one_run_audit(system, secret, secret_prime, observed, truth, [None], channels=("value",), seed=1)[0]
    assert row.claimed_mu == pytest.approx(system.claim.gdp_mu)
    assert row.mu_lower_bound > row.claimed_mu and row.verdict == "violated"  # the f-DP bound flags the curve
    assert row.epsilon_lower_bound == max(row.steinke_epsilon_lower_bound, row.fdp_epsilon_lower_bound)
    assert row.steinke_epsilon_lower_bound == steinke_bound(400, row.guesses, row.correct, alpha=0.025, delta=1e-5)
    assert row.p_value < 0.05 and row.test_confidence == pytest.approx(0.975)
