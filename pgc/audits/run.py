"""The audits of a training run (``pgc audit --run DIR``): the trial audited, the mechanism it recorded, how
long its model's episodes last, its canary audit and one environment audit per ψ pair as independent tasks,
and its mitigations for the adversarial aggregator's audit."""

from __future__ import annotations

import math
from pathlib import Path

from pgc.errors import UserError


def audited_trial(run_dir: Path, trial: int):
    """Trial ``trial`` of the run folder ``run_dir`` (:func:`pgc.a3c.rundir.load_run`)."""
    from pgc.a3c.rundir import load_run

    if not run_dir.is_dir():
        raise UserError(f"--run {run_dir} is not a folder")
    _, trials = load_run(run_dir)
    if not 0 <= trial < len(trials):
        raise UserError(f"--trial {trial} out of range: the run has {len(trials)} trial(s)")
    return trials[trial]


def episode_length(trial, initial: bool) -> float | None:
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


def recorded_mechanism(trial):
    """The per-submission mechanism the run recorded (name, parameters, fingerprint; ε split over rounds),
    never a guess."""
    from pgc.mechanisms import MechanismUnavailableError

    if trial.config.mechanism == "none":
        raise UserError("the run used no mechanism (ε = ∞); give --mechanism/--epsilon to audit one at its model")
    try:
        return trial.mechanism()
    except MechanismUnavailableError as exc:
        raise UserError(f"cannot audit the run's mechanism: {exc}") from None


def canary_and_environment_audits(
    mech,
    theta,
    pairs,
    config,
    *,
    dim: int,
    mechanism_samples: int,
    samples: int,
    confidence: float,
    seed: int,
    delta: float | None,
    float_exact: bool,
    compositions,
    progress: bool = False,
    executor=None,
):
    """The mechanism's canary audit and one environment audit per pair at ``theta`` with the run's settings
    ``config`` (its mitigations: claim = ε_gradient + ε_score): independent tasks, each with its own seeds.
    Returns the canary audit's result and an iterator over the environment audits'."""
    from audit import audit_mechanism
    from pgc.tasks import call_with_keywords, map_tasks

    from .environment import environment_audit

    canary = dict(
        mechanism=mech,
        dim=dim,
        samples=mechanism_samples,
        confidence=confidence,
        seed=seed,
        delta=delta,
        float_exact=float_exact,
        progress=progress,
    )
    environment = dict(
        theta=theta,
        mechanism=mech,
        samples=samples,
        confidence=confidence,
        seed=seed,
        hyper=config.hyper,
        physics=config.physics,
        workers=config.workers,
        population=config.gravities,
        compositions=tuple(compositions),
        progress=progress,
        protect=config.protect,
        score_epsilon=getattr(config.build_score_mechanism(), "epsilon", None),
    )
    calls = [(audit_mechanism, canary)] + [
        (environment_audit, {**environment, "psi": psi, "psi_prime": psi_prime}) for psi, psi_prime in pairs
    ]
    results = map_tasks(executor, call_with_keywords, [fn for fn, _ in calls], [kw for _, kw in calls])
    return next(results), results


def run_protection(config, mech) -> tuple[dict, dict]:
    """A run's mitigations for the adversarial audit: its keywords (every channel against the total claim)
    and its record; two empty dicts for a run without mitigations."""
    if not config.protect:
        return {}, {}
    score_mech = config.build_score_mechanism()
    protection = {
        "protect": config.protect,
        "workers": config.workers,
        "population": config.gravities,
        "score_epsilon": score_mech.epsilon if score_mech is not None else None,
    }
    record = {
        "protect": list(config.protect),
        "gradient_epsilon": float(mech.epsilon),
        "score_epsilon": protection["score_epsilon"] or 0.0,
        "claimed_epsilon_total": float(mech.epsilon) + (protection["score_epsilon"] or 0.0),
    }
    return protection, record


def canary_trial(run_dir, trial: int):
    """Trial ``trial`` of a run trained with canary agents, its canary record and its transcript."""
    from pgc.a3c.rundir import load_run

    _, trials = load_run(run_dir)
    if not 0 <= trial < len(trials):
        raise UserError(f"{run_dir} has {len(trials)} trial(s); no trial {trial}")
    found = trials[trial]
    if not found.config.canaries:
        raise UserError(f"{run_dir} was trained without canaries (pgc train --canaries M --canary-pair A:B)")
    try:
        return found, found.canaries(), found.transcript()
    except FileNotFoundError as exc:
        raise UserError(f"{run_dir}: {exc}") from None


def one_run_canary_audit(
    trial, canaries, transcript, *, channels, samples, seed: int, confidence: float, log=print
) -> tuple[list, int]:
    """The one-run audit of the trial's canary submissions (:func:`audit.one_run.one_run_audit`): each guessed
    with a statistic fitted on releases simulated at the models the canaries saw; the coins are read only to
    count the correct guesses. Says what it audits through ``log`` first; returns the rows and the number of
    models simulated at."""
    from audit.one_run import MAX_SIMULATED_BROADCASTS, one_run_audit
    from pgc.a3c.transcript import transcript_releases

    secret, secret_prime = trial.config.canary_pair
    positions = canaries.positions
    # the coins: evaluation-only, read to count correct guesses after every choice is made
    truth = (trial.ground_truth().psi[positions] == secret_prime).astype("int64")
    broadcasts = trial.canary_broadcasts(canaries, transcript, MAX_SIMULATED_BROADCASTS)
    system = trial.system(broadcasts[0])
    epsilon = float(system.claim.epsilon)
    log(
        f"{positions.size:,} {canaries.setup['canary_model']} canaries, {secret:g} vs {secret_prime:g}, claim ε = "
        f"{'∞' if math.isinf(epsilon) else f'{epsilon:.3f}'}; simulating at {len(broadcasts)} model(s)"
    )
    scope = f"one-run {canaries.setup['canary_model']} {secret:g} vs {secret_prime:g}"
    rows = one_run_audit(
        system,
        secret,
        secret_prime,
        transcript_releases(transcript, positions),
        truth,
        broadcasts,
        channels=channels,
        samples=samples,
        seed=seed,
        confidence=confidence,
        scope=scope,
    )
    return rows, len(broadcasts)
