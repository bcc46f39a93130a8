"""The report's sections in page order (after the first screen: verdict card, summary, headline figure).
Each module declares one :class:`reports.section.Section`; a new section is a new module and one entry here."""

from . import (
    adversarial,
    attacks,
    bandits,
    bounds,
    inputs,
    library_audits,
    mitigation_costs,
    protection,
    published_claims,
    references,
    system_audits,
    tuning,
    utility,
    warnings,
)

SECTIONS = (
    warnings.SECTION,
    protection.SECTION,
    bounds.SECTION,
    system_audits.SECTION,
    published_claims.SECTION,
    library_audits.SECTION,
    adversarial.SECTION,
    attacks.SECTION,
    bandits.SECTION,
    utility.SECTION,
    mitigation_costs.SECTION,
    tuning.SECTION,
    references.SECTION,
    inputs.SECTION,
)

__all__ = ["SECTIONS"]
