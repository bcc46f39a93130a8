"""``pgc audit run DIR``: the run's mechanism (a canary audit) and, per ψ pair, an environment audit of
its model per transcript channel — or, from ``pgc audit adversarial-model --run DIR``, the run's settings at crafted
models (the audits: :mod:`pgc.audits.run`)."""

from __future__ import annotations

from pathlib import Path

from pgc.audits.mechanism import named_mechanism
from pgc.audits.run import (
    audited_trial,
    canary_and_environment_audits,
    episode_length,
    recorded_mechanism,
    run_protection,
)

from .adversarial import adversarial_pairs, search_settings
from .common import canary_record, header, print_mechanism, print_rows
from .options import DEFAULT_PAIRS, gravity_pair


def audit_run(args, progress: bool):
    import pgc.schemas as schemas

    run_dir = Path(args.run)
    trial = audited_trial(run_dir, args.trial)
    config = trial.config  # TrainConfig.from_dict reads the "inf" strings JSON needs
    if args.mechanism:  # --mechanism overrides the mechanism the run recorded
        mech, source = (
            named_mechanism(args.mechanism, args.epsilon, args.clip, args.reduced_dim, 1, args.delta),
            "override",
        )
    else:
        mech, source = recorded_mechanism(trial), "run"
    audited_run = schemas.AuditedRunMechanism(
        run=str(run_dir), trial=args.trial, mechanism_source=source, config=config.to_dict()
    )
    pairs = args.pairs or [gravity_pair(p) for p in DEFAULT_PAIRS]
    args.announce(mech, episode_length(trial, args.initial))
    if args.adversarial_model:  # the run's mechanism and settings at crafted models (no canary audit)
        return _adversarial_run(args, progress, mech, pairs, config, audited_run)
    theta = trial.initial_theta() if args.initial else trial.theta()
    mres, environments = canary_and_environment_audits(
        mech,
        theta,
        pairs,
        config,
        dim=args.dim,
        mechanism_samples=args.mechanism_samples,
        samples=args.samples,
        confidence=args.confidence,
        seed=args.seed,
        delta=args.delta,
        float_exact=args.float_exact,
        compositions=args.compositions,
        progress=progress,
        executor=args.executor,
    )
    print_mechanism(mres)
    model = "initial" if args.initial else "final"
    audits = [_environment_record(res, config, model) for res in environments]
    canary = schemas.RunRow.of(
        mres.row, channel="canary (black-box)", base_channel="canary (black-box)", holm_rejected=None
    )
    return schemas.RunAudit(
        **header(args),
        channels=[canary] + [schemas.RunRow.of(row) for a in audits for row in a.channels],
        audited_run=audited_run,
        model=model,
        mechanism_audit=canary_record(mres),
        environment_audits=audits,
    )


def _adversarial_run(args, progress: bool, mech, pairs, config, audited_run):
    import pgc.schemas as schemas

    protection, record = run_protection(config, mech)
    if protection:  # the run's mitigations; every channel against the total claim
        from pgc.audits.adversarial import PROTECTED_ADVERSARIAL_CHANNELS

        if args.channels is None:
            args.channel_list = list(PROTECTED_ADVERSARIAL_CHANNELS)
    audits = adversarial_pairs(args, mech, pairs, progress, hyper=config.hyper, physics=config.physics, **protection)
    return schemas.AdversarialModelAudit(
        **header(args),
        channels=[row for a in audits for row in a.channels],
        search_settings=search_settings(args),
        adversarial_audits=audits,
        audited_run=audited_run,
        protection=schemas.Protection(**record) if protection else None,
    )


def _environment_record(res, config, model: str):
    """One pair's environment audit printed, as its result records it (its rows carry the run's mitigations)."""
    from pgc.audits.environment import environment_record

    psi, psi_prime = res.psi, res.psi_prime
    print(
        f"environment ψ={psi:g} vs ψ'={psi_prime:g} at the {model} model "
        f"(mean score {res.score_means[0]:.1f} vs {res.score_means[1]:.1f}; {res.wall_time_s:.1f}s):"
    )
    print_rows(res.channels)
    return environment_record(res, protect=list(config.protect))
