"""``pgc audit mechanism NAME`` (a registered mechanism's canary audit) and ``pgc audit self-test``."""

from __future__ import annotations

from pgc.audits.mechanism import canary_audit, named_mechanism
from pgc.errors import UserError

from .common import canary_record, header, print_mechanism


def audit_named_mechanism(args, progress: bool):
    import pgc.schemas as schemas
    from audit.engine.blackbox import describe

    mech = named_mechanism(args.mechanism, args.epsilon, args.clip, args.reduced_dim, args.rounds, args.delta)
    samples = args.samples
    args.announce(mech)
    print(
        f"auditing {describe(mech)} [{'white-box' if args.white_box else 'black-box'}]: canary pairs of "
        f"d = {args.dim} inputs, {samples:,} certification outputs per side after a training split",
        flush=True,
    )
    result = canary_audit(
        mech,
        dim=args.dim,
        samples=samples,
        confidence=args.confidence,
        seed=args.seed,
        delta=args.delta,
        float_exact=args.float_exact,
        white_box=args.white_box,
        progress=progress,
    )
    print_mechanism(result)
    return schemas.MechanismAudit(
        **header(args),
        channels=[result.row.updated(channel=f"canary ({result.mode})", base_channel=f"canary ({result.mode})")],
        mechanism_audit=canary_record(result),
    )


def self_test(args, progress: bool):
    import pgc.schemas as schemas
    from audit.selftest import TABLE_HEADER, format_row, run_self_test, self_test_cases
    from audit.selftest.honesty import HONESTY_CASES, run_honesty_cases

    samples = args.samples
    mechanisms = {c.name for c in self_test_cases()}
    known = mechanisms | set(HONESTY_CASES)
    if args.only and set(args.only) - known:
        raise UserError(f"--only: unknown case(s) {sorted(set(args.only) - known)}; known: {', '.join(sorted(known))}")
    rows, honesty = [], []
    if not args.only or set(args.only) & mechanisms:
        print(
            f"self-test: {samples:,} certification samples per side, {100 * args.confidence:g}% confidence, "
            f"seed {args.seed}"
        )
        print(TABLE_HEADER)
        rows = run_self_test(
            samples=samples,
            confidence=args.confidence,
            seed=args.seed,
            dim=args.dim,
            progress=progress,
            on_row=lambda r: print(format_row(r), flush=True),
            only=[c for c in args.only or () if c in mechanisms] or None,
            executor=args.executor,
        )
    if not args.only or set(args.only) & set(HONESTY_CASES):
        print("honesty cases (each at its own sizes, 95% confidence): a verdict never says more than the audit saw")
        honesty = run_honesty_cases(args.seed, progress, only=args.only or None, on_case=_print_honesty)
    channels = [
        schemas.SelfTestRow.of(
            r.result.row,
            scope="self-test",
            channel=f"{r.case.name} ({r.case.mode})",
            base_channel=f"{r.case.name} ({r.case.mode})",
            correct_mechanism=r.case.correct,
            passed=r.passed,
            true_epsilon=r.true_epsilon,
        )
        for r in rows
    ]
    for o in honesty:
        channels += [schemas.SelfTestRow.of(row, scope=f"honesty: {o.case}", passed=o.passed) for row in o.rows]
    result = schemas.SelfTest(
        **header(args),
        channels=channels,
        self_test=[_outcome(r) for r in rows],
        honesty=[
            schemas.HonestyOutcome(case=o.case, expected=o.expected, passed=o.passed, shown=o.shown) for o in honesty
        ],
    )
    failed = result.misjudged()
    total = len(rows) + len(honesty)
    print(f"{total - len(failed)}/{total} judged correctly" + (f"; MISJUDGED: {', '.join(failed)}" if failed else ""))
    return result


def _outcome(r):
    """One self-test case as its result records it."""
    import pgc.schemas as schemas

    return schemas.SelfTestOutcome(
        name=r.case.name,
        mode=r.case.mode,
        correct_mechanism=r.case.correct,
        claimed_epsilon=r.result.claimed_epsilon,
        true_epsilon=r.true_epsilon,
        passed=r.passed,
        audit=canary_record(r.result),
    )


def _print_honesty(outcome) -> None:
    print(f"  {outcome.case:<26} {'ok  ' if outcome.passed else 'FAIL'} expected: {outcome.expected}", flush=True)
    print(f"  {'':<26}      shown: {outcome.shown}", flush=True)
