"""References: the committed results with their own verdict, warnings, summary and details."""

from __future__ import annotations

from ..content import ReportContent, is_bandit_audit
from ..document import Document
from ..section import Section
from ..summary import overall_verdict, summary_table
from .adversarial import render_adversarial
from .attacks import render_attacks
from .bounds import render_bounds
from .system_audits import render_system_audits
from .warnings import render_warnings


def _references(doc: Document, c: ReportContent) -> dict | None:
    """The committed reference results: their own verdict, warnings, summary and details, apart from the run's."""
    f = c.reference
    if not f:
        return None
    verdict = overall_verdict(f)
    labels = ", ".join(s.label for s in c.sources if s.reference)
    with doc.section(
        f"References: committed results ({sum(1 for s in c.sources if s.reference)})",
        "Results committed with this checkout (other configurations and ε), shown for comparison; their "
        "verdict and warnings are theirs, not this run's.",
        "references",
        cls="reference",
    ):
        doc.para(f"Reference verdict (these results only): {verdict}")
        doc.para(f"Inputs: {labels}.", cls="sub")
        if f.bandit_regret or f.bandit_attacks or any(is_bandit_audit(h) for h in f.system_audits):
            doc.para(
                "Their federated-bandit results are shown in the Federated linear bandits section, marked reference.",
                cls="sub",
            )
        rows = summary_table(doc, f, limit=40)
        render_warnings(doc, f, anchor="ref-warnings", level=3)
        render_bounds(doc, f, anchor="ref-bounds", level=3)
        render_system_audits(doc, f, anchor="ref-system-audits", level=3)
        render_adversarial(doc, f, anchor="ref-adversarial", level=3)
        render_attacks(doc, f, anchor="ref-attacks", level=3)
    return {"verdict": verdict, "summary": rows}


SECTION = Section("references", (), lambda doc, c: _references(doc, c))
