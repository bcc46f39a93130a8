"""The kernel's online gradient equals torch autograd on the loss of eqs. 15–18, for random episodes."""

from dataclasses import replace

import numpy as np
import pytest

from pgc.a3c.env import physics_array
from pgc.a3c.model import DIM, DIM_BIASED, glorot_uniform_theta
from pgc.a3c.reference import episode_gradient
from pgc.a3c.rollout import A3CHyperparams, LaneEngine, simulate_episodes


def record_episodes(theta, hyper, rng, n=6, alpha=0.3, gravity=9.8):
    engine = LaneEngine(n, hyper)
    engine.start(np.arange(n), theta, physics_array(n, gravity=gravity), np.full(n, alpha), rng)
    states = [[s.copy()] for s in engine.state]
    actions = [[] for _ in range(n)]
    alive = np.ones(n, bool)
    while alive.any():
        fin = engine.tick(rng, max_ticks=1)
        for lane in np.flatnonzero(alive):
            actions[lane].append(int(engine.actions[lane]))
            states[lane].append(engine.state[lane].copy())
        alive[fin] = False
    return engine, [np.array(s) for s in states], [np.array(a) for a in actions]


@pytest.mark.parametrize(
    "hyper",
    [
        A3CHyperparams(),
        A3CHyperparams(cap=12),  # truncated episodes: bootstrap V(s_T)
        A3CHyperparams(cap=12, bootstrap_truncated=False),
        A3CHyperparams(gamma=0.9, lam=1.3, beta=0.2, action_selection="sample"),
        # reading knobs: every combination that changes the gradient
        *[
            A3CHyperparams(reward=reward, n_step=n_step, loss_reduction=reduction, cap=cap, bootstrap_truncated=boot)
            for reward in ("unit", "terminal")
            for n_step in (0, 1, 5)
            for reduction in ("sum", "mean")
            for cap, boot in ((200, True), (12, True), (12, False))
        ],
    ],
)
@pytest.mark.parametrize("biases", [False, True], ids=["d112", "d131"])
def test_kernel_gradient_equals_autograd(hyper, biases, rng):
    hyper = replace(hyper, biases=biases)
    for scale in (0.5, 1.0, 3.0):
        theta = np.stack([glorot_uniform_theta(rng, biases=biases) * scale for _ in range(6)])
        if biases:  # Keras starts biases at 0; random ones exercise every bias term of the gradient
            theta[:, DIM:] = rng.normal(0.0, 0.3 * scale, size=(6, DIM_BIASED - DIM))
        engine, states, actions = record_episodes(theta, hyper, rng)
        for lane in range(6):
            ref = episode_gradient(theta[lane], states[lane], actions[lane], bool(engine.terminated[lane]), hyper)
            got = engine.gradients[lane]
            np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())


def test_simulate_episodes_matches_lane_engine_and_is_seeded(rng):
    theta = glorot_uniform_theta(rng)
    phys = physics_array(50, gravity=np.linspace(9, 11, 50))
    a = simulate_episodes(theta, phys, np.random.default_rng(3), max_lanes=7)
    b = simulate_episodes(theta, phys, np.random.default_rng(3), max_lanes=7)
    np.testing.assert_array_equal(a.gradients, b.gradients)
    np.testing.assert_array_equal(a.scores, b.scores)
    assert a.gradients.shape == (50, 112) and np.all((a.scores >= 1) & (a.scores <= 200))
    with pytest.raises(ValueError):
        simulate_episodes(theta, phys[:, :5], rng)
    with pytest.raises(ValueError):
        simulate_episodes(np.zeros(111), phys, rng)


def test_biased_model_width_is_checked_and_zero_biases_change_nothing(rng):
    """A model with biases at 0 (their Keras initial value) plays and learns as the unbiased one on the
    weights; its gradient has 131 entries, and a θ of the wrong width is refused with a clear error."""
    theta = glorot_uniform_theta(np.random.default_rng(5))
    biased = glorot_uniform_theta(np.random.default_rng(5), biases=True)
    np.testing.assert_array_equal(biased[:DIM], theta)
    assert biased.shape == (DIM_BIASED,) and not biased[DIM:].any()
    phys = physics_array(40, gravity=np.linspace(9, 11, 40))
    a = simulate_episodes(theta, phys, np.random.default_rng(3))
    b = simulate_episodes(biased, phys, np.random.default_rng(3), hyper=A3CHyperparams(biases=True))
    np.testing.assert_array_equal(a.scores, b.scores)
    assert b.gradients.shape == (40, DIM_BIASED)
    np.testing.assert_allclose(b.gradients[:, :DIM], a.gradients, rtol=1e-12, atol=1e-12)
    assert np.abs(b.gradients[:, DIM:]).sum() > 0  # the bias gradient is not zero
    with pytest.raises(ValueError, match="biases"):
        simulate_episodes(biased, phys, rng)  # 131 parameters, settings without biases
    with pytest.raises(ValueError, match="biases"):
        simulate_episodes(theta, phys, rng, hyper=A3CHyperparams(biases=True))
