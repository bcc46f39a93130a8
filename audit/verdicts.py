"""The one verdict rule of a certified row, the one Holm rule of a family of rows, and the row builder of the
engine.

Every audit path — mechanism, system, PGC-A3C's environment and adversarial audits, one-run, sampling until
decisive — fills one :class:`pgc.schemas.AuditRow` with its claim, certified bounds, counts and power, and
:func:`judge` gives it its verdict with :func:`decide`, the one rule:

* ``violated`` — the claimant's own accounting contradicts the claim (:mod:`audit.certification.claims`), or a certified
  bound exceeds it: ε_LB > ε (a covered channel, or any channel of a participant held to the claim as a
  whole), δ_LB > δ, μ_LB > the claimed μ, or a certified ε above a claimed privacy profile's ε_i;
* ``unprotected channel`` — a channel the claim does not cover leaks (ε_LB > 0); the joint row ``all`` of a
  claim that covers only some of its channels (``partly_covered``) leaks more than the claim (ε_LB > ε: more
  than its covered part may), and is ``inconclusive`` when it leaks less, since that leak may be the covered part's;
* ``inconclusive`` — nothing exceeds the claim, but the certified test did not tell the two secrets apart
  (no power can be claimed: :func:`audit.power.measured.separated`), or no leak through it could exceed the
  claim at this n (``detectable_epsilon`` = ∞);
* ``consistent`` — nothing exceeds the claim, and a leak of ``detectable_epsilon`` through the certified test
  would have been flagged with probability ≥ 0.8. Its reason also says which point masses (δ-type leaks)
  the audit could have caught, and that smaller ones are not excluded.

:func:`family_verdict` applies Holm's step-down procedure (statsmodels ``multipletests``) once: over the rows
held to the claim, their p-values of "the claim holds" (a row whose claim the claimant's own accounting
contradicts is rejected outright); then over the uncovered rows, their p-values of "no leak" (a partly covered
joint row: of "no leak beyond the claim"). No rejection: ``inconclusive`` when a row
held to the claim is, else ``consistent``. Each row's Holm outcome is the one for the finding its verdict states.
Rows without a p-value stay outside both families; when no row
states one, the family's verdict is the worst row verdict, uncorrected. The engine, the CLI and the reports all
use it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, TypedDict, TypeVar

from audit.certification import bounds
from audit.certification.accountant import gdp_mu_estimate
from audit.certification.curves import curve_epsilon, curve_violation_pvalue, profile_violation_pvalue, split_alpha
from audit.certification.paired import certified_p_value
from audit.certification.tester import EpsilonBound
from audit.power import measured as measured_power
from pgc.schemas.audit_rows import AuditRow, CertifiedRow, Verdict, worst
from pgc.schemas.channels import ChannelKind

PROFILE_EXCESS_FLOOR = 0.0  # a certified ε above the claimed ε_i by more than this violates the profile

Profile: TypeAlias = tuple[tuple[float, float], ...]  # a claimed privacy profile: (ε_i, δ_i) points


_Row = TypeVar("_Row", bound=CertifiedRow)


def _held(row: CertifiedRow) -> bool:
    return row.covered is not False or bool(row.held_to_claim)


def _violation(row: CertifiedRow) -> str | None:
    """Why a certified bound exceeds the claim; None when none does."""
    covered, eps, lb = row.covered is not False, row.claimed_epsilon, row.epsilon_lower_bound
    if _held(row) and eps is not None and lb > eps:
        where = "" if covered else " through a channel the claim's mechanism does not cover"
        return f"ε_LB = {lb:.3g} > the claimed ε = {eps:g}{where}"
    if not covered:
        return None
    delta = row.claimed_delta or 0.0
    if row.delta_lower_bound is not None and row.delta_lower_bound > delta:
        return f"δ_LB = {row.delta_lower_bound:.3g} > the claimed δ = {delta:g} at the claimed ε"
    if row.mu_lower_bound is not None and row.claimed_mu is not None and row.mu_lower_bound > row.claimed_mu:
        return f"μ_LB = {row.mu_lower_bound:.3g} > the claimed curve's μ = {row.claimed_mu:.3g}"
    if (
        row.profile_epsilon_lower_bound is not None
        and row.profile_claimed_epsilon is not None
        and row.profile_epsilon_lower_bound > row.profile_claimed_epsilon + PROFILE_EXCESS_FLOOR
    ):
        return (
            f"at the profile's δ = {row.profile_delta:.3g} the certified ε = {row.profile_epsilon_lower_bound:.3g} "
            f"> the claimed ε_i = {row.profile_claimed_epsilon:.3g}"
        )
    return None


def is_separated(row: CertifiedRow) -> bool:
    """The row's certified test told the two secrets apart (some certified bound above 0)."""
    return measured_power.separated(
        row.epsilon_lower_bound, row.mu_lower_bound, row.profile_epsilon_lower_bound, row.delta_lower_bound
    )


def power_words(row: CertifiedRow) -> str:
    """What the row's test could have caught, ε-type and δ-type, in one sentence."""
    delta_words = measured_power.detectable_delta_words(row.detectable_delta, row.claimed_delta, row.point_mass_search)
    if row.detectable_epsilon is None or not math.isfinite(row.detectable_epsilon):
        return delta_words + shape_words(row)
    return (
        f"a leak of ε ≥ {row.detectable_epsilon:.3g} through the certified test would have been caught "
        f"(w.p. ≥ 0.8); {delta_words}{shape_words(row)}"
    )


SHAPE_NAMES = ("location", "scale", "dependence", "structure", "learned")  # audit.statistics.shapes.SHAPES


def shape_words(row: CertifiedRow) -> str:
    """Which leak shapes the selection's statistics covered and which it did not; the smallest planted leak of each
    shape the whole selection and certification flagged, where the audit measured it. Empty for a row that
    records neither."""
    if row.shapes_searched is None:
        return ""
    planted_shapes = {p.shape for p in row.planted_power or ()}
    missed = [  # a structure leak planted makes entries absent: the structure statistics then apply
        "structure: no absent entries or recurring values to read" if s == "structure" and s in planted_shapes else s
        for s in SHAPE_NAMES
        if s not in row.shapes_searched
    ]
    words = f"; the test was chosen among statistics of {', '.join(row.shapes_searched)}"
    words += f" (not: {', '.join(missed)})" if missed else ""
    for planted in row.planted_power or ():
        words += "; " + planted.words()
    return words


def decide(row: CertifiedRow) -> tuple[Verdict, str]:
    """The one verdict rule (module docstring): the verdict of ``row`` and its reason in words."""
    covered = row.covered is not False
    if covered and row.claim_contradiction:
        return Verdict.VIOLATED, row.claim_contradiction
    violation = _violation(row)
    if violation:
        return Verdict.VIOLATED, violation
    if not covered and row.partly_covered and row.claimed_epsilon is not None and row.epsilon_lower_bound > 0:
        lb, eps = row.epsilon_lower_bound, row.claimed_epsilon
        if lb > eps:
            return Verdict.UNPROTECTED, (
                f"the claim covers part of this joint channel, and it leaks more than that "
                f"part may: ε_LB = {lb:.3g} > the claimed ε = {eps:g}"
            )
        return Verdict.INCONCLUSIVE, (
            f"the claim covers part of this joint channel, and its leak ε_LB = {lb:.3g} "
            f"≤ the claimed ε = {eps:g} may be that part's own; the uncovered channels "
            f"are judged in their own rows"
        )
    if not covered and row.epsilon_lower_bound > 0:
        return Verdict.UNPROTECTED, (
            f"the claim does not cover this channel, and it leaks: ε_LB = {row.epsilon_lower_bound:.3g} > 0"
        )
    if not is_separated(row):
        return Verdict.INCONCLUSIVE, (
            "the certified test did not tell the two secrets apart (every certified bound "
            "is 0), so the audit cannot say which leak it would have caught"
        )
    if _held(row) and row.detectable_epsilon is None:
        return Verdict.INCONCLUSIVE, "the row records no counts of its test, so no power can be stated"
    if _held(row) and row.detectable_epsilon is not None and not math.isfinite(row.detectable_epsilon):
        decide_at = f"; about {row.samples_to_decide:,} per side would decide" if row.samples_to_decide else ""
        at = f" at {row.samples_per_side:,} per side" if row.samples_per_side else ""
        return Verdict.INCONCLUSIVE, f"no leak through the certified test could exceed the claim{at}{decide_at}"
    return Verdict.CONSISTENT, f"nothing exceeds the claim; {power_words(row)}"


def judge(row: _Row) -> _Row:
    """``row`` with ``separated``, its verdict and the verdict's reason (:func:`decide`)."""
    row = row.updated(separated=is_separated(row))
    verdict, reason = decide(row)
    return row.updated(verdict=verdict, verdict_reason=reason)


# --- power of the certified test, from the row's own counts ---------------------------------------------


def test_alphas(row: CertifiedRow) -> tuple[float, float | None]:
    """(threshold test's α, curve test's α or None) of a row: its ``test_confidence`` and
    ``curve_confidence`` when recorded, else the engine's split of 1 − ``confidence``."""
    alpha = 1.0 - (row.confidence or 0.95)
    curve = row.curve_false_positives is not None
    threshold, curve_alpha = split_alpha(alpha) if curve else (alpha, None)
    if row.test_confidence is not None:
        threshold = 1.0 - row.test_confidence
    if curve and row.curve_confidence is not None:
        curve_alpha = 1.0 - row.curve_confidence
    return threshold, curve_alpha


class PowerFields(TypedDict):
    """The measured-power fields of a row (:func:`measured_power_fields`)."""

    detectable_epsilon: float | None
    samples_to_decide: int | None
    power_basis: str | None


def measured_power_fields(row: CertifiedRow, claimed_profile: Profile | None = None) -> PowerFields:
    """``detectable_epsilon``, ``samples_to_decide`` and ``power_basis`` of a row held to its claim, from its
    counts (:mod:`audit.power.measured`); None where the row records no counts or no finite claim."""
    eps, n = row.claimed_epsilon, row.samples_per_side
    if (
        not _held(row)
        or eps is None
        or not math.isfinite(eps)
        or row.false_positives is None
        or not n
        or (row.fp_share is None and row.discordant_pairs is None)
    ):
        return {
            "detectable_epsilon": None,
            "samples_to_decide": None,
            "power_basis": None
            if _held(row)
            else (
                "joint channel the claim covers in part: a leak counts as uncovered only above the claim"
                if row.partly_covered
                else "uncovered channel: no claim to hold it to"
            ),
        }
    delta = row.claimed_delta or 0.0
    threshold_alpha, curve_alpha = test_alphas(row)
    gaussian = delta > 0
    false_positives, fp_share = row.false_positives, row.fp_share  # None: the paired certificate ran

    def detectable_at(size: int) -> float:
        fp = int(round(false_positives * size / n))
        best = measured_power.event_detectable_epsilon(fp, size, threshold_alpha, fp_share, eps, delta, gaussian)
        if curve_alpha is not None and row.curve_false_positives is not None and delta > 0:
            cfp = int(round(row.curve_false_positives * size / n))
            curve = (
                measured_power.curve_event_detectable_epsilon(cfp, size, curve_alpha, row.claimed_mu, delta)
                if row.claimed_mu is not None
                else measured_power.profile_event_detectable_epsilon(cfp, size, curve_alpha, claimed_profile, delta)
                if claimed_profile is not None
                else math.inf
            )
            best = min(best, curve)
        return best

    detectable = detectable_at(n)
    decide_at = None if math.isfinite(detectable) else measured_power.samples_to_decide(detectable_at)
    return {
        "detectable_epsilon": detectable,
        "samples_to_decide": decide_at,
        "power_basis": "leaks through the certified event at its measured rate (audit.power.measured)",
    }


# --- the family: Holm once -------------------------------------------------------------------------------


@dataclass(frozen=True)
class FamilyVerdict:
    """The verdict of a family of rows (Holm's procedure at ``alpha``), per row whether Holm keeps its finding
    (``rejected``: its claim, or for an uncovered row its "no leak" — "no leak beyond the claim" for a partly
    covered joint row — is rejected) and its Holm-adjusted p-value (None for a row outside both families)."""

    verdict: Verdict
    rejected: tuple[bool, ...]
    adjusted: tuple[float | None, ...]
    alpha: float
    size: int


def family_verdict(rows: Sequence[CertifiedRow], alpha: float) -> FamilyVerdict:
    """Holm over the rows held to the claim (p-value of "the claim holds"; a contradicted claim: p = 0), and over
    the uncovered rows (p-value of "no leak", :meth:`CertifiedRow.leak_p_value`); see the module docstring. A row's
    ``rejected`` is Holm's outcome for the finding its own verdict states: its leak for an unprotected channel, its
    claim for any other row."""
    from pgc.schemas.shared import holm as holm_correction

    def holm(members: list[int], pvalues: list[float]) -> dict[int, tuple[bool, float]]:
        reject, adjusted = holm_correction(pvalues, alpha)
        return {i: (r, a) for i, r, a in zip(members, reject, adjusted, strict=True)}

    def claim_p(row: CertifiedRow) -> float:
        p = 0.0 if row.claim_contradiction and row.covered is not False else row.p_value
        assert p is not None, "a row in the claims' family states its p-value"
        return p

    def leak_p(row: CertifiedRow) -> float:
        p = row.leak_p_value()
        assert p is not None, "a row in the leaks' family states its p-value"
        return p

    held = [i for i, r in enumerate(rows) if _held(r) and (r.p_value is not None or r.claim_contradiction)]
    claims = holm(held, [claim_p(rows[i]) for i in held])
    # a held row that is partly covered is already tested by its claim: never twice by the same p-value
    leaks_at = [
        i
        for i, r in enumerate(rows)
        if r.covered is False and not (r.partly_covered and _held(r)) and r.leak_p_value() is not None
    ]
    leaks = holm(leaks_at, [leak_p(rows[i]) for i in leaks_at])
    own = [
        leaks.get(i) if r.verdict == Verdict.UNPROTECTED or i not in claims else claims.get(i)
        for i, r in enumerate(rows)
    ]
    rejected = tuple(bool(o and o[0]) for o in own)
    adjusted = tuple(None if o is None else o[1] for o in own)
    if not claims and not leaks:  # no row states a p-value (hand-made input): each row's own verdict, uncorrected
        return FamilyVerdict(worst_verdict(rows), rejected, adjusted, alpha, 0)
    if any(r for r, _ in claims.values()):
        verdict = Verdict.VIOLATED
    elif any(r for r, _ in leaks.values()):
        verdict = Verdict.UNPROTECTED
    elif any(r.verdict == Verdict.INCONCLUSIVE for r in rows if _held(r)):
        verdict = Verdict.INCONCLUSIVE
    else:
        verdict = Verdict.CONSISTENT
    return FamilyVerdict(verdict, rejected, adjusted, alpha, len(held) + len(leaks_at))


def with_family(rows: Sequence[AuditRow], alpha: float) -> tuple[list[AuditRow], Verdict]:
    """The rows with ``holm_rejected`` set, and the family's verdict."""
    family = family_verdict(rows, alpha)
    return (
        [r.updated(holm_rejected=x) for r, x in zip(rows, family.rejected, strict=True)],
        family.verdict,
    )


def worst_verdict(rows: Sequence[CertifiedRow]) -> Verdict:
    """The most severe row verdict (rows each valid alone, before any correction)."""
    return worst(r.verdict for r in rows if r.verdict is not None)


# --- the engine's rows -----------------------------------------------------------------------------------


def claim_p_values(
    b: EpsilonBound, eps: float, delta: float, claimed_mu: float | None, claimed_profile: Profile | None
) -> tuple[float, float]:
    """(p-value of "the claim holds", p-value of "no leak") from a certified test's counts; a row with a curve
    test combines its two tests by weighted Bonferroni (each at its share of α)."""
    n = b.samples_per_side
    p = certified_p_value(b.false_positives, b.false_negatives, n, eps, delta, b.fp_share, b.discordant_pairs)
    if claimed_mu is not None or claimed_profile is not None:
        assert b.curve_false_positives is not None and b.curve_false_negatives is not None, (
            "a certified test with a curve claim records its curve counts"
        )
        counts = (b.curve_false_positives, b.curve_false_negatives, n, n)
        if claimed_mu is not None:
            p_curve = curve_violation_pvalue(*counts, claimed_mu)
        elif claimed_profile is not None:
            p_curve = profile_violation_pvalue(*counts, claimed_profile)
        share_threshold, share_curve = split_alpha(1.0)
        p = min(1.0, p / share_threshold, p_curve / share_curve)
    p_leak = certified_p_value(b.false_positives, b.false_negatives, n, 0.0, delta, b.fp_share, b.discordant_pairs)
    return p, p_leak


def _threshold_delta_bound(b: EpsilonBound, alpha: float, eps: float) -> float | None:
    """δ_LB at the claimed ε from the threshold test's counts; None where the paired certificate ran (a pure ε
    claim, whose one test is its ε_LB: a second bound from the same counts would be a second test)."""
    if b.fp_share is None:
        return None
    if not math.isfinite(eps):
        return 0.0
    n = b.samples_per_side
    return bounds.delta_lower_bound(b.false_positives, n, b.false_negatives, n, alpha, eps, b.fp_share)


def bound_fields(
    b: EpsilonBound,
    claim: tuple[float, float],
    confidence: float,
    claimed_mu: float | None,
    claimed_profile: Profile | None,
) -> dict[str, Any]:
    """The row fields of one certified test: counts, bounds (ε_LB, δ_LB, μ_LB or a profile point), p-values
    and the confidences its two tests ran at."""
    eps, delta = claim
    n, alpha = b.samples_per_side, 1.0 - confidence
    gdp = claimed_mu is not None and b.mu_lower_bound is not None
    profile = claimed_profile is not None and b.profile_excess is not None
    threshold_alpha, curve_alpha = split_alpha(alpha) if (gdp or profile) else (alpha, None)
    fields = dict(
        epsilon_lower_bound=b.epsilon_lower_bound,
        samples_per_side=n,
        confidence=confidence,
        false_positives=b.false_positives,
        false_negatives=b.false_negatives,
        fp_share=b.fp_share,
        discordant_pairs=None if b.discordant_pairs is None else list(b.discordant_pairs),
        max_certifiable_epsilon=b.max_certifiable_epsilon,
        statistic=b.statistic,
        hypothesis=b.hypothesis,
        shapes_searched=None if b.shapes_searched is None else list(b.shapes_searched),
        threshold=b.threshold,
        event=b.event,
        delta_lower_bound=_threshold_delta_bound(b, threshold_alpha, eps),
        gdp_mu_estimate=gdp_mu_estimate(b.fpr_upper, b.fnr_upper) if delta > 0 else None,
    )
    fields["p_value"], fields["p_value_leak"] = claim_p_values(
        b, eps, delta, claimed_mu if gdp else None, claimed_profile if profile else None
    )
    if gdp or profile:
        fields.update(curve_false_positives=b.curve_false_positives, curve_false_negatives=b.curve_false_negatives)
    if claimed_mu is not None and b.mu_lower_bound is not None:  # gdp
        fields.update(
            claimed_mu=float(claimed_mu),
            mu_lower_bound=b.mu_lower_bound,
            curve_epsilon=curve_epsilon(b.mu_lower_bound, delta) if delta > 0 else None,
        )
    if claimed_profile is not None and b.profile_excess is not None:  # profile
        assert b.profile_claimed_epsilon is not None, "a profile's curve test records the ε_i it was checked at"
        fields.update(
            profile_delta=b.profile_delta,
            profile_claimed_epsilon=b.profile_claimed_epsilon,
            profile_epsilon_lower_bound=max(0.0, b.profile_claimed_epsilon + b.profile_excess),
        )
    return {
        **fields,
        "test_confidence": 1.0 - threshold_alpha,
        "curve_confidence": None if curve_alpha is None else 1.0 - curve_alpha,
    }


def make_row(
    channel: str,
    b: EpsilonBound,
    claim: tuple[float, float],
    covered: bool,
    confidence: float,
    accountant: float | None = None,
    broadcast: str = "honest",
    claimed_mu: float | None = None,
    held_to_claim: bool = False,
    claimed_profile: Profile | None = None,
    contradiction: str | None = None,
    partly_covered: bool = False,
    **context: Any,
) -> AuditRow:
    """One judged row of the engine: the certified test's fields, its measured power and its verdict."""
    eps, delta = claim
    row = AuditRow.make(
        channel=channel,
        claimed_epsilon=eps,
        claimed_delta=delta,
        covered=covered,
        held_to_claim=held_to_claim or None,
        partly_covered=(partly_covered and not covered) or None,
        accountant_epsilon=accountant,
        broadcast=broadcast,
        claim_contradiction=contradiction if covered else None,
        point_mass_search=False,
        witness=b.witness,
        **bound_fields(b, claim, confidence, claimed_mu, claimed_profile),
        **context,
    )
    row = row.updated(**measured_power_fields(row, claimed_profile if b.profile_excess is not None else None))
    return judge(row)


def make_rows(
    bounds_by_channel: Mapping[str, EpsilonBound],
    claims: Mapping[str, tuple[float, float]],
    covered: Mapping[str, bool],
    confidence: float,
    accountant: Mapping[str, float | None],
    broadcast_labels: Mapping[str, str],
    claimed_mus: Mapping[str, float | None] | None = None,
    claimed_profiles: Mapping[str, Profile | None] | None = None,
    held_to_claim: bool = False,
    contradictions: Mapping[str, str | None] | None = None,
    partly_covered: Sequence[str] = (),
    kinds: Mapping[str, ChannelKind] | None = None,
) -> tuple[list[AuditRow], Verdict]:
    """The judged rows of a system audit and the family's verdict (Holm over the rows); ``partly_covered``: the
    joint channels the claim covers in part; ``kinds``: each channel's kind, recorded on its row."""
    mus, profiles, words = claimed_mus or {}, claimed_profiles or {}, contradictions or {}
    kinds = kinds or {}
    rows = [
        make_row(
            ch,
            b,
            claims[ch],
            covered[ch],
            confidence,
            accountant.get(ch),
            broadcast_labels.get(ch, "honest"),
            mus.get(ch),
            held_to_claim,
            claimed_profile=profiles.get(ch),
            contradiction=words.get(ch),
            partly_covered=ch in partly_covered,
            **(kinds[ch].fields() if ch in kinds else {}),
        )
        for ch, b in bounds_by_channel.items()
    ]
    return with_family(rows, 1.0 - confidence)


# the row verdicts each ``--fail-on`` level fails on
FAILING = {
    "violated": {Verdict.VIOLATED, Verdict.UNPROTECTED},
    "inconclusive": {Verdict.VIOLATED, Verdict.UNPROTECTED, Verdict.INCONCLUSIVE},
}
