"""Utility: how fast the private training learns, beside the paper's numbers; the replication tables."""

from __future__ import annotations

import math

import numpy as np

import pgc.schemas as schemas
from pgc.schemas.replicate_kinds import SuccessRatio
from pgc.schemas.shared import PAPER, PAPER_HORIZON

from .. import plots
from ..content import Findings, ReportContent, UtilityRow, fmt_eps, read_png_inside
from ..document import Document, num
from ..loaders import Source
from ..section import Section


def setting_of(config: dict) -> tuple[str, float, str]:
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
        return (
            paper_hyper
            and lr_ok
            and config.get("buffer_size") == 1
            and schemas.number(config.get("clip") or 0.01) == 0.01
        )
    if mech == "prs":
        return (
            paper_hyper
            and lr_ok
            and config.get("buffer_size") == 100
            and schemas.number(config.get("clip") or 1.0) == 1.0
        )
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


def _curve_settings(config: dict) -> tuple[int, float | None]:
    """The learning curve's window (eq. 25; 10 when the run's value is not a whole number ≥ 1) and target
    score (None when the run's is not a finite number: no target line is drawn)."""
    window = schemas.number(config.get("window", 10))
    target = schemas.number(config.get("target_score", 195))
    return (
        int(window) if window is not None and math.isfinite(window) and window >= 1 and window == int(window) else 10
    ), (target if target is not None and math.isfinite(target) else None)


def utility_from_run(src: Source) -> tuple[list[UtilityRow], list[dict], list[dict]]:
    from pgc.a3c.metrics import average_scores, success_ratio  # pure functions

    groups: dict[str, list[schemas.TrainTrial]] = {}
    for t in src.result.trials:
        groups.setdefault(setting_of(t.config)[2], []).append(t)
    rows, curves, ratios = [], [], []
    for setting, ts in groups.items():
        config = ts[0].config
        mech, eps, _ = setting_of(config)
        # the horizon is the configured cap: a trial stopped at its first success received fewer
        horizon = int(max(max(t.submissions or 0, int(schemas.number(t.config.get("submissions")) or 0)) for t in ts))
        true_metrics = _true_scores(ts)
        fsts = np.array(
            [x if x is not None else math.inf for x in ((t.fst_true_scores if true_metrics else t.fst) for t in ts)],
            dtype=float,
        )
        finite = fsts[np.isfinite(fsts)]
        ratio = float(np.mean(fsts <= horizon))
        med = float(np.median(fsts))
        final_mu = [x for x in ((t.final_mu_true_scores if true_metrics else t.final_mu) for t in ts) if x is not None]
        mus = []
        window, target = _curve_settings(config)
        for t in ts:
            scores_file = src.run_dir / t.dir / "scores.npy" if src.run_dir else None
            if scores_file is not None and scores_file.is_file():
                try:
                    scores = np.load(scores_file, allow_pickle=False)
                except (ValueError, OSError):
                    continue
                mus.append(average_scores(scores, window))
        if mus:
            curves.append({"label": f"{src.label}: {setting}", "mu": mus, "target": target})
        grid = np.linspace(1, horizon, 200)
        ratios.append({"label": f"{src.label}: {setting}", "n": grid, "ratio": success_ratio(fsts, grid)})
        paper = PAPER.get((mech, eps)) if _is_paper_setting(config) else None
        rows.append(
            UtilityRow(
                source=src.label,
                setting=setting,
                mechanism=mech,
                epsilon=eps,
                trials=len(ts),
                horizon=horizon,
                fst_median=med,
                success_ratio=ratio,
                relative_auc=None,
                final_mu=float(np.median(final_mu)) if final_mu else None,
                paper=paper,
                note="; ".join(
                    x
                    for x in (
                        "" if finite.size else "no trial reached the target",
                        "FST and μ from the true scores (the aggregator saw privatized ones)" if true_metrics else "",
                    )
                    if x
                ),
            )
        )
    # relative AUC against a non-private setting of the same run, same horizon
    from pgc.a3c.metrics import relative_auc

    refs = [r for r in rows if r.mechanism == "none"]
    if refs:
        ref = refs[0]
        ref_fsts = _utility_fsts(groups[ref.setting])
        for r in rows:
            fsts = _utility_fsts(groups[r.setting])
            h = min(r.horizon, ref.horizon)
            r.relative_auc = relative_auc(fsts, ref_fsts, h)
    return rows, curves, ratios


def _interval(v: list[float] | None, digits: int = 3) -> str:
    if v and len(v) == 2:
        return f"[{fmt_eps(v[0], digits)}, {fmt_eps(v[1], digits)}]"
    return ""


def replicate_rows(result: schemas.ReplicateResult) -> list[dict]:
    """The ``pgc replicate`` settings as display rows (ours beside the paper's, verdicts, control)."""
    rows = []
    for r in result.settings:
        cell = r.cell
        buffer = cell.buffer_size if cell.buffer_size is not None else "?"
        label = f"{cell.mechanism} ε={fmt_eps(cell.epsilon)} |B|={buffer}"
        if cell.variant:
            label += f" ({cell.variant})"
        if cell.control:
            label += " — zero-information control"
        auc = r.relative_auc or {}
        primary = next(
            (k for k in auc if result.primary_reference and result.primary_reference.endswith(str(k))),
            next(iter(auc), None),
        )
        auc_main = auc.get(primary) if primary is not None else None
        paper, verdict, ratio = r.paper, r.verdict, r.ratio or SuccessRatio()
        rows.append(
            {
                "setting": label,
                "trials": r.trials,
                "median FST": f"{fmt_eps(r.fst.median_fst, 5)} {_interval(r.fst.median_fst_ci, 6)}".strip(),
                "paper FST": fmt_eps(paper.median_fst, 6) if paper else "—",
                "success ratio": f"{fmt_eps(ratio.success_ratio, 2)} {_interval(ratio.success_ratio_ci)}".strip(),
                "paper SR": fmt_eps(paper.success_ratio, 2) if paper else "—",
                "rel. AUC": (
                    f"{fmt_eps(auc_main.value, 3)} {_interval(auc_main.ci or [])}".strip()
                    if auc_main is not None
                    else "—"
                ),
                "paper AUC": fmt_eps(paper.relative_auc, 3) if paper else "—",
                "verdicts (FST / SR / AUC)": (
                    " / ".join(
                        str(v if v is not None else "—")
                        for v in (verdict.median_fst, verdict.success_ratio, verdict.relative_auc)
                    )
                    if verdict
                    else "—"
                ),
                "vs control": (r.vs_control.verdict if r.vs_control else None) or "—",
            }
        )
    return rows


def replicate_tables(src: Source) -> dict:
    result = src.result
    assert isinstance(result, schemas.ReplicateResult)
    out = {"source": src.label, "rows": replicate_rows(result), "text": [], "figures": {}}
    out["text"].extend(result.notes or [])
    out["images"] = []
    for plot in result.plots or []:  # PNG files the result names, read only from its own folder
        found = read_png_inside(plot.file, src.path.parent)
        if found is not None and found[0] not in {p for p, _ in out["images"]}:
            out["images"].append((found[0], found[1]))
    if not result.settings:
        return out
    reading, spec = result.reading, result.spec
    if reading is not None and reading.summary:
        out["text"].append(f"Reading '{reading.name}': {reading.summary}")
    if spec is not None:
        level = result.level if result.level is not None else 0.95
        wall = result.cost.wall_time_s if result.cost else None
        out["text"].append(
            f"{spec.trials} trials per setting, cap {spec.cap} submissions; intervals "
            f"at {level:.0%}; wall time {wall} s."
        )
    try:  # the replicate helper's own figures (reports.replication), from the same result
        from ..replication import figure2, figure3

        out["figures"]["replicate_figure3.png"] = (
            "Figure 3 — success ratio (dashed: zero-information control)",
            figure3(result),
        )
        if result.figure2:
            out["figures"]["replicate_figure2.png"] = (
                "Figure 2 — average scores with and without buffering",
                figure2(result),
            )
    except Exception as exc:  # a figure that cannot be drawn must not hide the tables
        out["text"].append(f"(replication figures unavailable: {type(exc).__name__}: {exc})")
    return out


def _utility(doc: Document, c: ReportContent) -> None:
    if not c.utility and not c.replicate:
        return
    with doc.section(
        "Utility: what the privacy costs",
        "How fast the private training learns to balance the pole, beside the paper's numbers for the same setting.",
        "utility",
    ):
        _utility_body(doc, c)


def _utility_body(doc: Document, c: ReportContent) -> None:
    if c.utility:
        doc.para(
            "FST: first submission count at which the trailing 10-submission average score reaches 195 (eq. 26; "
            "∞ when never). Success ratio: fraction of trials with FST within the run's horizon (eq. 27). Paper "
            f"numbers are shown only for the paper's own settings; they were measured over {PAPER_HORIZON:,} "
            "submissions and 20 trials, so a shorter run is expected to show fewer successes."
        )
        rows = []
        for u in c.utility:
            p = u.paper or {}
            rows.append(
                [
                    u.setting,
                    u.trials,
                    f"{u.horizon:,}",
                    num(u.fst_median, 5),
                    num(p.get("fst_median"), 6),
                    num(u.success_ratio, 2),
                    num(p.get("success_ratio"), 2),
                    num(u.relative_auc, 3),
                    num(p.get("relative_auc"), 3),
                    num(u.final_mu, 3),
                    u.note,
                ]
            )
        doc.table(
            [
                "setting",
                "trials",
                "horizon",
                "median FST",
                "paper FST",
                "success ratio",
                "paper",
                "rel. AUC",
                "paper",
                "final μ (median)",
                "note",
            ],
            rows,
            numeric={1, 2, 3, 4, 5, 6, 7, 8, 9},
        )
    if c.curves:
        doc.figure(
            "learning_curves.png",
            plots.learning_curves_figure(c.curves),
            "Average score μ per submission: thin lines are single trials, thick lines the median.",
        )
    if c.success_curves:
        doc.figure(
            "success_ratio.png",
            plots.success_ratio_figure(c.success_curves),
            "Success ratio (eq. 27) against the number of submissions.",
        )
    for rep in c.replicate:
        doc.heading(f"Replication of the paper ({rep['source']})", 3)
        if rep["rows"]:
            keys: list[str] = []
            for r in rep["rows"]:
                for k, v in r.items():
                    if k not in keys and not isinstance(v, (dict, list)):
                        keys.append(k)
            keys = keys[:12]
            doc.para(
                "Each row: our number with its interval beside the paper's (paper numbers: 20 trials, 90,000 "
                "submissions); a setting not better than its zero-information control is explainable as random "
                "search in parameter space."
            ) if "paper FST" in keys else None
            doc.table(keys, [[_cell(r.get(k)) for k in keys] for r in rep["rows"]])
        for text in rep["text"]:
            doc.para(text)
        for name, (caption, png) in rep.get("figures", {}).items():
            doc.figure(name, png, f"{rep['source']}: {caption}")
        for path, png in rep["images"][:6]:
            doc.figure(f"replicate_{path.name}", png, f"{rep['source']}: {path.name}")


def _cell(v) -> str:
    if isinstance(v, float):
        return fmt_eps(v, 4)
    if v is None:
        return "—"
    return str(v)


def _extract(src: Source, findings: Findings, c: ReportContent) -> None:
    if src.kind == "replicate":
        c.replicate.append(replicate_tables(src))
        return
    rows, curves, ratios = utility_from_run(src)
    c.utility.extend(rows)
    c.curves.extend(curves)
    c.success_curves.extend(ratios)


SECTION = Section("utility", ("train", "replicate"), _utility, _extract)
