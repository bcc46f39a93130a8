"""ε tuning with optuna: search mechanism, ε, C, |B|, d̂ (and η) for the utility–privacy frontier.

    from pgc.tuning import StudySettings, run_study, export_study
    run_study("eps", "sqlite:///runs/tune/study.db", StudySettings(), n_trials=30)
    result = export_study("eps", "sqlite:///runs/tune/study.db")   # kind "tune", for pgc report

Sits on top of :mod:`pgc` (and optionally :mod:`audit` for audited ε lower bounds as the privacy
objective). See :mod:`pgc.tuning.study` for batching, pruning, storage, resuming and seeds, and
:mod:`pgc.tuning.processes` for the worker processes of one machine.
"""

from .export import export_study
from .space import HYPER_PRESETS, SHADOW_GRAVITIES, Evaluation, SearchSpace, StudySettings
from .study import FORMAT, pareto_front, run_study, trial_seeds

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
