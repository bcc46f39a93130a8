"""``pgc audit system SPEC``: any System through the one engine, :func:`audit.engine.system_audit.audit_system`."""

from __future__ import annotations

import dataclasses
import json
import sys

from pgc.contracts import HasCanaries, HasSecretSpace
from pgc.errors import SystemContractError, UserError
from pgc.options import AutoSamples

from .common import fmt

ANY_PAIR = "any"  # --pair any: the named pair whose releases lie furthest apart on the search stream


def audit_any_system(args, progress: bool):
    from pgc.systems.registry import SYSTEMS, make_system

    settings = factory_settings(args.setting)
    if args.system.strip() not in SYSTEMS:  # a user's factory: what it raises is reported as theirs
        return audit_system_object(make_system(args.system, **settings), args, progress)
    try:
        system = make_system(args.system, **settings)
    except (TypeError, ValueError) as exc:  # a registered system refusing the settings given to it
        raise UserError(f"system {args.system} with {', '.join(args.setting) or 'no settings'}: {exc}") from None
    return audit_system_object(system, args, progress)


def factory_settings(items) -> dict:
    """``KEY=VALUE`` items as factory keywords (VALUE read as JSON, else kept as text)."""
    settings = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise UserError(f"--setting {item!r}: expected KEY=VALUE with KEY a Python name")
        try:
            settings[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            settings[key.strip()] = value
    return settings


def audit_flower_client(args, progress: bool):
    """``pgc audit flower MODULE:APP``: the user's ClientApp as a System (pgc.flower), then the same audit."""
    try:
        from pgc.flower.loader import flower_client_from_spec
    except ImportError as exc:
        raise UserError(
            f"pgc audit flower needs Flower: pip install -e '.[flower]' (scripts/setup.sh installs it): {exc}"
        ) from None
    system = flower_client_from_spec(args.flower, args.datasets)
    mods = [getattr(m, "__name__", type(m).__name__) for m in system.mods]
    print(f"Flower client {args.flower}: neighbours by {system.relation}; mods {', '.join(mods) or 'none'}", flush=True)
    return audit_system_object(system, args, progress)


def audit_system_object(system, args, progress: bool):
    """The typed result of a System's audit (the command writes it as it is)."""
    from audit.engine.releases import describe_secret
    from audit.engine.system_audit import audit_system
    from pgc.contracts import PrivacyClaim

    check_contract(system)
    claim = PrivacyClaim.of(system.claim)
    search_pair = bool(getattr(args, "search_pair", False))
    if search_pair and not isinstance(system, HasSecretSpace):
        raise UserError(f"--search-pair: {system.name} offers no secret_space to search")
    secret, secret_prime, pair = _secrets(args, system)
    auto = args.samples if isinstance(args.samples, AutoSamples) else None
    samples = args.samples
    what = (
        "the worst neighbouring pair it finds"
        if search_pair
        else "the named pair whose releases lie furthest apart on a search stream"
        if pair == ANY_PAIR
        else f"pair {pair!r}"
        if pair
        else f"{describe_secret(system, secret)} vs {describe_secret(system, secret_prime)}"
    )
    print(
        f"auditing {system.name}: {what}, claim {_claim_text(claim)}; "
        + (f"samples until decisive (budget {auto.budget:,} per side)" if auto else f"{samples:,} releases per side")
        + (", adversarial broadcast" if args.adversarial else ""),
        flush=True,
    )
    options = _audit_options(args, system, pair, search_pair)
    if auto:
        from audit.certification.sequential import audit_system_until_decisive

        staged = audit_system_until_decisive(
            system,
            secret,
            secret_prime,
            budget=auto.budget,
            seed=args.seed,
            confidence=args.confidence,
            progress=progress,
            recertify_stage=getattr(args, "recertify_stage", None),
            earlier_certification_seed=getattr(args, "earlier_certification_seed", None),
            **options,
        )
        result = staged.stages[-1].detail
        for stage in staged.stages:
            print(
                f"  stage: {stage.n_per_side:,} per side at α = {stage.alpha:.3g} -> {stage.verdict} ({stage.decision})"
            )
    else:
        result = audit_system(
            system,
            secret,
            secret_prime,
            samples=samples,
            seed=args.seed,
            confidence=args.confidence,
            progress=progress,
            **options,
        )
    if result.searched_pair:
        print(
            f"  worst pair found: {result.secret}  vs  {result.secret_prime}  (search score "
            f"{result.searched_pair.search_objective:.3f}, {result.searched_pair.evaluations} candidates)"
        )
    if pair == ANY_PAIR:
        print(f"  pair: {result.audited.pair}")
    if result.training is not None:
        print(f"  tests chosen on a training split of {result.training.train_per_side:,} releases per side")
    for r in result.rows:
        _print_row(r)
    level = f"{100 * (1 - staged.stages[-1].alpha if auto else args.confidence):.3g}%"
    verdict = staged.decision if auto else str(result.verdict)
    print(f"verdict (Holm over {len(result.rows)} rows at {level}): {verdict.upper()}")
    if auto:
        result = dataclasses.replace(result, verdict=staged.verdict, sequential=_sequential(staged, auto, args))
    return result


def _sequential(staged, auto, args):
    from pgc.schemas.kinds import SequentialDecision, SequentialStage

    return SequentialDecision(
        budget=auto.budget,
        alpha=1.0 - args.confidence,
        decision=staged.decision,
        decisive=staged.decisive,
        stages=[
            SequentialStage(samples_per_side=s.n_per_side, alpha=s.alpha, verdict=s.verdict, decision=s.decision)
            for s in staged.stages
        ],
    )


def _audit_options(args, system, pair: str | None, search_pair: bool) -> dict:
    """The keywords of :func:`audit.engine.system_audit.audit_system` the subcommand's options set."""
    channels = None if args.channels is None else [c.strip() for c in args.channels.split(",") if c.strip()]
    options = dict(
        adversarial=args.adversarial,
        channels=channels,
        pair=pair,
        float_exact=args.float_exact,
        train_fraction=getattr(args, "train_fraction", None),
        certification_seed=getattr(args, "certification_seed", None),
        shape_power=bool(getattr(args, "shape_power", False)),
    )
    if search_pair:
        options["search_pair"] = True
    if pair == ANY_PAIR:  # the named pairs, chosen among on the search stream
        options["pairs"] = system.canaries()
        options.pop("pair")
    return options


def check_contract(system) -> None:
    """Every check of the System contract (:func:`audit.testing.check_system`, what a user's own tests run) before
    the audit: a failed check is refused in one line (exit 2); an exception raised in the system's own code
    propagates, to be shown as the user's."""
    from audit.testing import ContractViolation, check_system

    try:
        check_system(
            system,
            raise_user_errors=True,
            warn=lambda text: print(f"warning: {getattr(system, 'name', system)}: {text}", file=sys.stderr),
        )
    except ContractViolation as exc:
        head, *failed = (" ".join(line.split()) for line in str(exc).splitlines() if line.strip())
        raise SystemContractError(" ".join([head, "; ".join(failed)]).strip()) from None


def _claim_text(claim) -> str:
    return (
        f"ε = {fmt(float(claim.epsilon))}, δ = {claim.delta:g}"
        + ("" if claim.gdp_mu is None else f", μ-GDP curve μ = {claim.gdp_mu:.4g}")
        + ("" if claim.privacy_profile is None else f", a {len(claim.privacy_profile)}-point privacy profile")
        + f" covering {', '.join(claim.covers) or 'nothing'}"
    )


def _print_row(r) -> None:
    extra = "" if r.accountant_epsilon is None else f"  accountant ε {r.accountant_epsilon:.3f}"
    if r.mu_lower_bound is not None:
        extra += f"  μ_LB {r.mu_lower_bound:.3f} vs μ {r.claimed_mu:.3f}" + (
            "" if r.curve_epsilon is None else f" (ε {r.curve_epsilon:.3f} if the curve is Gaussian)"
        )
    elif r.profile_delta is not None:
        extra += (
            f"  profile: at δ {r.profile_delta:.3g} the claim promises ε ≤ {r.profile_claimed_epsilon:.3f}, "
            f"certified ε ≥ {r.profile_epsilon_lower_bound:.3f}"
        )
    elif r.gdp_mu_estimate is not None:
        extra += f"  μ̂ {r.gdp_mu_estimate:.3f} (estimate)"
    delta_lb = "—" if r.delta_lower_bound is None else f"{r.delta_lower_bound:.2e}"
    print(
        f"  {r.channel:<20} claim ({fmt(r.claimed_epsilon)}, {r.claimed_delta:g})  ε_LB {r.epsilon_lower_bound:7.3f}"
        f"  δ_LB {delta_lb}  p {r.p_value:.2g}  [{r.broadcast}, {r.statistic}]  "
        f"{r.verdict}{'  (Holm keeps it)' if r.holm_rejected else ''}{extra}"
    )
    print(f"      {r.verdict}: {r.verdict_reason}")
    if r.event:
        print(f"      the certified test's event: {r.event}")
    if r.discordant_pairs:
        only_first, only_second = r.discordant_pairs
        print(
            f"      certified from discordant pairs: {only_first:,} with only the first secret's release in the "
            f"event, {only_second:,} with only the second's"
        )
    if r.encoding:
        print(f"      releases read as: {r.encoding}")


def _secrets(args, system):
    """The two neighbouring secrets: ``--secrets`` as JSON values, else the system's named pair ``--pair``
    (default: its first)."""
    if args.secrets:
        try:
            secret, secret_prime = (json.loads(x) for x in args.secrets)
        except json.JSONDecodeError:
            raise UserError("--secrets takes two JSON values (numbers, strings in quotes, lists)") from None
        return secret, secret_prime, None
    canaries = system.canaries() if isinstance(system, HasCanaries) else {}
    if not canaries:
        raise UserError(f"{system.name} names no canary pairs: give --secrets SECRET SECRET_PRIME")
    if args.pair == ANY_PAIR:  # the audit chooses among them on its search stream
        secret, secret_prime = next(iter(canaries.values()))
        return secret, secret_prime, ANY_PAIR
    pair = args.pair or next(iter(canaries))
    if pair not in canaries:
        raise UserError(f"--pair {pair!r}: {system.name} has {', '.join(map(repr, canaries))}")
    secret, secret_prime = canaries[pair]
    return secret, secret_prime, pair
