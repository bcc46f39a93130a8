"""Targets of attack: fresh submissions at a checkpoint, or a trained run's transcript.

Both return ``(threat-relevant view, truth)``: the :class:`~attacks.a3c.threat.AttackView` goes to the
attackers, the per-target ψ (:class:`TargetTruth`) to the evaluator only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attacks.a3c.threat import AttackView, ThreatModel
from pgc.a3c.env import physics_array
from pgc.a3c.rollout import simulate_episodes
from pgc.a3c.rundir import TrialFiles, load_run
from pgc.a3c.trainer import TrainConfig
from pgc.errors import UserError
from pgc.mechanisms import ProjectedRandomSign


@dataclass(frozen=True)
class TargetTruth:
    """Evaluation-only: the true ψ of every target (group). Attackers never receive this object."""

    psi: np.ndarray  # (n_targets,)


def draw_truth(threat: ThreatModel, n_targets: int, rng: np.random.Generator) -> TargetTruth:
    """ψ per target under the threat model's uniform prior. For a finite Ψ the targets are split as
    evenly as possible over the candidates (then shuffled), which keeps chance exactly 1/|Ψ|."""
    if n_targets < 1:
        raise UserError("need at least one target")
    if threat.candidates is not None:
        cands = np.asarray(threat.candidates)
        psi = cands[np.arange(n_targets) % len(cands)]
        return TargetTruth(rng.permutation(psi))
    lo, hi = threat.psi_range
    return TargetTruth(rng.uniform(lo, hi, size=n_targets))


def fresh_submissions(
    threat: ThreatModel,
    theta: np.ndarray,
    truth: TargetTruth,
    k: int,
    rng: np.random.Generator,
    *,
    alpha: float = 0.0,
    white_box: bool = False,
) -> AttackView:
    """Each target plays ``k`` episodes with its ψ at model θ and submits them through the mechanism
    (a repeat submitter, or one agent's k rounds at a fixed θ). Rows are ordered target-major."""
    if k < 1:
        raise UserError("k must be >= 1")
    theta = np.asarray(theta, dtype=np.float64)
    n_t = len(truth.psi)
    psi = np.repeat(truth.psi, k)
    batch = simulate_episodes(
        theta, physics_array(len(psi), base=threat.physics, gravity=psi), rng, alpha=alpha, hyper=threat.hyper
    )
    mech = threat.mechanism
    matrices = signs = None
    if isinstance(mech, ProjectedRandomSign):
        rel = mech.release(batch.gradients, rng)
        noisy = rel.output
        if white_box:
            matrices, signs = rel.matrices, rel.signs
    else:
        noisy = mech(batch.gradients, rng)
    n = len(psi)
    scores = batch.scores.astype(np.float64)
    return AttackView(
        gradients=noisy,
        thetas=np.broadcast_to(theta, (n, theta.size)).copy(),
        alphas=np.full(n, float(alpha)),
        scores=scores,
        durations=scores.copy(),
        group=np.repeat(np.arange(n_t), k),
        prs_matrices=matrices,
        prs_signs=signs,
    )


def trial_config(trial: TrialFiles) -> TrainConfig:
    """The trial's TrainConfig (``clip: "inf"`` from ``pgc train --clip inf`` is read by the core)."""
    return trial.config


def load_trial(run_dir: str | Path, trial: int = 0) -> tuple[TrialFiles, TrainConfig]:
    _, trials = load_run(run_dir)
    if not 0 <= trial < len(trials):
        raise UserError(f"run {run_dir} has {len(trials)} trial(s); --trial {trial} does not exist")
    t = trials[trial]
    if not t.summary.get("transcript", False):
        raise UserError(f"trial {trial} of {run_dir} has no transcript (trained with --no-transcript)")
    return t, trial_config(t)


def run_submissions(
    trial: TrialFiles, config: TrainConfig, k: int, max_targets: int, rng: np.random.Generator
) -> tuple[AttackView, TargetTruth]:
    """The transcript's submissions of agents with at least ``k`` rounds; ``max_targets`` agents are
    drawn (independently of ψ) by the evaluator; each keeps its first k submissions (linked by agent).

    The ground truth is read here, on the evaluator's side, and returned apart from the view.
    """
    tr = trial.transcript()
    gt = trial.ground_truth()
    agents, counts = np.unique(tr.agent, return_counts=True)
    eligible = agents[counts >= k]
    if eligible.size == 0:
        raise UserError(f"no agent in the transcript has {k} submissions (rounds={config.rounds}); lower --k")
    chosen = np.sort(rng.choice(eligible, size=min(max_targets, eligible.size), replace=False))
    rows = np.flatnonzero(np.isin(tr.agent, chosen))
    rows = rows[np.argsort(tr.agent[rows], kind="stable")]  # by agent, arrival order within
    ag = tr.agent[rows]
    starts = np.r_[0, np.flatnonzero(np.diff(ag)) + 1]
    rank = np.arange(len(rows)) - np.repeat(starts, np.diff(np.r_[starts, len(rows)]))
    rows = rows[rank < k]
    ag = tr.agent[rows]
    group = np.searchsorted(chosen, ag)
    # Alg. 1 / §4 exploration schedule, known to the aggregator from the protocol and the start order
    alphas = np.maximum(0.0, config.exploration_start - ag / config.exploration_decay)
    view = AttackView(
        gradients=tr.gradient[rows].astype(np.float64),
        thetas=tr.submission_thetas()[rows],
        alphas=alphas,
        scores=tr.score[rows].astype(np.float64),
        durations=(tr.arrival_tick[rows] - tr.start_tick[rows]).astype(np.float64),
        group=group,
    )
    psi_rows = gt.psi[rows]
    truth = np.empty(len(chosen))
    truth[group] = psi_rows
    if not np.allclose(np.bincount(group, weights=psi_rows) / np.bincount(group), truth):
        raise UserError("an agent's ψ changed between rounds: the transcript is inconsistent")
    return view, TargetTruth(truth)


def threat_for_run(config: TrainConfig, channels, budget: int, psi_range=None, mechanism=None) -> ThreatModel:
    """The threat model of an aggregator of this run: its mechanism (per submission), Ψ, A3C settings.

    ``mechanism``: the one the run recorded (:meth:`pgc.a3c.rundir.TrialFiles.mechanism`, which refuses
    to guess a mechanism it cannot rebuild); None: the config's built-in mechanism."""
    return ThreatModel(
        mechanism=config.build_mechanism() if mechanism is None else mechanism,
        channels=channels,
        candidates=None if psi_range else config.gravities,
        psi_range=psi_range,
        budget=budget,
        hyper=config.hyper,
        physics=config.physics,
    )
