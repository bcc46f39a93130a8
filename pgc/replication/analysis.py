"""From a grid's raw outcome to the replication's result: Tables 1–3 beside the paper's, the control
comparison, Figure 3's curves and the verdicts, as the typed result (``kind = "replicate"``)."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timezone

import numpy as np

from pgc.a3c.metrics import success_ratio
from pgc.schemas.replicate_kinds import (
    AucEstimate,
    CellVerdicts,
    ComparedCounts,
    ComparedTests,
    ControlComparison,
    ControlVerdict,
    GridCost,
    MedianFst,
    PaperCell,
    PaperTables,
    PaperValue,
    ReplicateResult,
    ReplicateSetting,
    SettingCell,
    SuccessRatio,
)

from .grid import (
    FORMAT,
    PAPER_CAP,
    PAPER_FST_MEDIAN,
    PAPER_RELATIVE_AUC,
    PAPER_SUCCESS_RATIO,
    GridRun,
    GridSpec,
    Setting,
    get_reading,
    machine_info,
    run_grid,
)
from .records import curves_record, machine_record, reading_record, spec_record, trials_record
from .stats import (
    LEVEL,
    compare_to_control,
    holm,
    median_fst,
    median_interval,
    relative_auc_interval,
    relative_auc_value,
    success_interval,
)


def _fsts(trials: list[dict]) -> np.ndarray:
    return np.array([float(t["fst"]) if not isinstance(t["fst"], str) else math.inf for t in trials])


def _best_mu(trials: list[dict]) -> np.ndarray:
    return np.array([t["best_mu"] if t["best_mu"] is not None else 0.0 for t in trials], float)


def _paper_key(s: Setting) -> tuple[str, float]:
    return (s.mechanism, s.epsilon)


def analyse(run: GridRun, *, bootstrap_seed: int = 0) -> ReplicateResult:
    """Tables 1–3, the control comparison and Figure 3's curves: the typed result."""
    spec = run.spec
    reading = get_reading(spec.reading)
    cap = spec.cap
    boot_rng = np.random.default_rng(np.random.SeedSequence([spec.seed, bootstrap_seed, 3]))
    table_settings = [s for s in run.settings if s.role == "table"]
    references = [s for s in table_settings if s.mechanism == "none"]
    primary_ref = references[-1]  # the last variant: the one that learns under "sampled"
    grid_x = np.unique(np.concatenate([[1], np.linspace(1, cap, 600).round(), [cap]])).astype(np.int64)

    # ---- Tables 1–3: one row per setting, in order (the bootstrap stream is drawn row by row) ----
    rows = [_table_row(run, s, references, primary_ref, grid_x, boot_rng) for s in table_settings]
    # ---- each setting against its random-walk control, Holm across the comparisons ----
    comparisons = _judge_comparisons(_control_comparisons(run, table_settings, references))
    judged = {c.setting: c for c in comparisons}
    rows = [_with_control(r, judged.get(r.cell.key or "")) for r in rows]
    return ReplicateResult(
        format=FORMAT,
        notes=_notes(rows, comparisons, cap, reading.name),
        reading=reading_record(reading),
        spec=spec_record(spec),
        primary_reference=primary_ref.key,
        level=LEVEL,
        cost=GridCost(
            wall_time_s=round(run.wall_time_s, 2),
            agent_steps=run.agent_steps,
            submissions=run.submissions,
            agent_steps_per_s=run.agent_steps / run.wall_time_s if run.wall_time_s > 0 else None,
            trials_total=int(sum(len(v) for v in run.trials.values())),
            machine=machine_record(run.machine, run.loadavg_at_start),
            started_utc=run.started_utc,
            finished_utc=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        ),
        settings=rows,
        control_comparisons=comparisons,
        success_curve_x=grid_x.tolist(),
        figure2=curves_record(run.curves),
        trials=trials_record(run.trials),
        paper=PaperTables(
            fst_median=_paper_table(PAPER_FST_MEDIAN),
            success_ratio=_paper_table(PAPER_SUCCESS_RATIO),
            relative_auc=_paper_table(PAPER_RELATIVE_AUC),
        ),
    )


def _table_row(
    run: GridRun,
    s: Setting,
    references: list[Setting],
    primary_ref: Setting,
    grid_x: np.ndarray,
    boot_rng: np.random.Generator,
) -> ReplicateSetting:
    """One setting's cells of Tables 1–3 with their intervals, beside the paper's where it reports one."""
    cap = run.spec.cap
    f = _fsts(run.trials[s.key])
    k = int(np.isfinite(f).sum())
    lo, hi, cov = median_interval(f)
    sr_lo, sr_hi = success_interval(k, f.size)
    relative_auc = {}
    for ref in references:
        rf = _fsts(run.trials[ref.key])
        ci = relative_auc_interval(f, rf, cap, boot_rng)
        relative_auc[ref.variant] = AucEstimate(value=relative_auc_value(f, rf, cap), ci=list(ci))
    paper, verdict = None, None
    pk = _paper_key(s)
    if not s.control and pk in PAPER_FST_MEDIAN:
        paper = PaperCell(
            median_fst=PAPER_FST_MEDIAN[pk], success_ratio=PAPER_SUCCESS_RATIO[pk], relative_auc=PAPER_RELATIVE_AUC[pk]
        )
        auc = relative_auc[primary_ref.variant].ci or [math.nan, math.nan]
        verdict = CellVerdicts(
            median_fst=(
                fst_verdict(PAPER_FST_MEDIAN[pk], lo, hi, cap)
                if cov >= LEVEL
                else f"too few trials for a {LEVEL:.0%} interval"
            ),
            success_ratio=ratio_verdict(PAPER_SUCCESS_RATIO[pk], sr_lo, sr_hi, cap),
            relative_auc=(
                auc_verdict(PAPER_RELATIVE_AUC[pk], auc[0], auc[1], cap)
                if s.mechanism != "none"
                else "reference"
                if s is primary_ref
                else "— (alternative ε=∞ reading)"
            ),
        )
    return ReplicateSetting(
        cell=SettingCell(
            key=s.key,
            mechanism=s.mechanism,
            epsilon=s.epsilon,
            buffer_size=s.buffer_size,
            variant=s.variant,
            control=s.control,
        ),
        trials=int(f.size),
        successes=k,
        fst=MedianFst(median_fst=median_fst(f), median_fst_ci=[lo, hi], median_ci_coverage=round(cov, 4)),
        ratio=SuccessRatio(success_ratio=k / f.size, success_ratio_ci=[sr_lo, sr_hi]),
        fsts=f.tolist(),
        agent_steps=int(sum(t["agent_steps"] for t in run.trials[s.key])),
        best_mu_median=float(np.median([t["best_mu"] or 0.0 for t in run.trials[s.key]])),
        relative_auc=relative_auc,
        success_curve=success_ratio(f, grid_x).round(4).tolist(),
        paper=paper,
        verdict=verdict,
    )


def _control_comparisons(
    run: GridRun, table_settings: list[Setting], references: list[Setting]
) -> list[ControlComparison]:
    """Each private setting against its control, and the non-private references against the ε=1 Laplace
    control (the largest random walk)."""
    cap = run.spec.cap
    comparisons = []

    def compare(s: Setting, ctrl: Setting, matched: bool) -> None:
        cmp = compare_to_control(
            _fsts(run.trials[s.key]),
            _fsts(run.trials[ctrl.key]),
            cap,
            _best_mu(run.trials[s.key]),
            _best_mu(run.trials[ctrl.key]),
        )
        comparisons.append(
            ControlComparison(
                setting=s.key,
                control=ctrl.key,
                matched=matched,
                counts=ComparedCounts(**{k: v for k, v in cmp.items() if k in _COUNTS}),
                tests=ComparedTests(**{k: v for k, v in cmp.items() if k in _TESTS}),
            )
        )

    for s in table_settings:
        if s.control or s.mechanism == "none":
            continue
        ctrl = _control_for(s, table_settings)
        if ctrl is not None:
            compare(s, ctrl, ctrl.epsilon == s.epsilon)
    lap_ctrl = next(
        (c for c in table_settings if c.control and c.mechanism == "laplace" and c.epsilon == min(run.spec.epsilons)),
        None,
    )
    if lap_ctrl is not None:
        for ref in references:
            compare(ref, lap_ctrl, False)
    return comparisons


_COUNTS = frozenset(ComparedCounts.json_keys())
_TESTS = frozenset(ComparedTests.json_keys())


def _judge_comparisons(comparisons: list[ControlComparison]) -> list[ControlComparison]:
    """Each comparison with its Holm-adjusted p-values and its verdict."""
    adj_mwu = holm([c.tests.p_mwu for c in comparisons])
    adj_fisher = holm([c.tests.p_fisher for c in comparisons])
    judged = []
    for c, pm, pf in zip(comparisons, adj_mwu, adj_fisher, strict=True):
        if pm < 1 - LEVEL or pf < 1 - LEVEL:
            verdict = "better than control"
        elif c.counts.successes == 0:
            verdict = "no successes (nothing to compare)"
        elif c.counts.control_successes == 0:
            verdict = "not significantly better than control (after Holm)"
        else:
            verdict = "not better than control: explainable as random search"
        tests = replace(c.tests, p_mwu_holm=pm, p_fisher_holm=pf)
        judged.append(replace(c, tests=tests, verdict=verdict))
    return judged


def _with_control(row: ReplicateSetting, c: ControlComparison | None) -> ReplicateSetting:
    """A row with its comparison's verdict copied onto it (unchanged when it was compared with none)."""
    if c is None:
        return row
    vs = ControlVerdict(
        control=c.control, p_mwu_holm=c.tests.p_mwu_holm, p_fisher_holm=c.tests.p_fisher_holm, verdict=c.verdict
    )
    return replace(row, vs_control=vs)


def _notes(rows: list[ReplicateSetting], comparisons: list[ControlComparison], cap: int, reading: str) -> list[str]:
    notes = []
    for table, name in (
        ("median_fst", "Table 1 (median FST)"),
        ("success_ratio", "Table 2 (success ratio)"),
        ("relative_auc", "Table 3 (relative AUC)"),
    ):
        verdicts = [str(getattr(r.verdict, table)) for r in rows if r.verdict is not None]
        cells = [v for v in verdicts if v != "reference" and not v.startswith("—")]
        n_ok = sum(v.startswith("reproduced") for v in cells)
        notes.append(
            f"{name}: {n_ok} of {len(cells)} cells reproduced within our {LEVEL:.0%} interval "
            f"(cap {cap:,}, reading {reading})."
        )
    for c in comparisons:
        notes.append(
            f"{c.setting} vs {c.control}: {c.counts.successes} vs {c.counts.control_successes} successes — {c.verdict}."
        )
    return notes


def _control_for(s: Setting, settings: list[Setting]) -> Setting | None:
    same = [c for c in settings if c.control and c.mechanism == s.mechanism]
    exact = [c for c in same if c.epsilon == s.epsilon]
    if exact:
        return exact[0]
    return min(same, key=lambda c: c.epsilon) if same else None


def fst_verdict(paper: float, lo: float, hi: float, cap: int) -> str:
    """Table 1 cell: the paper's median FST against our order-statistic interval [lo, hi]
    (hi = ∞: the interval is open beyond our cap, so only a lower bound is known)."""
    if lo <= paper <= hi:
        return "reproduced" if math.isfinite(hi) else f"consistent (our interval is open beyond the cap {cap:,})"
    return "not reproduced (ours lower)" if hi < paper else "not reproduced (ours higher)"


def ratio_verdict(paper: float, lo: float, hi: float, cap: int) -> str:
    """Table 2 cell. The paper's ratio is at 90,000 submissions; at a smaller cap ours can only be
    lower than it would be at 90,000, so "ours lower" is then not decisive."""
    if lo <= paper <= hi:
        return "reproduced"
    if hi < paper:
        return (
            "not reproduced (ours lower)"
            if cap >= PAPER_CAP
            else f"lower at our cap {cap:,} (not decisive: the paper counts up to {PAPER_CAP:,})"
        )
    return "not reproduced (ours higher)"


def auc_verdict(paper: float, lo: float, hi: float, cap: int) -> str:
    """Table 3 cell (our AUC horizon is the cap; the paper's is 90,000)."""
    if math.isnan(lo) or math.isnan(hi):
        return "n/a (no interval: the reference never succeeds)"
    note = "" if cap >= PAPER_CAP else f" — horizon {cap:,}, paper {PAPER_CAP:,}"
    if lo <= paper <= hi:
        return "reproduced" + note
    return ("not reproduced (ours lower)" if hi < paper else "not reproduced (ours higher)") + note


def _paper_table(table: dict) -> list[PaperValue]:
    return [PaperValue(mechanism=m, epsilon=e, value=v) for (m, e), v in table.items()]


def replicate(spec: GridSpec, *, progress: bool = False, raw_hook=None) -> ReplicateResult:
    """Run the grid and analyse it: the typed result (``kind = "replicate"``).

    ``raw_hook(grid_run)`` is called with the raw outcome before the analysis (e.g. to save it)."""
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    load_before = machine_info()["loadavg"]
    run = run_grid(spec, progress=progress)
    run.started_utc, run.loadavg_at_start, run.machine = started, load_before, machine_info()
    if raw_hook is not None:
        raw_hook(run)
    return analyse(run)
