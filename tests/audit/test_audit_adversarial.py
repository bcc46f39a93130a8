"""Adversarial-model audit: the crafted family, the search objectives, and the certified bounds.

Statistical assertions use confidence 1 − 1e-4 where a false failure would be a bound above a true
claim (the stated false-failure rate of those tests is then 1e-4 each).
"""

import math

import numpy as np
import pytest
import torch

from pgc.a3c.crafted import (
    DETECTOR_COORDINATES,
    SearchSettings,
    crafted_theta,
    detector_share,
    gradient_objective,
    ks_distance,
    quantile_separation,
    search_crafted_model,
    theta_from_vector,
)
from pgc.a3c.env import physics_array
from pgc.a3c.model import ActorCritic
from pgc.a3c.rollout import simulate_episodes
from pgc.audits.adversarial import adversarial_audit
from pgc.audits.studies import curve_pair
from pgc.cli.main import main
from pgc.mechanisms import Laplace, ProjectedRandomSign

SMALL = SearchSettings(
    screen_controllers=40, screen_episodes=100, generations=6, population=8, episodes=120, restarts=1
)


def test_crafted_theta_is_a_bang_bang_controller_with_a_value_flip_head():
    k, w = np.array([0.44, 0.34, 0.47, 0.27]), np.array([0.5, -1.0, 2.0, 0.5])
    theta = crafted_theta(k, w, 2.0)
    net = ActorCritic.from_flat(theta)
    s = np.random.default_rng(0).uniform(-0.3, 0.3, size=(1000, 4))
    logits, value = net(torch.from_numpy(s).to(torch.float64))
    action = logits.argmax(dim=1).numpy()
    assert np.array_equal(action, (s @ k > 0).astype(int))
    expected_v = 100.0 * np.abs(s @ w) / np.abs(w).sum()
    assert np.allclose(value.detach().numpy(), expected_v, rtol=1e-4, atol=1e-4)


def test_crafted_theta_rejects_bad_input():
    with pytest.raises(ValueError):
        crafted_theta(np.zeros(4), np.ones(4), 1.0)
    with pytest.raises(ValueError):
        crafted_theta(np.ones(3), np.ones(4), 1.0)
    with pytest.raises(ValueError):
        crafted_theta(np.ones(4), np.ones(4), math.nan)
    with pytest.raises(ValueError):
        adversarial_audit(Laplace(1.0), 9.8, 9.8)
    with pytest.raises(ValueError):
        adversarial_audit(Laplace(1.0), 5.0, 15.0, channels=("nope",))


def test_objectives_on_known_numbers():
    a, b = np.zeros(50), np.ones(50)
    assert ks_distance(a, a) == 0.0 and ks_distance(a, b) == 1.0
    assert ks_distance(np.arange(4.0), np.arange(2.0, 6.0)) == 0.5
    assert quantile_separation(-np.ones(10), np.ones(10)) == 2.0
    assert gradient_objective(-np.ones(10), np.ones(10)) == 3.0
    assert gradient_objective(np.full(10, 0.997), np.full(10, 0.9971)) < 1e-3  # invisible to any noise
    g = np.zeros((3, 112))
    g[0, list(DETECTOR_COORDINATES)] = [-1.0, -3.0]
    g[1, 0], g[1, DETECTOR_COORDINATES[0]] = 1.0, 1.0
    g[2, 5] = np.nan
    assert np.allclose(detector_share(g), [-1.0, 0.5, 0.0])
    assert curve_pair(10.0) == (5.0, 15.0) and curve_pair(0.2) == (9.7, 9.9)


def test_value_flip_puts_the_clipped_gradient_at_opposite_corners():
    """At a known good crafted θ the detector share is −1 when the pole balances (ψ = 5) and +1 when it
    falls (ψ = 15): the L1-clipped submissions sit at L1 distance ≈ C."""
    x = np.array([0.44, 0.34, 0.47, 0.27, 0.199, 0.118, -0.105, 0.578, np.log10(187.4)])
    theta = theta_from_vector(x)
    rng = np.random.default_rng(1)
    a = simulate_episodes(theta, physics_array(400, gravity=5.0), rng)
    b = simulate_episodes(theta, physics_array(400, gravity=15.0), rng)
    ta, tb = detector_share(a.gradients), detector_share(b.gradients)
    assert np.quantile(ta, 0.9) < -0.9 and np.quantile(tb, 0.1) > 0.9
    ua, ub = Laplace(1.0).clip_only(a.gradients), Laplace(1.0).clip_only(b.gradients)
    assert np.median(np.abs(ua.mean(0) - ub.mean(0)).sum()) > 0.9 * 0.01


@pytest.fixture(scope="module")
def crafted_5_15():
    return search_crafted_model(5.0, 15.0, objective="gradient", settings=SMALL, seed=3)


def test_every_stream_of_the_search_lies_under_its_own_seed(monkeypatch):
    """A search seeded by a spawned child draws every episode from that child's subtree: streams that dropped the
    child's spawn key would be its siblings' (and the same for every child of one root)."""
    from pgc.a3c import crafted

    seen: list[tuple[int, tuple[int, ...]]] = []
    play = crafted._Simulator.play

    def recording_play(self, theta, n, seed):
        seen.append((seed.entropy, tuple(seed.spawn_key)))
        return play(self, theta, n, seed)

    monkeypatch.setattr(crafted._Simulator, "play", recording_play)
    tiny = SearchSettings(
        screen_controllers=4,
        screen_episodes=20,
        generations=2,
        population=4,
        episodes=20,
        restarts=1,
        detector_screen=2,
    )
    child = np.random.SeedSequence(11).spawn(3)[2]
    search_crafted_model(5.0, 15.0, objective="gradient", settings=tiny, seed=child)
    assert seen and all(entropy == 11 and key[:1] == (2,) for entropy, key in seen)


def test_search_is_reproducible_and_finds_a_separating_model(crafted_5_15):
    again = search_crafted_model(5.0, 15.0, objective="gradient", settings=SMALL, seed=3)
    assert np.array_equal(again.theta, crafted_5_15.theta)
    assert crafted_5_15.value > 2.5  # W1 near 2 plus a clear quantile gap on the validation episodes


def test_adversarial_audit_is_tight_on_the_wide_pair(crafted_5_15):
    """Laplace ε = 1, gradient channel only: the crafted θ certifies most of the claim (and never more
    than the claim at 1 − 1e-4)."""
    res = adversarial_audit(
        Laplace(1.0),
        5.0,
        15.0,
        samples=20_000,
        seed=4,
        channels=("gradient",),
        thetas={"gradient": crafted_5_15.theta},
        noise_free=False,
        confidence=0.95,
    )
    row = res.row("gradient")
    assert row.model == "adversarial" and row.claimed_epsilon == 1.0
    assert row.ratio >= 0.8, row
    strict = adversarial_audit(
        Laplace(1.0),
        5.0,
        15.0,
        samples=20_000,
        seed=5,
        channels=("gradient",),
        thetas={"gradient": crafted_5_15.theta},
        noise_free=False,
        confidence=1 - 1e-4,
    )
    assert strict.row("gradient").epsilon_lower_bound <= 1.0


def test_no_false_alarm_for_prs_and_third_party_mechanisms(crafted_5_15):
    class Wrapped:  # a third-party object with the Mechanism contract
        epsilon = 4.0

        def __call__(self, gradients, rng):
            return ProjectedRandomSign(4.0)(gradients, rng)

    res = adversarial_audit(
        Wrapped(),
        5.0,
        15.0,
        samples=10_000,
        seed=6,
        channels=("gradient", "score"),
        thetas={"gradient": crafted_5_15.theta, "score": crafted_5_15.theta},
        noise_free=True,
        confidence=1 - 1e-4,
    )
    assert res.row("gradient").epsilon_lower_bound <= 4.0
    assert res.row("score").verdict in ("violated", "unprotected channel")  # the score is not protected
    assert res.noise_free_epsilon_lower_bound > 4.0  # without a mechanism the crafted gradient gives ψ away
    d = res.to_dict()
    assert d["model"] == "adversarial" and all("p_value" in c for c in d["channels"])


@pytest.mark.parametrize(
    "argv",
    [
        ["--mechanism", "laplace", "--epsilon", "1", "--pairs", "9.5..10.1"],  # a range needs the crafted model
        ["--mechanism", "laplace", "--epsilon", "1", "--adversarial-model", "--channels", "bogus"],
        ["--mechanism", "laplace", "--epsilon", "1", "--adversarial-model", "--adversarial-curve"],
        ["--mechanism", "laplace", "--epsilon", "1", "--adversarial-model", "--pairs", "10.1..9.5"],
        ["--self-test", "--adversarial-model"],
    ],
)
def test_cli_refuses_bad_adversarial_input(argv, tmp_path, capsys):
    out = tmp_path / "a.json"
    try:
        code = main(["audit", *argv, "--out", str(out)])
    except SystemExit as exc:
        code = exc.code
    assert code == 2 and not out.exists()
    assert "error" in capsys.readouterr().err


def test_worst_pair_search_stays_in_the_range_and_prefers_wide_pairs():
    from pgc.a3c.crafted import worst_pair_search

    tiny = SearchSettings(
        screen_controllers=8,
        screen_episodes=60,
        generations=4,
        population=6,
        episodes=60,
        restarts=1,
        detector_screen=4,
    )
    res = worst_pair_search(5.0, 15.0, objective="score", trials=4, seed=1, settings=tiny, min_distance=1.0)
    assert 5.0 <= res.psi < res.psi_prime <= 15.0 and res.psi_prime - res.psi >= 1.0
    assert len(res.trials) == 4 and res.value == max(t["value"] for t in res.trials)
    with pytest.raises(ValueError):
        worst_pair_search(10.0, 9.0)


def test_worst_pair_search_never_draws_a_stream_of_the_audit_that_certifies_its_pair(monkeypatch):
    """The audit of the chosen pair draws from SeedSequence(seed)'s descendants; the search's trials and sampler
    draw from streams under a spawn key none of them has."""
    import types

    import numpy as np

    import pgc.a3c.crafted as crafted

    used = []

    def fake_search(a, b, *, seed, **_):
        used.append(seed)
        return types.SimpleNamespace(value=float(b - a), evaluations=1)

    monkeypatch.setattr(crafted, "search_crafted_model", fake_search)
    crafted.worst_pair_search(5.0, 15.0, objective="score", trials=3, seed=0)

    def words(seq):
        return tuple(int(w) for w in seq.generate_state(4))

    def family(root, depth):
        yield root
        if depth:
            for child in root.spawn(4):
                yield from family(child, depth - 1)

    audit_streams = {words(s) for s in family(np.random.SeedSequence(0), 3)}
    assert len(used) == 3 and not {words(s) for s in used} & audit_streams
