"""ε tuning with optuna: search mechanism, ε, C, |B|, d̂ (and η) for the utility–privacy frontier.

    from pgc.tuning import StudySettings, run_study, export_study
    run_study("eps", "sqlite:///runs/tune/study.db", StudySettings(), n_trials=30)
    result = export_study("eps", "sqlite:///runs/tune/study.db")   # kind "tune", for pgc report

Sits on top of :mod:`pgc` (and optionally :mod:`audit` for audited ε lower bounds as the privacy
objective). See :mod:`pgc.tuning.study` for batching, pruning, storage, resuming and seeds, and
:mod:`pgc.tuning.processes` for the worker processes of one machine.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .export import export_study
    from .space import HYPER_PRESETS, SHADOW_GRAVITIES, Evaluation, SearchSpace, StudySettings
    from .study import FORMAT, pareto_front, run_study, trial_seeds

# each public name and the module it lives in: imported on first use, so that a worker opening the study's
# storage (pgc.tuning.storage) does not load the trainer, torch and numba
_WHERE = {
    "export_study": "export",
    "HYPER_PRESETS": "space",
    "SHADOW_GRAVITIES": "space",
    "Evaluation": "space",
    "SearchSpace": "space",
    "StudySettings": "space",
    "FORMAT": "study",
    "pareto_front": "study",
    "run_study": "study",
    "trial_seeds": "study",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)


__all__ = [
    "FORMAT",
    "HYPER_PRESETS",
    "SHADOW_GRAVITIES",
    "Evaluation",
    "SearchSpace",
    "StudySettings",
    "export_study",
    "pareto_front",
    "run_study",
    "trial_seeds",
]
