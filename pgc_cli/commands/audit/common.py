"""What the modes of ``pgc audit`` share: a row of the result's flat ``channels`` list, the mechanism
named on the command line, its canary audit and its printout."""

from __future__ import annotations

import math

from ...main import CLIError


def fmt(x: float) -> str:
    return "∞" if isinstance(x, float) and math.isinf(x) else f"{x:.3f}"


def channel_row(scope: str, channel: str, claimed: float, lb: float, confidence: float, n: int, cap: float,
                verdict: str, covered: bool, **extra) -> dict:
    return {"scope": scope, "channel": channel, "claimed_epsilon": claimed, "epsilon_lower_bound": lb,
            "confidence": confidence, "samples_per_side": n, "max_certifiable_epsilon": cap,
            "verdict": verdict, "covered": bool(covered), **extra}


def mechanism_row(result, channel: str) -> dict:
    """The row of a mechanism's canary audit (the claim covers a mechanism's whole output)."""
    from audit.blackbox import claim_p_value

    return channel_row("mechanism", channel, result.claimed_epsilon, result.epsilon_lower_bound, result.confidence,
                       result.bound.samples_per_side, result.bound.max_certifiable_epsilon, result.verdict, True,
                       mechanism=result.mechanism, p_value=claim_p_value(result),
                       delta_lower_bound=getattr(result, "delta_lower_bound", 0.0))


def build_mechanism(name: str, epsilon: float | None, clip, reduced_dim, rounds: int, delta: float | None = None):
    """The registered mechanism the options name (``rounds`` > 1: T submissions with the §3.2.1 split)."""
    from audit.mutants import RepeatedSubmissions
    from mechanisms import DELTA_MECHANISMS, MECHANISMS, make_mechanism, split_rounds

    if name not in MECHANISMS:
        raise CLIError(f"unknown mechanism {name!r}; known: {', '.join(sorted(MECHANISMS))}")
    if name == "none":
        raise CLIError("the 'none' mechanism claims ε = ∞: there is nothing to refute")
    if epsilon is None:
        raise CLIError("--epsilon is required with --mechanism")
    if name in DELTA_MECHANISMS and not delta:
        raise CLIError(f"--mechanism {name} needs --delta in (0, 1) (its (ε, δ) claim)")
    base = make_mechanism(name, epsilon, clip, reduced_dim, delta=delta)
    return base if rounds == 1 else RepeatedSubmissions(split_rounds(base, rounds), rounds, epsilon)


def mechanism_audit(mech, args, samples: int, progress: bool, white_box: bool):
    from audit import audit_mechanism, audit_prs_whitebox

    if white_box:
        if not callable(getattr(mech, "release", None)):
            raise CLIError("--white-box needs a mechanism with a release() report (prs)")
        return audit_prs_whitebox(mech, dim=args.dim, samples=samples, confidence=args.confidence,
                                  seed=args.seed, delta=args.delta or 0.0, progress=progress)
    return audit_mechanism(mech, dim=args.dim, samples=samples, confidence=args.confidence, seed=args.seed,
                           delta=args.delta, float_exact=getattr(args, "float_exact", False), progress=progress)


def print_mechanism(result) -> None:
    b = result.bound
    print(f"{result.mechanism} [{result.mode}]: claimed ε = {fmt(result.claimed_epsilon)}, "
          f"ε_LB = {result.epsilon_lower_bound:.3f} at {100 * result.confidence:g}% confidence "
          f"(n = {b.samples_per_side:,}/side, cap {b.max_certifiable_epsilon:.2f}, smallest detectable "
          f"δ at ε={b.detectable_delta_at:g}: {b.smallest_detectable_delta:.2e}) -> {result.verdict.upper()}")
    print(f"  ε test: {b.hypothesis}, statistic {b.statistic}, FP {b.false_positives}, FN {b.false_negatives}; "
          f"{result.wall_time_s:.1f}s")
    dt = getattr(result, "delta_test", None)
    if dt is not None:
        if dt.certified:
            print(f"  δ test: {dt.statistic} on {dt.hypothesis} ({dt.direction}), {dt.hits} hits vs {dt.false_hits} "
                  f"of {dt.samples_per_side:,}/side -> δ_LB = {dt.delta_lower_bound:.2e} at ε = "
                  f"{fmt(dt.claimed_epsilon)} (claimed δ {dt.claimed_delta:g}; alone at "
                  f"{100 * dt.confidence:g}%)")
        else:
            print("  δ test: no point mass or exact release seen on the training split (δ_LB = 0)")
    if getattr(result, "mu_lower_bound", None) is not None:
        curve_eps = result.curve_epsilon
        print(f"  curve test: μ_LB = {result.mu_lower_bound:.3f} vs the noise's μ = {result.claimed_mu:.3f}"
              + ("" if curve_eps is None else f" (ε ≥ {curve_eps:.3f} at δ = {result.claimed_delta:g} if the curve "
                                              "is Gaussian)"))
    detectable = getattr(result, "detectable_epsilon", None)
    if result.verdict == "consistent" and detectable is not None:
        print(f"  power: would have caught ε ≥ {detectable:.3g} (a leak of that size is flagged w.p. ≥ 0.8)")
    elif result.verdict == "inconclusive":
        decide = result.samples_to_decide
        print("  power: no leak of any size would have been flagged at this n"
              + (f"; {decide:,} per side would decide" if decide else ""))
    if getattr(result, "reason", ""):
        print(f"  verdict: {result.reason}")
