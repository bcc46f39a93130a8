"""From loaded sources to the report's content: headline bounds, attacks, composition, utility,
tuning, warnings. Plain data (dicts/lists of numbers and words); rendering lives in :mod:`reports.render`.

Extraction is structural, not tied to one writer's layout: an audit result contributes every JSON
object carrying ``epsilon_lower_bound`` (the outermost one of a nest), an attack result every object
carrying ``accuracy``. Each row keeps the budget that produced it (samples per side, confidence,
statistic) so the reader can judge it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .loaders import Source, number, walk

# Paper §4 numbers (Tables 1-3; 20 trials, cap 90,000 submissions), keyed by (mechanism, ε).
PAPER = {
    ("laplace", 1.0): {"fst_median": 18377, "success_ratio": 0.80, "relative_auc": 0.673},
    ("laplace", 2.0): {"fst_median": 20238.5, "success_ratio": 0.90, "relative_auc": 0.711},
    ("laplace", 5.0): {"fst_median": 5714.5, "success_ratio": 1.00, "relative_auc": 0.909},
    ("laplace", 10.0): {"fst_median": 4055, "success_ratio": 1.00, "relative_auc": 0.965},
    ("none", math.inf): {"fst_median": 1769, "success_ratio": 1.00, "relative_auc": 1.0},
    ("prs", 1.0): {"fst_median": 25226.5, "success_ratio": 0.85, "relative_auc": 0.660},
    ("prs", 2.0): {"fst_median": 7549, "success_ratio": 0.95, "relative_auc": 0.862},
    ("prs", 5.0): {"fst_median": 2656.5, "success_ratio": 0.90, "relative_auc": 0.835},
    ("prs", 10.0): {"fst_median": 11217.5, "success_ratio": 0.90, "relative_auc": 0.771},
}
PAPER_HORIZON = 90_000

# Transcript channels the paper's ε claim does not cover (the score is sent in the clear; arrival
# time is start time + episode length).
_UNPROTECTED = re.compile(r"score|timing|time|arrival|order|length|side", re.I)
_JOINT = re.compile(r"\ball\b|joint|combined|together|everything", re.I)
BUDGET_LIMIT_FRACTION = 0.9  # a bound within 10% of the certifiable cap is limited by the sample budget


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

    @property
    def outside_claim(self) -> bool:
        """A side channel the claim does not cover: score/timing/all rows of an unprotected configuration
        (with the mitigations on, the audit compares them with the total ε and they are inside the claim)."""
        return is_side_channel(self.channel) and not self.protect

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
class ReportContent:
    sources: list[Source]
    bounds: list[BoundRow] = field(default_factory=list)
    attacks: list[AttackRow] = field(default_factory=list)
    utility: list[UtilityRow] = field(default_factory=list)
    curves: list[dict] = field(default_factory=list)  # learning curves: {label, mu (array), fsts}
    success_curves: list[dict] = field(default_factory=list)  # {label, n (array), ratio (array)}
    tuning: list[dict] = field(default_factory=list)
    replicate: list[dict] = field(default_factory=list)  # {source, tables: [...], verdict text}
    warnings: list[dict] = field(default_factory=list)  # {level, title, text}
    facts: list[str] = field(default_factory=list)
    adversarial: list[dict] = field(default_factory=list)  # {source, audits: [...], curve: [...]}
    protection: list[dict] = field(default_factory=list)  # {source, subject, protect, total, gradient, score}
    family: dict = field(default_factory=dict)  # Holm over the channel rows with a p-value (see holm_family)
    mitigation_costs: list[dict] = field(default_factory=list)  # {source, reading, cap, rows} (mitigation_costs_from_result)


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _first(d: dict, *names, default=None):
    for name in names:
        if name in d and d[name] is not None:
            return d[name]
    return default


def _num(d: dict, *names) -> float | None:
    for name in names:
        if name in d:
            x = number(d[name])
            if x is not None:
                return x
    return None


def _int(d: dict, *names) -> int | None:
    x = _num(d, *names)
    return int(x) if x is not None and math.isfinite(x) else None


def _outermost(data: Any, key: str) -> list[tuple[tuple, dict]]:
    """Objects holding ``key`` (with a numeric value) that are not nested inside another such object."""
    found: list[tuple[tuple, dict]] = []
    for path, obj in walk(data):
        if key in obj and number(obj[key]) is not None:
            if any(path[: len(p)] == p for p, _ in found):
                continue
            found.append((path, obj))
    return found


def _context(data: dict, path: tuple, names: tuple[str, ...]) -> Any:
    """The nearest value of any of ``names`` on the way from the root to ``path`` (innermost wins)."""
    value = None
    node: Any = data
    if isinstance(node, dict):
        value = _first(node, *names, default=value)
    for step in path:
        node = node[step]
        if isinstance(node, dict):
            value = _first(node, *names, default=value)
    return value


def _path_label(path: tuple) -> str:
    parts = [p for p in path if isinstance(p, str) and p not in ("results", "rows", "bounds", "channels", "items")]
    return "/".join(parts)


# ---------------------------------------------------------------------------------------------
# audit → bounds
# ---------------------------------------------------------------------------------------------


def is_side_channel(channel: str) -> bool:
    """A channel the gradient mechanism does not cover (score, timing, arrival) or that includes one (all)."""
    if re.search(r"canary|mechanism", channel, re.I):
        return False
    return bool(_JOINT.search(channel)) or (bool(_UNPROTECTED.search(channel)) and not re.search(r"gradient", channel, re.I))


def channel_verdict(channel: str, claimed: float | None, lower_bound: float, violation: Any = None) -> str:
    """Plain verdict for one bound: violated / unprotected channel / consistent."""
    joint = bool(_JOINT.search(channel))
    unprotected = bool(_UNPROTECTED.search(channel)) and not re.search(r"gradient", channel, re.I) and not joint
    if unprotected:  # the claim does not cover this channel at all
        return "unprotected channel" if lower_bound > 0 else "consistent"
    if claimed is not None and math.isfinite(claimed) and lower_bound > claimed:
        return "violated (via unprotected channel)" if joint else "violated"
    if violation is True and not unprotected:
        return "violated"
    if unprotected and lower_bound > 0:
        return "unprotected channel"
    return "consistent"


_K_IN_NAME = re.compile(r"[×x]\s*(\d+)")


def _audit_rows(data: dict) -> list[tuple[tuple, dict]]:
    """The flat ``channels`` list of ``pgc audit`` when present (it summarises the nested results),
    otherwise every outermost object with an ``epsilon_lower_bound``."""
    flat = data.get("channels")
    if isinstance(flat, list) and any(isinstance(r, dict) and number(r.get("epsilon_lower_bound")) is not None
                                      for r in flat):
        return [(("channels", i), r) for i, r in enumerate(flat)
                if isinstance(r, dict) and number(r.get("epsilon_lower_bound")) is not None]
    return _outermost(data, "epsilon_lower_bound")


def bounds_from_audit(src: Source) -> list[BoundRow]:
    rows = []
    data = src.data
    for path, obj in _audit_rows(data):
        bound = obj.get("bound") if isinstance(obj.get("bound"), dict) else {}
        lb = number(obj["epsilon_lower_bound"])
        claimed = _num(obj, "claimed_epsilon", "claim", "epsilon_claimed")
        if claimed is None:
            claimed = number(_context(data, path, ("claimed_epsilon",)))
        k = _int(obj, "k", "linked", "submissions_linked") or _int(bound, "k")
        channel = str(_first(obj, "channel", "channels", default=None) or _first(bound, "channel", default=None)
                      or ("mechanism output" if "mechanism" in obj else _path_label(path) or "output"))
        if k is None and _K_IN_NAME.search(channel):
            k = int(_K_IN_NAME.search(channel).group(1))
        elif k and k > 1 and "k=" not in channel:
            channel = f"{channel} (k={k})"
        scope = obj.get("scope")
        subject = str(_first(obj, "mechanism", "subject", "target", "name", "mutant", default=None)
                      or (scope if isinstance(scope, str) else None)
                      or _context(data, path, ("mechanism", "subject", "run", "model", "target")) or src.label)
        if isinstance(scope, str) and scope.startswith("environment"):
            subject = f"{data.get('model', 'trained')} model · ψ {scope.split(' ', 1)[1]}"
            if data.get("run"):
                subject = f"{Path(str(data['run'])).name} {subject}"
        elif isinstance(scope, str) and scope != "mechanism" and scope not in subject:
            subject = f"{scope}: {subject}"
        pair = _first(obj, "pair", "psi_pair", "environments", default=None)
        if isinstance(pair, (list, tuple)) and len(pair) == 2:
            subject = f"{subject} · ψ {pair[0]} vs {pair[1]}"
        elif isinstance(pair, str):
            subject = f"{subject} · {pair}"
        test = " · ".join(str(x) for x in (_first(bound, "statistic", default=None) or obj.get("statistic"),
                                           _first(bound, "hypothesis", default=None) or obj.get("hypothesis")) if x)
        protect = obj.get("protect") or (data.get("protection") or {}).get("protect") or ()
        protect = tuple(str(x) for x in protect) if isinstance(protect, (list, tuple)) else ()
        verdict = channel_verdict(channel, claimed, lb, obj.get("violation"))
        given = obj.get("verdict")
        if isinstance(given, str) and given.lower() in ("consistent", "violated", "unprotected channel"):
            verdict = given.lower()  # the auditor's own verdict is authoritative
            if verdict == "violated" and is_side_channel(channel) and not protect:
                verdict = "violated (via unprotected channel)"
        p_val = _num(obj, "p_value")
        if verdict.startswith("unprotected") and _num(obj, "p_value_leak") is not None:
            p_val = _num(obj, "p_value_leak")
        true_eps = _num(obj, "true_epsilon")
        row = BoundRow(
            source=src.label, subject=subject, channel=channel, claimed=claimed, lower_bound=lb,
            confidence=_num(obj, "confidence") or _num(bound, "confidence") or number(_context(data, path, ("confidence",))),
            cap=_num(obj, "max_certifiable_epsilon", "certifiable_cap", "cap") or _num(bound, "max_certifiable_epsilon"),
            samples=_int(obj, "samples_per_side", "samples", "n") or _int(bound, "samples_per_side")
            or _int(data, "samples"),
            delta=_num(obj, "delta") if "delta" in obj else _num(bound, "delta"),
            k=k, test=test, verdict=verdict,
            p_value=p_val if p_val is not None and 0.0 <= p_val <= 1.0 else None,
            model=str(obj.get("model") or "") if isinstance(obj.get("model"), str) else "", protect=protect)
        if true_eps is not None:
            row.notes.append(f"true ε {fmt_eps(true_eps)}")
        if obj.get("expected") is not None:
            row.notes.append(f"expected: {obj['expected']}")
        if obj.get("correct_mechanism") is not None:
            row.notes.append("correct mechanism" if obj["correct_mechanism"] else "planted bug")
        if obj.get("passed") is False:
            row.notes.append("SELF-TEST MISJUDGED")
        if isinstance(obj.get("note"), str) and obj["note"]:
            row.notes.append(obj["note"])
        if isinstance(obj.get("statistic"), str) and obj["statistic"] not in row.test:
            row.test = " · ".join(x for x in (row.test, obj["statistic"]) if x)
        rows.append(row)
    return rows


def holm_family(rows: list[BoundRow]) -> dict:
    """Family-wise verdict over every row with a p-value: Holm at α = 1 − confidence (the rows' own
    confidence; the smallest when they differ). Sets ``row.holm_significant``; rows without a p-value
    stay outside the family (None). Per-row bounds are unchanged (each valid alone)."""
    from statsmodels.stats.multitest import multipletests

    members = [r for r in rows if r.p_value is not None]
    confs = [r.confidence for r in members if r.confidence]
    alpha = 1.0 - (min(confs) if confs else 0.95)
    out = {"alpha": alpha, "size": len(members), "excluded": sum(1 for r in rows if r.p_value is None),
           "significant": [], "method": "holm"}
    if not members:
        return out
    reject, adjusted, _, _ = multipletests([r.p_value for r in members], alpha=alpha, method="holm")
    for r, rej, adj in zip(members, reject, adjusted):
        r.holm_significant = bool(rej)
        r.notes.append(f"p = {r.p_value:.3g}, Holm-adjusted {adj:.3g}")
        if rej:
            out["significant"].append({"subject": r.subject, "channel": r.channel, "verdict": r.verdict,
                                       "p_value": r.p_value, "adjusted_p_value": float(adj), "model": r.model})
    return out


# ---------------------------------------------------------------------------------------------
# adversarial aggregator
# ---------------------------------------------------------------------------------------------


def adversarial_from_audit(src: Source) -> dict | None:
    """The ``adversarial_audits`` list and the ``curve`` points of an audit result (tolerant: any key
    may be missing); None when the result has neither."""
    data = src.data
    audits_in = data.get("adversarial_audits")
    curve_in = data.get("curve")
    if not isinstance(audits_in, list) and not isinstance(curve_in, list):
        return None
    audits = []
    for a in audits_in if isinstance(audits_in, list) else []:
        if not isinstance(a, dict):
            continue
        search = a.get("search") if isinstance(a.get("search"), dict) else {}
        chans = [c for c in a.get("channels", []) if isinstance(c, dict)] if isinstance(a.get("channels"), list) else []
        if not chans:
            chans = [{}]
        for ch in chans:
            audits.append({"psi": _num(a, "psi"), "psi_prime": _num(a, "psi_prime"),
                           "mechanism": str(a.get("mechanism") or "—"),
                           "claimed_epsilon": _num(ch, "claimed_epsilon") if _num(ch, "claimed_epsilon") is not None
                           else _num(a, "claimed_epsilon"),
                           "channel": str(ch.get("channel") or "—"), "epsilon_lower_bound": _num(ch, "epsilon_lower_bound"),
                           "ratio": _num(ch, "ratio"), "verdict": str(ch.get("verdict") or "—"),
                           "noise_free_epsilon_lower_bound": _num(a, "noise_free_epsilon_lower_bound"),
                           "objective": str(search.get("objective") or "—"), "evaluations": _int(search, "evaluations"),
                           "wall_time_s": _num(search, "wall_time_s"), "theta_file": str(a.get("theta_file") or "")})
    curve = []
    for pt in curve_in if isinstance(curve_in, list) else []:
        if not isinstance(pt, dict):
            continue
        dpsi = _num(pt, "delta_psi")
        if dpsi is None and _num(pt, "psi") is not None and _num(pt, "psi_prime") is not None:
            dpsi = abs(_num(pt, "psi_prime") - _num(pt, "psi"))
        eps = _num(pt, "epsilon", "claimed_epsilon")
        ratio = _num(pt, "ratio")
        lb = _num(pt, "epsilon_lower_bound")
        if ratio is None and lb is not None and eps and math.isfinite(eps):
            ratio = lb / eps
        if dpsi is None or ratio is None or not dpsi > 0 or not math.isfinite(ratio):
            continue
        curve.append({"delta_psi": dpsi, "ratio": ratio, "epsilon": eps, "epsilon_lower_bound": lb,
                      "model": str(pt.get("model") or "honest"), "channel": str(pt.get("channel") or "all")})
    if not audits and not curve:
        return None
    return {"source": src.label, "mode": data.get("mode"), "audits": audits, "curve": curve}


# ---------------------------------------------------------------------------------------------
# attack → accuracy rows
# ---------------------------------------------------------------------------------------------


def attacks_from_result(src: Source) -> list[AttackRow]:
    rows = []
    data = src.data
    flat = data.get("rows")
    if isinstance(flat, list) and any(isinstance(r, dict) and number(r.get("accuracy")) is not None for r in flat):
        found = [(("rows", i), r) for i, r in enumerate(flat) if isinstance(r, dict) and number(r.get("accuracy")) is not None]
    else:
        found = _outermost(data, "accuracy")
    for path, obj in found:
        ci = _first(obj, "accuracy_ci", "ci", "confidence_interval", default=None)
        lo = hi = None
        if isinstance(ci, (list, tuple)) and len(ci) == 2:
            lo, hi = number(ci[0]), number(ci[1])
        elif isinstance(ci, dict):
            lo, hi = _num(ci, "low", "lower", "lo"), _num(ci, "high", "upper", "hi")
        lo = lo if lo is not None else _num(obj, "accuracy_low", "ci_low", "lower")
        hi = hi if hi is not None else _num(obj, "accuracy_high", "ci_high", "upper")
        eps = _num(obj, "epsilon", "eps")
        if eps is None:
            eps = number(_context(data, path, ("epsilon",)))
        cands = _first(obj, "candidates", default=None) or _context(data, path, ("candidates",))
        if cands is None and isinstance(data.get("threat_model"), dict):
            cands = data["threat_model"].get("candidates")
        n_cands = len(cands) if isinstance(cands, (list, tuple)) else _int(obj, "n_candidates", "candidates")
        channels = _first(obj, "channels", "channel", default=None) or _context(data, path, ("channels", "channel"))
        if isinstance(channels, (list, tuple)):
            channels = "+".join(str(c) for c in channels)
        attacker = _first(obj, "attacker", "attack", "name", default=None) or _context(data, path, ("attacker", "attack"))
        rows.append(AttackRow(
            source=src.label, attacker=str(attacker or _path_label(path) or "attack"), channels=str(channels or "gradient"),
            epsilon=eps, k=_int(obj, "k", "linked") or _int({"k": _context(data, path, ("k",))}, "k"),
            candidates=n_cands, accuracy=float(number(obj["accuracy"])), ci_low=lo, ci_high=hi,
            chance=_num(obj, "chance", "chance_level", "prior_accuracy"),
            ceiling=_num(obj, "ceiling", "ldp_ceiling", "accuracy_ceiling"),
            setting=str(_first(obj, "model", "setting", "label", default="") or ""),
            budget=_int(obj, "budget"), given_verdict=str(obj.get("verdict") or ""),
            given_below_chance=obj.get("below_chance") if isinstance(obj.get("below_chance"), bool) else None))
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


def ldp_ceiling(epsilon: float, k: int, candidates: int) -> float:
    """ε-LDP accuracy ceiling for k linked submissions, uniform prior: e^{kε}/(e^{kε} + |Ψ| − 1)."""
    if math.isinf(epsilon):
        return 1.0
    x = k * epsilon
    return 1.0 / (1.0 + (candidates - 1) * math.exp(-x))


# ---------------------------------------------------------------------------------------------
# train runs → utility rows and curves
# ---------------------------------------------------------------------------------------------


def _setting_of(config: dict) -> tuple[str, float, str]:
    mech = str(config.get("mechanism", "?"))
    eps = number(config.get("epsilon"))
    eps = math.inf if mech == "none" else (eps if eps is not None else math.nan)
    clip = config.get("clip")
    parts = [mech, f"ε={fmt_eps(eps)}"]
    if clip is not None:
        parts.append(f"C={fmt_eps(number(clip))}")
    parts.append(f"|B|={config.get('buffer_size', '?')}")
    if config.get("reduced_dim"):
        parts.append(f"d̂={config['reduced_dim']}")
    hyper = config.get("hyper") or {}
    if hyper.get("action_selection") not in (None, "greedy") or number(hyper.get("lam")) not in (None, 0.5):
        parts.append(f"λ={hyper.get('lam')} {hyper.get('action_selection')}")
    if number(config.get("learning_rate")) not in (None, 0.5):
        parts.append(f"η={config['learning_rate']:g}")
    if config.get("zero_information"):
        parts.append("zero-information control")
    return mech, eps, " ".join(parts)


def _is_paper_setting(config: dict) -> bool:
    mech = config.get("mechanism")
    hyper = config.get("hyper") or {}
    paper_hyper = hyper.get("action_selection", "greedy") == "greedy" and number(hyper.get("lam", 0.5)) == 0.5
    lr_ok = number(config.get("learning_rate", 0.5)) == 0.5
    if mech == "laplace":
        return paper_hyper and lr_ok and config.get("buffer_size") == 1 and number(config.get("clip") or 0.01) == 0.01
    if mech == "prs":
        return paper_hyper and lr_ok and config.get("buffer_size") == 100 and number(config.get("clip") or 1.0) == 1.0
    if mech == "none":
        return paper_hyper and lr_ok
    return False


def _utility_keys(ts: list[dict]) -> tuple[str, str]:
    """(FST key, final-μ key) of a setting's trial summaries: with a privatized score the run's own FST
    and μ come from noisy scores (what the aggregator saw), so utility is judged on the true scores
    kept for evaluation."""
    if all("fst_true_scores" in t for t in ts):
        return "fst_true_scores", "final_mu_true_scores"
    return "fst", "final_mu"


def _utility_fsts(ts: list[dict]) -> np.ndarray:
    return np.array([number(t.get(_utility_keys(ts)[0])) for t in ts], dtype=float)


def utility_from_run(src: Source) -> tuple[list[UtilityRow], list[dict], list[dict]]:
    from pgc.metrics import average_scores, relative_auc, success_ratio  # noqa: F401  (pure functions)

    trials = src.data["trials"]
    groups: dict[str, list[dict]] = {}
    for t in trials:
        if not isinstance(t, dict) or not isinstance(t.get("config"), dict):
            continue
        key = _setting_of(t["config"])[2]
        groups.setdefault(key, []).append(t)
    rows, curves, ratios = [], [], []
    for setting, ts in groups.items():
        config = ts[0]["config"]
        mech, eps, _ = _setting_of(config)
        # the horizon is the configured cap: a trial stopped at its first success received fewer
        horizon = int(max(max(_int(t, "submissions") or 0, int(number(t["config"].get("submissions")) or 0))
                          for t in ts))
        fst_key, mu_key = _utility_keys(ts)
        true_metrics = fst_key == "fst_true_scores"
        fsts = np.array([number(t.get(fst_key)) if number(t.get(fst_key)) is not None else math.inf for t in ts])
        finite = fsts[np.isfinite(fsts)]
        ratio = float(np.mean(fsts <= horizon))
        med = float(np.median(fsts))
        final_mu = [number(t.get(mu_key)) for t in ts if number(t.get(mu_key)) is not None]
        mus = []
        for t in ts:
            scores_file = src.run_dir / str(t.get("dir", "")) / "scores.npy" if src.run_dir else None
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


def _interval(v, digits: int = 3) -> str:
    if isinstance(v, (list, tuple)) and len(v) == 2:
        return f"[{fmt_eps(number(v[0]), digits)}, {fmt_eps(number(v[1]), digits)}]"
    return ""


def replicate_rows(data: dict) -> list[dict] | None:
    """The ``pgc replicate`` settings as display rows (ours beside the paper's, verdicts, control);
    None when the result does not have that layout."""
    settings = data.get("settings")
    if not (isinstance(settings, list) and settings and all(isinstance(r, dict) and "median_fst" in r for r in settings)):
        return None
    primary = None
    ref = data.get("primary_reference")
    rows = []
    for r in settings:
        mech = str(r.get("mechanism"))
        label = f"{mech} ε={fmt_eps(number(r.get('epsilon')))} |B|={r.get('buffer_size', '?')}"
        if r.get("variant"):
            label += f" ({r['variant']})"
        if r.get("control"):
            label += " — zero-information control"
        auc = r.get("relative_auc") or {}
        auc_main = None
        if isinstance(auc, dict) and auc:
            primary = primary or next((k for k in auc if isinstance(ref, str) and ref.endswith(str(k))), None)
            auc_main = auc.get(primary) if primary in auc else next(iter(auc.values()))
        paper = r.get("paper") or {}
        verdict = r.get("verdict") or {}
        rows.append({
            "setting": label, "trials": r.get("trials"),
            "median FST": f"{fmt_eps(number(r.get('median_fst')), 5)} {_interval(r.get('median_fst_ci'), 6)}".strip(),
            "paper FST": fmt_eps(number(paper.get("median_fst")), 6) if paper else "—",
            "success ratio": f"{fmt_eps(number(r.get('success_ratio')), 2)} {_interval(r.get('success_ratio_ci'))}".strip(),
            "paper SR": fmt_eps(number(paper.get("success_ratio")), 2) if paper else "—",
            "rel. AUC": (f"{fmt_eps(number(auc_main.get('value')), 3)} {_interval(auc_main.get('ci'))}".strip()
                         if isinstance(auc_main, dict) else "—"),
            "paper AUC": fmt_eps(number(paper.get("relative_auc")), 3) if paper else "—",
            "verdicts (FST / SR / AUC)": " / ".join(str(verdict.get(k, "—")) for k in ("median_fst", "success_ratio",
                                                                                     "relative_auc")) if verdict else "—",
            "vs control": (r.get("vs_control") or {}).get("verdict", "—"),
        })
    return rows


def replicate_tables(src: Source) -> dict:
    data = src.data
    out = {"source": src.label, "rows": [], "text": [], "images": [], "figures": {}}
    special = replicate_rows(data)
    if special is not None:
        out["rows"] = special
        reading = data.get("reading") or {}
        spec = data.get("spec") or {}
        if isinstance(reading, dict) and reading.get("summary"):
            out["text"].append(f"Reading '{reading.get('name')}': {reading['summary']}")
        if spec:
            out["text"].append(f"{spec.get('trials')} trials per setting, cap {spec.get('cap')} submissions; intervals "
                               f"at {data.get('level', 0.95):.0%}; wall time {data.get('wall_time_s')} s.")
        try:  # the replicate helper's own figures (reports.replication), from the same JSON
            from .replication import figure2, figure3

            out["figures"]["replicate_figure3.png"] = ("Figure 3 — success ratio (dashed: zero-information control)",
                                                      figure3(data))
            if data.get("figure2"):
                out["figures"]["replicate_figure2.png"] = ("Figure 2 — average scores with and without buffering",
                                                          figure2(data))
        except Exception as exc:  # a figure that cannot be drawn must not hide the tables
            out["text"].append(f"(replication figures unavailable: {type(exc).__name__}: {exc})")
        return out
    rows = _first(data, "settings", "rows", "table", default=None)
    if isinstance(rows, dict):
        rows = [{"setting": k, **v} for k, v in rows.items() if isinstance(v, dict)]
    if isinstance(rows, list):
        for r in rows:
            if isinstance(r, dict):
                out["rows"].append(r)
    for key in ("verdict", "verdicts", "reading", "summary_text", "notes"):
        value = data.get(key)
        if isinstance(value, str):
            out["text"].append(value)
        elif isinstance(value, list):
            out["text"].extend(str(v) for v in value if isinstance(v, str))
    seen: set[Path] = set()
    for _, obj in walk(data):
        for key, value in obj.items():
            if isinstance(value, str) and value.lower().endswith(".png") and len(out["images"]) < 6:
                found = read_png_inside(value, src.path.parent)
                if found is not None and found[0] not in seen:
                    seen.add(found[0])
                    out["images"].append((found[0].name, found[1]))
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
    """The claim of ONE submission for a k-submission row: the claim of the k = 1 row of the same subject
    and base channel (e.g. "gradient" for "gradient×3"); else the row's own claim."""
    base = base_channel(row.channel)
    for r in rows:
        if r.subject == row.subject and not r.k and r.channel.strip() == base and r.claimed is not None:
            return r.claimed if math.isfinite(r.claimed) else None
    if row.claimed is not None and math.isfinite(row.claimed) and "split" not in row.channel:
        return row.claimed / row.k if row.k and "compos" in " ".join(row.notes) else row.claimed
    return None


def build_warnings(c: ReportContent) -> list[dict]:
    w: list[dict] = []
    violated = [b for b in c.bounds if b.verdict == "violated" and not b.outside_claim]
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
    unprot = [b for b in c.bounds if b.outside_claim and b.lower_bound > 0]
    if unprot:
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
    elif any(b.outside_claim for b in c.bounds):
        w.append({"level": "warning", "title": "Score and timing are outside the claim",
                  "text": "The ε claim covers the noisy gradient only; the score and timing channels are released "
                          "without noise. The channel audits given here found no leak at their models and ψ pairs "
                          "(ε_LB = 0), which bounds nothing: a better-trained model or a wider pair can make them "
                          "leak, and nothing in the protocol limits how much."})
    elif any(s.kind == "train" for s in c.sources) and not c.protection:
        w.append({"level": "warning", "title": "Score and timing are outside the claim",
                  "text": "In the PGC-A3C protocol each submission carries the episode score in the clear, and its "
                          "arrival time is its start time plus the episode length. The ε of the gradient mechanism "
                          "says nothing about these channels; no channel audit was given to this report."})
    single_claim_exceeded = []
    for b in c.bounds:
        per = per_submission_claim(b, c.bounds)
        if b.k and b.k > 1 and per is not None and b.lower_bound > per and not b.outside_claim:
            single_claim_exceeded.append((b, per))
    if single_claim_exceeded:
        b, per = max(single_claim_exceeded, key=lambda bp: bp[0].lower_bound / max(bp[1], 1e-12))
        w.append({"level": "warning", "title": "Composition not accounted for",
                  "text": f"With k = {b.k} submissions from the same environment ({b.channel}) the audit certifies "
                          f"ε ≥ {fmt_eps(b.lower_bound)}, above the per-submission claim ε = {fmt_eps(per)}. "
                          "A per-agent ε does not protect an environment shared by many agents or an agent that "
                          "submits repeatedly; the budget composes (up to kε)."})
    elif any(s.kind == "train" for s in c.sources):
        w.append({"level": "info", "title": "Composition",
                  "text": "Every agent draws ψ from a small set Ψ, so each environment is shared by many submissions. "
                          "The ε per submission holds per agent; if the environment itself is the secret, its "
                          "protection composes over all submissions made with it (up to kε)."})
    above = [a for a in c.attacks if a.above_ceiling and not a.uses_side_channel]
    if above:
        a = max(above, key=lambda a: a.accuracy - (a.ceiling or 0))
        w.append({"level": "critical", "title": "Attack beats the ε-LDP ceiling",
                  "text": f"{a.attacker} ({a.channels}, ε = {fmt_eps(a.epsilon)}, k = {a.k or 1}) reaches accuracy "
                          f"{a.accuracy:.3f} (CI low {fmt_eps(a.ci_low)}) above the ceiling {a.ceiling:.3f} that any "
                          "attacker must respect if the claim held, from the privatized gradient alone: a privacy "
                          "violation (or an evaluation bug)."})
    above_side = [a for a in c.attacks if a.above_ceiling and a.uses_side_channel]
    if above_side:
        a = max(above_side, key=lambda a: a.accuracy - (a.ceiling or 0))
        w.append({"level": "critical", "title": "Attacks through score/timing beat the ε-LDP ceiling",
                  "text": f"{len(above_side)} attack(s) that read the score or timing channel beat the ceiling that "
                          f"the ε claim would impose: {a.attacker} ({a.channels}, ε = {fmt_eps(a.epsilon)}, "
                          f"k = {a.k or 1}) reaches {a.accuracy:.3f} (CI low {fmt_eps(a.ci_low)}) against a ceiling of "
                          f"{a.ceiling:.3f}. The gradient mechanism is not at fault; what the agent reports beside it "
                          "is unprotected, so the system does not deliver its claim."})
    defects = [a for a in c.attacks if a.attacker_defect]
    if defects:
        a = min(defects, key=lambda a: a.ci_high if a.ci_high is not None else a.accuracy)
        w.append({"level": "warning", "title": "Attacker defect: accuracy below chance",
                  "text": f"{len(defects)} attack row(s) lie entirely below chance (e.g. {a.attacker}, {a.channels}, "
                          f"ε = {fmt_eps(a.epsilon)}, k = {a.k or 1}: {a.accuracy:.3f}, CI high {fmt_eps(a.ci_high)} < "
                          f"chance {fmt_eps(a.chance)}). Under a uniform prior no sound attacker is worse than chance, so "
                          "these rows say something about the attacker (or sampling luck among many rows), nothing about "
                          "privacy; they are left out of the accuracy table and the plot."})
    limited = [b for b in c.bounds if b.budget_limited]
    if limited:
        b = limited[0]
        w.append({"level": "info", "title": "Bounds limited by the sample budget",
                  "text": f"{len(limited)} lower bound(s) reach ≥ {BUDGET_LIMIT_FRACTION:.0%} of the largest ε their sample "
                          f"budget can certify (e.g. {b.subject}, {b.channel}: ε ≥ {fmt_eps(b.lower_bound)} with a cap of "
                          f"{fmt_eps(b.cap)} at {b.samples or '?'} samples per side). The true ε may be much larger; "
                          "more samples would raise the bound."})
    unreachable = [b for b in c.bounds if b.cap and b.claimed and math.isfinite(b.claimed) and b.cap < b.claimed
                   and not b.verdict.startswith("violated")]
    if unreachable:
        b = unreachable[0]
        w.append({"level": "info", "title": "Claims beyond what the audit could refute",
                  "text": f"{len(unreachable)} claim(s) exceed the certifiable cap (e.g. ε = {fmt_eps(b.claimed)} vs cap "
                          f"{fmt_eps(b.cap)}): with this budget even a perfect test could not show a violation, so "
                          "'consistent' there means 'not refutable with this budget'."})
    no_learn = [u for u in c.utility if not u.success_ratio]
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
        data = src.data if isinstance(src.data, dict) else {}
        if src.kind == "train":
            for t in data.get("trials") or []:
                if isinstance(t, dict) and t.get("protect"):
                    mech, eps, setting = _setting_of(t.get("config") or {})
                    add(src, f"run: {setting}", t["protect"], number(t.get("claimed_epsilon_total")),
                        number(t.get("gradient_epsilon")), number(t.get("score_epsilon")))
        elif src.kind == "audit":
            prot = data.get("protection")
            if isinstance(prot, dict) and prot.get("protect"):
                add(src, "audit (adversarial model)", prot["protect"], number(prot.get("claimed_epsilon_total")),
                    number(prot.get("gradient_epsilon")), number(prot.get("score_epsilon")))
            for key in ("environment_audits", "adversarial_audits"):
                for a in data.get(key) or []:
                    if isinstance(a, dict) and a.get("protect"):
                        add(src, "audit" + (" (adversarial model)" if key.startswith("adv") else ""), a["protect"],
                            number(a.get("claimed_epsilon")), number(a.get("gradient_epsilon")),
                            number(a.get("score_epsilon")))
    return out


def mitigation_costs_from_result(src: Source) -> dict:
    """The utility cost of the channel mitigations (``scripts/mitigations_utility.py``): per mechanism,
    ε and variant, the aggregator's and the true success and median FST. Rows it cannot read are skipped."""
    d = src.data
    mechanism = d.get("mechanism")  # results from before several mechanisms were run name one at the top
    rows = []
    for r in d.get("rows") or []:
        if not isinstance(r, dict) or _num(r, "epsilon") is None or not isinstance(r.get("variant"), str):
            continue
        rows.append({"mechanism": str(r.get("mechanism") or mechanism or "?"), "epsilon": _num(r, "epsilon"),
                     "variant": r["variant"], "gradient_epsilon": _num(r, "gradient_epsilon"),
                     "score_epsilon": _num(r, "score_epsilon"), "trials": _int(r, "trials"),
                     "successes": _int(r, "successes"), "median_fst": _num(r, "median_fst"),
                     "true_successes": _int(r, "true_successes"), "median_true_fst": _num(r, "median_true_fst"),
                     "median_true_fst_ci": r.get("median_true_fst_ci"),
                     "median_ticks_at_success": _num(r, "median_ticks_at_success")})
    spec = d.get("spec") if isinstance(d.get("spec"), dict) else {}
    return {"source": src.label, "reading": d.get("reading") or spec.get("reading"), "cap": spec.get("cap"),
            "command": d.get("command"), "rows": rows}


def build_content(sources: list[Source]) -> ReportContent:
    c = ReportContent(sources=sources)
    for src in sources:
        if src.kind == "audit":
            c.bounds.extend(bounds_from_audit(src))
            adv = adversarial_from_audit(src)
            if adv is not None:
                c.adversarial.append(adv)
        elif src.kind == "attack":
            c.attacks.extend(attacks_from_result(src))
        elif src.kind == "train":
            rows, curves, ratios = utility_from_run(src)
            c.utility.extend(rows)
            c.curves.extend(curves)
            c.success_curves.extend(ratios)
        elif src.kind == "replicate":
            c.replicate.append(replicate_tables(src))
        elif src.kind == "tune":
            c.tuning.append({"source": src.label, "data": src.data})
        elif src.kind == "mitigations-utility":
            c.mitigation_costs.append(mitigation_costs_from_result(src))
    c.protection = protection_records(sources)
    c.family = holm_family(c.bounds)
    c.warnings = build_warnings(c)
    return c
