"""The four ways ``pgc attack`` attacks, from one settings object to the result record (kind "attack"):

* ``model`` — fresh submissions at one model (:class:`attacks.a3c.sweep.ModelSpec`);
* ``run`` — a ``pgc train`` folder's transcript (mechanism, Ψ and A3C settings from the run);
* ``active`` — the aggregator crafts θ for the candidates (:mod:`attacks.a3c.active`), saved as a checkpoint
  beside the result, then attacks fresh submissions at it;
* ``sweep`` — accuracy against ε for each model (:func:`attacks.a3c.sweep.sweep_epsilons`), with its plot.

:func:`attack` runs the chosen one; ``executor`` runs its independent parts as tasks (each with its own
seeds, so the result is the local one). What a mode says as it goes, its summary included, goes to ``log``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import pgc.schemas as schemas
from attacks.a3c.records import (
    comparison_record,
    described_threat,
    row_record,
    search_record,
    spread_record,
    threat_record,
)
from attacks.a3c.runner import compare, fmt_eps, violations
from pgc.a3c.rollout import A3CHyperparams
from pgc.errors import UserError

DEFAULT_CANDIDATES = (9.7, 9.8, 9.9)


@dataclass(frozen=True)
class AttackSettings:
    """What to attack and how: the target (``run`` and ``trial``, ``models``, ``active`` or ``sweep``), the
    fresh submissions' mechanism (None: laplace at ε = 1, or ε = ∞ for none) and A3C overrides, the
    candidates or ψ range, the attackers, budgets and linked submissions ``ks``, and the root seed."""

    channels: tuple[str, ...] = ("gradient",)
    attackers: tuple[str, ...] = ("likelihood", "learned", "side-channel")
    run: str | None = None
    trial: int = 0
    models: tuple[str, ...] = ()
    active: bool = False
    quick_search: bool = False
    sweep: bool = False
    epsilons: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0, math.inf)
    mechanism: str | None = None
    epsilon: float | None = None
    clip: float | None = None
    reduced_dim: int | None = None
    candidates: tuple[float, ...] | None = None
    psi_range: tuple[float, float] | None = None
    budgets: tuple[int, ...] = (500,)
    ks: tuple[int, ...] = (1,)
    targets: int = 600
    action_selection: str | None = None
    lam: float | None = None
    alpha: float = 0.0
    white_box: bool = False
    epochs: int = 40
    seed: int = 0
    command: str = "pgc attack"

    @property
    def mode(self) -> str:
        return "sweep" if self.sweep else "run" if self.run else "active" if self.active else "model"

    def hyper(self, model_hyper: A3CHyperparams | None) -> A3CHyperparams:
        """The model's A3C settings (default ones without a model's) with ``action_selection`` and ``lam``."""
        base = model_hyper or A3CHyperparams()
        changes = {}
        if self.action_selection is not None:
            changes["action_selection"] = self.action_selection
        if self.lam is not None:
            changes["lam"] = self.lam
        if not changes:
            return base
        fields = {
            f: getattr(base, f) for f in ("gamma", "lam", "beta", "cap", "bootstrap_truncated", "action_selection")
        }
        return A3CHyperparams(**{**fields, **changes})

    def fresh_epsilon(self) -> float:
        """ε of fresh submissions: ``epsilon``, else ∞ for the none mechanism and 1 for the others."""
        return self.epsilon if self.epsilon is not None else (math.inf if self.mechanism == "none" else 1.0)


def attack(
    settings: AttackSettings,
    *,
    companion: Callable[[str], Path],
    executor=None,
    progress: bool = False,
    log: Callable[[str], None] = print,
) -> schemas.AttackResult:
    """The result of the settings' mode; ``companion(suffix)`` names a file beside the result (the crafted θ,
    the sweep's plot)."""
    if settings.sweep:
        return sweep_attack(settings, companion, executor=executor, progress=progress, log=log)
    if settings.run:
        return run_attack_on_transcript(settings, executor=executor, progress=progress, log=log)
    if settings.active:
        return active_attack(settings, companion, executor=executor, progress=progress, log=log)
    return model_attack(settings, executor=executor, progress=progress, log=log)


def model_attack(
    settings: AttackSettings,
    *,
    model=None,
    seed=None,
    executor=None,
    progress: bool = False,
    log: Callable[[str], None] = print,
) -> schemas.AttackResult:
    """Fresh submissions at the one model of ``settings.models`` (or at ``model``, with the attack's ``seed``
    stream)."""
    from attacks.a3c.sweep import ModelSpec, attack_fresh, build_mechanism
    from attacks.a3c.threat import ThreatModel

    s = settings
    if model is None:
        if len(s.models) != 1:
            raise UserError("give one --model (several only with --sweep)")
        model = ModelSpec.parse(s.models[0])
    mech = build_mechanism(s.mechanism or "laplace", s.fresh_epsilon(), s.clip, s.reduced_dim)
    channels = s.channels + ("prs_internals",) if s.white_box and "prs_internals" not in s.channels else s.channels
    threat = ThreatModel(
        mechanism=mech,
        channels=channels,
        candidates=None if s.psi_range else tuple(s.candidates or DEFAULT_CANDIDATES),
        psi_range=tuple(s.psi_range) if s.psi_range else None,
        budget=max(s.budgets),
        hyper=s.hyper(model.hyper),
    )
    res = attack_fresh(
        threat,
        model,
        n_targets=s.targets,
        ks=list(s.ks),
        seed=np.random.SeedSequence(s.seed) if seed is None else seed,
        attackers=list(s.attackers),
        budgets=list(s.budgets),
        alpha=s.alpha,
        white_box=s.white_box,
        progress=progress,
        learned_kwargs={"epochs": s.epochs},
        executor=executor,
    )
    result = attack_result(s, "model", schemas.AttackTarget(model=model.label, alpha=s.alpha), threat, res)
    for line in summary_lines(result):
        log(line)
    return result


def run_attack_on_transcript(
    settings: AttackSettings, *, executor=None, progress: bool = False, log: Callable[[str], None] = print
) -> schemas.AttackResult:
    """The transcript of trial ``settings.trial`` of the run folder ``settings.run``."""
    from attacks.a3c.sweep import attack_run

    s = settings
    threat, res = attack_run(
        s.run,
        trial=s.trial,
        channels=s.channels,
        budgets=list(s.budgets),
        ks=list(s.ks),
        max_targets=s.targets,
        seed=np.random.SeedSequence(s.seed),
        attackers=list(s.attackers),
        psi_range=tuple(s.psi_range) if s.psi_range else None,
        progress=progress,
        learned_kwargs={"epochs": s.epochs},
        executor=executor,
    )
    result = attack_result(s, "run", schemas.AttackTarget(run=str(s.run), trial=s.trial), threat, res)
    for line in summary_lines(result):
        log(line)
    return result


def active_attack(
    settings: AttackSettings,
    companion: Callable[[str], Path],
    *,
    executor=None,
    progress: bool = False,
    log: Callable[[str], None] = print,
) -> schemas.AttackResult:
    """θ crafted for the candidates on the search stream (saved beside the result, at
    ``companion("-crafted-theta.pt")``), then fresh submissions at it attacked on the attack stream; with
    Laplace, what the mechanism reaches at best on the layout."""
    from attacks.a3c.active import craft_for_candidates
    from attacks.a3c.layout import QUICK_LAYOUT, LayoutResult
    from attacks.a3c.sweep import ModelSpec, build_mechanism
    from pgc.a3c.crafted import QUICK_SEARCH
    from pgc.a3c.model import save_checkpoint

    s = settings
    cands = tuple(s.candidates or DEFAULT_CANDIDATES)
    if len(cands) < 2 or len(set(cands)) != len(cands):
        raise UserError("--candidates needs at least two distinct values")
    search_seq, attack_seq = np.random.SeedSequence(s.seed).spawn(2)
    mech_name, eps = s.mechanism or "laplace", s.fresh_epsilon()
    mech = build_mechanism(mech_name, eps, s.clip, s.reduced_dim)
    laplace_eps = eps if mech_name == "laplace" and math.isfinite(eps) else None
    crafted = craft_for_candidates(
        cands,
        s.channels,
        seed=search_seq,
        hyper=s.hyper(None),
        laplace_epsilon=laplace_eps,
        clip=mech.clip,
        settings=QUICK_SEARCH if s.quick_search else None,
        layout_settings=QUICK_LAYOUT if s.quick_search else None,
    )
    layout = isinstance(crafted, LayoutResult)
    crafted_for = ", ".join(f"{c:g}" for c in sorted(cands)) if layout else f"{min(cands):g} vs {max(cands):g}"
    theta_path = companion("-crafted-theta.pt")
    save_checkpoint(crafted.theta, theta_path, {"crafted_for": crafted_for, "objective": crafted.objective})
    log(
        f"crafted θ for {crafted_for} through the {crafted.objective} "
        f"({crafted.evaluations} evaluations, {crafted.wall_time_s:.0f}s) -> {theta_path}"
    )
    if layout:
        log(
            "  its clipped gradients (units of C/2, mean ± sd per ψ): "
            + "; ".join(
                f"{c:g}: {np.round(m, 3).tolist()} ± {np.round(sd, 3).tolist()}"
                for c, m, sd in zip(sorted(cands), crafted.means, crafted.spreads, strict=False)
            )
            + f"; Laplace Bayes accuracy at them {crafted.value:.3f}"
        )
    result = model_attack(
        s,
        model=ModelSpec(str(theta_path), crafted.theta, None),
        seed=attack_seq,
        executor=executor,
        progress=progress,
        log=log,
    )
    best = None
    if mech_name == "laplace" and "gradient" in s.channels and math.isfinite(eps) and len(cands) in (2, 3):
        best = _laplace_best_layout(result, eps, len(cands), log)
    active = schemas.ActiveAttack(
        crafted_for=sorted(cands) if layout else [min(cands), max(cands)],
        theta_file=theta_path.name,
        search=search_record(crafted.to_dict()),
        layout_bayes_accuracy=crafted.value if layout else None,
        laplace_best_layout=best,
    )
    assert result.one is not None  # an attack of one target
    return dataclasses.replace(result, mode="active", one=dataclasses.replace(result.one, active=active))


def _laplace_best_layout(
    result: schemas.AttackResult, eps: float, n_candidates: int, log: Callable[[str], None]
) -> schemas.LaplaceLayout:
    from attacks.a3c.active import laplace_layout_accuracy

    name = "opposite" if n_candidates == 2 else "diamond"
    best = schemas.LaplaceLayout(layout=name, accuracy=laplace_layout_accuracy(name, eps))
    threat = result.one.threat_model if result.one is not None else None
    log(
        f"  Laplace at ε={eps:g} reaches at best {best.accuracy:.3f} "
        f"with one submission ({name} layout of the clipped gradients; the ε-LDP ceiling is attained "
        f"by randomized response); mechanism {threat.mechanism.name if threat is not None else '?'}"
    )
    return best


def sweep_attack(
    settings: AttackSettings,
    companion: Callable[[str], Path],
    *,
    executor=None,
    progress: bool = False,
    log: Callable[[str], None] = print,
) -> schemas.AttackResult:
    """Accuracy against ε for each model of ``settings.models``; the plot drawn beside the result, at
    ``companion(".png")``."""
    from attacks.a3c.sweep import ModelSpec, plot_sweep, sweep_epsilons, sweep_title

    s = settings
    if s.psi_range:
        raise UserError("--sweep works with a candidate set, not --range")
    if len(s.budgets) != 1:
        raise UserError("--sweep takes one --budget")
    models = [ModelSpec.parse(m) for m in s.models]
    cands = tuple(s.candidates or DEFAULT_CANDIDATES)
    log(
        f"sweep: {len(models)} model(s) x ε {[float(e) for e in s.epsilons]} x k {list(s.ks)}, Ψ={list(cands)}, "
        f"{s.targets} targets, budget {s.budgets[0]}/ψ"
    )
    res = sweep_epsilons(
        models,
        mechanism=s.mechanism or "laplace",
        epsilons=list(s.epsilons),
        clip=s.clip,
        reduced_dim=s.reduced_dim,
        candidates=cands,
        hyper=s.hyper(None),
        ks=list(s.ks),
        budget=s.budgets[0],
        n_targets=s.targets,
        seed=s.seed,
        attackers=list(s.attackers),
        progress=progress,
        learned_kwargs={"epochs": s.epochs},
        executor=executor,
    )
    plot = companion(".png")
    result = schemas.AttackResult(
        mode="sweep",
        command=s.command,
        seed=s.seed,
        candidates=list(cands),
        ks=list(s.ks),
        sweep=schemas.AttackSweep(
            mechanism=s.mechanism or "laplace",
            clip=s.clip,
            epsilons=list(s.epsilons),
            budget=s.budgets[0],
            targets=s.targets,
            models=[m.label for m in models],
            plot=plot.name,
            settings=[_sweep_setting(st) for st in res["settings"]],
        ),
        rows=[row_record(r) for r in res["rows"]],
        violations=[row_record(r) for r in res["violations"]],
    )
    data = result.to_dict()
    plot_sweep(data, plot, sweep_title(data))
    for line in row_lines(res["rows"], by_model=True):
        log(line)
    return result


def _sweep_setting(st: dict) -> schemas.SweepSetting:
    """One setting of :func:`attacks.a3c.sweep.sweep_epsilons`."""
    return schemas.SweepSetting(
        model=st["model"],
        epsilon=st["epsilon"],
        threat=described_threat(st["threat"]),
        wall_s=st.get("wall_s"),
        rows=[row_record(r) for r in st["rows"]],
        spread=spread_record(st),
    )


def attack_result(
    settings: AttackSettings, mode: str, target: schemas.AttackTarget, threat, res: dict
) -> schemas.AttackResult:
    """An attack's record: the threat model, the rows, the comparison of the attackers and the violations."""
    return schemas.AttackResult(
        mode=mode,
        command=settings.command,
        seed=settings.seed,
        ks=list(settings.ks),
        one=schemas.OneAttack(
            target=target,
            threat_model=threat_record(threat),
            budgets=list(settings.budgets),
            spread=spread_record(res),
            comparison=[comparison_record(c) for c in compare(res["rows"])],
        ),
        rows=[row_record(r) for r in res["rows"]],
        violations=[row_record(r) for r in violations(res["rows"])],
    )


def summary_lines(result: schemas.AttackResult) -> list[str]:
    """An attack's result in words: the threat model, the skipped attackers, the rows and the comparison."""
    one = result.one
    assert one is not None and one.threat_model is not None and one.target is not None and one.spread is not None
    tm, spread = one.threat_model, one.spread
    m = tm.mechanism
    lines = [
        f"attack on {result.mode} {one.target.to_dict()}: {m.name} ε={m.epsilon} C={m.clip}, "
        f"channels allowed {tm.channels}, {spread.n_targets} targets / {spread.n_submissions} "
        f"submissions, {spread.contexts} distinct θ"
    ]
    lines += [f"  skipped {s.attacker}: {s.reason}" for s in spread.skipped or []]
    lines += row_lines([r.to_dict() for r in result.rows], by_model=False)
    for c in one.comparison or []:
        gap = (
            f", learned − likelihood {c.learned_minus_likelihood:+.3f}"
            if c.learned_minus_likelihood is not None
            else ""
        )
        lines.append(
            f"  k={c.k} budget={c.budget}: best {c.best_attacker} {c.best_accuracy:.3f} "
            f"(ceiling − best {c.ceiling_minus_best:+.3f}{gap})"
        )
    return lines


def row_lines(rows, by_model: bool) -> list[str]:
    """One line per row: accuracy against chance and ceiling (a flag when beyond it), or the regression errors."""
    lines = []
    for r in rows:
        head = (
            f"  {r.get('model', '')} ε={fmt_eps(r['epsilon'])} " if by_model else "  "
        ) + f"{r['attacker']:<12} [{'+'.join(r['channels'])}] budget={r['budget']} k={r['k']}: "
        if "accuracy" in r:
            flag = "" if r["verdict"] in ("ok", "n/a") else f"  <-- {r['verdict']}"
            lines.append(
                head + f"acc {r['accuracy']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]  chance "
                f"{r['chance']:.3f}  ceiling {r['ceiling']:.3f}  adv {r['advantage']:+.3f}{flag}"
            )
        else:
            lines.append(
                head + f"MAE {r['mae']:.4f} (prior {r['prior_mae']:.4f})  RMSE {r['rmse']:.4f} "
                f"(prior {r['prior_rmse']:.4f})"
            )
    return lines
