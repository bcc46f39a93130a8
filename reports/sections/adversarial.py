"""Adversarial aggregator: what an aggregator that crafts θ certifies per channel."""

from __future__ import annotations

import math

import pgc.schemas as schemas
from pgc.schemas.report_parts import ReportAdversarial, ReportAdversarialAudit, ReportCurvePoint

from .. import plots
from ..content import Findings, ReportContent
from ..document import Document, num, vclass
from ..loaders import Source
from ..section import Section


def adversarial_from_audit(src: Source) -> ReportAdversarial | None:
    """The adversarial audits (one entry per audit and channel) and the curve points of an audit
    result; None when it has neither."""
    result = src.result
    if not isinstance(result, (schemas.AdversarialModelAudit, schemas.AdversarialCurve)):
        return None
    audits = []
    for a in result.adversarial_audits:
        search = a.search or schemas.AdversarialSearch()
        for ch in a.channels or [None]:
            objective = (ch.crafted_for if ch else None) or search.objective
            saved = a if isinstance(a, schemas.AdversarialAudit) else None  # a curve's pairs save no crafted θ
            theta_files, theta_file = (saved.theta_files, saved.theta_file) if saved else (None, None)
            theta = (theta_files or {}).get(objective) if objective else None
            audits.append(
                ReportAdversarialAudit(
                    psi=a.psi,
                    psi_prime=a.psi_prime,
                    mechanism=a.mechanism,
                    claimed_epsilon=ch.claimed_epsilon if ch and ch.claimed_epsilon is not None else a.claimed_epsilon,
                    channel=ch.channel if ch else "—",
                    epsilon_lower_bound=ch.epsilon_lower_bound if ch else None,
                    ratio=ch.ratio if ch else None,
                    verdict=str((ch.verdict if ch else None) or "—"),
                    noise_free_epsilon_lower_bound=a.noise_free_epsilon_lower_bound,
                    objective=objective or "—",
                    evaluations=search.evaluations,
                    wall_time_s=search.wall_time_s,
                    theta_file=theta or (theta_file if not theta_files else "") or "",
                )
            )
    curve = []
    for pt in result.curve if isinstance(result, schemas.AdversarialCurve) else []:
        ratio = pt.ratio
        if ratio is None and pt.epsilon and math.isfinite(pt.epsilon):
            ratio = pt.epsilon_lower_bound / pt.epsilon
        if ratio is None or not pt.delta_psi > 0 or not math.isfinite(ratio):
            continue
        curve.append(
            ReportCurvePoint(
                delta_psi=pt.delta_psi,
                ratio=ratio,
                epsilon=pt.epsilon,
                epsilon_lower_bound=pt.epsilon_lower_bound,
                model=pt.model,
                channel=pt.channel,
            )
        )
    if not audits and not curve:
        return None
    return ReportAdversarial(source=src.label, audits=audits, curve=curve)


def render_adversarial(doc: Document, f: Findings, anchor: str = "adversarial", level: int = 2) -> None:
    if not f.adversarial:
        return
    with doc.section(
        "Adversarial aggregator",
        "What an aggregator that crafts the model θ it broadcasts can certify "
        "about an agent's environment, per channel.",
        anchor,
        level=level,
    ):
        _adversarial_body(doc, f, anchor)


def _adversarial_body(doc: Document, f: Findings, anchor: str) -> None:
    doc.para(
        "An aggregator that does not follow the protocol may choose the model θ it sends to the agents so that "
        "their submissions separate two environments ψ and ψ' as well as possible. Each row is one such audit: "
        "the θ found by the search, the bound certified at it per channel, and the bound without noise "
        "(what the clean channel would reveal)."
    )
    rows, classes = [], []
    for adv in f.adversarial:
        for a in adv.audits:
            ev = a.evaluations
            rows.append(
                [
                    adv.source,
                    f"{num(a.psi)} vs {num(a.psi_prime)}",
                    a.mechanism,
                    a.channel,
                    num(a.claimed_epsilon),
                    num(a.epsilon_lower_bound),
                    num(a.ratio, 2),
                    a.verdict,
                    num(a.noise_free_epsilon_lower_bound),
                    a.objective,
                    "—" if ev is None else f"{ev:,}",
                    num(a.wall_time_s),
                    a.theta_file or "—",
                ]
            )
            classes.append({7: vclass(a.verdict)})
    if rows:
        doc.table(
            [
                "source",
                "ψ vs ψ'",
                "mechanism",
                "channel",
                "claimed ε",
                "ε_LB",
                "ε_LB/ε",
                "verdict",
                "noise-free ε_LB",
                "θ crafted for",
                "evaluations",
                "search s",
                "θ file",
            ],
            rows,
            numeric={4, 5, 6, 8, 10, 11},
            classes=classes,
        )
    curve = [p for adv in f.adversarial for p in adv.curve]
    if curve:
        doc.figure(
            "adversarial_curve.png" if anchor == "adversarial" else f"{anchor}_curve.png",
            plots.adversarial_curve_figure(curve),
            "ε_LB/ε against Δψ = |ψ' − ψ| (log scale), one line per (model, channel, ε): honest aggregator "
            "dashed, adversarial solid.",
        )


def _extract(src: Source, findings: Findings, c: ReportContent) -> None:
    adv = adversarial_from_audit(src)
    if adv is not None:
        findings.adversarial.append(adv)


SECTION = Section(
    "adversarial",
    (schemas.AdversarialModelAudit.KIND, schemas.AdversarialCurve.KIND),
    lambda doc, c: render_adversarial(doc, c.own),
    _extract,
)
