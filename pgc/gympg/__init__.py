"""A locally private policy-gradient participant on gymnasium's Pendulum, whose private secret is gravity g.

A second reference learner beside PGC-A3C, built to show that the auditor's System contract is not
CartPole-shaped: a different environment, a different model, a Gaussian mechanism with an (ε, δ) claim.
A core package: it imports nothing from ``audit``, ``attacks`` or ``reports`` (the System contract is
structural).

* :mod:`pgc.gympg.pendulum` — Pendulum-v1's dynamics, vectorized over episodes (tested step for step
  against ``gymnasium.envs.classic_control.PendulumEnv``);
* :mod:`pgc.gympg.policy` — a linear Gaussian policy and its REINFORCE gradient;
* :mod:`pgc.gympg.system` — the participant as a System, and the factory ``pendulum_system``.
"""

from .pendulum import PendulumParams, rollout
from .policy import POLICY_DIM, reinforce_gradients
from .system import PendulumGaussianSystem, pendulum_system

__all__ = [
    "PendulumParams",
    "rollout",
    "POLICY_DIM",
    "reinforce_gradients",
    "PendulumGaussianSystem",
    "pendulum_system",
]
