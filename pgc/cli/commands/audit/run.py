"""``pgc audit --run DIR``: the run's mechanism (a canary audit) and, per ψ pair, an environment audit of
its model per transcript channel — or, with ``--adversarial-model``, the run's settings at crafted models."""

from __future__ import annotations

from pathlib import Path

from pgc.errors import UserError
from .adversarial import adversarial_pairs
from .common import build_mechanism, print_mechanism, print_rows, row_record
from .options import DEFAULT_PAIRS, gravity_pair


def audit_run(args, report: dict, progress: bool) -> int:
    from pgc.a3c.rundir import load_run

    run_dir = Path(args.run)
    if not run_dir.is_dir():
        raise UserError(f"--run {run_dir} is not a folder")
    _, trials = load_run(run_dir)
    if not 0 <= args.trial < len(trials):
        raise UserError(f"--trial {args.trial} out of range: the run has {len(trials)} trial(s)")
    trial = trials[args.trial]
    config = trial.config  # TrainConfig.from_dict reads the "inf" strings JSON needs
    mech, source = _run_mechanism(args, trial)
    report.update(run=str(run_dir), trial=args.trial, model="initial" if args.initial else "final",
                  mechanism_source=source, run_config=config.to_dict())
    pairs = args.pairs or [gravity_pair(p) for p in DEFAULT_PAIRS]
    args.announce(mech, _episode_length(trial, args.initial))
    if args.adversarial_model:  # the run's mechanism and settings at crafted models (no canary audit)
        return _adversarial_run(args, report, progress, mech, pairs, config)
    theta = trial.initial_theta() if args.initial else trial.theta()
    mres, environments = _canary_and_environment_audits(args, progress, mech, theta, pairs, config)
    print_mechanism(mres)
    report["mechanism_audits"] = [mres.to_dict()]
    report["channels"].append(row_record(mres.row, channel="canary (black-box)"))
    report["environment_audits"] = [_report_environment(report, res, config) for res in environments]
    return 0


def _episode_length(trial, initial: bool) -> float | None:
    """How long the audited model's episodes last (a CartPole score counts its steps): the mean of the
    trial's first 100 scores for the initial model, of its last 100 for the final one; None if unknown."""
    import numpy as np

    try:
        scores = np.asarray(trial.scores(), dtype=float).ravel()
    except (OSError, ValueError):
        return None
    part = scores[:100] if initial else scores[-100:]
    part = part[np.isfinite(part)]
    return float(part.mean()) if part.size else None


def _run_mechanism(args, trial):
    """The mechanism to audit: ``--mechanism`` when given, else the one the run recorded (never a guess)."""
    if args.mechanism:
        return build_mechanism(args.mechanism, args.epsilon, args.clip, args.reduced_dim, 1, args.delta), "override"
    if trial.config.mechanism == "none":
        raise UserError("the run used no mechanism (ε = ∞); give --mechanism/--epsilon to audit one at its model")
    from pgc.mechanisms import MechanismUnavailableError

    try:  # the mechanism the run recorded (name, parameters, fingerprint)
        return trial.mechanism(), "run"  # per-submission mechanism (ε split over rounds)
    except MechanismUnavailableError as exc:
        raise UserError(f"cannot audit the run's mechanism: {exc}") from None


def _adversarial_run(args, report: dict, progress: bool, mech, pairs, config) -> int:
    report.update(mode="adversarial", model="adversarial")
    protection = {}
    if config.protect:  # the run's mitigations; every channel against the total claim
        from pgc.audits.adversarial import PROTECTED_ADVERSARIAL_CHANNELS

        if args.channels is None:
            args.channel_list = list(PROTECTED_ADVERSARIAL_CHANNELS)
        score_mech = config.build_score_mechanism()
        protection = {"protect": config.protect, "workers": config.workers, "population": config.gravities,
                      "score_epsilon": score_mech.epsilon if score_mech is not None else None}
        report["protection"] = {"protect": list(config.protect), "gradient_epsilon": float(mech.epsilon),
                                "score_epsilon": protection["score_epsilon"] or 0.0,
                                "claimed_epsilon_total": float(mech.epsilon) + (protection["score_epsilon"] or 0.0)}
    report["adversarial_audits"] = adversarial_pairs(args, mech, pairs, report, progress, hyper=config.hyper,
                                                     physics=config.physics, **protection)
    return 0


def _canary_and_environment_audits(args, progress: bool, mech, theta, pairs, config):
    """The canary audit and one environment audit per pair: independent tasks (each its own seeds)."""
    from audit import audit_mechanism
    from pgc.audits.environment import environment_audit
    from pgc.tasks import call_with_keywords, map_tasks

    canary = dict(mechanism=mech, dim=args.dim, samples=args.mechanism_samples, confidence=args.confidence,
                  seed=args.seed, delta=args.delta, float_exact=args.float_exact, progress=progress)
    environment = dict(theta=theta, mechanism=mech, samples=args.samples or 100_000, confidence=args.confidence,
                       seed=args.seed, hyper=config.hyper, physics=config.physics, workers=config.workers,
                       population=config.gravities, compositions=tuple(args.compositions), progress=progress,
                       protect=config.protect,  # the run's mitigations; claim = ε_gradient + ε_score
                       score_epsilon=getattr(config.build_score_mechanism(), "epsilon", None))
    calls = [(audit_mechanism, canary)] + [(environment_audit, {**environment, "psi": psi, "psi_prime": psi_prime})
                                           for psi, psi_prime in pairs]
    results = map_tasks(args.executor, call_with_keywords, [fn for fn, _ in calls], [kw for _, kw in calls])
    return next(results), results


def _report_environment(report: dict, res, config) -> dict:
    """One pair's environment audit printed and added to the report's rows; its record."""
    psi, psi_prime = res.psi, res.psi_prime
    print(f"environment ψ={psi:g} vs ψ'={psi_prime:g} at the {report['model']} model "
          f"(mean score {res.score_means[0]:.1f} vs {res.score_means[1]:.1f}; {res.wall_time_s:.1f}s):")
    print_rows(res.channels)
    protect = {"protect": list(config.protect)} if config.protect else {}
    report["channels"] += [row_record(c, **protect) for c in res.channels]
    return res.to_dict()
