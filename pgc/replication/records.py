"""The typed records of a replication built from the grid's own objects: the reading and the spec it ran, each
trial's summary, Figure 2's curves, the machine and the grid's cost, and the raw grid (kind ``replicate-raw``)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from pgc.schemas.replicate_kinds import (
    GridCost,
    LearningCurves,
    MachineInfo,
    NonPrivateRun,
    ReplicateRaw,
    ReplicateReading,
    ReplicateSpec,
    TrialSummary,
)

from .grid import FORMAT, GridRun, GridSpec, Reading, machine_info

_TRIAL_FIELDS = tuple(f.name for f in dataclasses.fields(TrialSummary) if f.name != "extra")
_MACHINE_FIELDS = tuple(f.name for f in dataclasses.fields(MachineInfo) if f.name != "extra")


def reading_record(reading: Reading) -> ReplicateReading:
    return ReplicateReading(
        name=reading.name,
        summary=reading.summary,
        hyper=dataclasses.asdict(reading.hyper),
        nonprivate_variants=[
            NonPrivateRun(name=v.name, clip=v.clip, learning_rate=v.learning_rate) for v in reading.nonprivate_variants
        ],
        departures=list(reading.departures),
        learning_rate=reading.learning_rate,
        optimizer=reading.optimizer,
        exploration_clock=reading.exploration_clock,
    )


def spec_record(spec: GridSpec) -> ReplicateSpec:
    return ReplicateSpec(
        reading=spec.reading,
        trials=int(spec.trials),
        cap=int(spec.cap),
        epsilons=list(spec.epsilons),
        mechanisms=list(spec.mechanisms),
        controls=spec.controls,
        curve_trials=int(spec.curve_trials),
        curve_submissions=int(spec.curve_submissions),
        workers=int(spec.workers),
        seed=int(spec.seed),
        processes=int(spec.processes),
        nonprivate_variants=list(spec.nonprivate_variants),
    )


def trial_record(summary: dict[str, Any]) -> TrialSummary:
    """A trial's summary (:meth:`pgc.a3c.trainer.TrainResult.summary`) as its record; keys it does not name (a
    protected trial's) kept in ``extra``."""
    fst = summary["fst"]
    values = {k: summary[k] for k in _TRIAL_FIELDS if summary.get(k) is not None}
    values["fst"] = math.inf if isinstance(fst, str) else float(fst)
    return TrialSummary(**values, extra={k: v for k, v in summary.items() if k not in _TRIAL_FIELDS})


def trials_record(trials: dict[str, list[dict[str, Any]]]) -> dict[str, list[TrialSummary]]:
    return {key: [trial_record(t) for t in ts] for key, ts in trials.items()}


def curves_record(curves: dict[str, dict[str, Any]]) -> dict[str, LearningCurves]:
    return {
        key: LearningCurves(submissions=c["submissions"], mu=c["mu"], mean_mu=c["mean_mu"], length=c["length"])
        for key, c in curves.items()
    }


def machine_record(machine: dict[str, Any] | None, loadavg_at_start: list[float] | None = None) -> MachineInfo:
    """The machine a grid ran on (this one when the grid recorded none), with the load when it started."""
    info = {**(machine or machine_info())}
    if loadavg_at_start is not None:
        info["loadavg_at_start"] = loadavg_at_start
    return MachineInfo(
        **{k: info[k] for k in _MACHINE_FIELDS if info.get(k) is not None},
        extra={k: v for k, v in info.items() if k not in _MACHINE_FIELDS},
    )


def raw_record(run: GridRun) -> ReplicateRaw:
    """The grid's raw outcome, re-analysable (:meth:`pgc.replication.grid.GridRun.from_dict`)."""
    return ReplicateRaw(
        format=FORMAT,
        spec=spec_record(run.spec),
        trials=trials_record(run.trials),
        curves=curves_record(run.curves),
        cost=GridCost(
            wall_time_s=run.wall_time_s,
            agent_steps=run.agent_steps,
            submissions=run.submissions,
            started_utc=run.started_utc,
            loadavg_at_start=run.loadavg_at_start,
            machine=machine_record(run.machine),
        ),
    )
