"""The kernel's online gradient equals torch autograd on the loss of eqs. 15–18, for random episodes."""

import numpy as np
import pytest

from pgc.env import physics_array
from pgc.model import glorot_uniform_theta
from pgc.reference import episode_gradient
from pgc.rollout import A3CHyperparams, LaneEngine, simulate_episodes


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


@pytest.mark.parametrize("hyper", [
    A3CHyperparams(),
    A3CHyperparams(cap=12),  # truncated episodes: bootstrap V(s_T)
    A3CHyperparams(cap=12, bootstrap_truncated=False),
    A3CHyperparams(gamma=0.9, lam=1.3, beta=0.2, action_selection="sample"),
    # reading knobs: every combination that changes the gradient
    *[A3CHyperparams(reward=reward, n_step=n_step, loss_reduction=reduction, cap=cap, bootstrap_truncated=boot)
      for reward in ("unit", "terminal") for n_step in (0, 1, 5) for reduction in ("sum", "mean")
      for cap, boot in ((200, True), (12, True), (12, False))],
])
def test_kernel_gradient_equals_autograd(hyper, rng):
    for scale in (0.5, 1.0, 3.0):
        theta = np.stack([glorot_uniform_theta(rng) * scale for _ in range(6)])
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
