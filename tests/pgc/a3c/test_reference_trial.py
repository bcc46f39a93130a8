"""The plain-Python reading of Algorithm 1 with eq. 22 (pgc.a3c.reference_trial) equals the compiled trial."""

import math

import numpy as np
import pytest

from pgc.a3c.config import TrainConfig
from pgc.a3c.reference_trial import run_reference_trial
from pgc.a3c.rollout import A3CHyperparams
from pgc.a3c.trainer import train

# (mechanism, ε, buffer size MAX_BUF, workers, seed): 24 small trials
CASES = [
    (mechanism, epsilon, buffer_size, workers, seed)
    for mechanism, epsilon in [
        ("laplace", 1.0),
        ("laplace-secure", 2.0),
        ("prs", 10.0),
        ("none", math.inf),
        ("gaussian-analytic", 2.0),
        ("prs", 2.0),
    ]
    for buffer_size, workers, seed in [(1, 9, 0), (1, 3, 1), (5, 4, 2), (20, 9, 3)]
]


@pytest.mark.parametrize("mechanism, epsilon, buffer_size, workers, seed", CASES)
def test_reference_trial_equals_the_compiled_trial(mechanism, epsilon, buffer_size, workers, seed):
    cfg = TrainConfig(
        mechanism=mechanism,
        epsilon=epsilon,
        buffer_size=buffer_size,
        workers=workers,
        seed=seed,
        submissions=60,
        delta=1e-5 if mechanism.startswith("gaussian") else None,
    )
    reference = run_reference_trial(cfg)
    compiled = train(cfg, record_transcript=True)
    np.testing.assert_array_equal(reference.scores, compiled.scores)  # the same episodes, step for step
    assert reference.agent_steps == compiled.agent_steps
    assert reference.updates == compiled.updates == 60 // buffer_size
    np.testing.assert_allclose(reference.theta, compiled.theta, rtol=0, atol=1e-12)
    np.testing.assert_allclose(reference.gradients, compiled.transcript.gradient, rtol=1e-6, atol=1e-9)  # float32
    assert not np.array_equal(compiled.theta, compiled.initial_theta)  # the trial did learn something


def test_reference_trial_sees_a_difference():
    """Not vacuous: another seed, or another MAX_BUF, gives another trial."""
    cfg = TrainConfig(mechanism="laplace", epsilon=1.0, submissions=60, seed=0)
    base = run_reference_trial(cfg)
    assert not np.allclose(base.theta, run_reference_trial(cfg.replace(seed=1)).theta)
    assert not np.allclose(base.theta, run_reference_trial(cfg.replace(buffer_size=2)).theta)


def test_reference_trial_refuses_other_readings():
    with pytest.raises(ValueError, match="rounds"):
        run_reference_trial(TrainConfig(rounds=2))
    with pytest.raises(ValueError, match="hyper.biases"):
        run_reference_trial(TrainConfig(hyper=A3CHyperparams(biases=True)))
