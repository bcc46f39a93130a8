"""From loaded sources to the report's content: headline bounds, attacks, composition, utility,
tuning, warnings. Plain data (dicts/lists of numbers and words); rendering lives in :mod:`reports.render`.

Every value is read from a typed result (:mod:`schemas`): an audit contributes its ``channels`` rows, a
system audit its ``rows``, an attack its ``rows``. Each row keeps the budget that produced it (samples per
side, confidence, statistic) so the reader can judge it. The run's own results and committed reference
results are kept apart (:class:`Findings`): each has its own verdict, warnings and Holm family.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import schemas
from schemas.shared import PAPER, PAPER_HORIZON, holm, ldp_ceiling  # noqa: F401  (re-exported)

from .loaders import Source

# channel names of a joint release (the summary groups such rows as "all")
_JOINT = re.compile(r"\ball\b|joint|combined|together|everything", re.I)
BUDGET_LIMIT_FRACTION = 0.9  # a bound within 10% of the certifiable cap is limited by the sample budget
SUMMARY_MAX_ROWS = 15
_VERDICT_ORDER = {"consistent": 0, "unprotected channel": 1, "violated (via unprotected channel)": 2, "violated": 3}


def fmt_eps(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.{digits}g}"


@dataclass
class BoundRow:
    source: str
    subject: str  # mechanism or run
    channel: str
    claimed: float | None
    lower_bound: float
    confidence: float | None
    cap: float | None  # largest ε certifiable with this budget
    samples: int | None
    delta: float | None
    k: int | None  # linked submissions (composition)
    test: str  # statistic / hypothesis
    verdict: str  # consistent / violated / unprotected channel
    notes: list[str] = field(default_factory=list)
    p_value: float | None = None  # H0 "true ε ≤ the row's claim" (p_value_leak for unprotected rows: H0 "ε ≤ 0")
    model: str = ""  # "adversarial" for adversarial-aggregator rows
    holm_significant: bool | None = None  # None: not in the family (no p-value)
    protect: tuple = ()  # the mitigations of the audited configuration (pgc.protect); claim = total ε
    group: str = ""  # who observes: "mechanism", "honest aggregator", "adversarial aggregator", a system's name
    accountant: float | None = None  # ε an accountant gives for the same release (system audits)
    reference: bool = False  # from a committed reference result, not the run's own
    covered: bool | None = None  # the claim covers the channel, as the audit's row says
    system: str | None = None  # the audited System's name (system audits); None for PGC-A3C's own audits

    @property
    def outside_claim(self) -> bool:
        """A side channel the claim does not cover (the row's own ``covered``; with the mitigations on, the
        score and timing rows are inside the claim)."""
        return self.covered is False

    @property
    def budget_limited(self) -> bool:
        return bool(self.cap and math.isfinite(self.cap) and self.lower_bound >= BUDGET_LIMIT_FRACTION * self.cap)


@dataclass
class AttackRow:
    source: str
    attacker: str
    channels: str
    epsilon: float | None
    k: int | None
    candidates: int | None
    accuracy: float
    ci_low: float | None
    ci_high: float | None
    chance: float | None
    ceiling: float | None
    setting: str = ""
    budget: int | None = None
    given_verdict: str = ""
    given_below_chance: bool | None = None
    reference: bool = False

    @property
    def attacker_defect(self) -> bool:
        """The interval lies entirely below chance: a defect of the attacker, never a privacy result."""
        if self.given_below_chance or self.given_verdict == "attacker-defect":
            return True
        return bool(self.chance is not None and self.ci_high is not None and self.ci_high < self.chance - 1e-12)

    @property
    def uses_side_channel(self) -> bool:
        """The attacker saw something besides the privatized gradient (score, timing, arrival)."""
        return bool(re.search(r"score|timing|arrival|time", self.channels, re.I))

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
    adversarial: list[dict] = field(default_factory=list)  # {source, audits: [...], curve: [...]}
    system_audits: list[dict] = field(default_factory=list)  # {source, system, pair, claim, accountant, verdict}
    bandit_regret: list[dict] = field(default_factory=list)  # see bandit_regret: {source, curves, privacy_cost, fit, ...}
    bandit_attacks: list[dict] = field(default_factory=list)  # one dict per row, with its source (bandit_attack_rows)
    family: dict = field(default_factory=dict)  # Holm over the bound rows with a p-value (see holm_family)
    warnings: list[dict] = field(default_factory=list)  # {level, title, text}

    def __bool__(self) -> bool:
        return bool(self.bounds or self.attacks or self.adversarial or self.system_audits or self.bandit_regret
                    or self.bandit_attacks)


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
    protection: list[dict] = field(default_factory=list)  # {source, subject, protect, total, gradient, score}
    mitigation_costs: list[dict] = field(default_factory=list)  # {source, reading, cap, rows}

    @property
    def bounds(self) -> list[BoundRow]:
        return self.own.bounds + self.reference.bounds

    @property
    def attacks(self) -> list[AttackRow]:
        return self.own.attacks + self.reference.attacks


# ---------------------------------------------------------------------------------------------
# audit → bounds
# ---------------------------------------------------------------------------------------------


def row_verdict_text(verdict: str | None, covered: bool | None) -> str:
    """The verdict a report shows for a row: the audit's own, with a violation through a channel the claim
    does not cover named as such; "no verdict" for a row that states none."""
    if verdict is None:
        return "no verdict"
    return "violated (via unprotected channel)" if verdict == "violated" and covered is False else verdict


_K_IN_NAME = re.compile(r"[×x]\s*(\d+)")


def channel_family(channel: str) -> str:
    """The family a channel belongs to in the summary: mechanism, gradient, score, timing or all."""
    low = channel.lower()
    if re.search(r"canary|mechanism|black-box|white-box", low):
        return "output"
    if _JOINT.search(low):
        return "all"
    if "gradient" in low:
        return "gradient"
    if "score" in low:
        return "score"
    if re.search(r"timing|time|arrival|order|length", low):
        return "timing"
    return channel


def _audit_subject(result: schemas.AuditResult, row: schemas.AuditChannel, label: str) -> tuple[str, str]:
    """(subject, group) of one audit row: what was audited, and who observes it."""
    scope = row.scope or result.mode
    if row.model == "adversarial" or scope.startswith("adversarial"):
        group = "adversarial aggregator"
    elif scope == "mechanism" or scope == "self-test" or row.mechanism:
        group = "mechanism" if scope != "self-test" else "self-test"
    else:
        group = "honest aggregator"
    if scope.startswith("environment"):
        subject = f"{result.model or 'trained'} model · ψ {scope.split(' ', 1)[1]}"
        if result.run:
            subject = f"{Path(result.run).name} {subject}"
    elif scope.startswith("adversarial"):
        subject = scope
    elif row.mechanism:
        subject = row.mechanism
    else:
        subject = f"{scope}: {label}" if scope not in ("mechanism",) else label
    return subject, group


def bounds_from_audit(src: Source) -> list[BoundRow]:
    result = src.result
    assert isinstance(result, schemas.AuditResult)
    protection = tuple(result.protection.protect) if result.protection else ()
    rows = []
    for obj in result.channels:
        channel = obj.channel
        m = _K_IN_NAME.search(channel)
        k = int(m.group(1)) if m else None
        subject, group = _audit_subject(result, obj, src.label)
        protect = tuple(obj.protect or protection)
        verdict = row_verdict_text(obj.verdict, obj.covered)
        p_val = obj.p_value
        if verdict.startswith("unprotected") and obj.p_value_leak is not None:
            p_val = obj.p_value_leak
        row = BoundRow(
            source=src.label, subject=subject, channel=channel, claimed=obj.claimed_epsilon,
            lower_bound=obj.epsilon_lower_bound, confidence=obj.confidence or result.confidence,
            cap=obj.max_certifiable_epsilon, samples=obj.samples_per_side, delta=obj.delta, k=k,
            test=obj.statistic or "", verdict=verdict,
            p_value=p_val if p_val is not None and 0.0 <= p_val <= 1.0 else None,
            model=obj.model or "", protect=protect, group=group, reference=src.reference, covered=obj.covered)
        if obj.true_epsilon is not None:
            row.notes.append(f"true ε {fmt_eps(obj.true_epsilon)}")
        if obj.correct_mechanism is not None:
            row.notes.append("correct mechanism" if obj.correct_mechanism else "planted bug")
        if obj.passed is False:
            row.notes.append("SELF-TEST MISJUDGED")
        if obj.note:
            row.notes.append(obj.note)
        rows.append(row)
    return rows


def _short(text: str, width: int = 60) -> str:
    """A secret's description on one line, cut to ``width`` characters (a secret may print a whole array)."""
    one = " ".join(text.split())
    return one if len(one) <= width else one[:width - 1] + "…"


def bounds_from_system_audit(src: Source) -> tuple[list[BoundRow], dict]:
    """The rows of a system audit (``pgc audit --system``) as bounds, and its header for the report."""
    r = src.result
    assert isinstance(r, schemas.SystemAuditResult)
    subject = f"{r.system} · {r.pair}" if r.pair else f"{r.system} · {_short(r.secret)} vs {_short(r.secret_prime)}"
    rows = []
    for x in r.rows:
        covered = x.covered if x.covered is not None else x.channel in r.claim.covers
        verdict = row_verdict_text(x.verdict, covered)
        p_val = x.p_value_leak if verdict == "unprotected channel" and x.p_value_leak is not None else x.p_value
        rows.append(BoundRow(
            source=src.label, subject=subject, channel=x.channel, claimed=x.claimed_epsilon,
            lower_bound=x.epsilon_lower_bound, confidence=r.confidence, cap=x.max_certifiable_epsilon,
            samples=x.samples_per_side, delta=x.claimed_delta, k=None, test=x.statistic, verdict=verdict,
            p_value=p_val if 0.0 <= p_val <= 1.0 else None, model=r.broadcast, group=f"{r.system} ({r.broadcast})",
            accountant=x.accountant_epsilon, reference=src.reference, covered=covered, system=r.system,
            notes=[f"δ_LB {fmt_eps(x.delta_lower_bound)}"] + (
                [f"GDP μ ≈ {fmt_eps(x.gdp_mu_estimate)}"] if x.gdp_mu_estimate is not None else [])))
    header = {"source": src.label, "system": r.system, "report_section": r.report_section, "pair": r.pair, "secret": _short(r.secret),
              "secret_prime": _short(r.secret_prime), "broadcast": r.broadcast, "claim_epsilon": r.claim.epsilon,
              "claim_delta": r.claim.delta, "covers": list(r.claim.covers), "confidence": r.confidence,
              "samples_per_side": r.samples_per_side, "seed": r.seed, "verdict": r.verdict,
              "accountant": r.accountant.to_dict() if r.accountant else None, "wall_time_s": r.wall_time_s}
    return rows, header


def holm_family(rows: list[BoundRow]) -> dict:
    """Family-wise verdict over every row with a p-value: Holm at α = 1 − confidence (the rows' own
    confidence; the smallest when they differ). Sets ``row.holm_significant``; rows without a p-value
    stay outside the family (None). Per-row bounds are unchanged (each valid alone)."""
    members = [r for r in rows if r.p_value is not None]
    confs = [r.confidence for r in members if r.confidence]
    alpha = 1.0 - (min(confs) if confs else 0.95)
    out = {"alpha": alpha, "size": len(members), "excluded": sum(1 for r in rows if r.p_value is None),
           "significant": [], "method": "holm"}
    reject, adjusted = holm([r.p_value for r in members], alpha=alpha)
    for r, rej, adj in zip(members, reject, adjusted):
        r.holm_significant = rej
        r.notes.append(f"p = {r.p_value:.3g}, Holm-adjusted {adj:.3g}")
        if rej:
            out["significant"].append({"subject": r.subject, "channel": r.channel, "verdict": r.verdict,
                                       "p_value": r.p_value, "adjusted_p_value": adj, "model": r.model})
    return out


# ---------------------------------------------------------------------------------------------
# adversarial aggregator
# ---------------------------------------------------------------------------------------------


def adversarial_from_audit(src: Source) -> dict | None:
    """The adversarial audits (one entry per audit and channel) and the curve points of an audit
    result; None when it has neither."""
    result = src.result
    assert isinstance(result, schemas.AuditResult)
    audits = []
    for a in result.adversarial_audits or []:
        search = a.search or schemas.AdversarialSearch()
        for ch in a.channels or [None]:
            audits.append({"psi": a.psi, "psi_prime": a.psi_prime, "mechanism": a.mechanism,
                           "claimed_epsilon": ch.claimed_epsilon if ch and ch.claimed_epsilon is not None
                           else a.claimed_epsilon,
                           "channel": ch.channel if ch else "—", "epsilon_lower_bound": ch.epsilon_lower_bound if ch else None,
                           "ratio": ch.ratio if ch else None, "verdict": (ch.verdict if ch else None) or "—",
                           "noise_free_epsilon_lower_bound": a.noise_free_epsilon_lower_bound,
                           "objective": search.objective or "—", "evaluations": search.evaluations,
                           "wall_time_s": search.wall_time_s, "theta_file": a.theta_file or ""})
    curve = []
    for pt in result.curve or []:
        ratio = pt.ratio
        if ratio is None and pt.epsilon and math.isfinite(pt.epsilon):
            ratio = pt.epsilon_lower_bound / pt.epsilon
        if ratio is None or not pt.delta_psi > 0 or not math.isfinite(ratio):
            continue
        curve.append({"delta_psi": pt.delta_psi, "ratio": ratio, "epsilon": pt.epsilon,
                      "epsilon_lower_bound": pt.epsilon_lower_bound, "model": pt.model, "channel": pt.channel})
    if not audits and not curve:
        return None
    return {"source": src.label, "mode": result.mode, "audits": audits, "curve": curve}


# ---------------------------------------------------------------------------------------------
# attack → accuracy rows
# ---------------------------------------------------------------------------------------------


def attacks_from_result(src: Source) -> list[AttackRow]:
    result = src.result
    assert isinstance(result, schemas.AttackResult)
    n_cands = result.candidate_count
    rows = []
    for r in result.rows:
        lo, hi = (r.ci[0], r.ci[1]) if r.ci and len(r.ci) == 2 else (None, None)
        rows.append(AttackRow(
            source=src.label, attacker=r.attacker, channels="+".join(r.channels), epsilon=r.epsilon, k=r.k,
            candidates=n_cands, accuracy=r.accuracy, ci_low=lo, ci_high=hi, chance=r.chance, ceiling=r.ceiling,
            setting=r.model or "", budget=r.budget, given_verdict=r.verdict or "", given_below_chance=r.below_chance,
            reference=src.reference))
    return rows


def best_attacks(rows: list[AttackRow]) -> list[AttackRow]:
    """The most accurate attack per (source, setting, channels, k, ε, |Ψ|): what an adversary achieves
    when it picks its best tool. Rows flagged above the ceiling are always kept."""
    best: dict[tuple, AttackRow] = {}
    extra = []
    for r in rows:
        key = (r.source, r.setting, r.channels, r.k or 1, r.epsilon, r.candidates)
        if r.attacker_defect:
            continue  # not a privacy result (listed apart by the report)
        if r.above_ceiling:
            extra.append(r)
        if key not in best or r.accuracy > best[key].accuracy:
            best[key] = r
    out = list(best.values()) + [r for r in extra if r not in best.values()]
    return sorted(out, key=lambda r: (r.source, r.setting, r.channels, r.k or 1,
                                      math.inf if r.epsilon is None else r.epsilon))


# ---------------------------------------------------------------------------------------------
# train runs → utility rows and curves
# ---------------------------------------------------------------------------------------------


def _setting_of(config: dict) -> tuple[str, float, str]:
    mech = str(config.get("mechanism", "?"))
    eps = schemas.number(config.get("epsilon"))
    eps = math.inf if mech == "none" else (eps if eps is not None else math.nan)
    clip = config.get("clip")
    parts = [mech, f"ε={fmt_eps(eps)}"]
    if clip is not None:
        parts.append(f"C={fmt_eps(schemas.number(clip))}")
    parts.append(f"|B|={config.get('buffer_size', '?')}")
    if config.get("reduced_dim"):
        parts.append(f"d̂={config['reduced_dim']}")
    hyper = config.get("hyper") or {}
    if hyper.get("action_selection") not in (None, "greedy") or schemas.number(hyper.get("lam")) not in (None, 0.5):
        parts.append(f"λ={hyper.get('lam')} {hyper.get('action_selection')}")
    if schemas.number(config.get("learning_rate")) not in (None, 0.5):
        parts.append(f"η={config['learning_rate']:g}")
    if config.get("zero_information"):
        parts.append("zero-information control")
    return mech, eps, " ".join(parts)


def _is_paper_setting(config: dict) -> bool:
    mech = config.get("mechanism")
    hyper = config.get("hyper") or {}
    paper_hyper = hyper.get("action_selection", "greedy") == "greedy" and schemas.number(hyper.get("lam", 0.5)) == 0.5
    lr_ok = schemas.number(config.get("learning_rate", 0.5)) == 0.5
    if mech == "laplace":
        return paper_hyper and lr_ok and config.get("buffer_size") == 1 and schemas.number(config.get("clip") or 0.01) == 0.01
    if mech == "prs":
        return paper_hyper and lr_ok and config.get("buffer_size") == 100 and schemas.number(config.get("clip") or 1.0) == 1.0
    if mech == "none":
        return paper_hyper and lr_ok
    return False


def _true_scores(ts: list[schemas.TrainTrial]) -> bool:
    """With a privatized score the run's own FST and μ come from noisy scores (what the aggregator
    saw); utility is then judged on the true scores kept for evaluation."""
    return all(t.fst_true_scores is not None for t in ts)


def _utility_fsts(ts: list[schemas.TrainTrial]) -> np.ndarray:
    true = _true_scores(ts)
    return np.array([(t.fst_true_scores if true else t.fst) for t in ts], dtype=float)


def utility_from_run(src: Source) -> tuple[list[UtilityRow], list[dict], list[dict]]:
    from pgc.metrics import average_scores, success_ratio  # pure functions

    groups: dict[str, list[schemas.TrainTrial]] = {}
    for t in src.result.trials:
        groups.setdefault(_setting_of(t.config)[2], []).append(t)
    rows, curves, ratios = [], [], []
    for setting, ts in groups.items():
        config = ts[0].config
        mech, eps, _ = _setting_of(config)
        # the horizon is the configured cap: a trial stopped at its first success received fewer
        horizon = int(max(max(t.submissions or 0, int(schemas.number(t.config.get("submissions")) or 0)) for t in ts))
        true_metrics = _true_scores(ts)
        fsts = np.array([x if x is not None else math.inf
                         for x in ((t.fst_true_scores if true_metrics else t.fst) for t in ts)], dtype=float)
        finite = fsts[np.isfinite(fsts)]
        ratio = float(np.mean(fsts <= horizon))
        med = float(np.median(fsts))
        final_mu = [x for x in ((t.final_mu_true_scores if true_metrics else t.final_mu) for t in ts) if x is not None]
        mus = []
        for t in ts:
            scores_file = src.run_dir / t.dir / "scores.npy" if src.run_dir else None
            if scores_file is not None and scores_file.is_file():
                try:
                    scores = np.load(scores_file, allow_pickle=False)
                except (ValueError, OSError):
                    continue
                mus.append(average_scores(scores, int(config.get("window", 10))))
        if mus:
            curves.append({"label": f"{src.label}: {setting}", "mu": mus, "target": config.get("target_score", 195)})
        grid = np.linspace(1, horizon, 200)
        ratios.append({"label": f"{src.label}: {setting}", "n": grid, "ratio": success_ratio(fsts, grid)})
        paper = PAPER.get((mech, eps)) if _is_paper_setting(config) else None
        rows.append(UtilityRow(source=src.label, setting=setting, mechanism=mech, epsilon=eps, trials=len(ts),
                               horizon=horizon, fst_median=med, success_ratio=ratio, relative_auc=None,
                               final_mu=float(np.median(final_mu)) if final_mu else None, paper=paper,
                               note="; ".join(x for x in (
                                   "" if finite.size else "no trial reached the target",
                                   "FST and μ from the true scores (the aggregator saw privatized ones)"
                                   if true_metrics else "") if x)))
    # relative AUC against a non-private setting of the same run, same horizon
    from pgc.metrics import relative_auc

    refs = [r for r in rows if r.mechanism == "none"]
    if refs:
        ref = refs[0]
        ref_fsts = _utility_fsts(groups[ref.setting])
        for r in rows:
            fsts = _utility_fsts(groups[r.setting])
            h = min(r.horizon, ref.horizon)
            r.relative_auc = relative_auc(fsts, ref_fsts, h)
    return rows, curves, ratios


# ---------------------------------------------------------------------------------------------
# replicate → tables (rendered as given; the replicate helper owns its format)
# ---------------------------------------------------------------------------------------------


def _interval(v: list[float] | None, digits: int = 3) -> str:
    if v and len(v) == 2:
        return f"[{fmt_eps(v[0], digits)}, {fmt_eps(v[1], digits)}]"
    return ""


def _value(d: dict | None, key: str) -> float | None:
    return schemas.number((d or {}).get(key))


def replicate_rows(result: schemas.ReplicateResult) -> list[dict]:
    """The ``pgc replicate`` settings as display rows (ours beside the paper's, verdicts, control)."""
    rows = []
    for r in result.settings:
        label = f"{r.mechanism} ε={fmt_eps(r.epsilon)} |B|={r.buffer_size if r.buffer_size is not None else '?'}"
        if r.variant:
            label += f" ({r.variant})"
        if r.control:
            label += " — zero-information control"
        auc = r.relative_auc or {}
        primary = next((k for k in auc if result.primary_reference and result.primary_reference.endswith(str(k))),
                       next(iter(auc), None))
        auc_main = auc.get(primary) if primary is not None else None
        paper = r.paper or {}
        verdict = r.verdict or {}
        rows.append({
            "setting": label, "trials": r.trials,
            "median FST": f"{fmt_eps(r.median_fst, 5)} {_interval(r.median_fst_ci, 6)}".strip(),
            "paper FST": fmt_eps(_value(paper, "median_fst"), 6) if paper else "—",
            "success ratio": f"{fmt_eps(r.success_ratio, 2)} {_interval(r.success_ratio_ci)}".strip(),
            "paper SR": fmt_eps(_value(paper, "success_ratio"), 2) if paper else "—",
            "rel. AUC": (f"{fmt_eps(_value(auc_main, 'value'), 3)} "
                         f"{_interval([schemas.number(x) for x in auc_main.get('ci') or []])}".strip()
                         if isinstance(auc_main, dict) else "—"),
            "paper AUC": fmt_eps(_value(paper, "relative_auc"), 3) if paper else "—",
            "verdicts (FST / SR / AUC)": " / ".join(str(verdict.get(k, "—")) for k in ("median_fst", "success_ratio",
                                                                                     "relative_auc")) if verdict else "—",
            "vs control": (r.vs_control or {}).get("verdict", "—"),
        })
    return rows


def replicate_tables(src: Source) -> dict:
    result = src.result
    assert isinstance(result, schemas.ReplicateResult)
    data = result.to_dict()
    out = {"source": src.label, "rows": replicate_rows(result), "text": [], "figures": {}}
    out["text"].extend(result.notes or [])
    out["images"] = []
    for plot in result.plots or []:  # PNG files the result names, read only from its own folder
        found = read_png_inside(plot.file, src.path.parent)
        if found is not None and found[0] not in {p for p, _ in out["images"]}:
            out["images"].append((found[0], found[1]))
    if not result.settings:
        return out
    reading = result.reading or {}
    spec = result.spec or {}
    if reading.get("summary"):
        out["text"].append(f"Reading '{reading.get('name')}': {reading['summary']}")
    if spec:
        level = result.level if result.level is not None else 0.95
        out["text"].append(f"{spec.get('trials')} trials per setting, cap {spec.get('cap')} submissions; intervals "
                           f"at {level:.0%}; wall time {result.wall_time_s} s.")
    try:  # the replicate helper's own figures (reports.replication), from the same JSON
        from .replication import figure2, figure3

        out["figures"]["replicate_figure3.png"] = ("Figure 3 — success ratio (dashed: zero-information control)",
                                                  figure3(data))
        if result.figure2:
            out["figures"]["replicate_figure2.png"] = ("Figure 2 — average scores with and without buffering",
                                                      figure2(data))
    except Exception as exc:  # a figure that cannot be drawn must not hide the tables
        out["text"].append(f"(replication figures unavailable: {type(exc).__name__}: {exc})")
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


# ---------------------------------------------------------------------------------------------
# warnings
# ---------------------------------------------------------------------------------------------


def base_channel(channel: str) -> str:
    """The channel without its k: "gradient×3" → "gradient", "gradient×3 split" → "gradient split"."""
    return " ".join(_K_IN_NAME.sub(" ", channel.split(" (k=")[0]).split())


def per_submission_claim(row: BoundRow, rows: list[BoundRow]) -> float | None:
    """The claim of ONE submission for a k-submission row: the claim of the k = 1 row of the same result,
    subject and base channel (e.g. "gradient" for "gradient×3"); else the row's own claim."""
    base = base_channel(row.channel)
    for r in rows:
        if r.source == row.source and r.subject == row.subject and not r.k and r.channel.strip() == base and r.claimed is not None:
            return r.claimed if math.isfinite(r.claimed) else None
    if row.claimed is not None and math.isfinite(row.claimed) and "split" not in row.channel:
        return row.claimed / row.k if row.k and "compos" in " ".join(row.notes) else row.claimed
    return None


def build_warnings(f: Findings, c: ReportContent, *, own: bool = True) -> list[dict]:
    """Warnings about one group of findings; the notes that concern the training run itself (side
    channels and composition in the protocol, utility) only for the run's own group."""
    w: list[dict] = []
    has_train = own and any(s.kind == "train" for s in c.sources)
    violated = [b for b in f.bounds if b.verdict == "violated" and not b.outside_claim]
    # a row above its claim that the family-wise (Holm) test does not confirm is one of many bounds
    # each valid alone at its confidence: reported, but not as a proven violation
    lone = [b for b in violated if b.holm_significant is False]
    violated = [b for b in violated if b.holm_significant is not False]
    if lone:
        worst = max(lone, key=lambda b: b.lower_bound - (b.claimed or 0))
        w.append({"level": "warning", "title": "A bound above its claim, not significant over the family",
                  "text": f"{len(lone)} row(s) certify slightly more than claimed when read alone — worst: "
                          f"{worst.subject} ({worst.channel}) ε ≥ {fmt_eps(worst.lower_bound)} against "
                          f"ε = {fmt_eps(worst.claimed)} — but not after Holm's correction over all rows with a "
                          "p-value: with many bounds each valid alone at its confidence, a few cross by chance. "
                          "Re-run that audit with fresh samples to tell chance from a leak."})
    if violated:
        worst = max(violated, key=lambda b: b.lower_bound - (b.claimed or 0))
        w.append({"level": "critical", "title": "Privacy claim exceeded",
                  "text": f"{len(violated)} audited output(s) leak more than claimed. Worst: {worst.subject} "
                          f"({worst.channel}) claims ε = {fmt_eps(worst.claimed)} but the audit certifies "
                          f"ε ≥ {fmt_eps(worst.lower_bound)} at {fmt_eps(worst.confidence)} confidence. "
                          "The claim is false for this implementation, not merely loose."})
    unprot = [b for b in f.bounds if b.outside_claim and b.lower_bound > 0]
    if unprot and all(b.system is not None for b in unprot):  # system audits: channels by the system's names
        worst = max(unprot, key=lambda b: b.lower_bound)
        over = [b for b in unprot if b.claimed is not None and math.isfinite(b.claimed) and b.lower_bound > b.claimed]
        w.append({"level": "critical", "title": "Channels outside the claim leak",
                  "text": f"{len(unprot)} channel audit(s) of channels the claim does not cover certify a leak: "
                          f"{worst.channel} of {worst.subject} gives ε ≥ {fmt_eps(worst.lower_bound)}"
                          + (f", above the claimed ε = {fmt_eps(worst.claimed)}; {len(over)} such bound(s) exceed the "
                             "claim, so the system as a whole does not deliver it." if over else ".")})
    elif unprot:
        worst = max(unprot, key=lambda b: b.lower_bound)
        over = [b for b in unprot if b.claimed is not None and math.isfinite(b.claimed) and b.lower_bound > b.claimed]
        w.append({"level": "critical", "title": "Unprotected side channels (score, timing)",
                  "text": f"The privacy claim covers the noisy gradient only. {len(unprot)} channel audit(s) show that "
                          f"what the agent reports next to it reveals its environment: {worst.channel} of "
                          f"{worst.subject} gives ε ≥ {fmt_eps(worst.lower_bound)}"
                          + (f", above the claimed ε = {fmt_eps(worst.claimed)}; {len(over)} such bound(s) exceed the "
                             "claim, so the system as a whole does not deliver it. " if over else ". ")
                          + "The episode score is sent in the clear and the arrival time is the start time plus the "
                          "episode length, so an aggregator learns ψ from them whatever ε the gradient noise has."})
    elif any(b.outside_claim for b in f.bounds):
        w.append({"level": "warning", "title": "Score and timing are outside the claim",
                  "text": "The ε claim covers the noisy gradient only; the score and timing channels are released "
                          "without noise. The channel audits given here found no leak at their models and ψ pairs "
                          "(ε_LB = 0), which bounds nothing: a better-trained model or a wider pair can make them "
                          "leak, and nothing in the protocol limits how much."})
    elif has_train and not c.protection:
        w.append({"level": "warning", "title": "Score and timing are outside the claim",
                  "text": "In the PGC-A3C protocol each submission carries the episode score in the clear, and its "
                          "arrival time is its start time plus the episode length. The ε of the gradient mechanism "
                          "says nothing about these channels; no channel audit was given to this report."})
    single_claim_exceeded = []
    for b in f.bounds:
        per = per_submission_claim(b, f.bounds)
        if b.k and b.k > 1 and per is not None and b.lower_bound > per and not b.outside_claim:
            single_claim_exceeded.append((b, per))
    if single_claim_exceeded:
        b, per = max(single_claim_exceeded, key=lambda bp: bp[0].lower_bound / max(bp[1], 1e-12))
        w.append({"level": "warning", "title": "Composition not accounted for",
                  "text": f"With k = {b.k} submissions from the same environment ({b.channel}) the audit certifies "
                          f"ε ≥ {fmt_eps(b.lower_bound)}, above the per-submission claim ε = {fmt_eps(per)}. "
                          "A per-agent ε does not protect an environment shared by many agents or an agent that "
                          "submits repeatedly; the budget composes (up to kε)."})
    elif has_train:
        w.append({"level": "info", "title": "Composition",
                  "text": "Every agent draws ψ from a small set Ψ, so each environment is shared by many submissions. "
                          "The ε per submission holds per agent; if the environment itself is the secret, its "
                          "protection composes over all submissions made with it (up to kε)."})
    above = [a for a in f.attacks if a.above_ceiling and not a.uses_side_channel]
    if above:
        a = max(above, key=lambda a: a.accuracy - (a.ceiling or 0))
        w.append({"level": "critical", "title": "Attack beats the ε-LDP ceiling",
                  "text": f"{a.attacker} ({a.channels}, ε = {fmt_eps(a.epsilon)}, k = {a.k or 1}) reaches accuracy "
                          f"{a.accuracy:.3f} (CI low {fmt_eps(a.ci_low)}) above the ceiling {a.ceiling:.3f} that any "
                          "attacker must respect if the claim held, from the privatized gradient alone: a privacy "
                          "violation (or an evaluation bug)."})
    above_side = [a for a in f.attacks if a.above_ceiling and a.uses_side_channel]
    if above_side:
        a = max(above_side, key=lambda a: a.accuracy - (a.ceiling or 0))
        w.append({"level": "critical", "title": "Attacks through score/timing beat the ε-LDP ceiling",
                  "text": f"{len(above_side)} attack(s) that read the score or timing channel beat the ceiling that "
                          f"the ε claim would impose: {a.attacker} ({a.channels}, ε = {fmt_eps(a.epsilon)}, "
                          f"k = {a.k or 1}) reaches {a.accuracy:.3f} (CI low {fmt_eps(a.ci_low)}) against a ceiling of "
                          f"{a.ceiling:.3f}. The gradient mechanism is not at fault; what the agent reports beside it "
                          "is unprotected, so the system does not deliver its claim."})
    defects = [a for a in f.attacks if a.attacker_defect]
    if defects:
        a = min(defects, key=lambda a: a.ci_high if a.ci_high is not None else a.accuracy)
        w.append({"level": "warning", "title": "Attacker defect: accuracy below chance",
                  "text": f"{len(defects)} attack row(s) lie entirely below chance (e.g. {a.attacker}, {a.channels}, "
                          f"ε = {fmt_eps(a.epsilon)}, k = {a.k or 1}: {a.accuracy:.3f}, CI high {fmt_eps(a.ci_high)} < "
                          f"chance {fmt_eps(a.chance)}). Under a uniform prior no sound attacker is worse than chance, so "
                          "these rows say something about the attacker (or sampling luck among many rows), nothing about "
                          "privacy; they are left out of the accuracy table and the plot."})
    limited = [b for b in f.bounds if b.budget_limited]
    if limited:
        b = limited[0]
        w.append({"level": "info", "title": "Bounds limited by the sample budget",
                  "text": f"{len(limited)} lower bound(s) reach ≥ {BUDGET_LIMIT_FRACTION:.0%} of the largest ε their sample "
                          f"budget can certify (e.g. {b.subject}, {b.channel}: ε ≥ {fmt_eps(b.lower_bound)} with a cap of "
                          f"{fmt_eps(b.cap)} at {b.samples or '?'} samples per side). The true ε may be much larger; "
                          "more samples would raise the bound."})
    unreachable = [b for b in f.bounds if b.cap and b.claimed and math.isfinite(b.claimed) and b.cap < b.claimed
                   and not b.verdict.startswith("violated")]
    if unreachable:
        b = unreachable[0]
        w.append({"level": "info", "title": "Claims beyond what the audit could refute",
                  "text": f"{len(unreachable)} claim(s) exceed the certifiable cap (e.g. {b.subject}, {b.channel}: "
                          f"ε = {fmt_eps(b.claimed)} vs cap "
                          f"{fmt_eps(b.cap)}): with this budget even a perfect test could not show a violation, so "
                          "'consistent' there means 'not refutable with this budget'."})
    no_learn = [u for u in c.utility if not u.success_ratio] if own else []
    if no_learn:
        w.append({"level": "warning", "title": "Little or no utility",
                  "text": f"{len(no_learn)} of {len(c.utility)} training setting(s) never reached the target score "
                          f"(μ ≥ 195) within their horizon. Privacy numbers for a model that does not learn "
                          "describe a mechanism, not a useful system."})
    return w


# ---------------------------------------------------------------------------------------------


def protection_records(sources: list[Source]) -> list[dict]:
    """Which channels each protected run / audit covers (pgc.protect) and its total ε."""
    out: list[dict] = []

    def add(src, subject, protect, total, gradient, score):
        rec = {"source": src.label, "subject": subject, "protect": list(protect), "total_epsilon": total,
               "gradient_epsilon": gradient, "score_epsilon": score}
        if rec not in out:
            out.append(rec)

    for src in sources:
        r = src.result
        if isinstance(r, schemas.TrainRun):
            for t in r.trials:
                if t.protect:
                    add(src, f"run: {_setting_of(t.config)[2]}", t.protect, t.claimed_epsilon_total,
                        t.gradient_epsilon, t.score_epsilon)
        elif isinstance(r, schemas.AuditResult):
            if r.protection and r.protection.protect:
                p = r.protection
                add(src, "audit (adversarial model)", p.protect, p.claimed_epsilon_total, p.gradient_epsilon,
                    p.score_epsilon)
            for a in r.environment_audits or []:
                if a.protect:
                    add(src, "audit", a.protect, a.claimed_epsilon, a.gradient_epsilon, a.score_epsilon)
            for a in r.adversarial_audits or []:
                if a.protect:
                    add(src, "audit (adversarial model)", a.protect, a.claimed_epsilon, a.gradient_epsilon,
                        a.score_epsilon)
    return out


def mitigation_costs_from_result(src: Source) -> dict:
    """The utility cost of the channel mitigations (``scripts/mitigations_utility.py``): per mechanism,
    ε and variant, the aggregator's and the true success and median FST."""
    r = src.result
    assert isinstance(r, schemas.MitigationsUtility)
    rows = [{"mechanism": x.mechanism, "epsilon": x.epsilon, "variant": x.variant,
             "gradient_epsilon": x.gradient_epsilon, "score_epsilon": x.score_epsilon, "trials": x.trials,
             "successes": x.successes, "median_fst": x.median_fst, "true_successes": x.true_successes,
             "median_true_fst": x.median_true_fst, "median_true_fst_ci": x.median_true_fst_ci,
             "median_ticks_at_success": x.median_ticks_at_success} for x in r.rows]
    spec = r.spec or {}
    return {"source": src.label, "reading": r.reading, "cap": spec.get("cap"),
            "command": r.command, "rows": rows}


BANDIT_SECTION = "federated-bandits"  # the report_section the federated bandit systems name


def is_bandit_audit(header: dict) -> bool:
    """A system audit that the federated-bandits section renders (the system asked for it)."""
    return header.get("report_section") == BANDIT_SECTION


def bandit_regret(src: Source) -> dict:
    """A federated-bandit regret result: the time-averaged group regret per algorithm and setting, the
    privacy cost against the number of silos M and the exponent fitted to it beside the theories'
    exponents, and the writer's PNG (``plot``, else the file's stem + .png beside it) when there is one."""
    r = src.result
    assert isinstance(r, schemas.BanditRegret)
    found = read_png_inside(r.plot or src.path.with_suffix(".png").name, src.path.parent)
    curves = [{"algorithm": c.algorithm, "label": c.label, "n_silos": c.n_silos, "epsilon": c.epsilon,
               "delta": c.delta, "batch": c.batch, "sigma": c.sigma, "lambda": schemas.number(c.extra.get("lambda")),
               "threshold": c.threshold, "mean_syncs": c.mean_syncs, "t": c.t,
               "regret": c.time_averaged_group_regret, "lower": c.lower, "upper": c.upper,
               "final": c.group_regret_at_T.mean if c.group_regret_at_T else None,
               "final_interval": c.group_regret_at_T.interval if c.group_regret_at_T else None} for c in r.curves]
    cost = [{"n_silos": p.n_silos, "mean": p.privacy_cost_mean, "interval": p.interval,
             "private": p.private_regret_at_T, "nonprivate": p.nonprivate_regret_at_T} for p in r.privacy_cost]
    fit = None
    if r.fit is not None:
        fit = {"exponent": r.fit.exponent, "interval": r.fit.interval, "intercept": r.fit.intercept,
               "level": r.fit.level, "resamples": r.fit.resamples, "method": r.fit.method,
               "theory": dict(r.fit.theory or {}), "epsilon": r.fit.epsilon}
    return {"source": src.label, "reference": src.reference, "label": r.label, "settings": r.settings,
            "curves": curves, "privacy_cost": cost,
            "fit": fit, "plot_png": found[1] if found else None}


def bandit_attack_rows(src: Source) -> list[dict]:
    """The rows of a federated-bandit attack: accuracy with its interval beside chance and the (ε, δ)-DP
    ceiling of the system's claim. ``above_ceiling``/``above_chance`` are read from the interval's lower end."""
    r = src.result
    assert isinstance(r, schemas.BanditAttack)
    return [{"source": src.label, "reference": src.reference, "system": x.system, "pair": x.pair,
             "channel": x.channel, "test_channel": x.test_channel or x.channel,
             "covered": True if x.covered_by_claim is None else x.covered_by_claim, "accuracy": x.accuracy,
             "interval": x.interval, "level": x.level, "n_test": x.n_test, "chance": x.chance, "ceiling": x.ceiling,
             "claim_epsilon": x.claim.epsilon, "claim_delta": x.claim.delta,
             "above_ceiling": x.interval[0] > x.ceiling, "above_chance": x.interval[0] > x.chance} for x in r.rows]


def _worst_verdict(rows: list[BoundRow], family_size: int) -> str:
    """The worst verdict among rows that count: Holm-significant ones when the family has members."""
    counted = [b for b in rows if b.holm_significant] if family_size else rows
    verdicts = [b.verdict for b in counted] or ["consistent"]
    return max(verdicts, key=lambda v: _VERDICT_ORDER.get(v, 0))


def summary_rows(f: Findings) -> list[dict]:
    """The summary table: one row per observer group × channel family, the largest certified bound
    of the group beside its claim, the certifiable cap and the group's verdict (Holm-corrected)."""
    groups: dict[tuple[str, str, float | None], list[BoundRow]] = {}
    for b in f.bounds:  # results audited at different claims (ε = 1, ε = 4) stay in separate rows
        claim = per_submission_claim(b, f.bounds) if b.k else None
        claim = b.claimed if claim is None else claim
        groups.setdefault((b.group or b.subject, channel_family(b.channel), claim), []).append(b)
    out = []
    for (group, family, claim), rows in groups.items():
        worst = max(rows, key=lambda b: b.lower_bound)
        claims = sorted({b.claimed for b in rows if b.claimed is not None and math.isfinite(b.claimed)})
        accountant = next((b.accountant for b in rows if b.accountant is not None), None)
        out.append({"group": group, "family": family, "claimed": claim, "claims": claims, "accountant": accountant,
                    "lower_bound": worst.lower_bound, "cap": worst.cap, "worst_subject": worst.subject,
                    "worst_channel": worst.channel, "rows": len(rows),
                    "verdict": _worst_verdict(rows, f.family.get("size", 0)),
                    "outside_claim": worst.outside_claim, "budget_limited": worst.budget_limited})
    order = {"mechanism": 0, "self-test": 1, "honest aggregator": 2, "adversarial aggregator": 3}
    fam_order = {"output": 0, "gradient": 1, "score": 2, "timing": 3, "all": 4}
    out.sort(key=lambda r: (order.get(r["group"], 5), r["group"], math.inf if r["claimed"] is None else r["claimed"],
                            fam_order.get(r["family"], 5), r["family"]))
    return out


def _findings(sources: list[Source]) -> Findings:
    f = Findings()
    for src in sources:
        if src.kind == "audit":
            f.bounds.extend(bounds_from_audit(src))
            adv = adversarial_from_audit(src)
            if adv is not None:
                f.adversarial.append(adv)
        elif src.kind == "system-audit":
            rows, header = bounds_from_system_audit(src)
            f.bounds.extend(rows)
            f.system_audits.append(header)
        elif src.kind == "attack":
            f.attacks.extend(attacks_from_result(src))
        elif src.kind == "bandit-regret":
            f.bandit_regret.append(bandit_regret(src))
        elif src.kind == "bandit-attack":
            f.bandit_attacks.extend(bandit_attack_rows(src))
    f.family = holm_family(f.bounds)
    return f


def build_content(sources: list[Source]) -> ReportContent:
    c = ReportContent(sources=sources)
    c.own = _findings([s for s in sources if not s.reference])
    c.reference = _findings([s for s in sources if s.reference])
    for src in sources:
        if src.kind == "train":
            rows, curves, ratios = utility_from_run(src)
            c.utility.extend(rows)
            c.curves.extend(curves)
            c.success_curves.extend(ratios)
        elif src.kind == "replicate":
            c.replicate.append(replicate_tables(src))
        elif src.kind == "tune":
            c.tuning.append({"source": src.label, "study": src.result})
        elif src.kind == "mitigations-utility":
            c.mitigation_costs.append(mitigation_costs_from_result(src))
    c.protection = protection_records(sources)
    c.own.warnings = build_warnings(c.own, c, own=True)
    c.reference.warnings = build_warnings(c.reference, c, own=False)
    return c
