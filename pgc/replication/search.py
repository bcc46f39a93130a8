"""Search over the paper's unstated choices (the knobs of :data:`pgc.replication.grid.KNOBS`).

Every candidate reading runs a reduced grid on *search seeds* — all private cells of Tables 1–3 and
the ε = ∞ reference, ``trials`` each, at the paper's cap, plus its own zero-information controls
(one per mechanism at ε = 1) — and is scored by :func:`reading_fit` against the paper's numbers.
A reading whose ε = 1 cells do not beat their control (:func:`control_gate`) is *rejected*,
whatever its fit: it would be tuning to random search. Candidates are proposed by optuna's TPE
sampler over the discrete knob space (seeded); the study lives in SQLite inside the output folder,
so an interrupted search resumes where it stopped and a proposal seen before is not re-run.

Only confirmation runs on fresh seeds (``pgc replicate --reading NAME --confirms search.json``)
count as the replication; the search's own numbers are for choosing, and the record says how many
readings were tried.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

from scipy import stats

from pgc.errors import UserError
from pgc.schemas.base import json_ready
from pgc.schemas.replicate_kinds import (
    ControlGate,
    GateCell,
    ReadingFit,
    ReadingSearch,
    ReplicateResult,
    SearchCell,
    SearchEntry,
    SearchSpecRecord,
)

from .analysis import replicate
from .grid import (
    KNOBS,
    LITERAL_KNOBS,
    PAPER_CAP,
    PAPER_EPSILONS,
    PAPER_FST_MEDIAN,
    PAPER_RELATIVE_AUC,
    PAPER_SUCCESS_RATIO,
    GridSpec,
    knob_reading_name,
    reading_knobs,
)

SEARCH_FORMAT = "pgc-reading-search/1"
SEARCH_SEED = 1_000_000  # search seeds start here; confirmation grids use seeds below it (default 0..19)
STUDY_NAME = "reading-search"
REJECTED_PENALTY = 100.0  # subtracted from a rejected reading's fit, so the sampler moves away from it
# Fit weights: one unit is "one standard error" of each part (see reading_fit)
FST_LOG2_SCALE = 1.0  # a factor 2 off the paper's median FST costs ½ (20 trials: CI about a factor 2)
AUC_LOG2_SCALE = 0.2  # a relative AUC 15 % off the paper's costs ½ (20 trials: CI about ± 0.2 in log₂)
SUCCESS_FLOOR = 0.02  # the paper's ratios 1.0 are read as ≥ 0.98 (20 trials cannot tell them apart)


@dataclass(frozen=True)
class SearchSpec:
    """What to search: how many readings, trials per cell, cap, seeds, the control gate's level."""

    readings: int = 40  # optuna trials (proposals; repeats of a seen reading are not re-run)
    trials: int = 10  # trials per cell on the search seeds
    cap: int = PAPER_CAP
    seed: int = SEARCH_SEED  # first search seed; the sampler is seeded from it too
    gate_alpha: float = 0.05  # an ε = 1 cell must beat its control at this one-sided level
    processes: int = 1
    workers: int = 9

    def __post_init__(self) -> None:
        for name in ("readings", "trials", "cap", "processes", "workers"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise UserError(f"{name} must be a positive integer, got {v!r}")
        if self.trials < 4:
            raise UserError("trials must be >= 4 per cell (the control gate has no power below)")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise UserError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not 0 < self.gate_alpha < 1:
            raise UserError(f"gate_alpha must lie in (0, 1), got {self.gate_alpha!r}")

    @property
    def seeds(self) -> list[int]:
        return list(range(self.seed, self.seed + self.trials))

    def grid(self, reading: str) -> GridSpec:
        return GridSpec(
            reading=reading,
            trials=self.trials,
            cap=self.cap,
            controls="eps1",
            curve_trials=0,
            seed=self.seed,
            processes=self.processes,
            workers=self.workers,
        )

    def to_dict(self) -> dict:
        return {**asdict(self), "search_seeds": self.seeds}


# ---------------------------------------------------------------------------------------------
# Pure scoring
# ---------------------------------------------------------------------------------------------


def success_loglik(successes: int, trials: int, paper_ratio: float) -> float:
    """log Bin(k | K, p) − log Bin(mode | K, p), p the paper's ratio kept in [floor, 1 − floor]: 0 at the
    most likely count, negative elsewhere."""
    p = min(max(paper_ratio, SUCCESS_FLOOR), 1 - SUCCESS_FLOOR)
    mode = min(trials, int(math.floor((trials + 1) * p)))
    return float(stats.binom.logpmf(successes, trials, p) - stats.binom.logpmf(mode, trials, p))


def fst_penalty(median: float, paper: float, cap: int) -> float:
    """½ (log₂(ours / paper) / scale)²; a median censored at the cap counts as 2 × cap."""
    ours = 2.0 * cap if not math.isfinite(median) else max(median, 1.0)
    return 0.5 * (math.log2(ours / paper) / FST_LOG2_SCALE) ** 2


def auc_penalty(value: float, paper: float) -> float:
    """½ (log₂(ours / paper) / scale)²; no value (the reference never succeeded) or 0 counts as 0.01."""
    ours = 0.01 if not math.isfinite(value) else max(value, 0.01)
    return 0.5 * (math.log2(ours / paper) / AUC_LOG2_SCALE) ** 2


def reading_fit(result: ReplicateResult) -> ReadingFit:
    """Fit of a grid result (:func:`pgc.replication.analysis.analyse`) to the paper's Tables 1–3.

    Parts (each ≤ 0, 0 = the paper's numbers exactly): ``success`` Σ binomial log-likelihood ratios
    of the success counts; ``fst`` −Σ log-scale FST distances; ``auc`` −Σ relative-AUC distances;
    ``order`` −(1 − Spearman ρ) between our and the paper's median FSTs over the private cells (the
    paper's ordering of mechanisms and ε). ``total`` is their sum."""
    assert result.spec is not None and result.primary_reference is not None
    cap = result.spec.cap
    ref = result.primary_reference
    parts = {"success": 0.0, "fst": 0.0, "auc": 0.0, "order": 0.0}
    ours_fst, paper_fst = [], []
    for row in result.settings:
        if row.cell.control or row.paper is None:
            continue
        key = (row.cell.mechanism, row.cell.epsilon)
        median = row.fst.median_fst if row.fst.median_fst is not None else math.inf
        parts["success"] += success_loglik(row.successes or 0, row.trials or 0, PAPER_SUCCESS_RATIO[key])
        parts["fst"] -= fst_penalty(median, PAPER_FST_MEDIAN[key], cap)
        if row.cell.mechanism != "none":
            aucs = row.relative_auc or {}
            variant = ref.split("/")[-1] if "/" in ref else next(iter(aucs))
            auc = aucs.get(variant) or next(iter(aucs.values()))
            parts["auc"] -= auc_penalty(auc.value if auc.value is not None else math.nan, PAPER_RELATIVE_AUC[key])
            ours_fst.append(median if math.isfinite(median) else 2.0 * cap)
            paper_fst.append(PAPER_FST_MEDIAN[key])
    if len(ours_fst) >= 3 and len(set(ours_fst)) > 1:
        parts["order"] = -(1.0 - float(stats.spearmanr(ours_fst, paper_fst).statistic))
    elif ours_fst:
        parts["order"] = -1.0  # all tied: no ordering at all
    return ReadingFit(**parts, total=sum(parts.values()))


def control_gate(result: ReplicateResult, alpha: float) -> ControlGate:
    """Every private cell at the smallest ε must beat its zero-information control: one-sided
    Mann–Whitney U on FST or Fisher's exact test on successes below ``alpha`` (unadjusted: a gate,
    not a claim)."""
    assert result.spec is not None
    eps_min = min(result.spec.epsilons)
    cells = []
    for c in result.control_comparisons or []:
        setting = next(r for r in result.settings if r.cell.key == c.setting)
        if setting.cell.mechanism == "none" or setting.cell.epsilon != eps_min:
            continue
        cells.append(
            GateCell(
                setting=c.setting,
                successes=c.counts.successes,
                control_successes=c.counts.control_successes,
                p_mwu=c.tests.p_mwu,
                p_fisher=c.tests.p_fisher,
                beats_control=min(c.tests.p_mwu, c.tests.p_fisher) < alpha,
            )
        )
    return ControlGate(passed=bool(cells) and all(c.beats_control for c in cells), alpha=alpha, cells=cells)


def summarize_cells(result: ReplicateResult) -> list[SearchCell]:
    return [
        SearchCell(
            key=r.cell.key or "",
            successes=r.successes or 0,
            trials=r.trials or 0,
            median_fst=r.fst.median_fst if r.fst.median_fst is not None else math.inf,
            paper_success_ratio=r.paper.success_ratio if r.paper else None,
            paper_median_fst=r.paper.median_fst if r.paper else None,
        )
        for r in result.settings
    ]


# ---------------------------------------------------------------------------------------------
# The search
# ---------------------------------------------------------------------------------------------


def evaluate_reading(name: str, spec: SearchSpec) -> SearchEntry:
    """Run one reading's search grid and score it."""
    start = time.perf_counter()
    result = replicate(spec.grid(name))
    fit = reading_fit(result)
    gate = control_gate(result, spec.gate_alpha)
    return SearchEntry(
        reading=name,
        fit=fit,
        control_gate=gate,
        rejected=not gate.passed,
        objective=fit.total - (REJECTED_PENALTY if not gate.passed else 0.0),
        cells=summarize_cells(result),
        wall_time_s=round(time.perf_counter() - start, 2),
        agent_steps=result.cost.agent_steps or 0 if result.cost else 0,
    )


def _search_study(spec: SearchSpec, storage: str, first: tuple[dict[str, str], ...]):
    """The search's optuna study: new (its spec recorded, the literal reading and ``first`` queued) or
    resumed (a ValueError when it holds a search with other settings)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = optuna.samplers.TPESampler(seed=spec.seed, n_startup_trials=10)
    study = optuna.create_study(
        study_name=STUDY_NAME, storage=storage, direction="maximize", sampler=sampler, load_if_exists=True
    )
    stored = study.user_attrs.get("search_spec")
    if stored is None:
        study.set_user_attr("search_spec", spec.to_dict())
        study.set_user_attr("format", SEARCH_FORMAT)
        for knobs in (LITERAL_KNOBS, *first):
            study.enqueue_trial({k: {**LITERAL_KNOBS, **knobs}[k] for k in KNOBS}, skip_if_exists=True)
    elif {k: v for k, v in stored.items() if k not in ("readings", "processes")} != {
        k: v for k, v in spec.to_dict().items() if k not in ("readings", "processes")
    }:
        raise UserError(
            "the study holds a search with other settings (trials, cap, seed or gate); use another output folder"
        )
    return study


def run_search(
    spec: SearchSpec,
    storage: str,
    *,
    progress: Callable[[int, int, dict | None], None] | None = None,
    first: tuple[dict[str, str], ...] = (),
    also: tuple[str, ...] = (),
) -> ReadingSearch:
    """Run (or resume) the search in the optuna ``storage``; returns the search record.

    ``first``: knob settings evaluated before the sampler's own proposals in a new study (the
    paper's literal reading is always the first). ``also``: reading names evaluated first, in a new or
    a resumed study (each counts as a proposal; one already tried is not run again).
    ``progress(done, total, last_entry)`` is called after every proposal."""
    import optuna

    study = _search_study(spec, storage, first)
    seen: dict[str, dict] = {
        t.user_attrs["reading"]: t.user_attrs["entry"]
        for t in study.trials
        if t.state == optuna.trial.TrialState.COMPLETE and "entry" in t.user_attrs
    }

    def count_done() -> int:
        return sum(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)

    distributions = {k: optuna.distributions.CategoricalDistribution(list(v)) for k, v in KNOBS.items()}
    for name in dict.fromkeys(also):  # asked for by name: evaluated now, recorded as completed proposals
        if name in seen:
            continue
        entry = json_ready(evaluate_reading(name, spec))  # the study stores JSON
        seen[name] = entry
        study.add_trial(
            optuna.trial.create_trial(
                params=reading_knobs(name),
                distributions=distributions,
                value=entry["objective"],
                user_attrs={"reading": name, "entry": entry, "asked_for": True},
            )
        )
        if progress is not None:
            progress(count_done(), spec.readings, entry)

    def objective(trial: optuna.Trial) -> float:
        knobs = {k: trial.suggest_categorical(k, list(choices)) for k, choices in KNOBS.items()}
        name = knob_reading_name(knobs)
        trial.set_user_attr("reading", name)
        if name in seen:  # a repeat proposal: the same reading on the same seeds gives the same result
            trial.set_user_attr("repeat", True)
            trial.set_user_attr("entry", seen[name])
            return seen[name]["objective"]
        entry = json_ready(evaluate_reading(name, spec))  # the study stores JSON
        seen[name] = entry
        trial.set_user_attr("entry", entry)
        return float(entry["objective"])

    # a trial left RUNNING by a killed search is failed and its proposal retried
    for t in study.trials:
        if t.state == optuna.trial.TrialState.RUNNING:
            study.tell(t.number, state=optuna.trial.TrialState.FAIL)
    while count_done() < spec.readings:
        study.optimize(objective, n_trials=1)
        if progress is not None:
            last = study.trials[-1]
            progress(count_done(), spec.readings, last.user_attrs.get("entry"))
    return search_record(study, spec)


def search_record(study, spec: SearchSpec) -> ReadingSearch:
    """Every reading tried (each once, in the order first tried), ranked by objective. The entries are read back
    from the study, which stores each as JSON."""
    import optuna

    entries: dict[str, SearchEntry] = {}
    proposals = 0
    for t in study.trials:
        if t.state != optuna.trial.TrialState.COMPLETE or "entry" not in t.user_attrs:
            continue
        proposals += 1
        if t.user_attrs["reading"] not in entries:
            entry = SearchEntry.from_dict(t.user_attrs["entry"], "entry")
            entries[t.user_attrs["reading"]] = replace(entry, first_trial=t.number)
    ranked = sorted(entries.values(), key=lambda e: -e.objective)
    accepted = [e for e in ranked if not e.rejected]
    return ReadingSearch(
        format=SEARCH_FORMAT,
        spec=SearchSpecRecord(**spec.to_dict()),
        knobs={k: list(v) for k, v in KNOBS.items()},
        literal=knob_reading_name(LITERAL_KNOBS),
        proposals=proposals,
        readings_tried=len(entries),
        rejected=len(ranked) - len(accepted),
        best=[e.reading for e in accepted[:2]],
        wall_time_s=round(sum(e.wall_time_s for e in entries.values()), 1),
        readings=ranked,
    )


def best_readings(record: dict, count: int = 2) -> list[str]:
    """The ``count`` best accepted readings of a search record."""
    return [e["reading"] for e in record["readings"] if not e["rejected"]][:count]


def search_seeds(record: dict) -> list[int]:
    return list(record["spec"]["search_seeds"])


__all__ = [
    "SearchSpec",
    "success_loglik",
    "fst_penalty",
    "auc_penalty",
    "reading_fit",
    "control_gate",
    "evaluate_reading",
    "run_search",
    "search_record",
    "best_readings",
    "search_seeds",
    "PAPER_EPSILONS",
]
