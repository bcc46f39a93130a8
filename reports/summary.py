"""The overall verdict of a group of findings and its summary table (the report's first screen)."""

from __future__ import annotations

from .content import SUMMARY_MAX_ROWS, Findings, channel_label, summary_rows
from .document import Document, num, vclass


def verdict_rows(f: Findings):
    """The bound rows the overall verdict reads: those whose finding Holm's procedure keeps over the whole
    family (family-wise error ≤ α, :func:`reports.content.holm_family`)."""
    return [b for b in f.bounds if b.holm_significant]


def overall_verdict(f: Findings) -> str:
    """The headline: the family verdict of the bound rows (the one Holm rule), worded by where the kept findings
    lie, with attacks above their ε-LDP ceiling beside it."""
    family = f.family.get("verdict") if f.bounds else None
    kept = (
        verdict_rows(f)
        if f.family.get("size")
        else [b for b in f.bounds if b.verdict in ("violated", "unprotected channel")]
    )
    if (
        any(b.verdict == "violated" and not b.outside_claim for b in kept)
        or any(a.above_ceiling and not a.uses_side_channel for a in f.attacks)
        or any(a.above_ceiling and a.covered for a in f.bandit_attacks)
    ):
        return "VIOLATED — at least one output leaks more than its ε claim allows."
    exceeded = _channels(b for b in kept if b.verdict == "violated")
    attacked = list(
        dict.fromkeys(
            [a.channels for a in f.attacks if a.above_ceiling and a.uses_side_channel]
            + [a.channel for a in f.bandit_attacks if a.above_ceiling]
        )
    )
    leaking = [c for c in _channels(b for b in kept if b.verdict == "unprotected channel") if c not in exceeded]
    if exceeded or attacked:
        found = ([f"violated: {', '.join(exceeded)}"] if exceeded else []) + (
            [f"attacks above the ε-LDP ceiling through {', '.join(attacked)}"] if attacked else []
        )
        return (
            "CLAIM EXCEEDED THROUGH SIDE CHANNELS — the claim's mechanism is not refuted on what it covers, but "
            f"what is released beside it leaks more than the claimed ε ({'; '.join(found)})"
            + (
                f"; other channels outside the claim leak too (unprotected channel: {', '.join(leaking)})."
                if leaking
                else "."
            )
        )
    if leaking:
        return (
            "CLAIM HOLDS FOR WHAT IT COVERS, BUT SIDE CHANNELS LEAK — a released channel the claim does not "
            f"cover reveals the secret (unprotected channel: {', '.join(leaking)})."
        )
    if family == "inconclusive":
        return (
            "INCONCLUSIVE — nothing exceeds its claim, but for some claims the audit cannot say which leak it "
            "would have caught (its test did not tell the secrets apart, or these samples could not); the rows "
            "say why."
        )
    if f.bounds:
        return (
            "CONSISTENT — no audited output exceeds its claim at the stated confidence, and each covered row "
            "states the leak it would have caught (a lower bound cannot prove the claim)."
        )
    return "NO AUDIT GIVEN — this report shows utility and tuning only; it makes no privacy finding."


def _channels(rows) -> list[str]:
    """The channels of ``rows`` as the summary table names them (family and composition), each once."""
    return list(dict.fromkeys(channel_label(b.kind.family_name, b) for b in rows))


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
    doc.table(
        ["observer", "channel", "claimed ε", "audited ε ≥", "cap", "verdict", "after Holm"],
        [
            [
                r["group"],
                r["channel_label"],
                num(r["claimed"]) + ("*" if len(r["claims"]) > 1 else ""),
                num(r["lower_bound"]),
                num(r["cap"]) + ("†" if r["budget_limited"] else ""),
                r["verdict"],
                r["holm"],
            ]
            for r in shown
        ],
        numeric={2, 3, 4},
        classes=[{5: vclass(r["verdict"])} for r in shown],
    )
    notes = []
    if any(len(r["claims"]) > 1 for r in shown):
        notes.append("* per-submission claim; the group also holds k-submission rows (claim kε)")
    if any(r["holm"] != "—" for r in shown):
        notes.append(
            "verdict: the worst row of the group, each row valid alone; after Holm: whether Holm's "
            "correction over all rows keeps a finding of the group (only kept findings enter the headline)"
        )
    if any(r["budget_limited"] for r in shown):
        notes.append("† the bound reaches the cap: the sample budget, not the system, limited it")
    if len(rows) > limit:
        notes.append(f"{len(rows) - limit} further group(s) are in the full table below")
    if notes:
        doc.para("; ".join(notes) + ".", cls="sub")
    return rows
