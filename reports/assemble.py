"""From loaded sources to the report's content: every section takes what it needs from the results of its
kinds, into the run's own findings or the committed references' (kept apart: each has its own verdict,
warnings and Holm family), then the Holm families and the sections' last steps."""

from __future__ import annotations

from .content import ReportContent, holm_family
from .loaders import Source
from .sections import SECTIONS


def build_content(sources: list[Source]) -> ReportContent:
    c = ReportContent(sources=sources)
    for src in sources:
        findings = c.reference if src.reference else c.own
        for section in SECTIONS:
            if section.extract is not None and src.kind in section.kinds:
                section.extract(src, findings, c)
    c.own.family = holm_family(c.own.bounds)
    c.reference.family = holm_family(c.reference.bounds)
    for section in SECTIONS:
        if section.finish is not None:
            section.finish(c)
    return c
