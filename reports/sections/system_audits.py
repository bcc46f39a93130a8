"""System audits: claimed, accountant and audited ε per channel of each audited System."""

from __future__ import annotations

import pgc.schemas as schemas
from pgc.schemas.report_parts import (
    MuCorner,
    ProfileCorner,
    ReportCurveCorner,
    ReportSystemAudit,
    SystemAuditSetting,
)

from ..content import BoundRow, Findings, ReportContent, fmt_eps, has_own_section
from ..document import Document, num, vclass
from ..loaders import Source
from ..section import Section
from .bounds import witness_note


def _short(text: str, width: int = 60) -> str:
    """A secret's description on one line, cut to ``width`` characters (a secret may print a whole array)."""
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def bounds_from_system_audit(src: Source) -> tuple[list[BoundRow], ReportSystemAudit]:
    """The rows of a system audit (``pgc audit --system``) as bounds, and its entry for the report."""
    r = src.result
    assert isinstance(r, schemas.SystemAuditResult)
    subject = f"{r.system} · {r.pair}" if r.pair else f"{r.system} · {_short(r.secret)} vs {_short(r.secret_prime)}"
    rows = []
    for x in r.rows:
        rows.append(
            BoundRow(
                source=src.label,
                subject=subject,
                row=x,
                group=f"{r.system} ({r.broadcast})",
                reference=src.reference,
                system=r.system,
                audit_confidence=r.confidence,
                audit_model=str(r.broadcast),
                claim_covers=x.channel in r.claim.covers,
                notes=[f"δ_LB {fmt_eps(x.delta_lower_bound)}"]
                + _curve_notes(x)
                + [x.verdict_reason or ""]
                + ([f"the certified test's event: {x.event}"] if x.event else [])
                + ([f"releases read as: {x.encoding}"] if x.encoding else [])
                + ([witness_note(x.witness)] if x.witness else []),
            )
        )
    setting = SystemAuditSetting(
        claim_epsilon=r.claim.epsilon,
        claim_delta=r.claim.delta,
        covers=list(r.claim.covers),
        confidence=r.confidence,
        samples_per_side=r.samples_per_side,
        seed=r.seed,
    )
    header = ReportSystemAudit(
        source=src.label,
        system=r.system,
        report_section=r.report_section,
        pair=r.pair,
        secret=_short(r.secret),
        secret_prime=_short(r.secret_prime),
        broadcast=r.broadcast,
        setting=setting,
        verdict=str(r.verdict),
        accountant=r.accountant,
        wall_time_s=r.wall_time_s,
        relation=r.relation,
        searched=r.searched_pair is not None,
        library=r.library,
        curves=curve_corners(src),
    )
    return rows, header


def _curve_notes(x) -> list[str]:
    """The curve bound (or the μ estimate); the row's power is in its verdict's reason."""
    if x.mu_lower_bound is not None:
        return [
            f"curve: μ ≥ {fmt_eps(x.mu_lower_bound)} vs claimed {fmt_eps(x.claimed_mu)}"
            + ("" if x.curve_epsilon is None else f" (ε ≥ {fmt_eps(x.curve_epsilon)} if the curve is Gaussian)")
        ]
    if x.profile_delta is not None:
        return [
            f"profile: at δ = {x.profile_delta:.3g} the claim promises ε ≤ {fmt_eps(x.profile_claimed_epsilon)}, "
            f"certified ε ≥ {fmt_eps(x.profile_epsilon_lower_bound)}"
        ]
    if x.gdp_mu_estimate is not None:
        return [f"GDP μ ≈ {fmt_eps(x.gdp_mu_estimate)} (estimate)"]
    return []


def curve_corners(src: Source) -> list[ReportCurveCorner]:
    """The certified corner (ᾱ, β̄) of every curve test in a system audit, for the trade-off figure."""
    from audit.certification.bounds import cp_upper
    from audit.certification.curves import split_alpha

    r = src.result
    out = []
    profile = r.claim.privacy_profile
    for x in r.rows:
        if x.curve_false_positives is None or (
            x.mu_lower_bound is None and (x.profile_delta is None or profile is None)
        ):
            continue
        half = split_alpha(1.0 - r.confidence)[1] / 2.0
        n = x.samples_per_side
        mu = profile_curve = None
        if x.mu_lower_bound is not None:
            mu = MuCorner(claimed_mu=x.claimed_mu, mu_lower_bound=x.mu_lower_bound)
        else:
            profile_curve = ProfileCorner(
                profile=[list(p) for p in profile],
                profile_delta=x.profile_delta,
                profile_epsilon_lower_bound=x.profile_epsilon_lower_bound,
            )
        corner = ReportCurveCorner(
            label=f"{r.system} [{x.channel}]",
            system=r.system,
            fpr_upper=float(cp_upper(x.curve_false_positives, n, half)),
            fnr_upper=float(cp_upper(x.curve_false_negatives, n, half)),
            verdict=str(x.verdict),
            mu_curve=mu,
            profile_curve=profile_curve,
        )
        out.append(corner)
    return out


def source_role(source: str, reference: bool) -> str:
    return source + (" (reference)" if reference else "")


def render_system_audits(doc: Document, f: Findings, anchor: str = "system-audits", level: int = 2) -> None:
    # bandits, published claims: their own sections
    headers = [(h, False) for h in f.system_audits if not has_own_section(h)]
    if not headers:
        return
    with doc.section(
        "System audits: claimed, accountant and audited ε",
        "For each audited system, the ε it claims, "
        "the ε an accountant computes and the ε the audit certifies, per channel.",
        anchor,
        level=level,
    ):
        system_audit_tables(doc, f, headers)
        corners = [c for h, _ in headers for c in h.curves]
        if corners:
            from .. import plots

            doc.figure(
                "tradeoff_curves.png",
                plots.tradeoff_figure(corners),
                "Curve audits: the claimed μ-GDP trade-off curve and the certified corner of each curve test. "
                "The test's true error rates lie in the shaded box with the stated confidence; a corner below "
                "its curve is a certified violation.",
            )


def system_audit_tables(doc: Document, f: Findings, headers: list[tuple[ReportSystemAudit, bool]]) -> None:
    """Per system audit (each with whether it is a committed reference): its setting and verdict, then its rows."""
    for h, reference in headers:
        acc, st = h.accountant, h.setting
        who = f"pair {h.pair}" if h.pair else f"secret {h.secret} vs {h.secret_prime}"
        doc.para(
            f"{h.system} ({source_role(h.source, reference)}): {who}, broadcast {h.broadcast}; claim "
            f"ε = {fmt_eps(st.claim_epsilon)}, δ = {st.claim_delta:.3g} covering "
            f"{', '.join(st.covers) or 'no channel'}; {st.samples_per_side:,} samples per side at "
            f"{st.confidence:.0%} confidence, seed {st.seed}; verdict: {h.verdict}."
            + (f" Accountant: ε = {fmt_eps(acc.epsilon)}, δ = {acc.delta:.3g} ({acc.description})." if acc else "")
        )
        rows = [b for b in f.bounds if b.source == h.source]
        doc.table(
            ["channel", "claimed ε", "accountant ε", "audited ε ≥", "cap", "p-value", "verdict", "test"],
            [
                [
                    b.channel,
                    num(b.claimed),
                    num(b.accountant),
                    num(b.lower_bound),
                    num(b.cap),
                    num(b.p_value),
                    b.verdict,
                    "; ".join(x for x in [b.test, *b.notes] if x),
                ]
                for b in rows
            ],
            numeric={1, 2, 3, 4, 5},
            classes=[{6: vclass(b.verdict)} for b in rows],
        )


def _extract(src: Source, findings: Findings, c: ReportContent) -> None:
    rows, header = bounds_from_system_audit(src)
    findings.bounds.extend(rows)
    findings.system_audits.append(header)


SECTION = Section("system-audits", ("system-audit",), lambda doc, c: render_system_audits(doc, c.own), _extract)
