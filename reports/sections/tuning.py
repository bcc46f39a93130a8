"""Tuning: the utility–privacy frontier of each tuning study."""

from __future__ import annotations

import math

import pgc.schemas as schemas

from .. import plots
from ..content import Findings, ReportContent
from ..document import Document, num
from ..loaders import Source
from ..section import Section


def tuning_points(study: schemas.TuneResult) -> tuple[list[dict], set[int]]:
    """The completed trials with a utility and a privacy value, and the Pareto front's trial numbers."""
    points = []
    for t in study.trials:
        if t.state != "COMPLETE" or t.utility is None or t.privacy is None:
            continue
        if math.isnan(t.utility) or math.isnan(t.privacy):
            continue
        points.append(
            {
                "number": t.number,
                "utility": t.utility,
                "privacy": t.privacy,
                "mechanism": str(t.params.get("mechanism", "?")),
                "trial": t,
            }
        )
    return points, set(study.pareto_front)


def _tuning(doc: Document, c: ReportContent) -> None:
    if not c.tuning:
        return
    with doc.section(
        "Tuning: the utility–privacy frontier",
        "The hyperparameter trials of each tuning study and the ones no other trial beats on both utility and privacy.",
        "tuning",
    ):
        _tuning_body(doc, c)


def _tuning_body(doc: Document, c: ReportContent) -> None:
    for entry in c.tuning:
        study: schemas.TuneResult = entry["study"]
        ev = study.evaluation or schemas.TuneEvaluation()
        counts = study.counts
        doc.para(
            f"Study '{study.study}' ({study.mode} mode, sampler {study.sampler or '?'}, "
            f"seed {study.seed if study.seed is not None else '?'}): {counts.complete or 0} complete, "
            f"{counts.pruned or 0} pruned, {counts.fail or 0} failed trials. Each trial trains "
            f"{_or(ev.runs_per_trial, '?')} runs of {num(ev.submissions)} submissions on ψ ∈ "
            f"{_or(ev.gravities, '?')} ({_or(ev.environments, 'shadow/public')} environments). "
            f"Utility = {study.utility or '?'}, privacy = {study.privacy or '?'}."
        )
        points, front = tuning_points(study)
        if points:
            cons = study.constraint.min if study.constraint else None
            pruned = [
                {"privacy": t.privacy, "utility": t.utility or 0.0}
                for t in study.trials
                if t.state == "PRUNED" and t.privacy is not None and math.isfinite(t.privacy)
            ]
            doc.figure(
                f"pareto_{entry['source']}.png",
                plots.pareto_figure(points, front, str(study.utility), str(study.privacy), cons, pruned=pruned),
                "Every completed trial (dots), pruned trials at their intermediate utility (grey ×), and the "
                "Pareto front (no other trial is both more useful and more private) joined.",
            )
        front_pts = sorted((p for p in points if p["number"] in front), key=lambda p: p["privacy"])
        if front_pts:
            rows = []
            for p in front_pts:
                t = p["trial"]
                prm = t.params
                rows.append(
                    [
                        f"#{p['number']}",
                        prm.get("mechanism"),
                        num(prm.get("epsilon")),
                        num(prm.get("clip")),
                        prm.get("buffer_size"),
                        prm.get("reduced_dim", "—"),
                        num(prm.get("learning_rate")),
                        num(p["privacy"]),
                        num(t.success_ratio, 2),
                        num(t.median_fst, 5),
                        num(t.final_mu, 3),
                    ]
                )
            doc.table(
                [
                    "trial",
                    "mechanism",
                    "ε",
                    "C",
                    "|B|",
                    "d̂",
                    "η",
                    str(study.privacy),
                    "success ratio",
                    "median FST",
                    "final μ",
                ],
                rows,
                numeric={2, 3, 4, 5, 6, 7, 8, 9, 10},
            )
        best = study.best_constrained
        if study.mode == "constrained":
            if best:
                doc.para(
                    f"Constrained result: the smallest {study.privacy} whose {study.utility} ≥ "
                    f"{study.constraint.min if study.constraint else None} is {num(best.privacy)} "
                    f"(trial #{best.number}, params {best.params})."
                )
            else:
                doc.para("Constrained result: no trial met the utility constraint.")
        doc.para(
            "Tuning on private environments spends privacy itself (each trial is another release about them); "
            "this study used " + str(_or(ev.environments, "shadow/public")) + " ψ values."
        )


def _or(value, default):
    """``value``, or ``default`` where the study recorded none."""
    return default if value is None else value


def _extract(src: Source, findings: Findings, c: ReportContent) -> None:
    c.tuning.append({"source": src.label, "study": src.result})


SECTION = Section("tuning", ("tune",), _tuning, _extract)
