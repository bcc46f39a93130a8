"""Algorithm 11 with the learner ``TrainingSettings.learner`` names: the table of :mod:`pgc.dprl.gridworld`
or the DQN of :mod:`pgc.dprl.dqn`; both return the agent as its Q table and the utility of training."""

from __future__ import annotations

import numpy as np

from .gridworld import TrainingSettings
from .gridworld import train_agent as train_table_agent


def train_agent(
    free: np.ndarray, settings: TrainingSettings, defence: float | str | None, rng: np.random.Generator
) -> tuple[np.ndarray, dict]:
    """(Q table, utility) of an agent trained on ``free`` by ``settings.learner`` (None, a fixed ε or
    "dynamic" as ``defence``)."""
    if settings.learner == "dqn":
        from .dqn import train_dqn_agent

        return train_dqn_agent(free, settings, defence, rng)
    return train_table_agent(free, settings, defence, rng)
