"""A registered mechanism as ``pgc audit`` names it (:func:`named_mechanism`) and its canary audit,
black-box or, for a mechanism with PRS's internal report, white-box (:func:`canary_audit`)."""

from __future__ import annotations

from pgc.errors import UserError


def named_mechanism(name: str, epsilon: float | None, clip, reduced_dim, rounds: int, delta: float | None = None):
    """The registered mechanism the options name (``rounds`` > 1: T submissions with the §3.2.1 split,
    audited as one release); a one-line :class:`UserError` for a mechanism with nothing to refute or a
    missing ε or δ."""
    from audit.selftest.mutants import RepeatedSubmissions
    from pgc.mechanisms import DELTA_MECHANISMS, MECHANISMS, make_mechanism, split_rounds

    if name not in MECHANISMS:
        raise UserError(f"unknown mechanism {name!r}; known: {', '.join(sorted(MECHANISMS))}")
    if name == "none":
        raise UserError("the 'none' mechanism claims ε = ∞: there is nothing to refute")
    if epsilon is None:
        raise UserError("--epsilon is required with --mechanism")
    if name in DELTA_MECHANISMS and not delta:
        raise UserError(f"--mechanism {name} needs --delta in (0, 1) (its (ε, δ) claim)")
    base = make_mechanism(name, epsilon, clip, reduced_dim, delta=delta)
    return base if rounds == 1 else RepeatedSubmissions(split_rounds(base, rounds), rounds, epsilon)


def canary_audit(
    mech,
    *,
    dim: int,
    samples: int,
    confidence: float,
    seed: int,
    delta: float | None,
    float_exact: bool = False,
    white_box: bool = False,
    progress: bool = False,
):
    """The mechanism's canary audit (:func:`audit.audit_mechanism`), or with ``white_box`` the audit of
    PRS's internal report (:func:`audit.audit_prs_whitebox`)."""
    from audit import audit_mechanism, audit_prs_whitebox

    if white_box:
        if not callable(getattr(mech, "release", None)):
            raise UserError("--white-box needs a mechanism with a release() report (prs)")
        return audit_prs_whitebox(
            mech, dim=dim, samples=samples, confidence=confidence, seed=seed, delta=delta or 0.0, progress=progress
        )
    return audit_mechanism(
        mech,
        dim=dim,
        samples=samples,
        confidence=confidence,
        seed=seed,
        delta=delta,
        float_exact=float_exact,
        progress=progress,
    )
