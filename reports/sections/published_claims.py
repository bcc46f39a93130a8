"""Published claims: the thesis' systems (dprl) audited against their own privacy claims — claimed vs
certified per system and channel, the verdict and a one-sentence reading of the numbers."""

from __future__ import annotations

import math

from pgc.schemas.report_parts import ReportSystemAudit

from ..content import PUBLISHED_CLAIMS_SECTION, ReportContent, fmt_eps, section_audits
from ..document import Document, num, vclass
from ..section import Section

CAP_SHARE = 0.98  # a bound within 2% of the cap reads as "at the cap"


def reading(row, header: ReportSystemAudit) -> str:
    """One sentence that says what the numbers of a row mean."""
    at_cap = row.cap is not None and math.isfinite(row.cap) and row.lower_bound >= CAP_SHARE * row.cap
    if row.verdict in ("violated", "unprotected channel") and at_cap:
        return (
            "the two secrets' releases barely overlap: ε_LB sits at the cap of the sample size, so the leak is "
            "unbounded or larger than this n can show"
        )
    if row.verdict == "violated":
        return f"a certified ε_LB of {fmt_eps(row.lower_bound)} exceeds the claimed {fmt_eps(row.claimed)}"
    partly = row.partly_covered
    if row.verdict == "unprotected channel":
        return (
            "the claim covers part of this joint channel, and it leaks more than that part may"
            if partly
            else "the claim does not cover this channel, and it leaks"
        )
    if row.verdict == "inconclusive" and partly and row.lower_bound > 0:
        return "its leak does not exceed the claim, so it may be the covered part's own"
    if row.verdict == "inconclusive":
        return "no leak found, but this sample size could not have shown a violation of the claim"
    caught = next((n for n in row.notes if n.startswith("would have caught")), None)
    return "no test found a leak beyond the claim" + (f"; it {caught}" if caught else "")


def render_published_claims(doc: Document, c: ReportContent) -> None:
    headers = section_audits(c, PUBLISHED_CLAIMS_SECTION)
    if not headers:
        return
    with doc.section(
        "Published claims",
        "Systems from the literature audited against the privacy claim their "
        "authors prove: claimed vs certified ε per channel, under the authors' neighbour relation and "
        "under the one a privacy researcher would hold them to.",
        "published-claims",
    ):
        rows, classes = [], []
        for h, reference in headers:
            findings = c.reference if reference else c.own
            for b in (b for b in findings.bounds if b.source == h.source and b.channel != "all"):
                pair = ("worst pair found by the search" if h.searched else h.pair) or "given secrets"
                rows.append(
                    [
                        h.system,
                        pair,
                        b.channel,
                        num(b.claimed),
                        num(b.lower_bound),
                        num(b.cap),
                        f"{h.setting.samples_per_side:,}",
                        b.verdict,
                        reading(b, h),
                    ]
                )
                classes.append({7: vclass(b.verdict)})
        doc.table(
            ["system", "neighbours", "channel", "claimed ε", "certified ε ≥", "cap", "n per side", "verdict", "why"],
            rows,
            numeric={3, 4, 5},
            classes=classes,
        )
        relations = sorted({h.relation for h, _ in headers if h.relation})
        if relations:
            doc.para("Neighbour relations: " + "; ".join(relations) + ".")


def _extract_attack(src, findings, c: ReportContent) -> None:
    if src.kind in ("thesis-membership", "thesis-map-recovery"):
        c.thesis_attacks.append({"source": src.label, "kind": src.kind, "result": src.result})


def _pct(v) -> str:
    return "—" if v is None else f"{v:.1f}"


def _membership_table(doc: Document, r) -> None:
    m = r.models
    doc.para(
        f"Membership inference against the one-parameter defence ({r.command or 'pgc thesis membership'}): "
        f"target MLP train accuracy {m.train_accuracy:.3f}, test "
        f"{m.test_accuracy:.3f}; {m.members} members and "
        f"{m.non_members} non-members (chance 0.5). Table 6.2 (MNIST, ML-Leaks): 70.4 % "
        "undefended, 49.8 % at ε = 0.1, 52.0 % at ε = 2.0."
    )
    doc.table(
        ["defence", "ε", "attacker", "accuracy", "95% interval"],
        [
            [
                x.defence,
                "—" if x.epsilon is None else num(x.epsilon),
                x.attacker,
                num(x.accuracy),
                f"[{num(x.ci[0])}, {num(x.ci[1])}]",
            ]
            for x in r.rows
        ],
        numeric={1, 3},
    )


def _recovery_table(doc: Document, r) -> None:
    h, w = r.shape
    learner = "a small DQN" if (r.training or {}).get("learner") == "dqn" else "tabular Q-learning"
    learner += " (state: cell and observation)" if (r.training or {}).get("sees_cell") else ""
    doc.para(
        f"Map recovery (Pan et al.'s genetic search) against DP-DRL agents trained by {learner} on {r.maps} "
        f"random {h}×{w} maps "
        f"({r.command or 'pgc thesis map-recovery'}); GRR and NRR in %, with 95% intervals over maps, beside "
        "Table 5.1; the agents' final reward and steps beside Table 5.3 (12×11)."
    )
    rows = []
    for x in r.rows:
        t = x.thesis_grr_nrr or [None, None]
        rows.append(
            [
                x.defence,
                _pct(100 * x.grr.mean),
                f"[{_pct(100 * x.grr.ci[0])}, {_pct(100 * x.grr.ci[1])}]",
                _pct(t[0]),
                _pct(100 * x.nrr.mean),
                _pct(t[1]),
                "—" if x.reward is None else num(x.reward.mean),
                "—" if x.steps is None else num(x.steps.mean),
            ]
        )
    doc.table(
        ["defence", "GRR", "95% interval", "Table 5.1 GRR", "NRR", "Table 5.1 NRR", "reward", "steps"],
        rows,
        numeric={1, 3, 4, 5, 6, 7},
    )


def render_attacks(doc: Document, c: ReportContent) -> None:
    for a in c.thesis_attacks:
        (_membership_table if a["kind"] == "thesis-membership" else _recovery_table)(doc, a["result"])


def render_section(doc: Document, c: ReportContent) -> None:
    render_published_claims(doc, c)  # nothing when no audit names this section
    if c.thesis_attacks:
        with doc.section(
            "Attacks on published systems",
            "The attacks the authors evaluated their defences with, "
            "and attackers that adapt to the defence, beside the authors' numbers.",
            "published-attacks",
        ):
            render_attacks(doc, c)


SECTION = Section(
    "published-claims", ("system-audit", "thesis-membership", "thesis-map-recovery"), render_section, _extract_attack
)
