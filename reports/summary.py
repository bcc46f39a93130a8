"""The overall verdict of a group of findings and its summary table (the report's first screen)."""

from __future__ import annotations

from .content import SUMMARY_MAX_ROWS, Findings, summary_rows
from .document import Document, num, vclass


def verdict_rows(f: Findings):
    """The bound rows the overall verdict reads: with p-values present, only the rows that stay
    significant after Holm over the whole family (family-wise error ≤ α); rows without a p-value are
    outside the family. Without any p-value every row's own verdict is read, uncorrected."""
    if f.family.get("size"):
        return [b for b in f.bounds if b.holm_significant]
    return list(f.bounds)


def overall_verdict(f: Findings) -> str:
    bounds = verdict_rows(f)
    if any(b.verdict.startswith("violated") and not b.outside_claim for b in bounds) \
            or any(a.above_ceiling and not a.uses_side_channel for a in f.attacks) \
            or any(a["above_ceiling"] and a["covered"] for a in f.bandit_attacks):
        return "VIOLATED — at least one output leaks more than its ε claim allows."
    if any(b.verdict.startswith("violated") for b in bounds) \
            or any(a.above_ceiling and a.uses_side_channel for a in f.attacks) \
            or any(a["above_ceiling"] for a in f.bandit_attacks):
        return ("CLAIM EXCEEDED THROUGH SIDE CHANNELS — the noisy gradient is consistent with its ε, but the score/timing "
                "released beside it leak more than ε about the environment.")
    if any(b.verdict.startswith("unprotected") for b in bounds):
        return "CLAIM HOLDS FOR THE GRADIENT, BUT SIDE CHANNELS LEAK — the released score/timing is not covered by ε."
    if any(b.verdict == "inconclusive" for b in f.bounds):
        return ("INCONCLUSIVE — nothing exceeds its claim, but for some claims no leak of any size would have been "
                "flagged with these samples; the rows say how many per side would decide.")
    if f.bounds:
        return "CONSISTENT — no audited output exceeds its claim at the stated confidence (a lower bound cannot prove the claim)."
    return "NO AUDIT GIVEN — this report shows utility and tuning only; it makes no privacy finding."


def verdict_class(verdict: str) -> str:
    if verdict.startswith("VIOLATED"):
        return "bad"
    if verdict.startswith("CLAIM"):
        return "side"
    if verdict.startswith("NO AUDIT") or verdict.startswith("INCONCLUSIVE"):
        return "none"
    return ""


def summary_table(doc: Document, f: Findings, limit: int = SUMMARY_MAX_ROWS) -> list[dict]:
    rows = summary_rows(f)
    shown = rows[:limit]
    if not shown:
        doc.para("No audit was given, so there is no bound to summarise.")
        return rows
    doc.table(["observer", "channel", "claimed ε", "audited ε ≥", "cap", "verdict"],
              [[r["group"], r["family"], num(r["claimed"]) + ("*" if len(r["claims"]) > 1 else ""),
                num(r["lower_bound"]), num(r["cap"]) + ("†" if r["budget_limited"] else ""), r["verdict"]]
               for r in shown], numeric={2, 3, 4}, classes=[{5: vclass(r["verdict"])} for r in shown])
    notes = []
    if any(len(r["claims"]) > 1 for r in shown):
        notes.append("* per-submission claim; the group also holds k-submission rows (claim kε)")
    if any(r["budget_limited"] for r in shown):
        notes.append("† the bound reaches the cap: the sample budget, not the system, limited it")
    if len(rows) > limit:
        notes.append(f"{len(rows) - limit} further group(s) are in the full table below")
    if notes:
        doc.para("; ".join(notes) + ".", cls="sub")
    return rows
