"""The report's content as plain data: the rows every section reads (:class:`BoundRow`, :class:`AttackRow`,
:class:`UtilityRow`), the findings of one group of inputs (:class:`Findings`: the run's own, or the committed
references, each with its own verdict, warnings and Holm family) and the whole report's
(:class:`ReportContent`), with the helpers the summary and the sections share. The sections
(:mod:`reports.sections`) fill it (:mod:`reports.assemble`) and render it (:mod:`reports.render`).

Every value is read from a typed result (:mod:`pgc.schemas`); each row keeps the budget that produced it
(samples per side, confidence, statistic) so the reader can judge it, and its verdict is the audit's own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from pgc.schemas import ChannelFamily, ChannelKind, channel_kind, kind_from_label
from pgc.schemas.attack_kinds import AttackRow as AttackResultRow
from pgc.schemas.audit_rows import AuditRow, Verdict
from pgc.schemas.audit_rows import worst as worst_verdict
from pgc.schemas.report_parts import (
    ReportAdversarial,
    ReportBanditAttack,
    ReportMitigationCosts,
    ReportProtection,
    ReportSystemAudit,
)

from .loaders import Source

# the channel families beside the privatized gradient: an attack that reads one uses a side channel
SIDE_CHANNEL_FAMILIES = frozenset({ChannelFamily.SCORE, ChannelFamily.TIMING, ChannelFamily.ALL})
BUDGET_LIMIT_FRACTION = 0.9  # a bound within 10% of the certifiable cap is limited by the sample budget
SUMMARY_MAX_ROWS = 15


def fmt_eps(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.{digits}g}"


@dataclass
class BoundRow:
    """Where one audit row sits in the report: its source, its subject and observer group, its composition, the
    notes shown beside it and what Holm's procedure kept of it. Its numbers and verdict are the audit row's own,
    read through it (:attr:`row`); the context fields only fill in what an older row does not record."""

    source: str
    subject: str  # mechanism or run
    row: AuditRow  # the audit's row itself: its numbers, verdict, reason and power
    k: int | None = None  # linked submissions (composition)
    notes: list[str] = field(default_factory=list)
    holm_significant: bool | None = None  # Holm keeps the row's finding (None: not in the family)
    protect: tuple = ()  # the mitigations of the audited configuration (pgc.a3c.protect); claim = total ε
    group: str = ""  # who observes: "mechanism", "honest aggregator", "adversarial aggregator", a system's name
    reference: bool = False  # from a committed reference result, not the run's own
    system: str | None = None  # the audited System's name (system audits); None for PGC-A3C's own audits
    audit_confidence: float | None = None  # the audit's confidence, where the row records none
    audit_model: str = ""  # the model or broadcast the audit names, where the row names none
    claim_covers: bool | None = None  # the audit's claim covers the channel, where the row does not say

    @cached_property
    def kind(self) -> ChannelKind:
        """The row's channel family, composition and base channel, as its producer recorded them (read once per
        row: setting :attr:`row` drops it)."""
        return channel_kind(self.row)

    def __setattr__(self, name: str, value: object) -> None:
        if name == "row":
            self.__dict__.pop("kind", None)
        super().__setattr__(name, value)

    @property
    def judged(self) -> bool:
        """The audit judged the row (a verdict of its own): only such rows join the report's Holm family."""
        return self.row.verdict is not None

    channel = property(lambda self: self.row.channel)
    claimed = property(lambda self: self.row.claimed_epsilon)
    lower_bound = property(lambda self: self.row.epsilon_lower_bound)
    cap = property(lambda self: self.row.max_certifiable_epsilon)  # largest ε certifiable with this budget
    samples = property(lambda self: self.row.samples_per_side)
    delta = property(lambda self: self.row.claimed_delta)
    test = property(lambda self: self.row.statistic or "")  # statistic / hypothesis
    accountant = property(lambda self: self.row.accountant_epsilon)  # ε an accountant gives for the same release

    @property
    def confidence(self) -> float | None:
        return self.row.confidence or self.audit_confidence

    @property
    def verdict(self) -> str:
        """The audit's own verdict of the row (schemas.Verdict's word), never derived here."""
        return str(self.row.verdict) if self.row.verdict is not None else "inconclusive"

    @property
    def p_value(self) -> float | None:
        """The p-value of the finding the row's verdict states (AuditRow.finding_p_value)."""
        p = self.row.finding_p_value()
        return p if p is not None and 0.0 <= p <= 1.0 else None

    @property
    def model(self) -> str:
        """ "adversarial" for adversarial-aggregator rows; a system audit's broadcast."""
        return self.audit_model or self.row.model or ""

    @property
    def covered(self) -> bool | None:
        """The claim covers the channel, as the audit's row says."""
        return self.row.covered if self.row.covered is not None else self.claim_covers

    def record(self) -> dict:
        """The row as the report's JSON lists it."""
        return {
            "source": self.source,
            "subject": self.subject,
            "channel": self.channel,
            "claimed": self.claimed,
            "lower_bound": self.lower_bound,
            "confidence": self.confidence,
            "cap": self.cap,
            "samples": self.samples,
            "delta": self.delta,
            "k": self.k,
            "test": self.test,
            "verdict": self.verdict,
            "notes": list(self.notes),
            "p_value": self.p_value,
            "model": self.model,
            "holm_significant": self.holm_significant,
            "protect": list(self.protect),
            "group": self.group,
            "accountant": self.accountant,
            "reference": self.reference,
            "covered": self.covered,
            "system": self.system,
        }

    @property
    def outside_claim(self) -> bool:
        """A side channel the claim does not cover (the row's own ``covered``; with the mitigations on, the
        score and timing rows are inside the claim)."""
        return self.covered is False

    @property
    def partly_covered(self) -> bool:
        """The joint row of a claim that covers part of it (the audit row's ``partly_covered``)."""
        return bool(self.row.partly_covered)

    @property
    def leaks_outside_claim(self) -> bool:
        """An uncovered channel certifies a leak: ε_LB > 0, and for a partly covered joint row ε_LB above the claim
        (below it the leak may be the covered part's own)."""
        if not self.outside_claim or self.lower_bound <= 0:
            return False
        return not self.partly_covered or self.claimed is None or self.lower_bound > self.claimed

    @property
    def budget_limited(self) -> bool:
        return bool(self.cap and math.isfinite(self.cap) and self.lower_bound >= BUDGET_LIMIT_FRACTION * self.cap)


@dataclass
class AttackRow:
    """Where one attack row sits in the report: its source, the candidates its result names and whether it is a
    committed reference. Its numbers and verdict are the attack row's own, read through it (:attr:`row`)."""

    source: str
    row: AttackResultRow  # the attack's row itself: its attacker, channels, score and verdict
    candidates: int | None = None  # |Ψ| of the attack's result
    reference: bool = False

    attacker = property(lambda self: self.row.attacker)
    channels = property(lambda self: "+".join(self.row.channels))  # as the tables name them
    epsilon = property(lambda self: self.row.epsilon)
    k = property(lambda self: self.row.k)
    budget = property(lambda self: self.row.budget)
    accuracy = property(lambda self: self.row.accuracy)
    chance = property(lambda self: self.row.chance)
    ceiling = property(lambda self: self.row.ceiling)
    setting = property(lambda self: self.row.model or "")  # a sweep's model
    given_verdict = property(lambda self: self.row.verdict or "")
    given_below_chance = property(lambda self: self.row.below_chance)
    ci_low = property(lambda self: self.row.ci[0] if self.row.ci and len(self.row.ci) == 2 else None)
    ci_high = property(lambda self: self.row.ci[1] if self.row.ci and len(self.row.ci) == 2 else None)

    @property
    def uses_side_channel(self) -> bool:
        """The attacker saw something besides the privatized gradient: a channel of the score, timing or joint
        family (:data:`SIDE_CHANNEL_FAMILIES`)."""
        return any(kind_from_label(c).family in SIDE_CHANNEL_FAMILIES for c in self.row.channels)

    @property
    def attacker_defect(self) -> bool:
        """The interval lies entirely below chance: a defect of the attacker, never a privacy result."""
        if self.given_below_chance or self.given_verdict == "attacker-defect":
            return True
        return bool(self.chance is not None and self.ci_high is not None and self.ci_high < self.chance - 1e-12)

    @property
    def above_ceiling(self) -> bool:
        if self.ceiling is None or not math.isfinite(self.ceiling):
            return False
        if self.given_verdict in ("VIOLATION", "unprotected-channel-above-ceiling"):
            return True  # the attacker's own evaluation flagged it
        low = self.ci_low if self.ci_low is not None else self.accuracy
        return low > self.ceiling + 1e-9


@dataclass
class UtilityRow:
    source: str
    setting: str
    mechanism: str
    epsilon: float
    trials: int
    horizon: int
    fst_median: float | None
    success_ratio: float | None
    relative_auc: float | None
    final_mu: float | None
    paper: dict | None
    note: str = ""


@dataclass
class Findings:
    """The privacy findings of one group of inputs (the run's own, or the committed references):
    bounds, attacks, adversarial audits, bandit results, their Holm family and warnings."""

    bounds: list[BoundRow] = field(default_factory=list)
    attacks: list[AttackRow] = field(default_factory=list)
    adversarial: list[ReportAdversarial] = field(default_factory=list)
    system_audits: list[ReportSystemAudit] = field(default_factory=list)
    # see bandit_regret: {source, curves, privacy_cost, fit, ...}
    bandit_regret: list[dict] = field(default_factory=list)
    bandit_attacks: list[ReportBanditAttack] = field(default_factory=list)  # one per row (bandit_attack_rows)
    family: dict = field(default_factory=dict)  # Holm over the bound rows with a p-value (see holm_family)
    warnings: list[dict] = field(default_factory=list)  # {level, title, text}

    def __bool__(self) -> bool:
        return bool(
            self.bounds
            or self.attacks
            or self.adversarial
            or self.system_audits
            or self.bandit_regret
            or self.bandit_attacks
        )


@dataclass
class ReportContent:
    sources: list[Source]
    own: Findings = field(default_factory=Findings)
    reference: Findings = field(default_factory=Findings)
    utility: list[UtilityRow] = field(default_factory=list)
    curves: list[dict] = field(default_factory=list)  # learning curves: {label, mu (array), fsts}
    success_curves: list[dict] = field(default_factory=list)  # {label, n (array), ratio (array)}
    tuning: list[dict] = field(default_factory=list)  # {source, study: schemas.TuneResult}
    replicate: list[dict] = field(default_factory=list)  # {source, rows, text, figures}
    protection: list[ReportProtection] = field(default_factory=list)
    mitigation_costs: list[ReportMitigationCosts] = field(default_factory=list)
    thesis_attacks: list[dict] = field(default_factory=list)  # {source, kind, result}: attacks on published systems
    library_benches: list[dict] = field(default_factory=list)  # {source, result}: pgc bench ldp results

    @property
    def bounds(self) -> list[BoundRow]:
        return self.own.bounds + self.reference.bounds

    @property
    def attacks(self) -> list[AttackRow]:
        return self.own.attacks + self.reference.attacks


def holm_family(rows: list[BoundRow]) -> dict:
    """The family verdict of the report's rows with the one Holm rule (:func:`audit.verdicts.family_verdict`) at
    α = 1 − the rows' confidence (the smallest when they differ). Sets ``row.holm_significant`` and notes each
    row's Holm-adjusted p-value; per-row bounds and verdicts are unchanged (each valid alone)."""
    from audit.verdicts import family_verdict

    members = [r for r in rows if r.judged]
    confs = [r.confidence for r in members if r.confidence]
    alpha = 1.0 - (min(confs) if confs else 0.95)
    family = family_verdict([r.row for r in members], alpha)
    outside = sum(1 for a in family.adjusted if a is None) + len(rows) - len(members)
    out = {
        "alpha": alpha,
        "size": family.size,
        "excluded": outside,
        "significant": [],
        "method": "holm",
        "verdict": str(family.verdict),
    }
    for r, rejected, adjusted in zip(members, family.rejected, family.adjusted, strict=True):
        if adjusted is None:
            continue
        r.holm_significant = rejected
        r.notes.append(
            f"p = {r.p_value:.3g}, Holm-adjusted {adjusted:.3g}"
            if r.p_value is not None
            else "claim contradicts itself: rejected outright"
        )
        if rejected:
            out["significant"].append(
                {
                    "subject": r.subject,
                    "channel": r.channel,
                    "verdict": r.verdict,
                    "p_value": r.p_value,
                    "adjusted_p_value": adjusted,
                    "model": r.model,
                    "covered": r.covered,
                }
            )
    return out


MAX_EMBEDDED_PNG = 8 * 2**20
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def read_png_inside(name: str, folder: Path) -> tuple[Path, bytes] | None:
    """The bytes of the PNG file ``name`` refers to, only if it is a regular file (no symbolic link,
    FIFO or device) inside ``folder`` (the input's own folder), at most :data:`MAX_EMBEDDED_PNG` bytes
    and starts with the PNG signature; else None (an input cannot make the report embed other files)."""
    import os
    import stat

    try:
        base = folder.resolve()
        p = Path(name)
        p = p if p.is_absolute() else folder / p
        if p.is_symlink() or base not in p.resolve().parents:
            return None
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_EMBEDDED_PNG:
                return None
            data = fh.read(MAX_EMBEDDED_PNG + 1)
    except (OSError, ValueError):
        return None
    if len(data) > MAX_EMBEDDED_PNG or not data.startswith(PNG_MAGIC):
        return None
    return p.resolve(), data


BANDIT_SECTION = "federated-bandits"  # the report_section the federated bandit systems name


PUBLISHED_CLAIMS_SECTION = "published-claims"  # the report_section the thesis' systems (dprl) name


def has_own_section(header: ReportSystemAudit) -> bool:
    """A system audit that a section of its own renders (the system named one): not the generic table."""
    return bool(header.report_section)


def section_audits(c: ReportContent, section: str) -> list[tuple[ReportSystemAudit, bool]]:
    """The system audits whose system names ``section``, each with whether it is a committed reference: the run's
    own, then the references."""
    return [(h, False) for h in c.own.system_audits if h.report_section == section] + [
        (h, True) for h in c.reference.system_audits if h.report_section == section
    ]


def is_bandit_audit(header: ReportSystemAudit) -> bool:
    """A system audit that the federated-bandits section renders (the system asked for it)."""
    return header.report_section == BANDIT_SECTION


def per_submission_claim(row: BoundRow, rows: list[BoundRow]) -> float | None:
    """The claim of ONE submission for a k-submission row: the claim of the k = 1 row of the same result,
    subject and base channel (e.g. "gradient" for "gradient×3"); else the row's own claim."""
    base = row.kind.base
    for r in rows:
        if (
            r.source == row.source
            and r.subject == row.subject
            and not r.k
            and r.channel.strip() == base
            and r.claimed is not None
        ):
            return r.claimed if math.isfinite(r.claimed) else None
    if row.claimed is not None and math.isfinite(row.claimed) and "split" not in row.channel:
        return row.claimed / row.k if row.k and "compos" in " ".join(row.notes) else row.claimed
    return None


def holm_outcome(rows: list[BoundRow]) -> str:
    """What Holm's procedure kept of a group's findings: "kept" (some row's finding survives), "not kept" (rows
    with a finding, none survives) or "—" (no finding, or no row in the family)."""
    found = [b for b in rows if b.verdict in (Verdict.VIOLATED, Verdict.UNPROTECTED) and b.holm_significant is not None]
    if not found:
        return "—"
    return "kept" if any(b.holm_significant for b in found) else "not kept"


def channel_label(family: str, row: BoundRow) -> str:
    """A summary row's channel as the report shows it: the family, and the composition of the row whose bound
    it shows ("score ×3": three submissions from one agent; "gradient (gradient×3 split)" where the row's channel
    says more than its k)."""
    if not row.k or row.k <= 1:
        return family
    return f"{family} ×{row.k}" if row.kind.base == family else f"{family} ({row.channel})"


def summary_rows(f: Findings) -> list[dict]:
    """The summary table: one row per observer group × channel family, the largest certified bound
    of the group beside its claim, the certifiable cap and the group's verdict (Holm-corrected)."""
    groups: dict[tuple[str, str, float | None], list[BoundRow]] = {}
    for b in f.bounds:  # results audited at different claims (ε = 1, ε = 4) stay in separate rows
        claim = per_submission_claim(b, f.bounds) if b.k else None
        claim = b.claimed if claim is None else claim
        groups.setdefault((b.group or b.subject, b.kind.family_name, claim), []).append(b)
    out = []
    for (group, family, claim), rows in groups.items():
        worst = max(rows, key=lambda b: b.lower_bound)
        claims = sorted({b.claimed for b in rows if b.claimed is not None and math.isfinite(b.claimed)})
        accountant = next((b.accountant for b in rows if b.accountant is not None), None)
        out.append(
            {
                "group": group,
                "family": family,
                "channel_label": channel_label(family, worst),
                "claimed": claim,
                "claims": claims,
                "accountant": accountant,
                "lower_bound": worst.lower_bound,
                "cap": worst.cap,
                "worst_subject": worst.subject,
                "worst_channel": worst.channel,
                "worst_claimed": worst.claimed,
                "rows": len(rows),
                "verdict": str(worst_verdict(b.verdict for b in rows)),
                "holm": holm_outcome(rows),
                "outside_claim": worst.outside_claim,
                "budget_limited": worst.budget_limited,
            }
        )
    order = {"mechanism": 0, "self-test": 1, "honest aggregator": 2, "adversarial aggregator": 3}
    fam_order = {"output": 0, "gradient": 1, "score": 2, "timing": 3, "all": 4}
    out.sort(
        key=lambda r: (
            order.get(r["group"], 5),
            r["group"],
            math.inf if r["claimed"] is None else r["claimed"],
            fam_order.get(r["family"], 5),
            r["family"],
        )
    )
    return out
