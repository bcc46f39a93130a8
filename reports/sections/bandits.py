"""Federated linear bandits: regret, privacy cost, attacks and the audits of the bandit systems."""

from __future__ import annotations

import pgc.schemas as schemas
from pgc.schemas.report_parts import BanditAttackScore, ReportBanditAttack

from .. import plots
from ..content import BANDIT_SECTION, Findings, ReportContent, read_png_inside, section_audits
from ..document import Document, num
from ..loaders import Source
from ..section import Section
from .system_audits import source_role, system_audit_tables


def bandit_regret(src: Source) -> dict:
    """A federated-bandit regret result: the time-averaged group regret per algorithm and setting, the
    privacy cost against the number of silos M and the exponent fitted to it beside the theories'
    exponents, and the writer's PNG (``plot``, else the file's stem + .png beside it) when there is one."""
    r = src.result
    assert isinstance(r, schemas.BanditRegret)
    found = read_png_inside(r.plot or src.path.with_suffix(".png").name, src.path.parent)
    curves = [
        {
            "algorithm": c.algorithm,
            "label": c.label,
            "n_silos": c.n_silos,
            "epsilon": c.epsilon,
            "delta": c.delta,
            "batch": c.batch,
            "sigma": c.sigma,
            "lambda": c.regulariser,
            "threshold": c.threshold,
            "mean_syncs": c.mean_syncs,
            "t": c.t,
            "regret": c.time_averaged_group_regret,
            "lower": c.lower,
            "upper": c.upper,
            "final": c.group_regret_at_T.mean if c.group_regret_at_T else None,
            "final_interval": c.group_regret_at_T.interval if c.group_regret_at_T else None,
        }
        for c in r.curves
    ]
    cost = [
        {
            "n_silos": p.n_silos,
            "mean": p.privacy_cost_mean,
            "interval": p.interval,
            "private": p.private_regret_at_T,
            "nonprivate": p.nonprivate_regret_at_T,
        }
        for p in r.privacy_cost
    ]
    fit = None
    if r.fit is not None and r.fit.exponent is not None:
        fit = {
            "exponent": r.fit.exponent,
            "interval": r.fit.interval,
            "intercept": r.fit.intercept,
            "level": r.fit.level,
            "resamples": r.fit.resamples,
            "method": r.fit.method,
            "theory": dict(r.fit.theory or {}),
            "epsilon": r.fit.epsilon,
        }
    return {
        "source": src.label,
        "reference": src.reference,
        "label": r.label,
        "settings": r.settings,
        "curves": curves,
        "privacy_cost": cost,
        "fit": fit,
        "plot_png": found[1] if found else None,
    }


def bandit_attack_rows(src: Source) -> list[ReportBanditAttack]:
    """The rows of a federated-bandit attack: accuracy with its interval beside chance and the (ε, δ)-DP
    ceiling of the system's claim. ``above_ceiling``/``above_chance`` are read from the interval's lower end."""
    r = src.result
    assert isinstance(r, schemas.BanditAttack)
    return [
        ReportBanditAttack(
            source=src.label,
            reference=src.reference,
            system=x.system,
            pair=x.pair,
            channel=x.channel,
            test_channel=x.test_channel or x.channel,
            covered=True if x.covered_by_claim is None else x.covered_by_claim,
            score=BanditAttackScore(
                accuracy=x.accuracy,
                interval=x.interval,
                level=x.level,
                n_test=x.n_test,
                chance=x.chance,
                ceiling=x.ceiling,
            ),
            claim_epsilon=x.claim.epsilon,
            claim_delta=x.claim.delta,
            above_ceiling=x.interval[0] > x.ceiling,
            above_chance=x.interval[0] > x.chance,
        )
        for x in r.rows
    ]


def interval_text(v: list[float] | None, digits: int = 3) -> str:
    return f"[{num(v[0], digits)}, {num(v[1], digits)}]" if v and len(v) == 2 else "—"


def _theory_name(key: str) -> str:
    """A theory's key in the fit as words: "zhou_chowdhury_M_exponent" -> "zhou chowdhury"."""
    return key.removesuffix("_M_exponent").removesuffix("_exponent").replace("_", " ")


def _attack_reading(a: ReportBanditAttack) -> str:
    if a.above_ceiling:
        return "above the ceiling" + ("" if a.covered else " (channel outside the claim)")
    return "above chance, within the ceiling" if a.above_chance else "no better than chance"


def _regret_block(doc: Document, r: dict, level: int) -> None:
    """One regret result: its settings, curves and, when swept over M, the privacy cost's power law."""
    st = r["settings"]
    doc.heading(f"Regret ({r['label'] or r['source']})", level + 1)
    doc.para(
        f"{source_role(r['source'], r['reference'])}: M = {st.get('n_silos', '—')} silos, "
        f"horizon T = {st.get('horizon', '—')}, "
        f"{st.get('n_arms', '—')} arms in dimension {st.get('dim', '—')}, {st.get('runs', '—')} runs; "
        + str(st.get("regret", "time-averaged group regret with its interval over runs"))
        + "."
    )
    doc.table(
        ["algorithm", "M", "ε", "δ", "σ", "mean syncs", "group regret at T", "interval"],
        [
            [
                c["label"],
                c["n_silos"],
                "—" if c["epsilon"] is None else num(c["epsilon"]),
                num(c["delta"]),
                num(c["sigma"]),
                num(c["mean_syncs"], 4),
                num(c["final"], 6),
                interval_text(c["final_interval"], 6),
            ]
            for c in r["curves"]
        ],
        numeric={1, 2, 3, 4, 5, 6},
    )
    if r["plot_png"]:
        doc.figure(
            f"bandit_regret_{r['source']}.png",
            r["plot_png"],
            f"{r['source']}: regret curves (the PNG written beside the result).",
        )
    elif r["curves"]:
        doc.figure(
            f"bandit_regret_{r['source']}.png",
            plots.bandit_regret_figure(r["curves"]),
            f"{r['source']}: time-averaged group regret against t, with its interval band.",
        )
    if r["privacy_cost"]:
        fit = r["fit"]
        doc.table(
            ["M", "privacy cost at T", "interval", "private regret at T", "non-private regret at T"],
            [
                [
                    p["n_silos"],
                    num(p["mean"], 6),
                    interval_text(p["interval"], 6),
                    num(p["private"], 6),
                    num(p["nonprivate"], 6),
                ]
                for p in r["privacy_cost"]
            ],
            numeric={0, 1, 3, 4},
        )
        if fit is not None:
            lo, hi = fit["interval"]
            theory = "; ".join(
                f"{_theory_name(name)} M^{num(e)} ({'inside' if lo <= e <= hi else 'outside'} the interval)"
                for name, e in sorted(fit["theory"].items())
            )
            doc.para(
                f"Privacy cost ∝ M^b: fitted exponent b = {num(fit['exponent'])} "
                f"{interval_text(fit['interval'])}"
                + (f" ({fit['level']:.0%} interval" if fit["level"] else " (interval")
                + (f", {fit['resamples']:,} resamples" if fit["resamples"] else "")
                + (f"; {fit['method']}" if fit["method"] else "")
                + ")"
                + (f" at ε = {num(fit['epsilon'])}" if fit["epsilon"] is not None else "")
                + (f". The theories' exponents: {theory}." if theory else ".")
            )
        if not r["plot_png"]:  # the writer's PNG draws the privacy cost beside the curves
            doc.figure(
                f"bandit_cost_{r['source']}.png",
                plots.privacy_cost_figure(r["privacy_cost"], fit),
                f"{r['source']}: privacy cost at T against M (log-log) with the fitted power law and "
                "the theories' exponents (grey, through the first point).",
            )


def _attack_block(doc: Document, f: Findings, level: int) -> None:
    """The attacks on the released messages and schedule, against chance and the claim's ceiling."""
    doc.heading("Attacks on the released messages and schedule", level + 1)
    doc.para(
        "Each row: an attacker fitted on simulated releases of both worlds of a pair guesses which world "
        "produced a held-out release. Under the system's (ε, δ) claim no test can beat the ceiling "
        "(e^ε + δ)/(1 + e^ε); an interval wholly above it contradicts the claim for that channel."
    )
    rows = f.bandit_attacks
    doc.table(
        [
            "system",
            "claim ε, δ",
            "pair",
            "channel",
            "covered",
            "accuracy",
            "interval",
            "chance",
            "ceiling",
            "reading",
            "source",
        ],
        [
            [
                a.system,
                f"{num(a.claim_epsilon)}, {num(a.claim_delta)}",
                a.pair,
                a.channel + ("" if a.test_channel == a.channel else f" (via {a.test_channel})"),
                "yes" if a.covered else "no",
                num(a.score.accuracy),
                interval_text(a.score.interval),
                num(a.score.chance),
                num(a.score.ceiling),
                _attack_reading(a),
                source_role(a.source, a.reference),
            ]
            for a in rows
        ],
        numeric={5, 7, 8},
        classes=[{9: "v-violated"} if a.above_ceiling else {} for a in rows],
    )


def _bandit(doc: Document, c: ReportContent, anchor: str = "bandit", level: int = 2) -> None:
    """One section for the federated linear bandits: regret, privacy cost, attacks and the system audits of
    the bandit systems, from the run's own inputs and the committed references together (each row names
    its source; the verdicts stay apart, each in its own group)."""
    f = Findings(
        bounds=c.own.bounds + c.reference.bounds,
        bandit_regret=c.own.bandit_regret + c.reference.bandit_regret,
        bandit_attacks=c.own.bandit_attacks + c.reference.bandit_attacks,
    )
    audits = section_audits(c, BANDIT_SECTION)
    if not f.bandit_regret and not f.bandit_attacks and not audits:
        return
    with doc.section(
        "Federated linear bandits",
        "What privacy costs the federated linear bandits in regret, how that "
        "cost grows with the number of silos M, and what an attacker or an auditor learns from what "
        "they release.",
        anchor,
        level=level,
    ):
        for r in f.bandit_regret:
            _regret_block(doc, r, level)
        if f.bandit_attacks:
            _attack_block(doc, f, level)
        if audits:
            doc.heading("System audits of the bandit systems", level + 1)
            doc.para(
                "The claimed ε, the ε an accountant computes and the ε the audit certifies, per channel "
                "(pgc audit system)."
            )
            system_audit_tables(doc, f, audits)


def _extract(src: Source, findings: Findings, c: ReportContent) -> None:
    if src.kind == "bandit-regret":
        findings.bandit_regret.append(bandit_regret(src))
    else:
        findings.bandit_attacks.extend(bandit_attack_rows(src))


SECTION = Section("bandits", ("bandit-regret", "bandit-attack"), _bandit, _extract)
