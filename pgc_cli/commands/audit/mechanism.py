"""``pgc audit --mechanism`` (a registered mechanism's canary audit) and ``pgc audit --self-test``."""

from __future__ import annotations

from ...main import CLIError
from .common import build_mechanism, channel_row, mechanism_audit, mechanism_row, print_mechanism


def audit_named_mechanism(args, report: dict, progress: bool) -> int:
    from audit.blackbox import describe

    mech = build_mechanism(args.mechanism, args.epsilon, args.clip, args.reduced_dim, args.rounds, args.delta)
    samples = args.samples or 1_000_000
    args.announce(mech)
    print(f"auditing {describe(mech)} [{'white-box' if args.white_box else 'black-box'}]: canary pairs of "
          f"d = {args.dim} inputs, {samples:,} certification outputs per side after a training split", flush=True)
    result = mechanism_audit(mech, args, samples, progress, args.white_box)
    print_mechanism(result)
    report["mechanism_audits"] = [result.to_dict()]
    report["channels"].append(mechanism_row(result, f"canary ({result.mode})"))
    return 0


def self_test(args, report: dict, progress: bool) -> int:
    from audit.selftest import TABLE_HEADER, format_row, run_self_test, self_test_cases

    samples = args.samples or 1_000_000
    known = {c.name for c in self_test_cases()}
    if args.only and set(args.only) - known:
        raise CLIError(f"--only: unknown case(s) {sorted(set(args.only) - known)}; known: {', '.join(sorted(known))}")
    print(f"self-test: {samples:,} certification samples per side, {100 * args.confidence:g}% confidence, "
          f"seed {args.seed}")
    print(TABLE_HEADER)
    rows = run_self_test(samples=samples, confidence=args.confidence, seed=args.seed, dim=args.dim,
                         progress=progress, on_row=lambda r: print(format_row(r), flush=True), only=args.only,
                         executor=args.executor)
    report["self_test"] = [r.to_dict() for r in rows]
    for r in rows:
        report["channels"].append(channel_row("self-test", f"{r.case.name} ({r.case.mode})",
                                              r.result.claimed_epsilon, r.result.epsilon_lower_bound,
                                              r.result.confidence, r.result.bound.samples_per_side,
                                              r.result.bound.max_certifiable_epsilon, r.result.verdict, True,
                                              correct_mechanism=r.case.correct, passed=r.passed,
                                              true_epsilon=r.true_epsilon))
    failed = [r for r in rows if not r.passed]
    print(f"{len(rows) - len(failed)}/{len(rows)} judged correctly"
          + (f"; MISJUDGED: {', '.join(r.case.name for r in failed)}" if failed else ""))
    return 1 if failed else 0
