"""Utility cost of the mitigations: success and median FST with and without each."""

from __future__ import annotations

import pgc.schemas as schemas
from pgc.schemas.report_parts import ReportMitigationCosts, ReportMitigationRow

from ..content import Findings, ReportContent, fmt_eps
from ..document import Document, num
from ..loaders import Source
from ..section import Section


def mitigation_costs_from_result(src: Source) -> ReportMitigationCosts:
    """The utility cost of the channel mitigations (``scripts/mitigations_utility.py``): per mechanism,
    ε and variant, the aggregator's and the true success and median FST."""
    r = src.result
    assert isinstance(r, schemas.MitigationsUtility)
    rows = [
        ReportMitigationRow(
            mechanism=x.mechanism,
            epsilon=x.epsilon,
            variant=x.variant,
            gradient_epsilon=x.gradient_epsilon,
            score_epsilon=x.score_epsilon,
            trials=x.trials,
            successes=x.successes,
            median_fst=x.median_fst,
            true_successes=x.true_successes,
            median_true_fst=x.median_true_fst,
            median_true_fst_ci=x.median_true_fst_ci,
            median_ticks_at_success=x.median_ticks_at_success,
        )
        for x in r.rows
    ]
    cap = (r.spec or {}).get("cap")
    return ReportMitigationCosts(
        source=src.label, reading=r.reading, cap=cap if isinstance(cap, int) else None, command=r.command, rows=rows
    )


def _mitigation_costs(doc: Document, c: ReportContent) -> None:
    """What each mitigation costs in utility: success and median FST with and without it."""
    if not c.mitigation_costs:
        return
    with doc.section(
        "Utility cost of the mitigations",
        "What each channel mitigation costs in learning: success and "
        "median FST with and without it, on the same seeds.",
        "mitigation-costs",
    ):
        _mitigation_table(doc, c)


def _mitigation_table(doc: Document, c: ReportContent) -> None:
    doc.para(
        "Replication-style runs with and without each mitigation, the same seeds in every variant. "
        "Aggregator columns: eq. 26 on the scores the aggregator sees (privatized under 'score', where the "
        "trial also stops: a noisy trailing mean crosses 195 early); true columns: eq. 26 on the true scores "
        "(evaluation only). 'Run to cap' variants train to the cap without the aggregator's stop; their true "
        "FST is what the budget split costs the learning. Ticks: environment-step clock at the true success "
        "(the fixed schedule's cost in time)."
    )
    for m in c.mitigation_costs:
        reading = f", reading {m.reading}" if m.reading else ""
        cap = f", cap {m.cap:,}" if m.cap is not None else ""
        doc.heading(f"{m.source}{reading}{cap}", 3)
        rows = []
        for r in m.rows:
            agg = "—" if r.successes is None else f"{r.successes}/{r.trials}"
            true = "—" if r.true_successes is None else f"{r.true_successes}/{r.trials}"
            ci = r.median_true_fst_ci
            ci_text = f" [{num(ci[0], 6)}, {num(ci[1], 6)}]" if isinstance(ci, list) and len(ci) == 2 else ""
            rows.append(
                [
                    r.mechanism,
                    fmt_eps(r.epsilon),
                    r.variant,
                    f"{fmt_eps(r.gradient_epsilon)} + {fmt_eps(r.score_epsilon)}",
                    agg,
                    num(r.median_fst, 6),
                    true,
                    num(r.median_true_fst, 6) + ci_text,
                    num(r.median_ticks_at_success, 7),
                ]
            )
        doc.table(
            [
                "mechanism",
                "ε",
                "variant",
                "ε gradient + score",
                "success (aggregator)",
                "median FST (aggregator)",
                "true success",
                "median true FST [95% CI]",
                "median ticks at success",
            ],
            rows,
            numeric={1, 4, 5, 6, 7, 8},
        )
        if m.command:
            doc.para(f"Command: {m.command}")


def _extract(src: Source, findings: Findings, c: ReportContent) -> None:
    c.mitigation_costs.append(mitigation_costs_from_result(src))


SECTION = Section("mitigation-costs", ("mitigations-utility",), _mitigation_costs, _extract)
