"""Attack settings end to end (fresh submissions at a model, or a run's transcript), sweeps over ε,
and the accuracy-vs-ε plot. Used by ``pgc attack``.

Model specs (where θ comes from):

* ``init:SEED`` — the Glorot-uniform initial θ a trial with that seed starts from (``pgc train``'s);
* ``run:DIR`` — the final θ of trial 0 of a ``pgc train`` folder, with that run's A3C settings;
* ``run-initial:DIR`` — that run's initial θ, with its A3C settings;
* a path to a checkpoint file (``pgc.a3c.model.load_checkpoint``; weights only, never code).

Any spec may end with ``,key=value`` overrides of the A3C settings its submissions are computed
with: ``action_selection=greedy|sample``, ``lam=λ`` (e.g. ``model.pt,action_selection=sample,lam=0``).

Randomness: one root ``SeedSequence(seed)``; every setting spawns its own children for the truth
(evaluator), the submissions (agents + mechanism) and the attack (shadow simulation + attackers).
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

from attacks.a3c.runner import fmt_eps, run_attack, violations
from attacks.a3c.targets import draw_truth, fresh_submissions, load_trial, run_submissions, threat_for_run, trial_config
from attacks.a3c.threat import ThreatModel, parse_channels  # noqa: F401  (re-exported)
from attacks.bounds import ldp_ceiling
from pgc.a3c.model import glorot_uniform_theta, has_biases, load_checkpoint
from pgc.a3c.rollout import A3CHyperparams
from pgc.a3c.rundir import load_run
from pgc.errors import UserError
from pgc.files import atomic_path
from pgc.mechanisms import Mechanism, make_mechanism
from pgc.tasks import map_tasks


@dataclass(frozen=True)
class ModelSpec:
    label: str
    theta: np.ndarray
    hyper: A3CHyperparams | None  # None: the caller's

    @classmethod
    def parse(cls, spec: str) -> ModelSpec:
        base, *overrides = spec.split(",")
        model = cls._parse_base(base)
        if not overrides:
            return model
        changes: dict = {}
        for item in overrides:
            key, sep, value = item.partition("=")
            if not sep or key not in ("action_selection", "lam"):
                raise UserError(f"model spec {spec!r}: overrides are action_selection=... or lam=...")
            try:
                changes[key] = value if key == "action_selection" else float(value)
            except ValueError:
                raise UserError(f"model spec {spec!r}: lam must be a number") from None
        h = model.hyper or A3CHyperparams(biases=has_biases(model.theta))
        return cls(spec, model.theta, replace(h, **changes))

    @classmethod
    def _parse_base(cls, spec: str) -> ModelSpec:
        if spec.startswith("init:"):
            try:
                seed = int(spec[5:])
            except ValueError:
                raise UserError(f"model spec {spec!r}: init:SEED needs an integer seed") from None
            if seed < 0:
                raise UserError("init:SEED needs a seed >= 0")
            return cls(spec, glorot_uniform_theta(np.random.default_rng(np.random.SeedSequence(seed))), None)
        for prefix in ("run:", "run-initial:"):
            if spec.startswith(prefix):
                trial, config = _trial_any(spec[len(prefix) :])
                theta = trial.theta() if prefix == "run:" else trial.initial_theta()
                return cls(spec, theta, config.hyper)
        path = Path(spec)
        if not path.is_file():
            raise FileNotFoundError(
                f"model {spec!r} is neither init:SEED, run:DIR, run-initial:DIR nor a checkpoint file"
            )
        theta = load_checkpoint(path)  # a checkpoint says whether its model has biases (131 parameters)
        return cls(spec, theta, A3CHyperparams(biases=True) if has_biases(theta) else None)


def _trial_any(run_dir: str):
    """Trial 0 of a run folder and its config (a transcript is not needed for its θ)."""
    _, trials = load_run(run_dir)
    return trials[0], trial_config(trials[0])


def build_mechanism(name: str, epsilon: float, clip: float | None, reduced_dim: int | None) -> Mechanism:
    """ε = ∞ means the 'none' mechanism (with the Laplace clip C, as the paper's non-private baseline)."""
    if math.isinf(epsilon) or name == "none":
        return make_mechanism("none", math.inf, clip, None)
    return make_mechanism(name, epsilon, clip, reduced_dim)


def attack_fresh(
    threat: ThreatModel,
    model: ModelSpec,
    *,
    n_targets: int,
    ks,
    seed: np.random.SeedSequence,
    attackers,
    budgets=None,
    alpha: float = 0.0,
    white_box: bool = False,
    progress: bool = False,
    learned_kwargs=None,
    executor=None,
) -> dict:
    """Fresh submissions at ``model`` for ``n_targets`` drawn environments, attacked; ``executor``
    runs the attack's (attacker, budget) steps as tasks (:func:`attacks.a3c.runner.run_attack`)."""
    truth_seq, sub_seq, att_seq = seed.spawn(3)
    truth = draw_truth(threat, n_targets, np.random.default_rng(truth_seq))
    view = fresh_submissions(
        threat, model.theta, truth, max(ks), np.random.default_rng(sub_seq), alpha=alpha, white_box=white_box
    )
    return run_attack(
        threat,
        view,
        truth,
        seed=att_seq,
        attackers=attackers,
        ks=ks,
        budgets=budgets,
        progress=progress,
        learned_kwargs=learned_kwargs,
        executor=executor,
    )


def attack_run(
    run_dir: str,
    *,
    trial: int,
    channels,
    budgets,
    ks,
    max_targets: int,
    seed: np.random.SeedSequence,
    attackers,
    psi_range=None,
    progress: bool = False,
    learned_kwargs=None,
    executor=None,
) -> tuple[ThreatModel, dict]:
    t, config = load_trial(run_dir, trial)
    threat = threat_for_run(config, channels, max(budgets), psi_range, mechanism=t.mechanism())
    if psi_range is not None:
        raise UserError("a run's ψ were drawn from its finite Ψ; attack it with its candidates, not a range")
    pick_seq, att_seq = seed.spawn(2)
    view, truth = run_submissions(t, config, max(ks), max_targets, np.random.default_rng(pick_seq))
    res = run_attack(
        threat,
        view,
        truth,
        seed=att_seq,
        attackers=attackers,
        ks=ks,
        budgets=budgets,
        progress=progress,
        learned_kwargs=learned_kwargs,
        executor=executor,
    )
    return threat, res


class SweepJob(NamedTuple):
    """One setting of :func:`sweep_epsilons`: what its task attacks, with which seed and attackers."""

    model: ModelSpec
    epsilon: float
    threat: ThreatModel
    seed: np.random.SeedSequence
    attackers: list[str]


def sweep_epsilons(
    models: list[ModelSpec],
    *,
    mechanism: str,
    epsilons,
    clip,
    reduced_dim,
    candidates,
    hyper: A3CHyperparams,
    ks,
    budget: int,
    n_targets: int,
    seed: int,
    attackers,
    progress: bool = False,
    learned_kwargs=None,
    log=print,
    executor=None,
) -> dict:
    """Accuracy vs ε for each model: gradient-only attacks (the protected channel), gradient+score,
    and the score-only side channel (independent of ε: the score is not privatized).

    Each setting (model, ε, channel set) is one task (:func:`sweep_setting`) with its own seeds, so
    ``executor`` (``Executor.map``'s meaning, e.g. a Ray engine) runs the settings with the same
    results; without one they run here, one after the other."""
    root = np.random.SeedSequence(seed)
    jobs: list[SweepJob] = []  # in sweep order
    for model, mseq in zip(models, root.spawn(len(models)), strict=True):
        for eps, eseq in zip(epsilons, mseq.spawn(len(epsilons)), strict=True):
            mech = build_mechanism(mechanism, eps, clip, reduced_dim)
            for channels in (("gradient",), ("gradient", "score")):
                threat = ThreatModel(
                    mechanism=mech, channels=channels, candidates=candidates, budget=budget, hyper=model.hyper or hyper
                )
                # same seed for both channel sets: same targets, same submissions, same shadow episodes
                same_stream = np.random.SeedSequence(eseq.entropy, spawn_key=eseq.spawn_key)
                used = attackers if channels == ("gradient", "score") else [a for a in attackers if a != "side-channel"]
                jobs.append(SweepJob(model, eps, threat, same_stream, list(used)))
    task = functools.partial(
        sweep_setting,
        n_targets=n_targets,
        ks=tuple(ks),
        progress=progress and executor is None,
        learned_kwargs=learned_kwargs,
    )
    outcomes = map_tasks(
        executor,
        task,
        [j.threat for j in jobs],
        [j.model for j in jobs],
        [j.seed for j in jobs],
        [j.attackers for j in jobs],
    )
    settings = []
    for job, (res, wall) in zip(jobs, outcomes, strict=True):
        settings.append(
            {"model": job.model.label, "epsilon": job.epsilon, "threat": job.threat.describe(), "wall_s": wall, **res}
        )
        if log:
            best = {(r["attacker"], r["k"]): r["accuracy"] for r in res["rows"]}
            log(
                f"  {job.model.label} ε={fmt_eps(job.epsilon)} channels={'+'.join(job.threat.channels)} "
                f"({wall:.1f}s): " + ", ".join(f"{a} k={k} {v:.3f}" for (a, k), v in sorted(best.items()))
            )
    rows = [dict(r, model=s["model"], threat_channels=s["threat"]["channels"]) for s in settings for r in s["rows"]]
    return {"settings": settings, "rows": rows, "violations": violations(rows)}


def sweep_setting(
    threat: ThreatModel,
    model: ModelSpec,
    seed: np.random.SeedSequence,
    attackers,
    *,
    n_targets: int,
    ks,
    progress: bool = False,
    learned_kwargs=None,
) -> tuple[dict, float]:
    """One setting of :func:`sweep_epsilons` (a task): the attack's result and its wall time (s)."""
    start = time.perf_counter()
    res = attack_fresh(
        threat,
        model,
        n_targets=n_targets,
        ks=ks,
        seed=seed,
        attackers=attackers,
        progress=progress,
        learned_kwargs=learned_kwargs,
    )
    return res, time.perf_counter() - start


def sweep_title(data: dict) -> str:
    """The title of a sweep's plot: the candidates, the mechanism and its clip, the targets and the budget."""
    clip = data.get("clip") or "paper's"
    return (
        f"Recovering ψ ∈ {data['candidates']} from {data.get('mechanism', 'laplace')}-privatized gradients "
        f"(C={clip}; ε=inf: clip only; {data['targets']} targets; shadow budget {data['budget']}/ψ)"
    )


def _plot_gradient_attackers(
    ax, rows: list[dict], model: str, ks: list, xpos: dict, colors: dict, styles: dict
) -> None:
    """The likelihood and learned attackers' accuracy on the gradient channel, with CIs, one line per k."""
    for name in ("likelihood", "learned"):
        for k in ks:
            sel = [
                r
                for r in rows
                if r["model"] == model
                and r["attacker"] == name
                and r["k"] == k
                and r["threat_channels"] == ["gradient"]
            ]
            sel.sort(key=lambda r: xpos[r["epsilon"]])
            if not sel:
                continue
            x = np.array([xpos[r["epsilon"]] for r in sel]) + (0.06 if name == "learned" else -0.06)
            y = np.array([r["accuracy"] for r in sel])
            err = np.array([[r["accuracy"] - r["ci"][0], r["ci"][1] - r["accuracy"]] for r in sel]).T
            ax.errorbar(
                x,
                y,
                yerr=err,
                color=colors[name],
                ls=styles[k],
                marker="o" if k == ks[0] else "s",
                ms=4,
                capsize=2,
                label=f"{name} (gradient) k={k}",
            )


def plot_sweep(result: dict, path: Path, title: str) -> Path:  # noqa: C901
    """Accuracy vs ε (one panel per model) with CIs, the ε-LDP ceiling per k and chance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [dict(r, epsilon=float(r["epsilon"])) for r in result["rows"]]  # JSON holds ε = ∞ as "inf"
    models = list(dict.fromkeys(r["model"] for r in rows))
    epsilons = sorted({r["epsilon"] for r in rows}, key=lambda e: (math.isinf(e), e))
    xpos = {e: i for i, e in enumerate(epsilons)}
    ks = sorted({r["k"] for r in rows})
    n_cand = len(result["settings"][0]["threat"]["candidates"])
    fig, axes = plt.subplots(1, len(models), figsize=(max(8.0, 5.2 * len(models)), 4.8), squeeze=False, sharey=True)
    colors = {"likelihood": "tab:blue", "learned": "tab:orange", "side-channel": "tab:green"}
    styles = {ks[0]: "-", **{k: "--" for k in ks[1:]}}
    for ax, model in zip(axes[0], models, strict=True):
        for k in ks:
            ceil = [ldp_ceiling(e, k, n_cand) if math.isfinite(e) else 1.0 for e in epsilons]
            ax.plot(range(len(epsilons)), ceil, color="black", ls=styles[k], lw=1, label=f"ε-LDP ceiling k={k}")
        ax.axhline(1.0 / n_cand, color="grey", ls=":", label="chance 1/|Ψ|")
        _plot_gradient_attackers(ax, rows, model, ks, xpos, colors, styles)
        for k in ks:
            side = [r for r in rows if r["model"] == model and r["attacker"] == "side-channel" and r["k"] == k]
            if side:
                ax.axhline(
                    np.mean([r["accuracy"] for r in side]),
                    color=colors["side-channel"],
                    ls=styles[k],
                    lw=1,
                    label=f"score only (unprotected) k={k}",
                )
        ax.set_xticks(range(len(epsilons)), [fmt_eps(e) for e in epsilons])
        ax.set_xlabel("ε per submission")
        base, *over = model.split(",")
        ax.set_title(Path(base).stem + (f" ({', '.join(over)})" if over else ""), fontsize=9)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"accuracy recovering ψ (|Ψ|={n_cand})")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=7, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    path = Path(path)
    with atomic_path(path, suffix=path.suffix) as tmp:
        fig.savefig(tmp, dpi=120)
    plt.close(fig)
    return path


def parse_epsilon(text: str) -> float:
    value = float(text)
    if math.isnan(value) or value <= 0:
        raise UserError(f"epsilon must be > 0 or inf, got {text!r}")
    return value


__all__ = [
    "ModelSpec",
    "attack_fresh",
    "attack_run",
    "sweep_epsilons",
    "plot_sweep",
    "sweep_title",
    "build_mechanism",
    "parse_channels",
    "parse_epsilon",
]
