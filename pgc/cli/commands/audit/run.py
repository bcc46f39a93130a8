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

from .adversarial import adversarial_pairs
from .common import print_mechanism, print_rows, row_record
from .options import DEFAULT_PAIRS, gravity_pair


def audit_run(args, report: dict, progress: bool) -> int:
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
    report.update(
        run=str(run_dir),
        trial=args.trial,
        model="initial" if args.initial else "final",
        mechanism_source=source,
        run_config=config.to_dict(),
    )
    pairs = args.pairs or [gravity_pair(p) for p in DEFAULT_PAIRS]
    args.announce(mech, episode_length(trial, args.initial))
    if args.adversarial_model:  # the run's mechanism and settings at crafted models (no canary audit)
        return _adversarial_run(args, report, progress, mech, pairs, config)
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
    report["mechanism_audits"] = [mres.to_dict()]
    report["channels"].append(row_record(mres.row, channel="canary (black-box)"))
    report["environment_audits"] = [_report_environment(report, res, config) for res in environments]
    return 0


def _adversarial_run(args, report: dict, progress: bool, mech, pairs, config) -> int:
    report.update(mode="adversarial", model="adversarial")
    protection, record = run_protection(config, mech)
    if protection:  # the run's mitigations; every channel against the total claim
        from pgc.audits.adversarial import PROTECTED_ADVERSARIAL_CHANNELS

        if args.channels is None:
            args.channel_list = list(PROTECTED_ADVERSARIAL_CHANNELS)
        report["protection"] = record
    report["adversarial_audits"] = adversarial_pairs(
        args, mech, pairs, report, progress, hyper=config.hyper, physics=config.physics, **protection
    )
    return 0


def _report_environment(report: dict, res, config) -> dict:
    """One pair's environment audit printed and added to the report's rows; its record."""
    psi, psi_prime = res.psi, res.psi_prime
    print(
        f"environment ψ={psi:g} vs ψ'={psi_prime:g} at the {report['model']} model "
        f"(mean score {res.score_means[0]:.1f} vs {res.score_means[1]:.1f}; {res.wall_time_s:.1f}s):"
    )
    print_rows(res.channels)
    protect = {"protect": list(config.protect)} if config.protect else {}
    report["channels"] += [row_record(c, **protect) for c in res.channels]
    return res.to_dict()
