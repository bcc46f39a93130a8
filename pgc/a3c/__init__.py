"""pgc.a3c — the PGC-A3C core: environment, model, compiled mechanism twins, aggregator, trainer, transcript.
The mechanisms themselves live in :mod:`pgc.mechanisms` (re-exported here for convenience).

``pgc.a3c`` imports nothing from ``audit``, ``attacks`` or ``reports``.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pgc.mechanisms import (
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

    from .env import PAPER_GRAVITIES, CartPoleParams, physics_array
    from .hyper import A3CHyperparams
    from .model import DIM, ActorCritic, load_checkpoint, save_checkpoint
    from .rollout import EpisodeBatch, simulate_episodes
    from .trainer import TrainConfig, TrainResult, train, train_batch

# each public name and the module it lives in: imported on first use, so that a light part (the sizes, the
# settings) does not load torch, numba and the compiled kernel
_WHERE = {
    **dict.fromkeys(
        (
            "MECHANISMS",
            "Gaussian",
            "Laplace",
            "Mechanism",
            "NoNoise",
            "ProjectedRandomSign",
            "make_mechanism",
            "register_mechanism",
            "split_rounds",
        ),
        "pgc.mechanisms",
    ),
    **dict.fromkeys(("PAPER_GRAVITIES", "CartPoleParams", "physics_array"), ".env"),
    "A3CHyperparams": ".hyper",
    "DIM": ".layout",  # the parameter count: plain numbers, no torch
    **dict.fromkeys(("ActorCritic", "load_checkpoint", "save_checkpoint"), ".model"),
    **dict.fromkeys(("EpisodeBatch", "simulate_episodes"), ".rollout"),
    **dict.fromkeys(("TrainConfig", "TrainResult", "train", "train_batch"), ".trainer"),
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name], __name__), name)


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
