"""pgc.a3c — the PGC-A3C core: environment, model, compiled mechanism twins, aggregator, trainer, transcript.
The mechanisms themselves live in :mod:`pgc.mechanisms` (re-exported here for convenience).

``pgc.a3c`` imports nothing from ``audit``, ``attacks`` or ``reports``.
"""

from pgc.mechanisms import (  # noqa: E402
    MECHANISMS,
    Gaussian,
    Laplace,
    Mechanism,
    NoNoise,
    ProjectedRandomSign,
    make_mechanism,
    register_mechanism,
    split_rounds,
)

from .env import PAPER_GRAVITIES, CartPoleParams, physics_array  # noqa: E402
from .model import DIM, ActorCritic, load_checkpoint, save_checkpoint  # noqa: E402
from .rollout import A3CHyperparams, EpisodeBatch, simulate_episodes  # noqa: E402
from .trainer import TrainConfig, TrainResult, train, train_batch  # noqa: E402

__all__ = [
    "A3CHyperparams",
    "ActorCritic",
    "CartPoleParams",
    "DIM",
    "EpisodeBatch",
    "Gaussian",
    "Laplace",
    "MECHANISMS",
    "Mechanism",
    "NoNoise",
    "PAPER_GRAVITIES",
    "ProjectedRandomSign",
    "TrainConfig",
    "TrainResult",
    "load_checkpoint",
    "make_mechanism",
    "physics_array",
    "register_mechanism",
    "save_checkpoint",
    "simulate_episodes",
    "split_rounds",
    "train",
    "train_batch",
]
