"""What an attacker learns: accuracy against chance and the ceiling the ε claim allows."""

from __future__ import annotations

import math

import pgc.schemas as schemas

from .. import plots
from ..content import AttackRow, Findings, ReportContent, fmt_eps
from ..document import Document, num
from ..loaders import Source
from ..section import Section


def attacks_from_result(src: Source) -> list[AttackRow]:
    result = src.result
    assert isinstance(result, schemas.AttackResult)
    n_cands = result.candidate_count
    rows = []
    for r in result.rows:
        rows.append(AttackRow(source=src.label, row=r, candidates=n_cands, reference=src.reference))
    return rows


def best_attacks(rows: list[AttackRow]) -> list[AttackRow]:
    """The most accurate attack per (source, setting, channels, k, ε, |Ψ|): what an adversary achieves
    when it picks its best tool. Rows flagged above the ceiling are always kept."""
    best: dict[tuple, AttackRow] = {}
    extra = []
    for r in rows:
        key = (r.source, r.setting, r.channels, r.k or 1, r.epsilon, r.candidates)
        if r.attacker_defect:
            continue  # not a privacy result (listed apart by the report)
        if r.above_ceiling:
            extra.append(r)
        if key not in best or r.accuracy > best[key].accuracy:
            best[key] = r
    out = list(best.values()) + [r for r in extra if r not in best.values()]
    return sorted(
        out, key=lambda r: (r.source, r.setting, r.channels, r.k or 1, math.inf if r.epsilon is None else r.epsilon)
    )


def render_attacks(doc: Document, f: Findings, anchor: str = "attacks", level: int = 2) -> None:
    if not f.attacks:
        return
    with doc.section(
        "What an attacker learns: accuracy vs ε",
        "How often an attacker guesses an agent's environment "
        "from its submissions, against chance and the ceiling the ε claim allows.",
        anchor,
        level=level,
    ):
        _attacks_body(doc, f, anchor, level)


def _attacks_body(doc: Document, f: Findings, anchor: str, level: int) -> None:
    doc.para(
        "The honest-but-curious aggregator guesses each submitter's environment ψ. Chance is the best guess "
        "without data; the ε-LDP ceiling e^{kε}/(e^{kε}+|Ψ|−1) is the most any attacker can reach if the ε "
        "claim holds for k linked submissions. Accuracy above the ceiling (beyond its interval) means the claim "
        "is broken or an unprotected channel was used."
    )
    shown = best_attacks(f.attacks)
    defects = [a for a in f.attacks if a.attacker_defect]
    eps_values = sorted({a.epsilon for a in shown if a.epsilon is not None}, key=lambda e: (math.isinf(e), e))
    pivot: dict[tuple, dict] = {}
    for a in shown:
        target = a.setting.rsplit("/", 1)[-1][:40] if a.setting else a.source
        key = (target, a.channels, a.k or 1, a.candidates or "—", a.budget or "—")
        cell = pivot.setdefault(key, {})
        if a.epsilon not in cell or a.accuracy > cell[a.epsilon].accuracy:
            cell[a.epsilon] = a
    doc.para(
        f"Best attacker's accuracy (of {len(f.attacks)} attack rows; all rows with intervals are in report.json) "
        "per target, channel set and k; in brackets the ε-LDP ceiling; ‼ marks accuracy above the ceiling "
        "beyond its interval."
    )
    rows, classes = [], []
    for key, cell in list(pivot.items())[:40]:
        row = list(key)
        cls = {}
        for j, e in enumerate(eps_values):
            a = cell.get(e)
            if a is None:
                row.append("—")
                continue
            mark = "‼ " if a.above_ceiling else ""
            row.append(f"{mark}{a.accuracy:.3f} ({num(a.ceiling, 3)})")
            if a.above_ceiling:
                cls[len(key) + j] = "v-violated"
        chance = next((a.chance for a in cell.values() if a.chance is not None), None)
        row.append(num(chance, 3))
        rows.append(row)
        classes.append(cls)
    doc.table(
        ["target", "channels", "k", "|Ψ|", "budget/ψ"] + [f"ε={fmt_eps(e)}" for e in eps_values] + ["chance"],
        rows,
        numeric=set(range(2, 6 + len(eps_values))),
        classes=classes,
    )
    if any(a.epsilon is not None for a in shown):
        doc.figure(
            "attack.png" if anchor == "attacks" else f"{anchor}_attack.png",
            plots.attack_figure(shown),
            "Attack accuracy vs ε with 95% intervals, chance (dotted) and the ε-LDP ceiling (dashed).",
        )
    if defects:
        doc.heading("Attacker defects (not privacy results)", level + 1, anchor=f"{anchor}-defects")
        doc.para(
            "These rows' intervals lie entirely below chance. No sound attacker under a uniform prior does worse "
            "than chance, so each row is flagged as an ATTACKER DEFECT (or sampling luck among many rows); it "
            "says nothing about privacy and is left out of the table and plot above."
        )
        doc.table(
            ["source", "target", "attacker", "channels", "k", "ε", "accuracy", "interval", "chance", "ceiling", "flag"],
            [
                [
                    a.source,
                    a.setting or "—",
                    a.attacker,
                    a.channels,
                    a.k or 1,
                    num(a.epsilon),
                    f"{a.accuracy:.3f}",
                    f"[{num(a.ci_low)}, {num(a.ci_high)}]",
                    num(a.chance),
                    num(a.ceiling),
                    "attacker defect",
                ]
                for a in defects
            ],
            numeric={4, 5, 6, 8, 9},
            classes=[{10: "v-violated"} for _ in defects],
        )


def _extract(src: Source, findings: Findings, c: ReportContent) -> None:
    findings.attacks.extend(attacks_from_result(src))


SECTION = Section("attacks", ("attack",), lambda doc, c: render_attacks(doc, c.own), _extract)
