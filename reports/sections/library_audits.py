"""Library audits: the privacy code users install — an LDP library's frequency oracle, an NVIDIA FLARE filter —
audited as a System. Per audit: the library and its version, the protocol or filter and its parameters, the
claim and where it comes from, then per channel the certified ε, the verdict and one sentence that says why.
With a ``pgc bench ldp`` result, a per-protocol summary of its cells (ours beside LDP-Auditor's method)."""

from __future__ import annotations

import math

import pgc.schemas as schemas
from pgc.schemas.report_parts import ReportSystemAudit

from ..content import ReportContent, fmt_eps, section_audits
from ..document import Document, num, vclass
from ..section import Section
from .published_claims import reading

LIBRARY_SECTION = "library-audits"  # the report_section that pgc.ldp's and pgc.nvflare's Systems name


def parameters_text(record: schemas.LibraryRun | None) -> str:
    """Every parameter the library was run with, as ``name=value`` (the domain size k and ε among them: a
    protocol run at (k, ε) alone has no other); "—" for none."""
    shown = (record.parameters if record else None) or {}
    return ", ".join(f"{k}={fmt_eps(v) if isinstance(v, float) else v}" for k, v in shown.items()) or "—"


def why(row, header: ReportSystemAudit, record: schemas.LibraryRun | None) -> str:
    """The row's reading (:func:`reports.sections.published_claims.reading`) and, for a frequency oracle, the exact
    ε of what it releases."""
    text = reading(row, header)
    exact = record.exact_epsilon if record else None
    if exact is not None and row.channel != "all":
        exact = float(exact)
        text += (
            "; the release's exact ε is ∞: some report has probability 0 under one of the two values"
            if math.isinf(exact)
            else f"; the release's exact ε is {fmt_eps(exact)}"
        )
    return text


def render_library_audits(doc: Document, c: ReportContent) -> None:
    headers = section_audits(c, LIBRARY_SECTION)
    if not headers and not c.library_benches:
        return
    with doc.section(
        "Library audits",
        "Privacy code users install, audited as it runs: its claim read from its own "
        "parameters, the ε certified per channel of what it releases, the verdict and why.",
        "library-audits",
    ):
        rows, classes = [], []
        for h, reference in headers:
            record = h.library
            findings = c.reference if reference else c.own
            for b in (b for b in findings.bounds if b.source == h.source and b.channel != "all"):
                rows.append(
                    [
                        f"{record.library} {record.version or ''}".strip() if record else "—",
                        record.protocol if record else h.system,
                        parameters_text(record),
                        f"{num(b.claimed)}: {record.claim_reading if record else '—'}",
                        b.channel,
                        num(b.lower_bound),
                        f"{h.setting.samples_per_side:,}",
                        b.verdict,
                        why(b, h, record),
                    ]
                )
                classes.append({7: vclass(b.verdict)})
        if rows:
            doc.table(
                [
                    "library",
                    "protocol or filter",
                    "parameters",
                    "claim (ε: where it comes from)",
                    "channel",
                    "certified ε ≥",
                    "n per side",
                    "verdict",
                    "why",
                ],
                rows,
                numeric={5},
                classes=classes,
            )
        for bench in c.library_benches:
            _bench_table(doc, bench)


def _bench_table(doc: Document, bench: dict) -> None:
    from collections import defaultdict

    cells = defaultdict(list)
    for cell in bench["result"].cells:
        cells[(cell.oracle.library, cell.oracle.protocol)].append(cell)
    doc.para(
        f"{bench['source']}: every protocol at each ε × k of the bench, {bench['result'].settings.samples:,} "
        "per side; ε_LB/ε of our certified bound beside LDP-Auditor's method on the same releases."
    )
    doc.table(
        [
            "library",
            "protocol",
            "cells",
            "median ε_LB/ε (ours)",
            "median ε_LB/ε (LDP-Auditor)",
            "violated",
            "exact ε = ∞ in",
        ],
        [
            [
                lib,
                proto,
                len(group),
                num(_median([x.epsilon_lower_bound / x.claimed_epsilon for x in group])),
                num(_median([x.reference_epsilon_lower_bound / x.claimed_epsilon for x in group])),
                sum(x.verdict == "violated" for x in group),
                sum(math.isinf(x.exact_epsilon) for x in group),
            ]
            for (lib, proto), group in cells.items()
        ],
        numeric={2, 3, 4, 5, 6},
    )


def _median(values: list[float]) -> float:
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])


def _extract(src, findings, c: ReportContent) -> None:
    if src.kind == "ldp-bench":
        c.library_benches.append({"source": src.label, "result": src.result})


SECTION = Section("library-audits", ("system-audit", "ldp-bench"), render_library_audits, _extract)
