"""All audited bounds: every certified ε lower bound of the audits, with its budget and Holm result."""

from __future__ import annotations

import math
from pathlib import Path

import pgc.schemas as schemas

from .. import plots
from ..content import BoundRow, Findings, ReportContent, fmt_eps
from ..document import Document, num, vclass
from ..loaders import Source
from ..section import Section


def _run_name(result: schemas.RowsAudit) -> str:
    """The folder name of the run an audit read ("" for a mechanism's audit)."""
    audited = getattr(result, "audited_run", None)
    return Path(audited.run).name if isinstance(audited, schemas.AuditedRun) else ""


def _audit_subject(result: schemas.RowsAudit, row: schemas.AuditRow, label: str) -> tuple[str, str]:
    """(subject, group) of one audit row: what was audited, and who observes it, as the audit recorded it
    (a one-run audit's canaries played the trainer's live model or one the aggregator crafted for them)."""
    scope = row.scope or result.SCOPE
    run = _run_name(result)
    if isinstance(result, schemas.OneRunAudit):
        model = result.canary_setup.canary_model
        group = {"crafted": "adversarial aggregator", "live": "honest aggregator"}[model]
        return f"{run + ' ' if run else ''}{scope}", f"{group} (one run)"
    if row.model == "adversarial" or scope.startswith("adversarial"):
        group = "adversarial aggregator"
    elif scope == "mechanism" or scope == "self-test" or row.mechanism:
        group = "mechanism" if scope != "self-test" else "self-test"
    else:
        group = "honest aggregator"
    if scope.startswith("environment"):
        model = result.model if isinstance(result, schemas.RunAudit) else "trained"
        subject = f"{model} model · ψ {scope.split(' ', 1)[1]}"
        if run:
            subject = f"{run} {subject}"
    elif scope.startswith("adversarial"):
        subject = scope
    elif row.mechanism:
        subject = row.mechanism
    else:
        subject = f"{scope}: {label}" if scope not in ("mechanism",) else label
    return subject, group


def bounds_from_audit(src: Source) -> list[BoundRow]:
    result = src.result
    assert isinstance(result, schemas.RowsAudit)
    recorded = getattr(result, "protection", None)
    protection = tuple(recorded.protect) if isinstance(recorded, schemas.Protection) else ()
    rows = []
    for obj in result.channels:
        composed = schemas.channel_kind(obj).k
        k = composed if composed > 1 else None
        subject, group = _audit_subject(result, obj, src.label)
        row = BoundRow(
            source=src.label,
            subject=subject,
            row=obj,
            k=k,
            protect=tuple(obj.protect or protection),
            group=group,
            reference=src.reference,
            audit_confidence=result.confidence,
        )
        if obj.verdict_reason:
            row.notes.append(obj.verdict_reason)
        if obj.theta_file:
            row.notes.append(f"certified at {obj.theta_file}")
        if obj.true_epsilon is not None:
            row.notes.append(f"true ε {fmt_eps(obj.true_epsilon)}")
        if obj.correct_mechanism is not None:
            row.notes.append("correct mechanism" if obj.correct_mechanism else "planted bug")
        if obj.passed is False:
            row.notes.append("SELF-TEST MISJUDGED")
        if obj.note:
            row.notes.append(obj.note)
        if getattr(obj, "event", None):
            row.notes.append(f"the certified test's event: {obj.event}")
        if getattr(obj, "encoding", None):
            row.notes.append(f"releases read as: {obj.encoding}")
        if getattr(obj, "witness", None):
            row.notes.append(witness_note(obj.witness))
        rows.append(row)
    return rows


def witness_note(witness: dict) -> str:
    """A row's note that its fitted statistic is saved, and how to rebuild it."""
    return (
        f"the fitted statistic ({witness.get('kind')}) is saved in the row's witness: "
        "audit.scorer_from_witness rebuilds it"
    )


def render_bounds(doc: Document, f: Findings, anchor: str = "headline", level: int = 2) -> None:
    if not f.bounds:
        return
    with doc.section(
        f"All audited bounds ({len(f.bounds)} rows)",
        "Every certified ε lower bound behind the summary, "
        "one row per audited output and pair, with its budget, p-value and Holm result.",
        anchor,
        level=level,
    ):
        doc.para(
            "Each row is one audited output: a mechanism (black-box canaries) or one channel of the transcript "
            "(gradient, score, timing, all together) for a pair of environments. ε_LB is a lower bound that holds "
            "with the stated confidence; the certifiable cap is the largest bound a perfect test could give with "
            "the same number of samples, so an ε_LB near the cap means the budget, not the mechanism, limited it."
        )
        _family(doc, f)
        rows, classes = [], []
        for b in f.bounds:
            ratio = (b.lower_bound / b.claimed) if b.claimed and math.isfinite(b.claimed) and b.claimed > 0 else None
            budget = f"{b.samples:,}/side" if b.samples else "—"
            holm = "—" if b.holm_significant is None else ("kept" if b.holm_significant else "not kept")
            rows.append(
                [
                    b.subject + (" (adversarial)" if b.model == "adversarial" else ""),
                    b.channel,
                    num(b.claimed),
                    num(b.lower_bound),
                    num(ratio, 2),
                    f"{b.confidence:.0%}" if b.confidence else "—",
                    num(b.cap),
                    budget,
                    b.verdict + (" · budget-limited" if b.budget_limited else ""),
                    num(b.p_value, 3),
                    holm,
                    "; ".join(x for x in [b.test, *b.notes] if x),
                ]
            )
            classes.append({8: vclass(b.verdict)})
        doc.table(
            [
                "subject",
                "channel",
                "claimed ε",
                "observed ε_LB",
                "ε_LB/ε",
                "confidence",
                "certifiable cap",
                "budget",
                "verdict",
                "p-value",
                "after Holm",
                "test",
            ],
            rows,
            numeric={2, 3, 4, 6, 9},
            classes=classes,
        )
        prefix = "" if anchor == "headline" else anchor + "_"
        doc.figure(
            f"{prefix}bounds.png",
            plots.bounds_figure(f.bounds),
            "Observed ε lower bound per audited output (bars), the claim (black tick) and the certifiable cap "
            "(grey tick).",
        )

        def base(b):
            return (b.subject, b.kind.base)

        multi = {base(b) for b in f.bounds if b.k and b.k > 1}
        comp = [b for b in f.bounds if base(b) in multi]
        if comp and len({b.k or 1 for b in comp}) > 1:
            doc.heading("Composition: ε_LB vs k", level + 1, anchor=f"{prefix}composition")
            doc.para(
                "k submissions made in the same environment: the guarantee for the environment degrades with k "
                "(basic composition gives kε). The bound rising above the per-submission claim is expected; it is "
                "a finding when the system advertises ε per environment or per agent while agents submit "
                "repeatedly."
            )
            doc.figure(
                f"{prefix}composition.png",
                plots.composition_figure(comp),
                "Observed ε lower bound against k with kε (dashed).",
            )


def _family(doc: Document, f: Findings) -> None:
    fam = f.family or {}
    size, excluded = fam.get("size", 0), fam.get("excluded", 0)
    if not size:
        doc.para(
            f"Family-wise verdict: no row carries a p-value, so the overall verdict reads "
            f"each of the {len(f.bounds)} row(s) at its own confidence, without a correction for multiple rows."
        )
        return
    sig = fam.get("significant", [])
    shown = "; ".join(f"{x['subject']} · {x['channel']}" for x in sig[:6]) + ("; …" if len(sig) > 6 else "")
    doc.para(
        f"Family-wise verdict: {fam.get('verdict', '—')}. {size} row(s) in the family, tested together with "
        f"Holm's method at family level α = {fam.get('alpha', 0.05):.3g} (a row held to the claim: H0 \"the claim "
        f'holds on this row"; an uncovered channel: H0 "it does not leak"). Findings Holm keeps: {len(sig)}'
        + (f" — {shown}" if sig else "")
        + ". Only these enter the overall verdict; each row's own verdict below "
        "is the audit's, valid alone at its own confidence, with the Holm outcome beside it."
        + (
            f" {excluded} row(s) without a p-value are shown but excluded from the family-wise verdict."
            if excluded
            else ""
        )
    )


def _extract(src: Source, findings: Findings, c: ReportContent) -> None:
    findings.bounds.extend(bounds_from_audit(src))


SECTION = Section(
    "bounds", tuple(kind.KIND for kind in schemas.AUDIT_KINDS), lambda doc, c: render_bounds(doc, c.own), _extract
)
