"""What a report section is: the result kinds it reads, how it takes what it needs from one result
(``extract``), an optional last step once every result is read (``finish``), and how it renders itself
(``render``). The sections, in page order, are listed in :data:`reports.sections.SECTIONS`; adding one is
one new module in ``reports/sections/`` and one entry in that list."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .content import Findings, ReportContent
    from .document import Document
    from .loaders import Source


@dataclass(frozen=True)
class Section:
    name: str
    kinds: tuple[str, ...]  # the result kinds it reads (schemas' KIND)
    render: Callable[[Document, ReportContent], None]
    # what it takes from one result of its kinds: into the result's group (the run's own or the references) or
    # into the report-wide content
    extract: Callable[[Source, Findings, ReportContent], None] | None = None
    finish: Callable[[ReportContent], None] | None = None  # once every result is read
