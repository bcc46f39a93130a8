"""``pgc audit adversarial-model`` (the aggregator crafts θ per pair) and ``pgc audit adversarial-curve``."""

from __future__ import annotations

from pgc.audits.mechanism import named_mechanism
from pgc.errors import UserError

from .common import print_rows, row_record
from .options import DEFAULT_PAIRS, gravity_pair


def audit_adversarial_mechanism(args, report: dict, progress: bool) -> int:
    mech = named_mechanism(args.mechanism, args.epsilon, args.clip, args.reduced_dim, args.rounds)
    pairs = args.pairs or [gravity_pair(p) for p in DEFAULT_PAIRS]
    args.announce(mech)
    report.update(mode="adversarial", model="adversarial")
    report["adversarial_audits"] = adversarial_pairs(args, mech, pairs, report, progress)
    return 0


def adversarial_pairs(args, mech, pairs, report: dict, progress: bool, hyper=None, physics=None, **protection) -> list:
    """One adversarial audit per pair (:func:`pgc.audits.adversarial.crafted_pair_records`), printed as it
    comes, its rows added to the report; the pairs' records."""
    from pgc.a3c.crafted import QUICK_SEARCH, SearchSettings
    from pgc.audits.adversarial import crafted_pair_records

    settings = QUICK_SEARCH if args.search_budget == "quick" else SearchSettings()
    report["search_settings"] = settings.to_dict()
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
        audits.append(record)
        _print_pair(res, mech, protection)
        protect = {"protect": list(protection["protect"])} if protection else {}
        report["channels"] += [
            row_record(r, theta_file=record["theta_files"].get(r.crafted_for), **protect) for r in res.rows
        ]
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


def adversarial_curve(args, report: dict, progress: bool) -> int:
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
    report.update(mode="adversarial", model="adversarial", honest_model=honest.label, **res)
    for model, audits in (("adversarial", res["adversarial_audits"]), ("honest", res["honest_audits"])):
        for audit in audits:
            scope = f"{model} {audit['psi']:g} vs {audit['psi_prime']:g} ε={audit['claimed_epsilon']:g}"
            report["channels"] += [{**row, "scope": scope, "model": model} for row in audit["channels"]]
    return 0
