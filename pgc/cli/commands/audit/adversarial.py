"""``pgc audit adversarial-model`` (the aggregator crafts θ per pair) and ``pgc audit adversarial-curve``."""

from __future__ import annotations

import dataclasses

from pgc.audits.mechanism import named_mechanism
from pgc.errors import UserError

from .common import header, print_rows
from .options import DEFAULT_PAIRS, gravity_pair


def audit_adversarial_mechanism(args, progress: bool):
    import pgc.schemas as schemas

    mech = named_mechanism(args.mechanism, args.epsilon, args.clip, args.reduced_dim, args.rounds)
    pairs = args.pairs or [gravity_pair(p) for p in DEFAULT_PAIRS]
    args.announce(mech)
    audits = adversarial_pairs(args, mech, pairs, progress)
    return schemas.AdversarialModelAudit(
        **header(args),
        channels=[row for a in audits for row in a.channels],
        search_settings=search_settings(args),
        adversarial_audits=audits,
    )


def _settings(args):
    from pgc.a3c.crafted import QUICK_SEARCH, SearchSettings

    return QUICK_SEARCH if args.search_budget == "quick" else SearchSettings()


def search_settings(args):
    """The crafted-model search's budget ``--search-budget`` names, as the result records it."""
    import pgc.schemas as schemas

    return schemas.CraftedSearchSettings(**dataclasses.asdict(_settings(args)))


def adversarial_pairs(args, mech, pairs, progress: bool, hyper=None, physics=None, **protection) -> list:
    """One adversarial audit per pair (:func:`pgc.audits.adversarial.crafted_pair_records`), printed as it
    comes; the pairs' records (their rows carry the crafted θ's file and the run's mitigations)."""
    from pgc.audits.adversarial import crafted_pair_records

    settings = _settings(args)
    audits = []
    records = crafted_pair_records(
        mech,
        pairs,
        companion=args.result.companion,
        seed=args.seed,
        search_trials=args.search_trials,
        channels=args.channel_list,
        executor=args.executor,
        search=settings,
        physics=physics,
        hyper=hyper,
        samples=args.samples,
        confidence=args.confidence,
        progress=progress,
        **protection,
    )
    for pair, (found, res, record) in zip(pairs, records, strict=False):
        if found is not None:
            print(
                f"worst pair in {pair[0]:g}..{pair[1]:g} ({args.search_trials} optuna trials, "
                f"{found.wall_time_s:.0f}s): {found.psi:.4g} vs {found.psi_prime:.4g} "
                f"(search objective {found.value:.3f}); certified on fresh samples"
            )
        if protection:
            protect = list(protection["protect"])
            record = dataclasses.replace(record, channels=[r.updated(protect=protect) for r in record.channels])
        audits.append(record)
        _print_pair(res, mech, protection)
    return audits


def _print_pair(res, mech, protection: dict) -> None:
    nf = res.noise_free_epsilon_lower_bound
    if protection:
        print(
            f"protected configuration ({', '.join(protection['protect'])}): every channel against the "
            f"total claim ε = {res.claimed_epsilon:g} (gradient {float(mech.epsilon):g} + score "
            f"{protection['score_epsilon'] or 0:g})"
        )
    print(
        f"adversarial model, ψ={res.psi:g} vs ψ'={res.psi_prime:g}, {res.mechanism} "
        f"(search {sum(s.wall_time_s for s in res.searches.values()):.0f}s, total {res.wall_time_s:.0f}s)"
        + (f"; noise-free gradient ε_LB {nf:.3f}" if nf is not None else "")
    )
    print_rows(res.rows, width=10)


def adversarial_curve(args, progress: bool):
    import pgc.schemas as schemas
    from attacks.a3c.sweep import ModelSpec
    from pgc.a3c.crafted import QUICK_SEARCH, SearchSettings
    from pgc.audits.studies import CURVE_DISTANCES
    from pgc.audits.studies import adversarial_curve as curve_study
    from pgc.mechanisms import make_mechanism

    named_mechanism(args.mechanism, args.epsilons[0], args.clip, args.reduced_dim, 1)  # validates them
    try:
        honest = ModelSpec.parse(args.honest_model or "init:0")
    except (ValueError, FileNotFoundError) as exc:
        raise UserError(f"--honest-model: {exc}") from None
    distances = tuple(args.distances or CURVE_DISTANCES)
    print(
        f"adversarial curve: {args.mechanism} ε {args.epsilons}, Δψ {list(distances)}, honest θ "
        f"{honest.label}, {args.samples:,} samples per side"
    )
    res = curve_study(
        lambda e: make_mechanism(args.mechanism, e, args.clip, args.reduced_dim),
        args.epsilons,
        honest_theta=honest.theta,
        distances=distances,
        channels=args.channel_list,
        samples=args.samples,
        seed=args.seed,
        confidence=args.confidence,
        log=lambda line: print(line, flush=True),
        settings=QUICK_SEARCH if args.search_budget == "quick" else SearchSettings(),
        executor=args.executor,
    )
    channels = []
    for model, audits in (("adversarial", res.adversarial_audits), ("honest", res.honest_audits)):
        for audit in audits:
            scope = f"{model} {audit.psi:g} vs {audit.psi_prime:g} ε={audit.claimed_epsilon:g}"
            channels += [schemas.AdversarialRow.of(row, scope=scope, model=model) for row in audit.channels]
    return schemas.AdversarialCurve(
        **header(args),
        channels=channels,
        honest_model=honest.label,
        curve=res.curve,
        adversarial_audits=res.adversarial_audits,
        honest_audits=res.honest_audits,
    )
