"""The System contract and audit.audit_system: (ε, δ) claims, Gaussian mechanisms, the accountant, the
built-in systems (PGC-A3C, the Pendulum participant, the toy systems) judged right on the right channel.

False-failure rates: every "consistent" assertion runs at confidence STRICT = 1 − 1e-4 (a correct
system is called violated with probability ≤ 1e-4 per assertion); every "violated" assertion is on a
system whose true ε is far above its claim (power ~1 at the sample sizes used, seeded)."""

import json
import math

import numpy as np
import pytest

from audit.certification import accountant
from audit.engine.blackbox import audit_mechanism, canary_pairs
from audit.engine.broadcast_search import mean_separation
from audit.engine.system_audit import AuditSettings, audit_system
from audit.selftest.mutants import GaussianNoiseShrunk
from pgc.a3c.system import PGCA3CSystem
from pgc.cli.main import main
from pgc.contracts import PrivacyClaim
from pgc.gympg.pendulum import PendulumParams, rollout
from pgc.gympg.system import PendulumGaussianSystem, pendulum_system
from pgc.mechanisms import Gaussian, Laplace, make_mechanism, mechanism_record, rebuild_mechanism, split_rounds
from pgc.mechanisms.accounting import gaussian_event
from pgc.mechanisms.calibration import analytic_gaussian_sigma, classic_gaussian_sigma, gaussian_delta, gaussian_epsilon
from pgc.toysystems import BatchedSumSystem, GaussianVectorSystem, LaplaceCountSystem

STRICT = 1 - 1e-4


# ---------------------------------------------------------------------------------------------
# Gaussian calibration and the accountant: known numbers
# ---------------------------------------------------------------------------------------------


def test_gaussian_calibrations_match_known_numbers():
    # Balle & Wang 2018: σ = 3.73 for (1, 1e-5) at Δ = 1, against the classic 4.84
    assert analytic_gaussian_sigma(1.0, 1e-5) == pytest.approx(3.7306, abs=1e-4)
    assert classic_gaussian_sigma(1.0, 1e-5) == pytest.approx(math.sqrt(2 * math.log(1.25e5)), rel=1e-12)
    for eps in (0.3, 1.0, 4.0, 12.0):
        sigma = analytic_gaussian_sigma(eps, 1e-6, 2.0)
        assert gaussian_delta(sigma, eps, 2.0) == pytest.approx(1e-6, rel=1e-6)
        assert gaussian_epsilon(sigma, 1e-6, 2.0) == pytest.approx(eps, rel=1e-9)
    with pytest.raises(ValueError, match="epsilon <= 1"):
        classic_gaussian_sigma(2.0, 1e-5)


@pytest.mark.parametrize("multiplier", [0.8, 1.5, 3.73, 10.0])
def test_pld_accountant_agrees_with_the_closed_form(multiplier):
    """One Gaussian: PLD (dp-accounting) vs Balle & Wang's Thm. 8; k Gaussians of multiplier z compose
    to one of multiplier z/√k, so the closed form checks the composition too (both to 1e-3)."""
    for delta in (1e-5, 1e-3):
        assert accountant.accountant_epsilon(gaussian_event(multiplier), delta) == pytest.approx(
            gaussian_epsilon(multiplier, delta), abs=1e-3
        )
        k = 16
        assert accountant.accountant_epsilon(gaussian_event(multiplier, k), delta) == pytest.approx(
            gaussian_epsilon(multiplier / math.sqrt(k), delta), abs=1e-3
        )


def test_pure_epsilon_of_laplace_events_known_numbers_and_dp_accounting_at_small_delta():
    """At δ = 0 a Laplace of noise multiplier z (scale z·Δ₁) is (1/z)-DP, and pure ε adds up under composition;
    dp-accounting's PLD accountant approaches the same number as δ → 0 from below."""
    import dp_accounting

    laplace = dp_accounting.LaplaceDpEvent
    known = [
        (laplace(0.5), 2.0),
        (dp_accounting.SelfComposedDpEvent(laplace(2.0), 3), 1.5),
        (dp_accounting.ComposedDpEvent([laplace(1.0), laplace(0.5)]), 3.0),
        (dp_accounting.ComposedDpEvent([laplace(4.0), dp_accounting.SelfComposedDpEvent(laplace(2.0), 2)]), 1.25),
    ]
    for event, epsilon in known:
        assert accountant.pure_epsilon(event) == pytest.approx(epsilon, rel=1e-12)
        assert accountant.accountant_epsilon(event, 0.0) == pytest.approx(epsilon, rel=1e-12)
        pld = accountant.accountant_epsilon(event, 1e-12)
        assert pld <= epsilon + 1e-9 and pld == pytest.approx(epsilon, abs=1e-3)
    # a Gaussian part holds no finite ε at δ = 0; an event the rule does not read gets no number
    mixed = dp_accounting.ComposedDpEvent([laplace(1.0), gaussian_event(2.0)])
    assert accountant.accountant_epsilon(mixed, 0.0) == math.inf
    assert accountant.accountant_epsilon(dp_accounting.PoissonSampledDpEvent(0.1, laplace(1.0)), 0.0) is None
    with pytest.raises(ValueError, match="delta"):
        accountant.accountant_epsilon(laplace(1.0), 1.0)


def test_gdp_estimate_is_the_gaussian_tradeoff_through_the_rates():
    mu = 1.3
    from scipy.stats import norm

    fpr = 0.05
    fnr = norm.cdf(norm.isf(fpr) - mu)
    assert accountant.gdp_mu_estimate(fpr, fnr) == pytest.approx(mu, rel=1e-9)
    assert accountant.gdp_mu_estimate(0.0, 0.5) == math.inf
    assert accountant.gdp_mu_of_gaussian(2.0) == 0.5


def test_gaussian_mechanism_registry_and_records():
    m = make_mechanism("gaussian-analytic", 2.0, delta=1e-5)
    assert m.noise_scale == pytest.approx(analytic_gaussian_sigma(2.0, 1e-5, 0.01))
    assert rebuild_mechanism(mechanism_record(m)) == m
    assert split_rounds(m, 4) == Gaussian(0.5, 2.5e-6, 0.01)
    out = m(np.full((3, 5), 100.0), np.random.default_rng(0))
    assert out.shape == (3, 5)
    with pytest.raises(ValueError, match="delta"):
        make_mechanism("gaussian", 0.5)
    with pytest.raises(ValueError, match="pure epsilon"):
        make_mechanism("laplace", 1.0, delta=1e-5)


# ---------------------------------------------------------------------------------------------
# A Gaussian claim at its boundary (OpenDP style): passes at (ε, δ), fails with σ/1.5
# ---------------------------------------------------------------------------------------------


def _one_canary_audit(mech, samples=1_000_000, confidence=0.95, seed=0):
    return audit_mechanism(
        mech,
        dim=4,
        samples=samples,
        confidence=confidence,
        seed=seed,
        canaries=canary_pairs(4)[:1],
        delta_test_samples=0,
        train_fraction=1.0,
    )


@pytest.mark.slow
def test_gaussian_passes_at_its_claim_and_is_flagged_with_too_little_noise():
    correct = _one_canary_audit(Gaussian(2.0, 1e-5), confidence=STRICT)
    assert correct.verdict == "consistent"
    assert correct.epsilon_lower_bound > 1.2  # the audit has power: the oracle test reaches ~1.5 at 95 %
    assert correct.accountant_epsilon == pytest.approx(2.0, abs=1e-3)
    shrunk = GaussianNoiseShrunk(2.0)  # true ε ≈ 3.16 at δ = 1e-5
    flagged = _one_canary_audit(shrunk)
    assert flagged.verdict == "violated" and flagged.epsilon_lower_bound > 2.0
    # the accountant reads the noise actually added (σ/1.5) and gives the true ε beside the claim
    assert flagged.accountant_epsilon == pytest.approx(shrunk.true_epsilon(4), abs=1e-3)


# ---------------------------------------------------------------------------------------------
# Systems judged right through the contract
# ---------------------------------------------------------------------------------------------


def _audit(system, samples=100_000, confidence=STRICT, **kw):
    secret, secret_prime = next(iter(system.canaries().values()))
    return audit_system(system, secret, secret_prime, samples=samples, confidence=confidence, **kw)


def test_correct_gaussian_system_is_consistent_and_a_wrong_sensitivity_is_flagged():
    ok = _audit(GaussianVectorSystem(1.0, 1e-5))
    assert ok.verdict == "consistent" and all(r.verdict == "consistent" for r in ok.rows)
    assert ok.row("value").accountant_epsilon == pytest.approx(1.0, abs=1e-3)
    bad = _audit(GaussianVectorSystem(1.0, 1e-5, sensitivity_factor=0.5), confidence=0.95)
    assert bad.row("value").verdict == "violated" and bad.verdict == "violated"
    # the claimant accounts its noise with the same wrong sensitivity: only the releases show the bug
    assert bad.row("value").accountant_epsilon == pytest.approx(1.0, abs=1e-3)
    assert bad.row("value").claim_contradiction is None and bad.row("value").epsilon_lower_bound > 1.0


@pytest.mark.slow
def test_data_dependent_schedule_is_flagged_on_the_schedule_channel_only():
    fixed = _audit(BatchedSumSystem())
    assert fixed.row("messages").verdict == "consistent" and fixed.row("all").verdict == "consistent"
    # a fixed schedule is the same for both secrets: nothing told them apart, so no power is claimed there
    assert fixed.row("schedule").verdict == "inconclusive" and not fixed.row("schedule").separated
    assert fixed.verdict == "inconclusive"
    adaptive = _audit(BatchedSumSystem(adaptive=True), samples=5_000, confidence=0.95)
    assert adaptive.row("messages").verdict == "consistent"
    schedule = adaptive.row("schedule")
    assert schedule.verdict == "violated" and schedule.holm_rejected
    assert schedule.delta_lower_bound > 0.99  # a deterministic difference: δ_LB ≈ 1 from a few thousand runs
    assert adaptive.verdict == "violated"


def test_pure_epsilon_system_audited_tight_with_1e5_samples():
    res = _audit(LaplaceCountSystem(1.0), confidence=0.95)
    row = res.row("count")
    assert 0.9 <= row.epsilon_lower_bound <= 1.0 and row.verdict == "consistent"
    # it declares no noise (no dp_event): no accountant; pure ε: no μ̂
    assert row.accountant_epsilon is None and res.accountant is None and row.gdp_mu_estimate is None


def test_a_single_channel_system_has_no_joint_row_and_holm_counts_its_test_once():
    from audit.verdicts import family_verdict
    from pgc.schemas import SystemAuditResult

    res = _audit(LaplaceCountSystem(1.0), samples=5_000, confidence=0.95)
    assert [r.channel for r in res.rows] == ["count"]
    family = family_verdict(res.rows, 0.05)
    assert family.size == len(res.rows) == 1
    assert family.adjusted[0] == pytest.approx(min(1.0, res.row("count").p_value), rel=1e-12)  # Holm with m = 1
    assert [r["channel"] for r in SystemAuditResult.from_dict(res.to_dict()).to_dict()["rows"]] == ["count"]
    with pytest.raises(ValueError, match="its own joint channel: ask for count"):
        audit_system(LaplaceCountSystem(1.0), 1.0, 0.0, samples=1_000, channels=["all"])
    # two released channels keep their joint row
    two = audit_system(_CountWithClearCopy(), 1, 0, samples=1_000, seed=0)
    assert [r.channel for r in two.rows] == ["noisy", "clear", "all"]


class _DeclaredLaplace:
    """``copies`` releases of x ∈ [0, Δ] + Lap(b) with b = copies/ε, calibrated for Δ = 1 and claiming pure ε;
    ``dp_event`` declares the noise against the sensitivity the release really has (Δ = ``sensitivity``)."""

    name = "declared-laplace"
    channels = ("count",)

    def __init__(self, epsilon: float = 1.0, copies: int = 2, sensitivity: float = 1.0):
        self.scale, self.copies, self.sensitivity = copies / epsilon, copies, sensitivity
        self.claim = PrivacyClaim(epsilon, 0.0, ("count",))

    def release(self, secret, n, rng, *, broadcast=None):
        x = min(max(float(secret), 0.0), self.sensitivity)
        return {"count": x + rng.laplace(0.0, self.scale, size=(n, self.copies))}

    def canaries(self):
        return {"0 vs Δ": (self.sensitivity, 0.0)}

    def dp_event(self):
        import dp_accounting

        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.LaplaceDpEvent(self.scale / self.sensitivity), self.copies
        )


def test_a_pure_epsilon_system_gets_its_accountant_epsilon_and_a_wrong_sensitivity_exceeds_the_claim():
    ok = _audit(_DeclaredLaplace(), samples=20_000)
    assert ok.row("count").accountant_epsilon == pytest.approx(1.0, rel=1e-12)  # 2 Laplaces of ε = 1/2
    assert ok.accountant.epsilon == pytest.approx(1.0, rel=1e-12) and ok.accountant.delta == 0.0
    assert ok.verdict == "consistent" and ok.row("count").claim_contradiction is None
    # calibrated for Δ = 1, released at Δ = 2: the accountant reads ε = 2 against the claimed 1, and the audit agrees
    bad = _audit(_DeclaredLaplace(sensitivity=2.0), samples=20_000, confidence=0.95)
    row = bad.row("count")
    assert row.accountant_epsilon == pytest.approx(2.0, rel=1e-12) and row.accountant_epsilon > row.claimed_epsilon
    assert row.verdict == "violated" and row.epsilon_lower_bound > row.claimed_epsilon
    assert "contradicts its own accounting: the noise it declares gives ε = 2 at δ = 0" in row.claim_contradiction


def test_holm_verdict_keeps_unprotected_apart_from_violated():
    res = _audit(PendulumGaussianSystem(1.0, 1e-5, params=PendulumParams(horizon=50)), samples=4_000, confidence=0.95)
    assert res.row("gradient").verdict == "inconclusive"  # 4,000 horizon-50 rollouts cannot tell 5 from 15
    assert res.row("return").verdict == "unprotected channel" and not res.row("return").covered
    assert res.verdict == "unprotected channel"
    assert [r.channel for r in res.rows] == ["gradient", "return", "all"]
    data = res.to_dict()
    assert data["kind"] == "system-audit" and data["format_version"] == 3
    assert json.loads(json.dumps(data))["rows"][0]["claimed_delta"] == 1e-5


def test_adversarial_search_over_the_broadcast_space_runs_on_the_search_stream():
    system = PendulumGaussianSystem(1.0, 1e-5, params=PendulumParams(horizon=30))
    res = audit_system(
        system,
        5.0,
        15.0,
        samples=2_000,
        confidence=STRICT,
        adversarial=True,
        search_samples=200,
        search_generations=2,
        channels=["gradient"],
    )
    assert res.broadcast == "searched" and res.row("gradient").verdict in ("consistent", "inconclusive")
    assert res.row("gradient").broadcast in ("searched", "honest")
    assert mean_separation(np.zeros((5, 2)), np.ones((5, 2))) > 1e9


def test_bad_systems_and_inputs_get_clear_errors():
    class NoRelease:
        name, channels, claim = "x", ("a",), PrivacyClaim(1.0)

    with pytest.raises(ValueError, match="lacks release"):
        audit_system(NoRelease(), 0, 1)

    class WrongShape(LaplaceCountSystem):
        def release(self, secret, n, rng, *, broadcast=None):
            return {"count": np.zeros((n + 1, 1))}

    with pytest.raises(ValueError, match="shape"):
        audit_system(WrongShape(), 0.0, 1.0, samples=100)
    with pytest.raises(ValueError, match="samples"):
        audit_system(LaplaceCountSystem(), 0.0, 1.0, samples=10)
    with pytest.raises(ValueError, match="unknown or no channels"):
        audit_system(LaplaceCountSystem(), 0.0, 1.0, channels=["nope"])
    with pytest.raises(ValueError, match="nothing to search"):
        audit_system(LaplaceCountSystem(), 0.0, 1.0, adversarial=True)
    with pytest.raises(ValueError, match="delta"):
        PrivacyClaim(1.0, 1.5)


# ---------------------------------------------------------------------------------------------
# PGC-A3C through the contract: the committed audits reproduce bit for bit
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_committed_adversarial_audit_reproduces_through_the_contract():
    """results/audit/adversarial/laplace-eps1.json, ψ = 5 vs 15, gradient channel at the saved crafted θ:
    the certification runs on PGCA3CSystem.release and the shared engine and counts the committed test's errors."""
    from audit.certification.paired import certified_epsilon
    from pgc.a3c.model import load_checkpoint
    from pgc.audits.adversarial import adversarial_audit

    committed = json.loads(open("results/audit/adversarial/laplace-eps1.json").read())
    first = committed["adversarial_audits"][0]
    expected = next(c for c in first["channels"] if c["channel"] == "gradient")
    pair_seed = int(np.random.SeedSequence(committed["seed"]).spawn(2)[0].generate_state(1)[0])
    theta = load_checkpoint("results/audit/adversarial/laplace-eps1-theta-5-15-gradient.pt")
    res = adversarial_audit(
        Laplace(1.0),
        first["psi"],
        first["psi_prime"],
        samples=200_000,
        seed=pair_seed,
        channels=("gradient",),
        thetas={"gradient": theta},
        noise_free=False,
    )
    got = res.to_dict()["channels"][0]
    for key in ("false_positives", "false_negatives", "statistic", "verdict"):
        assert got[key] == expected[key], key
    # the same test on the same releases; the committed row's certificate (the split one, at its recorded α split)
    # recomputed from these counts gives the committed bound, and the row's own certificate (the paired one where it
    # projects more) gives its bound from its recorded counts
    n, alpha = got["samples_per_side"], 1.0 - got.get("test_confidence", got["confidence"])
    counts = (got["false_positives"], got["false_negatives"], n, alpha, 0.0)
    assert certified_epsilon(*counts, expected["fp_share"], None) == expected["epsilon_lower_bound"]
    pairs = None if got.get("discordant_pairs") is None else tuple(got["discordant_pairs"])
    assert certified_epsilon(*counts, got.get("fp_share"), pairs) == got["epsilon_lower_bound"]


def test_pgc_system_through_audit_system_sees_the_score_leak_at_a_wide_pair():
    res = audit_system(PGCA3CSystem(Laplace(1.0)), 5.0, 15.0, samples=3_000, confidence=0.95, seed=1)
    assert res.row("gradient").verdict == "inconclusive" and not res.row("gradient").separated
    assert res.row("score").verdict == "unprotected channel" and res.row("score").epsilon_lower_bound > 0.3


class _CountWithClearCopy:
    """A Laplace count (covered) beside the count sent in the clear (not covered)."""

    name = "count-with-clear-copy"
    channels = ("noisy", "clear")
    claim = PrivacyClaim(1.0, 0.0, ("noisy",))

    def release(self, secret, n, rng, *, broadcast=None):
        return {"noisy": secret + rng.laplace(0.0, 1.0, n), "clear": np.full(n, float(secret))}


def test_held_to_claim_makes_an_uncovered_leak_above_the_claim_a_violation():
    from audit.engine.system_audit import AuditSettings

    rows = {
        h: {
            r.channel: r.verdict
            for r in audit_system(
                _CountWithClearCopy(), 1, 0, samples=1_000, seed=0, held_to_claim=h, channels=["noisy", "clear"]
            ).rows
        }
        for h in (False, True)
    }
    assert rows[False] == {"noisy": "consistent", "clear": "unprotected channel"}
    assert rows[True] == {"noisy": "consistent", "clear": "violated"}
    assert AuditSettings(samples=400, train_minimum=150).train_samples == 150
    assert AuditSettings(samples=4_000).train_samples == 1_000
    with pytest.raises(ValueError, match="train_minimum"):
        AuditSettings(train_minimum=50)


def test_drawn_releases_serve_rows_in_order_and_never_reuse_them():
    from pgc.audits.environment import DrawnReleases

    system = PGCA3CSystem(Laplace(1.0))
    drawn = DrawnReleases(
        system, {5.0: {"score": np.arange(6.0)[:, None]}, 15.0: {"score": np.zeros((6, 1))}}, ("score",)
    )
    assert drawn.release(5.0, 4)["score"][:, 0].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert drawn.release(5.0, 2)["score"][:, 0].tolist() == [4.0, 5.0]
    with pytest.raises(RuntimeError, match="exhausted"):
        drawn.release(5.0, 1)
    assert drawn.claim_for("score") == system.claim_for("score")


# ---------------------------------------------------------------------------------------------
# The Pendulum participant: gymnasium's dynamics, step for step
# ---------------------------------------------------------------------------------------------


def test_pendulum_matches_gymnasium_step_for_step():
    import gymnasium as gym

    g = np.array([9.81, 4.0, 15.0])
    rng = np.random.default_rng(0)
    ep = rollout(lambda obs, r: 3.0 * np.sin(7 * obs[:, 2]), g, 3, rng, PendulumParams(horizon=60))
    for lane, gravity in enumerate(g):
        env = gym.make("Pendulum-v1", g=float(gravity)).unwrapped
        env.reset(seed=0)
        obs0 = ep.observations[0, lane]
        env.state = np.array([math.atan2(obs0[1], obs0[0]), obs0[2]])
        for t in range(60):
            obs, reward, *_ = env.step(np.array([ep.actions[t, lane]]))
            assert reward == pytest.approx(ep.rewards[t, lane], abs=1e-12)
            if t + 1 < 60:
                np.testing.assert_allclose(obs, ep.observations[t + 1, lane], atol=1e-12)


def test_pendulum_system_claim_and_accountant():
    system = pendulum_system()
    assert system.claim.covers == ("gradient",) and system.channels == ("gradient", "return")
    assert accountant.accountant_epsilon(system.dp_event(), 1e-5) == pytest.approx(1.0, abs=1e-3)


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["--system", "nosuchmodule:factory"],
        ["--system", "pgc.gympg.system"],
        ["--system", "pgc.gympg.system:nosuch"],
        ["--system", "pgc.toysystems:LaplaceCountSystem", "--pair", "nosuch"],
        ["--system", "pgc.toysystems:LaplaceCountSystem", "--secrets", "0", "{"],
        ["--mechanism", "laplace", "--epsilon", "1", "--pair", "x"],
        ["--mechanism", "gaussian-analytic", "--epsilon", "1"],  # no --delta
        ["--system", "pgc.toysystems:LaplaceCountSystem", "--adversarial"],  # nothing to search
    ],
)
def test_system_cli_bad_input_exits_2_and_writes_nothing(argv, tmp_path, capsys):
    out = tmp_path / "a.json"
    try:
        code = main(["audit", *argv, "--samples", "200", "--out", str(out)])
    except SystemExit as exc:
        code = exc.code
    assert code == 2 and not out.exists()
    assert "error" in capsys.readouterr().err


def test_system_cli_writes_a_system_audit(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["audit", "--system", "pgc.toysystems:BatchedSumSystem", "--samples", "2000", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["kind"] == "system-audit" and data["system"] == "batched-sum"
    assert data["pair"] == "first value replaced" and {r["channel"] for r in data["rows"]} == {
        "messages",
        "schedule",
        "all",
    }
    assert "verdict" in capsys.readouterr().out


@pytest.mark.parametrize("core", ["pgc.gympg", "pgc.fedlinucb", "pgc.toysystems", "pgc.dprl", "pgc.ldp", "pgc.a3c"])
def test_system_cores_import_nothing_above_them(core):
    """Layering: each system core imports nothing from audit, attacks, reports, replication, tuning or the CLI
    (the System contract is structural)."""
    import subprocess
    import sys

    code = (
        f"import sys, pkgutil, importlib, {core}; "
        f"[importlib.import_module('{core}.' + m.name) for m in pkgutil.iter_modules({core}.__path__)]; "
        "bad = [m for m in ('pgc.replication', 'audit', 'attacks', 'reports', 'pgc.tuning', 'pgc.engines', "
        "'pgc.cli') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_candidates_ranked_on_one_stream_share_common_random_numbers():
    """AuditTarget.release_pair draws from fixed children of its sequence: two calls with one sequence draw
    the same numbers (what the adversarial search's comparisons rely on), another sequence other numbers."""
    from audit.engine.releases import AuditTarget

    target, seq = AuditTarget(LaplaceCountSystem(1.0), 1.0, 0.0, ("count",)), np.random.SeedSequence(5)
    first = target.release_pair(50, seq, None, ["count"])
    again = target.release_pair(50, seq, None, ["count"])
    other = target.release_pair(50, np.random.SeedSequence(6), None, ["count"])
    for side in (0, 1):
        np.testing.assert_array_equal(first[side]["count"], again[side]["count"])
        assert not np.array_equal(first[side]["count"], other[side]["count"])


def test_an_audit_reads_the_claim_once_whatever_its_channels():
    """The contract check and the claim's reading share one read of ``system.claim``, for every channel at once."""
    from pgc.contracts import PrivacyClaim

    class Counting:
        name = "counting"
        channels = ("a", "b", "c")
        reads = 0

        @property
        def claim(self):
            type(self).reads += 1
            return PrivacyClaim(1.0, 0.0, ("a", "b", "c"))

        def release(self, secret, n, rng, *, broadcast=None):
            return {ch: rng.laplace(float(secret), 1.0, size=(n, 1)) for ch in self.channels}

    result = audit_system(Counting(), 0.0, 0.5, samples=2000, seed=0, progress=False)
    assert Counting.reads == 1 and [r.channel for r in result.rows][:3] == ["a", "b", "c"]


def test_each_row_records_its_channel_kind_as_the_system_declares_it():
    from pgc.a3c.system import pgc_a3c_channel_kinds
    from pgc.schemas import ChannelFamily, ChannelKind, SystemAuditResult, channel_kind

    class Declared(_CountWithClearCopy):
        channel_kinds = {"noisy": ChannelKind(ChannelFamily.SCORE, 3, "noise")}

    res = audit_system(Declared(), 1, 0, samples=1_000, seed=0)
    kinds = {r.channel: channel_kind(r) for r in res.rows}
    assert kinds == {
        "noisy": ChannelKind(ChannelFamily.SCORE, 3, "noise"),
        "clear": ChannelKind(ChannelFamily.OTHER, 1, "clear"),  # undeclared: of no family, one submission
        "all": ChannelKind(ChannelFamily.ALL, 1, "all"),
    }
    # written where it differs from the label's kind, read back the same
    rows = res.to_dict()["rows"]
    assert rows[0]["channel_family"] == "score" and rows[0]["composition"] == 3 and rows[0]["base_channel"] == "noise"
    assert "channel_family" not in rows[1] and "channel_family" not in rows[2]
    assert [channel_kind(r) for r in SystemAuditResult.from_dict(res.to_dict()).rows] == list(kinds.values())
    # PGC-A3C's composed channels: k linked submissions of the gradient (at full ε or split) or of the score
    a3c = PGCA3CSystem(Laplace(1.0), compositions=(4,)).channel_kinds
    assert set(a3c) == set(PGCA3CSystem(Laplace(1.0), compositions=(4,), order=True, workers=2).channels)
    assert a3c["gradient×4"] == ChannelKind(ChannelFamily.GRADIENT, 4, "gradient")
    assert a3c["gradient×4 split"] == ChannelKind(ChannelFamily.GRADIENT, 4, "gradient split")
    assert a3c["score×4"] == ChannelKind(ChannelFamily.SCORE, 4, "score")
    assert a3c["arrival-order"].family is ChannelFamily.TIMING and pgc_a3c_channel_kinds(())["all"].k == 1


def test_a_certification_seed_never_draws_a_stream_of_the_audit_it_recertifies():
    """Certification seed 0 of a seed-0 audit (and any other pair) is a stream of its own: not the root, not one
    of the search, training or certification streams, nor their descendants (three levels), of an audit of seed 0 or
    1."""

    def first_words(seq: np.random.SeedSequence) -> tuple[int, ...]:
        return tuple(int(w) for w in seq.generate_state(4))

    def family(root: np.random.SeedSequence, depth: int = 2):
        yield root
        if depth:
            for child in root.spawn(4):
                yield from family(child, depth - 1)

    taken = {first_words(s) for seed in (0, 1) for s in family(np.random.SeedSequence(seed), 3)}
    fresh = [AuditSettings(seed=seed, certification_seed=cs).streams()[2] for seed in (0, 1) for cs in (0, 1, 2)]
    assert len({first_words(s) for s in fresh}) == len(fresh)
    assert not {first_words(s) for s in fresh} & taken


def test_a_selection_pool_refuses_an_audit_that_would_select_on_its_own_certification_releases():
    from audit.engine.releases import SelectionPool
    from pgc.errors import UserError
    from pgc.systems.registry import make_system

    system = make_system("toy-laplace-count")
    secret, secret_prime = system.canaries()[next(iter(system.canaries()))]
    pool = SelectionPool()
    settings = AuditSettings(samples=2_000, seed=5)
    audit_system(system, secret, secret_prime, settings, selection_pool=pool)
    assert sum(len(a) for a in pool.sides[0]["count"]) > 2_000  # its certification releases joined the pool
    with pytest.raises(UserError, match="its own certification releases"):
        audit_system(system, secret, secret_prime, settings, selection_pool=pool)
    audit_system(system, secret, secret_prime, AuditSettings(samples=2_000, seed=6), selection_pool=pool)  # fresh
