"""``pgc audit --system SPEC``: any System through the one engine, :func:`audit.system_audit.audit_system`."""

from __future__ import annotations

import json

from ...main import CLIError
from .common import fmt


def audit_any_system(args, report: dict, progress: bool) -> int:
    from audit.releases import describe_secret
    from audit.system_audit import audit_system, check_system
    from systems.registry import make_system

    system = make_system(args.system)
    check_system(system)
    secret, secret_prime, pair = _secrets(args, system)
    channels = None if args.channels is None else [c.strip() for c in args.channels.split(",") if c.strip()]
    samples = args.samples or 100_000
    what = f"pair {pair!r}" if pair else f"{describe_secret(system, secret)} vs {describe_secret(system, secret_prime)}"
    print(f"auditing {system.name}: {what}, claim ε = "
          f"{fmt(float(system.claim.epsilon))}, δ = {system.claim.delta:g} covering "
          f"{', '.join(system.claim.covers) or 'nothing'}; {samples:,} releases per side"
          + (", adversarial broadcast" if args.adversarial else ""), flush=True)
    result = audit_system(system, secret, secret_prime, samples=samples, seed=args.seed,
                          confidence=args.confidence, adversarial=args.adversarial, channels=channels,
                          pair=pair, float_exact=args.float_exact, progress=progress)
    for r in result.rows:
        extra = "" if r.accountant_epsilon is None else f"  accountant ε {r.accountant_epsilon:.3f}"
        extra += "" if r.gdp_mu_estimate is None else f"  μ̂ {r.gdp_mu_estimate:.3f} (estimate)"
        print(f"  {r.channel:<20} claim ({fmt(r.claimed_epsilon)}, {r.claimed_delta:g})  ε_LB {r.epsilon_lower_bound:7.3f}"
              f"  δ_LB {r.delta_lower_bound:.2e}  p {r.p_value:.2g}  [{r.broadcast}, {r.statistic}]  "
              f"{r.verdict}{'  (Holm)' if r.holm_rejected else ''}{extra}")
    print(f"verdict (Holm over {len(result.rows)} rows at {100 * args.confidence:g}%): {result.verdict.upper()}")
    command = report["command"]
    report.clear()
    report.update(result.to_dict())
    report["command"] = command
    return 0


def _secrets(args, system):
    """The two neighbouring secrets: ``--secrets`` as JSON values, else the system's named pair ``--pair``
    (default: its first)."""
    if args.secrets:
        try:
            secret, secret_prime = (json.loads(x) for x in args.secrets)
        except json.JSONDecodeError:
            raise CLIError("--secrets takes two JSON values (numbers, strings in quotes, lists)") from None
        return secret, secret_prime, None
    canaries = system.canaries() if callable(getattr(system, "canaries", None)) else {}
    if not canaries:
        raise CLIError(f"{system.name} names no canary pairs: give --secrets SECRET SECRET_PRIME")
    pair = args.pair or next(iter(canaries))
    if pair not in canaries:
        raise CLIError(f"--pair {pair!r}: {system.name} has {', '.join(map(repr, canaries))}")
    secret, secret_prime = canaries[pair]
    return secret, secret_prime, pair
