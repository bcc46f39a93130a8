"""Algorithm 11 with a deep Q-network (pgc.dprl.dqn): it learns a grid world, with and without DP-DRL's
obfuscation, is reproducible from its seed, and plugs into the map-recovery attack like the table."""

from __future__ import annotations

import numpy as np
import pytest

from attacks.map_recovery import GeneticSettings, run_map_recovery
from pgc.dprl.dqn import DQNSettings, train_dqn_agent
from pgc.dprl.gridworld import TrainingSettings, greedy_trajectory, random_map, start_goal
from pgc.dprl.training import train_agent


@pytest.mark.parametrize("defence", [None, 0.1])
def test_the_dqn_agent_learns_to_reach_the_goal(defence):
    free = random_map((7, 7), np.random.default_rng(6))
    settings = TrainingSettings(episodes=300, learner="dqn")
    q, utility = train_agent(free, settings, defence, np.random.default_rng(1))
    assert q.shape == (1, 256, 5) and np.all(np.isfinite(q))
    assert utility["final_success"] >= 0.9 and utility["final_mean_steps"] < 25  # the last 30 episodes
    run = greedy_trajectory(free, q, defence, settings, np.random.default_rng(2))
    assert run[-1][2] == start_goal(free.shape)[1]


def test_the_same_seed_trains_the_same_network():
    free = random_map((7, 7), np.random.default_rng(3))
    settings = TrainingSettings(episodes=40, max_steps=40)
    small = DQNSettings(warmup=50)
    a, _ = train_dqn_agent(free, settings, "dynamic", np.random.default_rng(9), small)
    b, _ = train_dqn_agent(free, settings, "dynamic", np.random.default_rng(9), small)
    c, _ = train_dqn_agent(free, settings, "dynamic", np.random.default_rng(10), small)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_the_map_recovery_attack_runs_on_a_dqn_agent():
    training = TrainingSettings(episodes=60, max_steps=40, learner="dqn")
    result = run_map_recovery((7, 7), 1, [0.1], training, GeneticSettings(population=10, generations=3), seed=0)
    assert [r["defence"] for r in result["rows"]] == ["none", "0.1", "chance (constraints only)"]
    assert all(0.0 <= r["grr"]["mean"] <= 1.0 for r in result["rows"])


def test_bad_learner_settings_are_refused():
    with pytest.raises(ValueError, match="learner"):
        TrainingSettings(learner="cnn")
    with pytest.raises(ValueError, match="positive"):
        DQNSettings(hidden=0)
