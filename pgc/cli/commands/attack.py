"""``pgc attack``: dynamics-inference attacks recovering gravity ψ from submissions.

Targets:
  --run DIR                 a ``pgc train`` folder: attack its transcript (mechanism, Ψ, A3C settings from
                            the run; agents linked over their rounds)
  --model SPEC              fresh submissions at a model: init:SEED, run:DIR, run-initial:DIR or a
                            checkpoint file; with --mechanism/--epsilon/--clip
  --sweep                   with --model (repeatable): accuracy vs --epsilons, JSON + PNG plot

``--engine ray [--address ADDR]`` runs the independent parts as tasks on a Ray cluster (a local one
without ``--address``): each setting (model, ε, channel set) of ``--sweep``, and each (attacker,
budget) of a single attack. Every task draws from its own seeds, so the JSON is the local
engine's (timings aside).

Output: a JSON result (``"kind": "attack"``, atomic write) and a readable summary on stdout.
"""

from __future__ import annotations

from pgc.options import add_force, add_out, add_progress, add_seed

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from pgc.mechanisms import MECHANISMS
from pgc.a3c.rollout import A3CHyperparams

from ..engine_option import add_engine_arguments, command_engine
import pgc.schemas as schemas

from pgc.errors import UserError
from pgc.options import finite_float, positive_float, positive_int


def _budget(text: str) -> int:
    value = positive_int(text)
    if value < 2:
        raise argparse.ArgumentTypeError("the budget must be >= 2 shadow episodes per ψ")
    return value


class AttackCommand:
    help = "dynamics-inference attacks"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        target = p.add_mutually_exclusive_group()
        target.add_argument("--run", help="attack the transcript of this pgc train folder")
        target.add_argument("--plot", metavar="SWEEP_JSON", help="only re-draw the PNG of a --sweep result file")
        target.add_argument("--model", action="append",
                            help="fresh submissions at a model: init:SEED | run:DIR | run-initial:DIR | CHECKPOINT "
                                 "(repeatable with --sweep)")
        p.add_argument("--trial", type=int, default=0, help="trial of --run (default 0)")
        p.add_argument("--mechanism", choices=sorted(MECHANISMS), help="mechanism of fresh submissions (default laplace)")
        p.add_argument("--epsilon", type=positive_float, help="ε per submission of fresh submissions (default 1; inf = none)")
        p.add_argument("--clip", type=positive_float, help="clip C (default: the mechanism's paper value)")
        p.add_argument("--reduced-dim", type=positive_int, help="PRS d̂")
        cand = p.add_mutually_exclusive_group()
        cand.add_argument("--candidates", type=finite_float, nargs="+", help="candidate set Ψ (default 9.7 9.8 9.9)")
        cand.add_argument("--range", type=finite_float, nargs=2, metavar=("LO", "HI"), help="regression over ψ ∈ [LO, HI]")
        p.add_argument("--budget", type=_budget, nargs="+", default=[500],
                       help="shadow episodes per candidate ψ (per target θ); several give a budget curve (default 500)")
        p.add_argument("--k", type=positive_int, nargs="+", default=[1],
                       help="linked submissions per target; several give a curve (default 1)")
        p.add_argument("--targets", type=positive_int, default=600, help="attacked environments (default 600)")
        p.add_argument("--channels",
                       help="channels the attacker may use, comma-separated: gradient,score,timing,prs_internals "
                            "(default gradient; --sweep always runs gradient and gradient,score)")
        p.add_argument("--attackers", default="likelihood,learned,side-channel",
                       help="attackers to run (default likelihood,learned,side-channel)")
        p.add_argument("--action-selection", choices=["greedy", "sample"], help="A3C action selection for --model "
                       "(default: the run's for run:DIR, else greedy)")
        p.add_argument("--lam", type=float, help="λ (value-loss weight) for --model (default: run's, else 0.5)")
        p.add_argument("--alpha", type=float, default=0.0, help="exploration probability of fresh agents (default 0)")
        p.add_argument("--white-box", action="store_true", help="PRS: give the attacker (M, ũ) (channel prs_internals)")
        target.add_argument("--active", action="store_true",
                       help="active attacker: the aggregator crafts θ for the candidates (extreme pair) and "
                            "attacks fresh submissions at it; the crafted θ is saved beside --out")
        p.add_argument("--quick-search", action="store_true",
                       help="--active: a small crafted-model search (smoke runs and tests; weaker θ)")
        p.add_argument("--sweep", action="store_true", help="accuracy vs --epsilons for each --model; writes JSON + PNG")
        p.add_argument("--epsilons", type=positive_float, nargs="+", default=[1, 2, 5, 10, math.inf],
                       help="ε values of --sweep (default 1 2 5 10 inf)")
        p.add_argument("--epochs", type=positive_int, default=40, help="learned attacker epochs (default 40)")
        add_seed(p, default=0, help="root seed (default 0)")
        add_engine_arguments(p, "where the independent attacks run (--sweep settings, or one attack's attackers x "
                                "budgets): this process (local, default) or a Ray cluster, one task each; same results")
        add_out(p, help="JSON result file (default runs/attack/<mode>-<date>-<time>.json, new for every "
                                     "run; PNG beside it with --sweep, the crafted θ with --active)")
        add_force(p, help="replace an existing --out result (and its PNG or θ file)")
        add_progress(p, help="progress (default on): a bar on a terminal, a dated line every 30 s otherwise")

    # ------------------------------------------------------------------------------------------
    def run(self, args: argparse.Namespace) -> int:
        from attacks.runner import ATTACKERS
        from attacks.threat import parse_channels

        if args.address is not None and args.engine != "ray":
            raise UserError("--address is only for --engine ray")
        if args.plot:
            return self._replot(Path(args.plot))
        if args.seed < 0:
            raise UserError("--seed must be >= 0")
        if not 0.0 <= args.alpha <= 1.0:
            raise UserError("--alpha must lie in [0, 1]")
        if args.lam is not None and not (math.isfinite(args.lam) and args.lam >= 0):
            raise UserError("--lam must be a finite number >= 0")
        if args.sweep and args.channels is not None:
            raise UserError("--sweep runs the channel sets gradient and gradient,score itself; drop --channels")
        channels = parse_channels(args.channels or "gradient")
        attackers = [a.strip() for a in args.attackers.split(",") if a.strip()]
        unknown = [a for a in attackers if a not in ATTACKERS]
        if not attackers or unknown:
            raise UserError(f"unknown attacker(s) {unknown}; known: {', '.join(ATTACKERS)}")
        if args.range is not None and not args.range[0] < args.range[1]:
            raise UserError("--range needs LO < HI")
        if args.candidates is not None and (len(args.candidates) < 2 or len(set(args.candidates)) != len(args.candidates)):
            raise UserError("--candidates needs at least two distinct values")
        if args.sweep and args.run:
            raise UserError("--sweep works on --model targets")
        if args.active and (args.sweep or args.range):
            raise UserError("--active crafts its own model for a candidate set: drop --sweep and --range")
        if args.quick_search and not args.active:
            raise UserError("--quick-search belongs to --active")
        if not (args.active or args.run or args.model or args.plot):
            raise UserError("give one of --run DIR, --model SPEC, --active, --plot FILE")
        if args.run and any(v is not None for v in (args.mechanism, args.epsilon, args.clip, args.reduced_dim,
                                                     args.action_selection, args.lam)):
            raise UserError("--run takes mechanism, ε, clip and A3C settings from the run; drop those flags")
        progress = args.progress
        if args.out is not None and Path(args.out).suffix != ".json":
            raise UserError("--out must name a .json file")
        learned_kwargs = {"epochs": args.epochs}
        from ..outputs import ResultFile

        mode = "sweep" if args.sweep else "run" if args.run else "active" if args.active else "model"
        with ResultFile(args.out, command="attack", name=mode, force=args.force) as out:  # one writer at a time
            with command_engine(args) as engine:  # None: the local engine, this process
                args.executor = engine
                # a task on the cluster shows no progress bar (its output stays on its worker)
                return self._run_locked(args, channels, attackers, progress and engine is None, learned_kwargs, out)

    def _run_locked(self, args, channels, attackers, progress, learned_kwargs, out) -> int:
        start = time.perf_counter()
        if args.sweep:
            result = self._sweep(args, channels, attackers, progress, learned_kwargs, out)
        elif args.run:
            result = self._run_target(args, channels, attackers, progress, learned_kwargs)
        elif args.active:
            result = self._active_target(args, channels, attackers, progress, learned_kwargs, out)
        else:
            result = self._model_target(args, channels, attackers, progress, learned_kwargs)
        result["wall_s"] = time.perf_counter() - start
        path = out.write(schemas.dump("attack", result))
        print(f"wrote {path}" + (f" and {path.with_suffix('.png')}" if args.sweep else ""))
        if result.get("violations"):
            print(f"!!! {len(result['violations'])} PRIVACY VIOLATION(S) OR EVALUATION BUG: a gradient-only attack "
                  "beat the ε-LDP ceiling beyond its confidence interval — see 'violations' in the JSON", file=sys.stderr)
            return 1
        return 0

    # ------------------------------------------------------------------------------------------
    def _hyper(self, args, model_hyper: A3CHyperparams | None) -> A3CHyperparams:
        base = model_hyper or A3CHyperparams()
        changes = {}
        if args.action_selection is not None:
            changes["action_selection"] = args.action_selection
        if args.lam is not None:
            changes["lam"] = args.lam
        if not changes:
            return base
        fields = {f: getattr(base, f) for f in ("gamma", "lam", "beta", "cap", "bootstrap_truncated", "action_selection")}
        return A3CHyperparams(**{**fields, **changes})

    def _model_target(self, args, channels, attackers, progress, learned_kwargs, model=None, seed=None) -> dict:
        """Fresh submissions at ``--model`` (or at ``model``, with the attack's ``seed`` stream)."""
        from attacks.sweep import ModelSpec, attack_fresh, build_mechanism
        from attacks.threat import ThreatModel

        if model is None:
            if len(args.model) != 1:
                raise UserError("give one --model (several only with --sweep)")
            model = ModelSpec.parse(args.model[0])
        eps = args.epsilon if args.epsilon is not None else (math.inf if args.mechanism == "none" else 1.0)
        mech = build_mechanism(args.mechanism or "laplace", eps, args.clip, args.reduced_dim)
        if args.white_box and "prs_internals" not in channels:
            channels = channels + ("prs_internals",)
        threat = ThreatModel(mechanism=mech, channels=channels,
                             candidates=None if args.range else tuple(args.candidates or (9.7, 9.8, 9.9)),
                             psi_range=tuple(args.range) if args.range else None, budget=max(args.budget),
                             hyper=self._hyper(args, model.hyper))
        res = attack_fresh(threat, model, n_targets=args.targets, ks=args.k,
                           seed=np.random.SeedSequence(args.seed) if seed is None else seed,
                           attackers=attackers, budgets=args.budget, alpha=args.alpha, white_box=args.white_box,
                           progress=progress, learned_kwargs=learned_kwargs, executor=args.executor)
        result = self._result("model", {"model": model.label, "alpha": args.alpha}, threat, res, args)
        self._print(result)
        return result

    def _active_target(self, args, channels, attackers, progress, learned_kwargs, out) -> dict:
        from pgc.a3c.model import save_checkpoint

        from attacks.active import craft_for_candidates, laplace_layout_accuracy
        from attacks.layout import QUICK_LAYOUT, LayoutResult
        from attacks.sweep import ModelSpec, build_mechanism
        from pgc.a3c.crafted import QUICK_SEARCH

        cands = tuple(args.candidates or (9.7, 9.8, 9.9))
        if len(cands) < 2 or len(set(cands)) != len(cands):
            raise UserError("--candidates needs at least two distinct values")
        search_seq, attack_seq = np.random.SeedSequence(args.seed).spawn(2)
        hyper = self._hyper(args, None)
        mech_name = args.mechanism or "laplace"
        eps = args.epsilon if args.epsilon is not None else (math.inf if mech_name == "none" else 1.0)
        mech = build_mechanism(mech_name, eps, args.clip, args.reduced_dim)
        laplace_eps = eps if mech_name == "laplace" and math.isfinite(eps) else None
        crafted = craft_for_candidates(cands, channels, seed=search_seq, hyper=hyper, laplace_epsilon=laplace_eps,
                                       clip=mech.clip, settings=QUICK_SEARCH if args.quick_search else None,
                                       layout_settings=QUICK_LAYOUT if args.quick_search else None)
        layout = isinstance(crafted, LayoutResult)
        crafted_for = ", ".join(f"{c:g}" for c in sorted(cands)) if layout else f"{min(cands):g} vs {max(cands):g}"
        theta_path = out.companion("-crafted-theta.pt")
        save_checkpoint(crafted.theta, theta_path, {"crafted_for": crafted_for, "objective": crafted.objective})
        print(f"crafted θ for {crafted_for} through the {crafted.objective} "
              f"({crafted.evaluations} evaluations, {crafted.wall_time_s:.0f}s) -> {theta_path}")
        if layout:
            print("  its clipped gradients (units of C/2, mean ± sd per ψ): "
                  + "; ".join(f"{c:g}: {np.round(m, 3).tolist()} ± {np.round(sd, 3).tolist()}"
                              for c, m, sd in zip(sorted(cands), crafted.means, crafted.spreads))
                  + f"; Laplace Bayes accuracy at them {crafted.value:.3f}")
        result = self._model_target(args, channels, attackers, progress, learned_kwargs,
                                    model=ModelSpec(str(theta_path), crafted.theta, None), seed=attack_seq)
        result["mode"] = "active"
        result["active"] = {"crafted_for": sorted(cands) if layout else [min(cands), max(cands)],
                            "theta_file": theta_path.name, "search": crafted.to_dict()}
        if layout:
            result["active"]["layout_bayes_accuracy"] = crafted.value
        if mech_name == "laplace" and "gradient" in channels and math.isfinite(eps) and len(cands) in (2, 3):
            name = "opposite" if len(cands) == 2 else "diamond"
            result["active"]["laplace_best_layout"] = {"layout": name, "accuracy": laplace_layout_accuracy(name, eps)}
            print(f"  Laplace at ε={eps:g} reaches at best {result['active']['laplace_best_layout']['accuracy']:.3f} "
                  f"with one submission ({name} layout of the clipped gradients; the ε-LDP ceiling is attained "
                  f"by randomized response); mechanism {result['threat_model']['mechanism']['name']}")
        return result

    def _run_target(self, args, channels, attackers, progress, learned_kwargs) -> dict:
        from attacks.sweep import attack_run

        threat, res = attack_run(args.run, trial=args.trial, channels=channels, budgets=args.budget, ks=args.k,
                                 max_targets=args.targets, seed=np.random.SeedSequence(args.seed),
                                 attackers=attackers, psi_range=tuple(args.range) if args.range else None,
                                 progress=progress, learned_kwargs=learned_kwargs, executor=args.executor)
        result = self._result("run", {"run": str(args.run), "trial": args.trial}, threat, res, args)
        self._print(result)
        return result

    def _sweep(self, args, channels, attackers, progress, learned_kwargs, out) -> dict:
        from attacks.sweep import ModelSpec, plot_sweep, sweep_epsilons

        if args.range:
            raise UserError("--sweep works with a candidate set, not --range")
        if len(args.budget) != 1:
            raise UserError("--sweep takes one --budget")
        models = [ModelSpec.parse(m) for m in args.model]
        cands = tuple(args.candidates or (9.7, 9.8, 9.9))
        print(f"sweep: {len(models)} model(s) x ε {[float(e) for e in args.epsilons]} x k {args.k}, Ψ={list(cands)}, "
              f"{args.targets} targets, budget {args.budget[0]}/ψ")
        res = sweep_epsilons(models, mechanism=args.mechanism or "laplace", epsilons=args.epsilons, clip=args.clip,
                             reduced_dim=args.reduced_dim, candidates=cands, hyper=self._hyper(args, None), ks=args.k,
                             budget=args.budget[0], n_targets=args.targets, seed=args.seed, attackers=attackers,
                             progress=progress, learned_kwargs=learned_kwargs, executor=args.executor)
        result = {"kind": "attack", "mode": "sweep", "command": "pgc " + " ".join(sys.argv[1:]),
                  "seed": args.seed, "mechanism": args.mechanism or "laplace", "clip": args.clip,
                  "candidates": list(cands), "epsilons": list(args.epsilons), "ks": args.k,
                  "budget": args.budget[0], "targets": args.targets, "models": [m.label for m in models],
                  "plot": out.path.with_suffix(".png").name, **res}
        plot_sweep(result, out.companion(".png"), _sweep_title(result))
        self._print_rows(res["rows"], by_model=True)
        return result

    def _replot(self, path: Path) -> int:
        from attacks.sweep import plot_sweep

        from reports.files import read_json

        data = read_json(path)
        if not isinstance(data, dict) or data.get("kind") != "attack" or data.get("mode") != "sweep":
            raise UserError(f"{path} is not a pgc attack --sweep result")
        png = plot_sweep(data, path.with_suffix(".png"), _sweep_title(data))
        print(f"wrote {png}")
        return 0

    def _result(self, mode, target, threat, res, args) -> dict:
        from attacks.runner import compare, violations

        return {"kind": "attack", "mode": mode, "command": "pgc " + " ".join(sys.argv[1:]), "seed": args.seed,
                "target": target, "threat_model": threat.describe(), "budgets": args.budget, "ks": args.k,
                **res, "comparison": compare(res["rows"]), "violations": violations(res["rows"])}

    def _print(self, result: dict) -> None:
        tm = result["threat_model"]
        m = tm["mechanism"]
        print(f"attack on {result['mode']} {result['target']}: {m['name']} ε={m['epsilon']} C={m['clip']}, "
              f"channels allowed {tm['channels']}, {result['n_targets']} targets / {result['n_submissions']} "
              f"submissions, {result['contexts']} distinct θ")
        for s in result["skipped"]:
            print(f"  skipped {s['attacker']}: {s['reason']}")
        self._print_rows(result["rows"], by_model=False)
        for c in result.get("comparison", []):
            gap = f", learned − likelihood {c['learned_minus_likelihood']:+.3f}" if "learned_minus_likelihood" in c else ""
            print(f"  k={c['k']} budget={c['budget']}: best {c['best_attacker']} {c['best_accuracy']:.3f} "
                  f"(ceiling − best {c['ceiling_minus_best']:+.3f}{gap})")

    @staticmethod
    def _print_rows(rows, by_model: bool) -> None:
        from attacks.runner import fmt_eps

        for r in rows:
            head = (f"  {r.get('model', '')} ε={fmt_eps(r['epsilon'])} " if by_model else "  ") + \
                   f"{r['attacker']:<12} [{'+'.join(r['channels'])}] budget={r['budget']} k={r['k']}: "
            if "accuracy" in r:
                flag = "" if r["verdict"] in ("ok", "n/a") else f"  <-- {r['verdict']}"
                print(head + f"acc {r['accuracy']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]  chance {r['chance']:.3f}  "
                      f"ceiling {r['ceiling']:.3f}  adv {r['advantage']:+.3f}{flag}")
            else:
                print(head + f"MAE {r['mae']:.4f} (prior {r['prior_mae']:.4f})  RMSE {r['rmse']:.4f} "
                      f"(prior {r['prior_rmse']:.4f})")


def _sweep_title(data: dict) -> str:
    clip = data.get("clip") or "paper's"
    return (f"Recovering ψ ∈ {data['candidates']} from {data.get('mechanism', 'laplace')}-privatized gradients "
            f"(C={clip}; ε=inf: clip only; {data['targets']} targets; shadow budget {data['budget']}/ψ)")
