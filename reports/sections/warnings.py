"""Warnings: what needs attention in the findings, most severe first."""

from __future__ import annotations

import math

from ..content import BUDGET_LIMIT_FRACTION, Findings, ReportContent, fmt_eps, per_submission_claim
from ..document import Document
from ..section import Section


def build_warnings(f: Findings, c: ReportContent, *, own: bool = True) -> list[dict]:
    """Warnings about one group of findings; the notes that concern the training run itself (side
    channels and composition in the protocol, utility) only for the run's own group."""
    has_train = own and any(s.kind == "train" for s in c.sources)
    return (
        _violation_warnings(f)
        + _side_channel_warnings(f, c, has_train)
        + _composition_warnings(f, has_train)
        + _attack_warnings(f)
        + _budget_warnings(f)
        + _utility_warnings(c, own)
    )


def _violation_warnings(f: Findings) -> list[dict]:
    """Bounds above their claim: confirmed over the family (Holm), or each valid alone."""
    w: list[dict] = []
    violated = [b for b in f.bounds if b.verdict == "violated" and not b.outside_claim]
    # a row above its claim that the family-wise (Holm) test does not confirm is one of many bounds
    # each valid alone at its confidence: reported, but not as a proven violation
    lone = [b for b in violated if b.holm_significant is False]
    violated = [b for b in violated if b.holm_significant is not False]

    def worst(bounds):
        return max(bounds, key=lambda b: b.lower_bound - (b.claimed or 0))

    if lone:
        b = worst(lone)
        w.append(
            {
                "level": "warning",
                "title": "A bound above its claim, not significant over the family",
                "text": f"{len(lone)} row(s) certify slightly more than claimed when read alone — worst: "
                f"{b.subject} ({b.channel}) ε ≥ {fmt_eps(b.lower_bound)} against ε = {fmt_eps(b.claimed)} "
                "— but not after Holm's correction over all rows with a p-value: with many bounds each "
                "valid alone at its confidence, a few cross by chance. Re-run that audit with fresh "
                "samples to tell chance from a leak.",
            }
        )
    if violated:
        b = worst(violated)
        w.append(
            {
                "level": "critical",
                "title": "Privacy claim exceeded",
                "text": f"{len(violated)} audited output(s) leak more than claimed. Worst: {b.subject} ({b.channel}) "
                f"claims ε = {fmt_eps(b.claimed)} but the audit certifies ε ≥ {fmt_eps(b.lower_bound)} at "
                f"{fmt_eps(b.confidence)} confidence. The claim is false for this implementation, not "
                "merely loose.",
            }
        )
    return w


def _side_channel_warnings(f: Findings, c: ReportContent, has_train: bool) -> list[dict]:
    """Channels the claim does not cover: leaking, audited without a leak, or not audited."""
    w: list[dict] = []
    unprot = [b for b in f.bounds if b.leaks_outside_claim]
    if unprot and all(b.system is not None for b in unprot):  # system audits: channels by the system's names
        worst = max(unprot, key=lambda b: b.lower_bound)
        over = [b for b in unprot if b.claimed is not None and math.isfinite(b.claimed) and b.lower_bound > b.claimed]
        top = max(over, key=lambda b: b.lower_bound - b.claimed) if over else None
        w.append(
            {
                "level": "critical",
                "title": "Channels outside the claim leak",
                "text": f"{len(unprot)} channel audit(s) of channels the claim does not cover certify a leak: "
                f"{worst.channel} of {worst.subject} gives ε ≥ {fmt_eps(worst.lower_bound)}"
                + (
                    f"; {len(over)} such bound(s) exceed their claim (e.g. {top.channel} of {top.subject}: "
                    f"ε ≥ {fmt_eps(top.lower_bound)} > the claimed ε = {fmt_eps(top.claimed)}), so the system "
                    "as a whole does not deliver it."
                    if over
                    else "."
                ),
            }
        )
    elif unprot:
        worst = max(unprot, key=lambda b: b.lower_bound)
        over = [b for b in unprot if b.claimed is not None and math.isfinite(b.claimed) and b.lower_bound > b.claimed]
        top = max(over, key=lambda b: b.lower_bound - b.claimed) if over else None
        w.append(
            {
                "level": "critical",
                "title": "Unprotected side channels (score, timing)",
                "text": f"The privacy claim covers the noisy gradient only. {len(unprot)} channel audit(s) show that "
                f"what the agent reports next to it reveals its environment: {worst.channel} of "
                f"{worst.subject} gives ε ≥ {fmt_eps(worst.lower_bound)}"
                + (
                    f", above the claimed ε = {fmt_eps(worst.claimed)}; {len(over)} such bound(s) exceed the "
                    "claim, so the system as a whole does not deliver it. "
                    if over
                    else ". "
                )
                + "The episode score is sent in the clear and the arrival time is the start time plus the "
                "episode length, so an aggregator learns ψ from them whatever ε the gradient noise has.",
            }
        )
    elif any(b.outside_claim for b in f.bounds):
        w.append(
            {
                "level": "warning",
                "title": "Score and timing are outside the claim",
                "text": "The ε claim covers the noisy gradient only; the score and timing channels are released "
                "without noise. The channel audits given here found no leak at their models and ψ pairs "
                "(ε_LB = 0), which bounds nothing: a better-trained model or a wider pair can make them "
                "leak, and nothing in the protocol limits how much.",
            }
        )
    elif has_train and not c.protection:
        w.append(
            {
                "level": "warning",
                "title": "Score and timing are outside the claim",
                "text": "In the PGC-A3C protocol each submission carries the episode score in the clear, and its "
                "arrival time is its start time plus the episode length. The ε of the gradient mechanism "
                "says nothing about these channels; no channel audit was given to this report.",
            }
        )
    return w


def _composition_warnings(f: Findings, has_train: bool) -> list[dict]:
    """k submissions from one environment against the per-submission claim."""
    w: list[dict] = []
    single_claim_exceeded = []
    for b in f.bounds:
        per = per_submission_claim(b, f.bounds)
        if b.k and b.k > 1 and per is not None and b.lower_bound > per and not b.outside_claim:
            single_claim_exceeded.append((b, per))
    if single_claim_exceeded:
        b, per = max(single_claim_exceeded, key=lambda bp: bp[0].lower_bound / max(bp[1], 1e-12))
        w.append(
            {
                "level": "warning",
                "title": "Composition not accounted for",
                "text": f"With k = {b.k} submissions from the same environment ({b.channel}) the audit certifies "
                f"ε ≥ {fmt_eps(b.lower_bound)}, above the per-submission claim ε = {fmt_eps(per)}. "
                "A per-agent ε does not protect an environment shared by many agents or an agent that "
                "submits repeatedly; the budget composes (up to kε).",
            }
        )
    elif has_train:
        w.append(
            {
                "level": "info",
                "title": "Composition",
                "text": "Every agent draws ψ from a small set Ψ, so each environment is shared by many submissions. "
                "The ε per submission holds per agent; if the environment itself is the secret, its "
                "protection composes over all submissions made with it (up to kε).",
            }
        )
    return w


def _attack_warnings(f: Findings) -> list[dict]:
    """Attacks above the ε-LDP ceiling, through the gradient or the side channels; attacker defects."""
    w: list[dict] = []
    above = [a for a in f.attacks if a.above_ceiling and not a.uses_side_channel]
    if above:
        a = max(above, key=lambda a: a.accuracy - (a.ceiling or 0))
        w.append(
            {
                "level": "critical",
                "title": "Attack beats the ε-LDP ceiling",
                "text": f"{a.attacker} ({a.channels}, ε = {fmt_eps(a.epsilon)}, k = {a.k or 1}) reaches accuracy "
                f"{a.accuracy:.3f} (CI low {fmt_eps(a.ci_low)}) above the ceiling {a.ceiling:.3f} that any "
                "attacker must respect if the claim held, from the privatized gradient alone: a privacy "
                "violation (or an evaluation bug).",
            }
        )
    above_side = [a for a in f.attacks if a.above_ceiling and a.uses_side_channel]
    if above_side:
        a = max(above_side, key=lambda a: a.accuracy - (a.ceiling or 0))
        w.append(
            {
                "level": "critical",
                "title": "Attacks through score/timing beat the ε-LDP ceiling",
                "text": f"{len(above_side)} attack(s) that read the score or timing channel beat the ceiling that "
                f"the ε claim would impose: {a.attacker} ({a.channels}, ε = {fmt_eps(a.epsilon)}, "
                f"k = {a.k or 1}) reaches {a.accuracy:.3f} (CI low {fmt_eps(a.ci_low)}) against a ceiling of "
                f"{a.ceiling:.3f}. The gradient mechanism is not at fault; what the agent reports beside it "
                "is unprotected, so the system does not deliver its claim.",
            }
        )
    defects = [a for a in f.attacks if a.attacker_defect]
    if defects:
        a = min(defects, key=lambda a: a.ci_high if a.ci_high is not None else a.accuracy)
        w.append(
            {
                "level": "warning",
                "title": "Attacker defect: accuracy below chance",
                "text": f"{len(defects)} attack row(s) lie entirely below chance (e.g. {a.attacker}, {a.channels}, "
                f"ε = {fmt_eps(a.epsilon)}, k = {a.k or 1}: {a.accuracy:.3f}, CI high {fmt_eps(a.ci_high)} < "
                f"chance {fmt_eps(a.chance)}). Under a uniform prior no sound attacker is worse than chance, "
                "so these rows say something about the attacker (or sampling luck among many rows), nothing "
                "about privacy; they are left out of the accuracy table and the plot.",
            }
        )
    return w


def _budget_warnings(f: Findings) -> list[dict]:
    """Bounds at their certifiable cap; claims beyond what the budget could refute."""
    limited = [b for b in f.bounds if b.budget_limited]
    unreachable = [
        b
        for b in f.bounds
        if b.cap
        and b.claimed
        and math.isfinite(b.claimed)
        and b.cap < b.claimed
        and not b.verdict.startswith("violated")
    ]
    return [
        {"level": "info", "title": title, "text": text(found[0], len(found))}
        for found, title, text in (
            (
                limited,
                "Bounds limited by the sample budget",
                lambda b, n: (
                    f"{n} lower bound(s) reach ≥ {BUDGET_LIMIT_FRACTION:.0%} of the largest ε their sample budget "
                    f"can certify (e.g. {b.subject}, {b.channel}: ε ≥ {fmt_eps(b.lower_bound)} with a cap of "
                    f"{fmt_eps(b.cap)} at {b.samples or '?'} samples per side). The true ε may be much larger; more "
                    "samples would raise the bound."
                ),
            ),
            (
                unreachable,
                "Claims beyond what the audit could refute",
                lambda b, n: (
                    f"{n} claim(s) exceed the certifiable cap (e.g. {b.subject}, {b.channel}: "
                    f"ε = {fmt_eps(b.claimed)} vs cap {fmt_eps(b.cap)}): with this budget even a perfect test could "
                    "not show a violation, so these rows are inconclusive: 'not refutable with this budget'."
                ),
            ),
        )
        if found
    ]


def _utility_warnings(c: ReportContent, own: bool) -> list[dict]:
    """Training settings that never learned."""
    w: list[dict] = []
    no_learn = [u for u in c.utility if not u.success_ratio] if own else []
    if no_learn:
        w.append(
            {
                "level": "warning",
                "title": "Little or no utility",
                "text": f"{len(no_learn)} of {len(c.utility)} training setting(s) never reached the target score "
                f"(μ ≥ 195) within their horizon. Privacy numbers for a model that does not learn "
                "describe a mechanism, not a useful system.",
            }
        )
    return w


def render_warnings(doc: Document, f: Findings, anchor: str = "warnings", level: int = 2) -> None:
    if not f.warnings:
        return
    worst = max(f.warnings, key=lambda w: {"critical": 2, "warning": 1}.get(w["level"], 0))
    with doc.section(
        f"Warnings ({len(f.warnings)})",
        f"What needs attention in these results, most severe first: {worst['title']}.",
        anchor,
        level=level,
    ):
        for w in sorted(f.warnings, key=lambda w: -{"critical": 2, "warning": 1}.get(w["level"], 0)):
            doc.warning(w["level"], w["title"], w["text"])


def _finish(c: ReportContent) -> None:
    c.own.warnings = build_warnings(c.own, c, own=True)
    c.reference.warnings = build_warnings(c.reference, c, own=False)


SECTION = Section("warnings", (), lambda doc, c: render_warnings(doc, c.own), finish=_finish)
