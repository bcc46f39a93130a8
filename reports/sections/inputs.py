"""Inputs: the result files the report was built from, with their kind and role."""

from __future__ import annotations

from ..content import ReportContent
from ..document import Document
from ..section import Section


def _inputs(doc: Document, c: ReportContent) -> None:
    with doc.section(
        "Inputs",
        "The result files this report was built from, with their kind and whether they are "
        "the run's own or a committed reference.",
        "inputs",
    ):
        doc.table(
            ["kind", "label", "role", "file"],
            [[s.kind, s.label, "reference" if s.reference else "this run", s.shown_path] for s in c.sources],
        )


SECTION = Section("inputs", (), _inputs)
