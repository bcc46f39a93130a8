"""``pgc bandit regret|attack``: the federated linear contextual bandit studies.

* ``regret`` — time-averaged group regret curves R_M(t)/t with intervals over runs for non-private
  FedLinUCB, Private-FedLinUCB at several ε and DP20 FedUCB, and the privacy cost (private −
  non-private group regret at T) against M with its fitted exponent beside M^{3/4} and √M. Writes a
  JSON result ("kind": "bandit-regret") and a PNG plot.
* ``attack`` — a malicious silo guessing which of two users another silo served first, per channel,
  against chance and the (ε, δ) ceiling ("kind": "bandit-attack").
"""

from __future__ import annotations

from pgc.options import add_force, add_out, add_progress, add_seed

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from pgc.errors import UserError
from ..outputs import ResultFile


def _positive_ints(values, name):
    if any(v < 1 for v in values):
        raise UserError(f"{name} must be >= 1")


def _add_progress_argument(p: argparse.ArgumentParser) -> None:
    add_progress(p, help="progress (default on): a bar on a terminal, a dated line every 30 s otherwise")


class BanditCommand:
    help = "federated linear contextual bandits: regret study and first-user attack"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
        r = sub.add_parser("regret", help="regret curves and the privacy cost against M")
        r.add_argument("--silos", type=int, default=100, help="M of the curves (default 100)")
        r.add_argument("--horizon", type=int, default=10_000, help="T (default 10000)")
        r.add_argument("--arms", type=int, default=100, help="K (default 100)")
        r.add_argument("--dim", type=int, default=10, help="d (default 10)")
        r.add_argument("--noise", type=float, default=0.5, help="reward noise std (default 0.5)")
        r.add_argument("--batch", type=int, default=None, help="batch B of the fixed-schedule algorithms (default ceil(sqrt(T/M)))")
        r.add_argument("--dp20-threshold", type=float, default=None,
                       help="DP20's sync threshold D (default the DisLinUCB choice (T/(dM)) log(MT))")
        r.add_argument("--runs", type=int, default=25, help="independent runs (default 25)")
        r.add_argument("--epsilons", type=float, nargs="+", default=[0.2, 1.0, 5.0],
                       help="Private-FedLinUCB epsilons (default 0.2 1 5)")
        r.add_argument("--delta", type=float, default=0.1, help="delta (default 0.1)")
        r.add_argument("--dp20-epsilon", type=float, default=1.0, help="DP20 FedUCB's epsilon (default 1)")
        r.add_argument("--sweep-silos", type=int, nargs="*", default=[10, 20, 50, 100],
                       help="M values of the privacy-cost fit (default 10 20 50 100; none = no fit)")
        r.add_argument("--sweep-epsilon", type=float, default=1.0, help="epsilon of the privacy-cost fit (default 1)")
        r.add_argument("--workers", type=int, default=2, help="processes (default 2)")
        add_seed(r, default=0)
        r.add_argument("--label", default="full grid", help="a label stored with the result (say if it is a reduced grid)")
        add_out(r, help="JSON result file (default runs/bandit/regret-<date>-<time>.json, new for "
                                     "every run; the PNG beside it)")
        add_force(r, help="replace an existing --out result and its PNG")
        _add_progress_argument(r)
        a = sub.add_parser("attack", help="infer another silo's first user from its schedule and messages")
        a.add_argument("--systems", nargs="+", default=["dp20-feducb", "private-fedlinucb"],
                       help="systems to attack (dp20-feducb, private-fedlinucb, fedlinucb)")
        a.add_argument("--pair", default="a-toy-first-user", help="canary pair (default the slides' toy pair)")
        a.add_argument("--epsilon", type=float, nargs="+", default=[0.1, 1.0], help="claimed epsilons (default 0.1 1)")
        a.add_argument("--delta", type=float, default=1e-3, help="claimed delta (default 0.001)")
        a.add_argument("--train", type=int, default=2000, help="attacker's simulated releases per world (default 2000)")
        a.add_argument("--test", type=int, default=2000, help="attacked releases (default 2000)")
        add_seed(a, default=0)
        add_out(a, help="JSON result file (default runs/bandit/attack-<date>-<time>.json, new for "
                                     "every run)")
        add_force(a, help="replace an existing --out result")
        _add_progress_argument(a)

    def run(self, args: argparse.Namespace) -> int:
        if args.action == "regret":
            return _regret(args)
        return _attack(args)


def _check_regret_arguments(args: argparse.Namespace) -> None:
    from pgc.fedlinucb.config import BanditConfig, PrivacyConfig

    _positive_ints([args.workers], "--workers")
    for eps in list(args.epsilons) + [args.dp20_epsilon, args.sweep_epsilon]:
        PrivacyConfig(eps, args.delta)
    BanditConfig(n_silos=args.silos, horizon=args.horizon, n_arms=args.arms, dim=args.dim,
                 noise_std=args.noise, runs=args.runs, batch=args.batch)
    for m in args.sweep_silos:
        BanditConfig(n_silos=m, horizon=args.horizon, n_arms=args.arms, dim=args.dim, runs=args.runs)


def _seed_words(seq: np.random.SeedSequence) -> tuple:
    return (seq.entropy, *seq.spawn_key)   # rebuilt in the worker as SeedSequence(list(words))


def _regret_jobs(args: argparse.Namespace, root: np.random.SeedSequence) -> dict:
    """(algorithm, M, ε) → RegretJob: the curves at --silos and the privacy-cost sweep; one environment
    seed per M, one run seed per job, spawned from ``root`` in this order."""
    from pgc.fedlinucb.study import RegretJob, validate_job

    silo_values = sorted(set([args.silos] + list(args.sweep_silos)))
    env_seeds = {m: root.spawn(1)[0] for m in silo_values}
    keys = {("fedlinucb", args.silos, None): None}
    for eps in args.epsilons:
        keys[("private-fedlinucb", args.silos, float(eps))] = None
    keys[("dp20-feducb", args.silos, float(args.dp20_epsilon))] = None
    for m in args.sweep_silos:
        keys[("fedlinucb", m, None)] = None
        keys[("private-fedlinucb", m, float(args.sweep_epsilon))] = None
    specs = {}
    for algorithm, m, eps in keys:
        specs[(algorithm, m, eps)] = RegretJob(
            algorithm, m, args.horizon, args.arms, args.dim, args.noise, args.runs, eps,
            args.delta if eps is not None else None, _seed_words(env_seeds[m]), _seed_words(root.spawn(1)[0]),
            batch=args.batch, dp20_threshold=args.dp20_threshold)
    for spec in specs.values():
        validate_job(spec)
    return specs


def _regret_curves(args: argparse.Namespace, specs: dict, results: dict) -> list[dict]:
    """The time-averaged group regret of every algorithm at --silos, with 95% intervals over runs."""
    from pgc.fedlinucb.study import mean_interval

    curves = []
    for key in specs:
        alg, m, eps = key
        if m != args.silos:
            continue
        res = results[key]
        t = res["t"]
        mean, lo, hi = mean_interval(res["cumulative"] / t[None, :])
        curves.append({"algorithm": alg, "label": specs[key].label(), "n_silos": m, "epsilon": eps,
                       "delta": args.delta if eps is not None else None, "batch": res["batch"],
                       "sigma": res["sigma"], "lambda": res["lam"], "threshold": res["threshold"],
                       "mean_syncs": float(res["syncs"].mean()),
                       "t": t.tolist(), "time_averaged_group_regret": mean.tolist(),
                       "lower": lo.tolist(), "upper": hi.tolist(),
                       "group_regret_at_T": {"mean": float(res["final"].mean()),
                                             "interval": [float(v) for v in mean_interval(res["final"])[1:]]}})
    return curves


def _privacy_cost(args: argparse.Namespace, results: dict, root: np.random.SeedSequence) -> tuple[list, dict | None]:
    """The privacy cost (private minus non-private regret at T) per M of the sweep, and its fit c·M^b."""
    from pgc.fedlinucb.study import fit_exponent, mean_interval

    if not args.sweep_silos:
        return [], None
    sweep, costs = [], []
    for m in sorted(set(args.sweep_silos)):
        private = results[("private-fedlinucb", m, float(args.sweep_epsilon))]["final"]
        nonprivate = results[("fedlinucb", m, None)]["final"]
        cost = private - nonprivate
        costs.append(cost)
        mean, lo, hi = mean_interval(cost)
        sweep.append({"n_silos": m, "privacy_cost_mean": float(mean), "interval": [float(lo), float(hi)],
                      "private_regret_at_T": float(private.mean()), "nonprivate_regret_at_T": float(nonprivate.mean())})
    fit = fit_exponent(np.array(sorted(set(args.sweep_silos))), costs, np.random.default_rng(root.spawn(1)[0]))
    fit["theory"] = {"zhou_chowdhury_M_exponent": 0.75, "dp20_M_exponent": 0.5}
    fit["epsilon"] = float(args.sweep_epsilon)
    return sweep, fit


def _regret_settings(args: argparse.Namespace) -> dict:
    return {"n_silos": args.silos, "horizon": args.horizon, "n_arms": args.arms, "dim": args.dim,
            "noise_std": args.noise, "runs": args.runs, "batch": args.batch,
            "dp20_threshold": args.dp20_threshold, "epsilons": list(map(float, args.epsilons)),
            "delta": args.delta, "dp20_epsilon": args.dp20_epsilon, "sweep_silos": list(args.sweep_silos),
            "sweep_epsilon": args.sweep_epsilon, "seed": args.seed, "workers": args.workers,
            "regret": "pseudo-regret summed over silos, divided by t; 95% Student-t intervals over runs",
            "rewards_clipped_to": [-1.0, 1.0]}


def _print_regret(result: dict, jobs: int, out: Path, plot: Path) -> None:
    fit = result["fit"]
    print(f"{jobs} jobs in {result['elapsed_seconds']:.0f}s; wrote {out} and {plot}")
    for c in result["curves"]:
        print(f"  {c['label']:45s} R_M(T)/T = {c['time_averaged_group_regret'][-1]:.3f} "
              f"[{c['lower'][-1]:.3f}, {c['upper'][-1]:.3f}]  syncs {c['mean_syncs']:.0f}")
    if fit and fit.get("exponent") is not None:
        print(f"  privacy cost ~ M^b: b = {fit['exponent']:.2f}, {fit['level']:.0%} interval "
              f"[{fit['interval'][0]:.2f}, {fit['interval'][1]:.2f}] (theory 0.75; DP20 0.5)")


def _regret(args: argparse.Namespace) -> int:
    from pgc.engines import LocalEngine
    from pgc.fedlinucb.study import run_job
    import pgc.schemas as schemas

    _check_regret_arguments(args)
    root = np.random.SeedSequence(args.seed)
    specs = _regret_jobs(args, root)
    order = sorted(specs, key=lambda k: -k[1])  # the heaviest jobs first
    with ResultFile(args.out, command="bandit", name="regret", force=args.force) as out:
        started = time.perf_counter()
        with LocalEngine(args.workers) as engine:  # one process per job, the heaviest first
            results = dict(zip(order, engine.map_each(run_job, [specs[k] for k in order],
                                                      progress="bandit regret jobs" if args.progress else None)))
        elapsed = time.perf_counter() - started
        sweep, fit = _privacy_cost(args, results, root)
        result = {"kind": "bandit-regret", "format_version": 1, "label": args.label,
                  "settings": _regret_settings(args), "curves": _regret_curves(args, specs, results),
                  "privacy_cost": sweep, "fit": fit, "elapsed_seconds": elapsed, "cpu_count": os.cpu_count(),
                  "plot": out.path.with_suffix(".png").name}
        plot = out.companion(".png")
        _plot(result, plot)
        out.write(schemas.dump("bandit-regret", result))
    _print_regret(result, len(specs), out.path, plot)
    return 0


def _plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 2 if result["privacy_cost"] else 1
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4.2), squeeze=False)
    ax = axes[0, 0]
    for c in result["curves"]:
        t = np.array(c["t"])
        ax.plot(t, c["time_averaged_group_regret"], label=c["label"].rsplit(",", 1)[0])
        ax.fill_between(t, c["lower"], c["upper"], alpha=0.25)
    s = result["settings"]
    ax.set_xlabel("round t")
    ax.set_ylabel("time-averaged group regret R_M(t)/t")
    ax.set_title(f"M={s['n_silos']}, K={s['n_arms']}, d={s['dim']}, {s['runs']} runs, δ={s['delta']:g}")
    ax.legend(fontsize=7)
    if panels == 2:
        ax = axes[0, 1]
        m = np.array([p["n_silos"] for p in result["privacy_cost"]], dtype=float)
        cost = np.array([p["privacy_cost_mean"] for p in result["privacy_cost"]])
        lo = np.array([p["interval"][0] for p in result["privacy_cost"]])
        hi = np.array([p["interval"][1] for p in result["privacy_cost"]])
        ax.errorbar(m, cost, yerr=[cost - lo, hi - cost], fmt="o", label="measured (95% CI)")
        fit = result["fit"]
        if fit and fit.get("exponent") is not None:
            grid = np.geomspace(m.min(), m.max(), 50)
            ax.plot(grid, np.exp(fit["intercept"]) * grid ** fit["exponent"],
                    label=f"fit M^{fit['exponent']:.2f} [{fit['interval'][0]:.2f}, {fit['interval'][1]:.2f}]")
            if cost[0] > 0:
                for b, name in ((0.75, "M^{3/4} (Zhou & Chowdhury)"), (0.5, "√M (DP20)")):
                    ax.plot(grid, cost[0] * (grid / m[0]) ** b, "--", label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("silos M")
        ax.set_ylabel("privacy cost at T (group regret)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".png", dir=path.parent)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)


def _attack(args: argparse.Namespace) -> int:
    from pgc.fedlinucb.config import PrivacyConfig
    import pgc.schemas as schemas

    _positive_ints([args.train, args.test], "--train and --test")
    for eps in args.epsilon:
        PrivacyConfig(eps, args.delta)
    known = ("dp20-feducb", "private-fedlinucb", "fedlinucb")
    for name in args.systems:
        if name not in known:
            raise UserError(f"unknown system {name!r} (choose from {', '.join(known)})")
    settings = [(name, eps) for name in args.systems for eps in (args.epsilon if name != "fedlinucb" else [math.inf])]
    root = np.random.SeedSequence(args.seed)
    with ResultFile(args.out, command="bandit", name="attack", force=args.force) as out:
        rows = _attack_rows(args, settings, root)
        out.write(schemas.dump("bandit-attack", _attack_result(args, rows)))
    print(f"wrote {out.path}")
    above = [r for r in rows if r.get("above_ceiling")]
    if above:
        print(f"!!! {len(above)} row(s) with accuracy above the (ε, δ) ceiling beyond their interval: the claim does "
              "not hold for that channel (see above_ceiling in the JSON)", file=sys.stderr)
    return 0


def _attack_rows(args: argparse.Namespace, settings: list, root: np.random.SeedSequence) -> list[dict]:
    """Each (system, ε) attacked in turn; a row per channel, printed as it comes, one above its ceiling flagged."""
    from attacks.bandit import first_user_attack
    from pgc.fedlinucb.systems import BanditSystem
    from pgc.tasks.progress import progress_bar

    rows = []
    bar = progress_bar(len(settings), "setting", "bandit first-user attack", args.progress)
    try:
        for name, eps in settings:
            kwargs = {} if name == "fedlinucb" else {"epsilon": eps, "delta": args.delta}
            system = BanditSystem(name, **kwargs)
            rng = np.random.default_rng(root.spawn(1)[0])
            for row in first_user_attack(system, args.pair, args.train, args.test, rng):
                rows.append(row)
                flag = "  <-- ABOVE THE CEILING" if row.get("above_ceiling") else ""
                print(f"  {name:18s} eps={system.claim.epsilon:<5g} {row['channel']:9s} accuracy {row['accuracy']:.3f} "
                      f"[{row['interval'][0]:.3f}, {row['interval'][1]:.3f}]  ceiling {row['ceiling']:.3f}{flag}",
                      flush=True)
            bar.update(1)
    finally:
        bar.close()
    return rows


def _attack_result(args: argparse.Namespace, rows: list[dict]) -> dict:
    return {"kind": "bandit-attack", "format_version": 1,
              "settings": {"systems": args.systems, "pair": args.pair, "epsilons": args.epsilon, "delta": args.delta,
                           "train_per_world": args.train, "test": args.test, "seed": args.seed,
                           "attacker": "difference-of-means linear test fitted on simulated releases of both worlds",
                           "ceiling": "(e^eps + delta)/(1 + e^eps): best accuracy of any test under (eps, delta)-DP"},
              "rows": rows}
