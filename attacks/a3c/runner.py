"""Run attackers on a view, link k submissions per target, and score them (evaluator last).

Linking (k submissions known to come from one environment): each attacker gives per-submission
log-likelihoods ℓ_i(ψ) (classification; log-softmax for the learned one), summed over the target's
first k submissions; the prediction is the MAP (uniform prior) or, for a range, the posterior mean
over the grid. The learned regressor's k predictions are averaged.

Budgets: the shadow bank is simulated once at the largest budget; a smaller budget uses the first J
episodes of every (context, ψ) — nested, so curves against the budget compare like with like.
"""

from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass

import numpy as np
import torch

from attacks.a3c.evaluate import evaluate_classification, evaluate_regression
from attacks.a3c.learned import LearnedAttacker
from attacks.a3c.likelihood import LikelihoodAttacker, SideChannelAttacker
from attacks.a3c.shadow import Contexts, ShadowBank, candidate_grid, simulate_bank
from attacks.a3c.targets import TargetTruth
from attacks.a3c.threat import AttackView, ThreatModel
from pgc.errors import UserError
from pgc.tasks import map_tasks
from pgc.tasks.progress import progress_bar

# the attackers by name (each meets pgc.contracts.Attacker)
ATTACKERS: dict[str, type] = {
    "likelihood": LikelihoodAttacker,
    "learned": LearnedAttacker,
    "side-channel": SideChannelAttacker,
}


def register_attacker(name: str, attacker_class: type) -> None:
    """Make an attacker class (meeting :class:`pgc.contracts.Attacker`) available by name."""
    if not name or name in ATTACKERS:
        raise UserError(f"attacker name {name!r} is empty or already registered")
    ATTACKERS[name] = attacker_class


def make_attacker(name: str, **kwargs):
    if name not in ATTACKERS:
        raise UserError(f"unknown attacker {name!r}; known: {', '.join(ATTACKERS)}")
    return ATTACKERS[name](**kwargs)


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Temporarily set torch's intra-op threads (small matrices on a shared machine run faster on one)."""
    if n is None:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def rank_in_group(group: np.ndarray) -> np.ndarray:
    """0-based position of each row among its group's rows (row order)."""
    order = np.argsort(group, kind="stable")
    g = group[order]
    starts = np.r_[0, np.flatnonzero(np.diff(g)) + 1] if len(g) else np.zeros(0, np.int64)
    rank = np.empty(len(g), np.int64)
    rank[order] = np.arange(len(g)) - np.repeat(starts, np.diff(np.r_[starts, len(g)]))
    return rank


def link_loglik(loglik: np.ndarray, group: np.ndarray, rank: np.ndarray, k: int, n_targets: int) -> np.ndarray:
    """Σ over each target's first k submissions of ℓ_i(ψ) → (n_targets, P)."""
    keep = rank < k
    out = np.zeros((n_targets, loglik.shape[1]))
    np.add.at(out, group[keep], loglik[keep])
    return out


TIE_RTOL = 1e-12  # log-likelihoods this close (relative) count as tied


def _finite_or_floor(linked: np.ndarray) -> np.ndarray:
    """NaN → −∞ (a NaN log-likelihood carries no evidence for its candidate); a row whose entries are
    all −∞ (every candidate impossible: a degenerate estimate) becomes all zeros, i.e. uninformative."""
    z = np.where(np.isnan(linked), -np.inf, np.asarray(linked, dtype=np.float64))
    dead = ~np.isfinite(z.max(axis=1)) if z.size else np.zeros(len(z), bool)
    z[dead] = 0.0
    z[np.isposinf(z)] = np.finfo(np.float64).max  # +∞ is "certain": the largest finite value
    return z


def posterior(linked: np.ndarray) -> np.ndarray:
    """Posterior under the uniform prior; uniform for a degenerate (all −∞ / NaN) row."""
    z = _finite_or_floor(linked)
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def map_index(linked: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """MAP candidate per row with ties broken uniformly at random (seeded ``rng``).

    ``np.argmax`` alone returns the FIRST maximal entry, so identical (or all −∞) log-likelihoods would
    always name the first candidate — a systematic guess that is not the uniform prior's Bayes rule and
    shifts accuracy away from chance whenever the truth is not exactly balanced. Entries within
    :data:`TIE_RTOL` (relative) of the row's maximum are tied; NaN counts as −∞; an all −∞ row is a tie
    of every candidate."""
    z = _finite_or_floor(linked)
    top = z.max(axis=1, keepdims=True)
    tied = z >= top - TIE_RTOL * np.maximum(1.0, np.abs(top))
    # a uniform random key per entry; the largest key among the tied entries wins
    keys = np.where(tied, rng.random(z.shape), -1.0)
    return np.argmax(keys, axis=1)


def subset_bank(bank: ShadowBank, budget: int) -> ShadowBank:
    return ShadowBank(bank.psis, bank.gradients[:, :, :budget], bank.scores[:, :, :budget])


@dataclass
class AttackOutcome:
    """Per-submission output of one attacker at one budget (no ground truth inside)."""

    attacker: str
    budget: int
    channels: list[str]
    loglik: np.ndarray | None  # (n, P) classification / grid
    regression: np.ndarray | None  # (n,) learned regressor
    kde_bandwidth: float | None = None  # the likelihood attacker's


def run_attack(
    threat: ThreatModel,
    view: AttackView,
    truth: TargetTruth,
    *,
    seed: np.random.SeedSequence | int,
    attackers=("likelihood", "learned", "side-channel"),
    ks=(1,),
    budgets=None,
    confidence: float = 0.95,
    grid_points: int = 21,
    progress: bool = False,
    learned_kwargs: dict | None = None,
    threads: int | None = 1,
    executor=None,
) -> dict:
    """Attack ``view`` with each applicable attacker for each budget; evaluate for each k.

    Returns ``{"rows": [...], "skipped": [...], "kde_bandwidth": ...}``; one row per (attacker, budget, k).

    Each (attacker, budget) is one task (:func:`attack_step`: it sees the view and the shadow bank,
    never the ground truth) with its own seeds, so ``executor`` (``Executor.map``'s meaning, e.g. a
    Ray engine) runs them with the same results; the shadow bank is simulated once, here, and the
    evaluation against the truth is done here too.
    """
    with torch_threads(threads):
        return _run_attack(
            threat,
            view,
            truth,
            seed,
            attackers,
            ks,
            budgets,
            confidence,
            grid_points,
            progress,
            learned_kwargs,
            threads,
            executor,
        )


def _run_attack(
    threat,
    view,
    truth,
    seed,
    attackers,
    ks,
    budgets,
    confidence,
    grid_points,
    progress,
    learned_kwargs,
    threads,
    executor,
) -> dict:
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    sim_seq, *att_seqs = seq.spawn(1 + len(attackers))
    budgets = sorted({int(b) for b in (budgets or [threat.budget])})
    if budgets[0] < 2:
        raise UserError("budgets must be >= 2")
    ks = sorted({int(k) for k in ks})
    sizes = view.group_sizes()
    if ks[0] < 1 or ks[-1] > sizes.min():
        raise UserError(f"k must lie in 1..{sizes.min()} (the fewest submissions any target has)")
    contexts = Contexts.of(view)
    grid = candidate_grid(threat, grid_points)
    bank = simulate_bank(threat, contexts, grid, budgets[-1], np.random.default_rng(sim_seq))
    rank = rank_in_group(view.group)
    n_targets = view.n_targets
    rows: list[dict] = []
    skipped: list[dict] = []
    kde = None
    steps = [(name, b, s) for name, s in zip(attackers, att_seqs, strict=True) for b in budgets]
    task = functools.partial(
        attack_step, threat, view, contexts, bank, options={"learned": learned_kwargs or {}}, threads=threads
    )
    outcomes = map_tasks(
        executor, task, [name for name, _, _ in steps], [b for _, b, _ in steps], [s for _, _, s in steps]
    )
    bar = progress_bar(len(steps), "attack", "attack (attackers × budgets)", progress and executor is None)
    for (name, budget, s), outcome in zip(steps, outcomes, strict=True):
        bar.update(1)
        if outcome is None:  # the attacker does not apply to this threat model
            if budget == budgets[0]:
                skipped.append({"attacker": name, "reason": "does not apply to this threat model (channels/mechanism)"})
            continue
        tie_rng = np.random.default_rng([*s.generate_state(2), budget, 1])  # MAP tie-breaking only
        loglik, reg, channels = outcome.loglik, outcome.regression, outcome.channels
        if outcome.kde_bandwidth is not None:
            kde = outcome.kde_bandwidth
        for k in ks:
            row = {"attacker": name, "channels": channels, "budget": budget, "k": k, "epsilon": threat.epsilon}
            if reg is not None:
                keep = rank < k
                pred = np.bincount(view.group[keep], weights=reg[keep], minlength=n_targets) / k
                row.update(evaluate_regression(pred, truth, threat.psi_range))
            else:
                linked = link_loglik(loglik, view.group, rank, k, n_targets)
                post = posterior(linked)
                if threat.is_regression:
                    row.update(evaluate_regression(post @ grid, truth, threat.psi_range))
                else:
                    pred = grid[map_index(linked, tie_rng)]
                    row.update(
                        evaluate_classification(
                            pred,
                            truth,
                            threat.candidates,
                            epsilon=threat.epsilon,
                            k=k,
                            protected_only=set(channels) <= {"gradient", "prs_internals"},
                            confidence=confidence,
                        )
                    )
                    # the attacker's own estimate of the Bayes-optimal accuracy (E max posterior)
                    row["self_assessed_accuracy"] = float(post.max(axis=1).mean())
            rows.append(row)
    bar.close()
    return {
        "rows": rows,
        "skipped": skipped,
        "kde_bandwidth": kde,
        "contexts": len(contexts),
        "n_submissions": len(view),
        "n_targets": n_targets,
        "grid": grid.tolist(),
    }


def attack_step(
    threat: ThreatModel,
    view: AttackView,
    contexts: Contexts,
    bank: ShadowBank,
    name: str,
    budget: int,
    seed: np.random.SeedSequence,
    *,
    options: dict[str, dict] | None = None,
    threads: int | None = 1,
) -> AttackOutcome | None:
    """One attacker at one budget (a task of :func:`run_attack`), through the
    :class:`pgc.contracts.Attacker` contract: its per-submission output, or None when it does not
    apply to the threat model. ``options[name]``: the attacker's constructor options. Its randomness
    comes from ``seed`` and the budget."""
    with torch_threads(threads):
        attacker = make_attacker(name, **(options or {}).get(name, {}))
        if not attacker.applies_to(threat):
            return None
        rng = np.random.default_rng([*seed.generate_state(2), budget])
        scores = attacker.scores(threat, view, contexts, subset_bank(bank, budget), rng)
        return AttackOutcome(
            name, budget, attacker.channels_used(threat), scores.loglik, scores.regression, scores.kde_bandwidth
        )


def best_rows(rows: list[dict], budget: int | None = None) -> dict[tuple[str, int], dict]:
    """(attacker, k) → row at the given budget (default: the largest)."""
    out: dict[tuple[str, int], dict] = {}
    for r in rows:
        if budget is not None and r["budget"] != budget:
            continue
        key = (r["attacker"], r["k"])
        if key not in out or r["budget"] > out[key]["budget"]:
            out[key] = r
    return out


def compare(rows: list[dict]) -> list[dict]:
    """Per (k, budget): the best attacker, its distance to the ceiling, and learned − likelihood when both
    ran (the issue's canary criteria: best within 0.02 of the optimum; learned within 0.02 of likelihood)."""
    out = []
    keys = sorted({(r["k"], r["budget"]) for r in rows if "accuracy" in r})
    for k, budget in keys:
        sel = {r["attacker"]: r for r in rows if r["k"] == k and r["budget"] == budget and "accuracy" in r}
        best = max(sel.values(), key=lambda r: r["accuracy"])
        item = {
            "k": k,
            "budget": budget,
            "best_attacker": best["attacker"],
            "best_accuracy": best["accuracy"],
            "best_ci": best["ci"],
            "ceiling": best["ceiling"],
            "ceiling_minus_best": best["ceiling"] - best["accuracy"],
        }
        if "learned" in sel and "likelihood" in sel:
            item["learned_minus_likelihood"] = sel["learned"]["accuracy"] - sel["likelihood"]["accuracy"]
        out.append(item)
    return out


def violations(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r.get("verdict") == "VIOLATION"]


def fmt_eps(eps: float) -> str:
    return "inf" if math.isinf(eps) else f"{eps:g}"
