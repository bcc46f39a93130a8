"""The vectorised CartPole (numpy and compiled kernel) equals gymnasium's scalar CartPoleEnv step for step."""

import gymnasium as gym
import numpy as np
import pytest

from pgc.a3c.env import PHYSICS_FIELDS, CartPoleParams, VectorCartPole, cartpole_step, physics_array
from pgc.a3c.rollout import A3CHyperparams, LaneEngine

PARAMS = [
    CartPoleParams(),
    CartPoleParams(gravity=9.7),
    CartPoleParams(gravity=12.5, masscart=1.3, masspole=0.2, length=0.7, force_mag=8.0, tau=0.015),
]


def gym_env(params: CartPoleParams):
    env = gym.make("CartPole-v1").unwrapped
    for name in PHYSICS_FIELDS:
        setattr(env, name, getattr(params, name))
    env.total_mass = env.masspole + env.masscart  # derived in __init__
    env.polemass_length = env.masspole * env.length
    return env


def run_gym(params, start, actions):
    env = gym_env(params)
    env.reset(seed=0)
    env.state = np.array(start, dtype=np.float64)
    states, terms = [], []
    for a in actions:
        _, _, term, _, _ = env.step(int(a))
        states.append(np.array(env.state, dtype=np.float64))
        terms.append(term)
        if term:
            break
    return np.array(states), np.array(terms)


@pytest.mark.parametrize("params", PARAMS)
def test_numpy_step_equals_gymnasium(params, rng):
    for _ in range(10):
        start = rng.uniform(-0.05, 0.05, 4)
        actions = rng.integers(0, 2, 200)
        ref_states, ref_terms = run_gym(params, start, actions)
        state = start[None].copy()
        phys = params.as_row()[None]
        for t in range(len(ref_states)):
            state, term = cartpole_step(state, actions[t : t + 1], phys)
            np.testing.assert_array_equal(state[0], ref_states[t])  # bit-identical
            assert term[0] == ref_terms[t]


@pytest.mark.parametrize("params", PARAMS)
def test_kernel_step_equals_gymnasium(params, rng):
    """The fused kernel's physics, with the actions it chose, against gymnasium replaying them."""
    engine = LaneEngine(8, A3CHyperparams(cap=200))
    theta = rng.normal(size=(8, 112)) * 0.5
    engine.start(np.arange(8), theta, np.tile(params.as_row(), (8, 1)), np.full(8, 0.5), rng)
    starts = engine.state.copy()
    traj = [[] for _ in range(8)]
    acts = [[] for _ in range(8)]
    alive = np.ones(8, bool)
    while alive.any():
        fin = engine.tick(rng, max_ticks=1)
        for lane in np.flatnonzero(alive):
            traj[lane].append(engine.state[lane].copy())
            acts[lane].append(int(engine.actions[lane]))
        alive[fin] = False
    for lane in range(8):
        ref, terms = run_gym(params, starts[lane], acts[lane])
        got = np.array(traj[lane])
        assert len(ref) == len(got) or (len(got) == 200 and len(ref) == 200)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
        assert engine.elapsed[lane] == len(got)
        assert engine.terminated[lane] == bool(terms[-1])


def test_vector_env_autoreset_and_cap(rng):
    env = VectorCartPole(physics_array(4, gravity=[9.7, 9.8, 9.9, 9.8]), rng, cap=5)
    for _ in range(5):
        obs, rew, term, trunc = env.step(np.zeros(4, int))
    assert trunc.sum() + term.sum() == 4 and np.all(env.elapsed == 0)
    with pytest.raises(ValueError):
        env.step(np.array([0, 1, 2, 0]))


def test_physics_array_validation():
    p = physics_array(3, gravity=[9.7, 9.8, 9.9], length=0.6)
    assert p.shape == (3, 6) and np.allclose(p[:, 0], [9.7, 9.8, 9.9]) and np.allclose(p[:, 3], 0.6)
    with pytest.raises(ValueError, match="unknown physics"):
        physics_array(2, mass=1.0)
    with pytest.raises(ValueError):
        physics_array(2, masspole=-1.0)
    with pytest.raises(ValueError):
        CartPoleParams(length=float("nan"))
