"""A study read back from its storage as the typed result ``pgc tune`` writes (kind "tune"): its settings, every
trial, the Pareto front and the constrained mode's best trial."""

from __future__ import annotations

import optuna

import pgc.schemas as schemas

from .storage import safe_url, storage_url
from .study import FORMAT, pareto_front


def export_study(name: str, url: str) -> schemas.TuneResult:
    """The study ``name`` in the storage at ``url`` (KeyError when it holds none)."""
    study = optuna.load_study(study_name=name, storage=storage_url(url))
    stored = study.user_attrs.get("settings") or {}
    mode = stored.get("mode", "pareto")
    ev = stored.get("evaluation", {})
    trials = [_trial(t) for t in study.get_trials(deepcopy=False)]
    complete = [t for t in trials if t.state == "COMPLETE" and t.utility is not None and t.privacy is not None]
    front = pareto_front([(t.number, float(t.utility or 0.0), float(t.privacy or 0.0)) for t in complete])
    best = None
    if mode == "constrained":
        feasible = [t for t in complete if (t.utility or 0.0) >= stored.get("min_utility")]
        if feasible:
            b = min(feasible, key=lambda t: (t.privacy, -(t.utility or 0.0)))
            best = schemas.BestTrial(
                number=b.number,
                params=b.params,
                privacy=b.privacy,
                utility=b.utility,
                success_ratio=b.success_ratio,
                median_fst=b.median_fst,
            )
    counts: dict[str, int] = {}
    for t in trials:
        counts[t.state] = counts.get(t.state, 0) + 1
    return schemas.TuneResult(
        format=FORMAT,
        study=name,
        storage=safe_url(url),
        setup=_setup(stored, mode, ev, trials),
        counts=schemas.TrialCounts(
            complete=counts.get("COMPLETE"),
            pruned=counts.get("PRUNED"),
            fail=counts.get("FAIL"),
            running=counts.get("RUNNING"),
            waiting=counts.get("WAITING"),
        ),
        trials=trials,
        pareto_front=front,
        best_constrained=best,
    )


def _setup(stored: dict, mode: str, ev: dict, trials: list[schemas.TuneTrial]) -> schemas.TuneSetup:
    utility = ev.get("utility", "success_ratio")
    objectives = [("utility", "maximize"), ("privacy", "minimize")] if mode == "pareto" else [("privacy", "minimize")]
    space = stored.get("space")
    return schemas.TuneSetup(
        mode=mode,
        sampler=stored.get("sampler"),
        seed=stored.get("seed"),
        sampler_seeds={str(t.number): t.sampler_seed for t in trials if t.sampler_seed is not None},
        utility=utility,
        privacy="claimed ε" if ev.get("privacy", "claimed") == "claimed" else "audited ε_LB",
        objectives=[schemas.Objective(name=n, direction=d) for n, d in objectives],
        constraint=schemas.TuneConstraint(metric=utility, min=stored.get("min_utility"))
        if mode == "constrained"
        else None,
        space=None if space is None else schemas.TuneSpace(**{k: list(v) for k, v in space.items()}),
        evaluation=_evaluation(ev),
    )


def _evaluation(ev: dict) -> schemas.TuneEvaluation:
    """The stored evaluation settings (pgc.tuning.Evaluation.to_dict) as the result's record."""
    return schemas.TuneEvaluation(
        runs_per_trial=ev.get("runs_per_trial"),
        submissions=ev.get("submissions"),
        rungs=ev.get("rungs"),
        prune_below_mu=ev.get("prune_below_mu"),
        workers=ev.get("workers"),
        gravities=ev.get("gravities"),
        environments=ev.get("environments"),
        hyper=ev.get("hyper"),
        utility=ev.get("utility"),
        privacy=ev.get("privacy"),
        audit_samples=ev.get("audit_samples"),
        audit_confidence=ev.get("audit_confidence"),
        hyper_values=ev.get("hyper_values"),
    )


def _outcome(m: dict) -> schemas.TrialOutcome | None:
    """A trial's or a rung's utility metrics (pgc.tuning.study.run_metrics); None when the trial recorded none."""
    keys = ("success_ratio", "median_fst", "final_mu", "horizon", "fsts")
    if all(m.get(k) is None for k in keys):
        return None
    fsts = m.get("fsts")
    return schemas.TrialOutcome(
        success_ratio=m.get("success_ratio"),
        median_fst=schemas.number(m.get("median_fst")),
        final_mu=m.get("final_mu"),
        horizon=m.get("horizon"),
        fsts=None if fsts is None else [float(f) for f in fsts],
    )


def _rung(m: dict) -> schemas.RungMetrics:
    outcome = _outcome(m) or schemas.TrialOutcome()
    return schemas.RungMetrics(outcome=outcome, rung_wall_s=m.get("rung_wall_s"), pruned_at=m.get("pruned_at"))


def _trial(t: optuna.trial.FrozenTrial) -> schemas.TuneTrial:
    ua = t.user_attrs
    intermediate = ua.get("intermediate")
    seed_keys = (
        ua.get("seeds"),
        ua.get("seed_origin_trial"),
        ua.get("sampler_seed"),
        t.system_attrs.get("failed_trial"),
    )
    seeds = None
    if any(v is not None for v in seed_keys):
        seeds = schemas.TrialSeeds(
            seeds=seed_keys[0], seed_origin_trial=seed_keys[1], sampler_seed=seed_keys[2], retry_of=seed_keys[3]
        )
    return schemas.TuneTrial(
        number=t.number,
        state=t.state.name,
        params=t.params,
        values=list(t.values) if t.values is not None else None,
        utility=ua.get("utility"),
        privacy=ua.get("privacy"),
        claimed_epsilon=ua.get("claimed_epsilon"),
        outcome=_outcome(ua),
        seeding=seeds,
        pruned_at=ua.get("pruned_at"),
        intermediate=None
        if intermediate is None
        else {
            rung: schemas.RungMetrics(
                outcome=_outcome(m) or schemas.TrialOutcome(),
                rung_wall_s=m.get("rung_wall_s"),
                pruned_at=m.get("pruned_at"),
            )
            for rung, m in intermediate.items()
        },
        duration_s=t.duration.total_seconds() if t.duration else None,
    )
