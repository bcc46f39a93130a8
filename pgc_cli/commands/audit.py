"""``pgc audit``: certified ε lower bounds next to the claim.

Three modes (exactly one):

* ``--mechanism NAME --epsilon E [--clip C] [--reduced-dim K] [--rounds T] [--white-box]`` —
  black-box canary audit of a registered mechanism (``--white-box``: PRS from its ũ and M);
* ``--run DIR`` — the run's mechanism (canary audit) and an environment audit of its trained model
  (``--initial`` for the initial weights) for each ``--pairs`` ψ:ψ', per transcript channel;
  ``--mechanism``/``--epsilon`` override the run's mechanism;
* ``--self-test`` — every correct mechanism and every planted bug; exit code 1 if any is misjudged;
* ``--one-run RUN`` — the one-run audit of a run trained with canary agents (``pgc train --canaries``):
  each canary submission in the transcript is guessed with a statistic fitted on releases the auditor
  simulates itself, and ε_LB follows from the one-run theorem (:mod:`audit.one_run`,
  docs/README-one-run.md) per channel (gradient, score, all).

``--adversarial-model`` (with ``--mechanism`` or ``--run``): the aggregator crafts θ for each pair
(:mod:`pgc_audits.adversarial`) and the channels are certified at it; ``--pairs`` also takes a range
``LO..HI`` (an optuna search for the pair the crafted model separates best). The crafted θ are saved
as checkpoints beside the JSON (``pgc attack --model FILE`` loads them). ``--adversarial-curve``
(with ``--mechanism``): ε_LB/ε against the neighbour distance, honest vs crafted θ.

``--engine ray [--address ADDR]`` runs the independent audits as tasks on a Ray cluster (a local one
without ``--address``): the run mode's canary audit and each pair's environment audit, each pair of
``--adversarial-model``, each point (Δψ, ε) of ``--adversarial-curve`` and each ``--self-test``
case. Every task draws from its own seeds, so the JSON is the local engine's (timings aside).

Writes one JSON file (atomically; ``"kind": "audit"``, a flat ``"channels"`` list for report
generators) and prints a readable summary.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path


from ..engine_option import add_engine_arguments, command_engine
import schemas

from ..io import write_json_atomic
from ..main import CLIError
from ..args import gravity_pair as two_gravities
from ..args import positive_float, positive_int, sample_count

DEFAULT_PAIRS = ("9.7:9.9", "5:15")
MAX_ESTIMATED_HOURS = 2.0  # an audit estimated longer than this is refused without --allow-long
# Measured rates on the project's 2-core machine (seconds per certification sample per side, training and
# selection included), the slow end of what was seen: the canary audit of a d = 112 mechanism over its
# five canary pairs (100,000 samples in 2.7-5 s; PRS d̂ times that: ε = 60, d̂ = 24, 20,000 samples in
# 60 s under load), one environment audit pair with every channel at a balancing model (100,000 samples
# in 150-360 s; a falling model's short episodes are 10-20 times faster), the adversarial audit of a pair
# (its search adds about 120 s).
SECONDS_PER_SAMPLE = {"mechanism": 5e-5, "environment": 3.6e-3, "adversarial": 1.0e-3}
SEARCH_SECONDS = 120.0


def estimated_seconds(args, mode: str) -> float | None:
    """The audit's expected wall time from :data:`SECONDS_PER_SAMPLE`; None where no estimate is made."""
    pairs = max(1, len(args.pairs or DEFAULT_PAIRS))
    scale = max(1, args.dim) / 112.0
    if args.mechanism == "prs" and args.epsilon:  # PRS draws a d̂ × d matrix per output: cost grows with d̂
        from mechanisms import prs_reduced_dim

        scale *= args.reduced_dim or prs_reduced_dim(args.epsilon, args.dim)
    if mode == "mechanism":
        return (args.samples or 1_000_000) * SECONDS_PER_SAMPLE["mechanism"] * scale * max(1, args.rounds)
    if mode == "run":
        if args.adversarial_model:
            return pairs * ((args.samples or 200_000) * SECONDS_PER_SAMPLE["adversarial"] + SEARCH_SECONDS)
        return (args.mechanism_samples * SECONDS_PER_SAMPLE["mechanism"] * scale
                + pairs * (args.samples or 100_000) * SECONDS_PER_SAMPLE["environment"])
    if mode == "adversarial":
        return pairs * ((args.samples or 200_000) * SECONDS_PER_SAMPLE["adversarial"] + SEARCH_SECONDS)
    return None


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def gravity_pair(text: str) -> tuple[float, float]:
    """``ψ:ψ'``, or a range ``LO..HI`` (:class:`GravityRange`)."""
    return gravity_range(text) if ".." in text else two_gravities(text)


class GravityRange(tuple):
    """``LO..HI``: search the pair inside the range (``--adversarial-model``)."""


def gravity_range(text: str) -> GravityRange:
    try:
        a, b = (float(x) for x in text.split(".."))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a range LO..HI such as 9.5..10.1") from None
    if not (math.isfinite(a) and math.isfinite(b)) or not a < b:
        raise argparse.ArgumentTypeError(f"{text!r}: need finite LO < HI")
    return GravityRange((a, b))


def confidence_level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (0.0 < value < 1.0):
        raise argparse.ArgumentTypeError(f"confidence must lie in (0, 1), got {text}")
    return value


def _fmt(x: float) -> str:
    return "∞" if isinstance(x, float) and math.isinf(x) else f"{x:.3f}"


def _channel_row(scope: str, channel: str, claimed: float, lb: float, confidence: float, n: int, cap: float,
                 verdict: str, covered: bool, **extra) -> dict:
    return {"scope": scope, "channel": channel, "claimed_epsilon": claimed, "epsilon_lower_bound": lb,
            "confidence": confidence, "samples_per_side": n, "max_certifiable_epsilon": cap,
            "verdict": verdict, "covered": bool(covered), **extra}


def _mechanism_p_value(result) -> float:
    """p-value of the mechanism audit's claim (ε, δ): its ε test and δ test split α (α_ε + α_δ = α), so
    min(p_ε·α/α_ε, p_δ·α/α_δ) is a valid p-value of "both hold" (union bound)."""
    from audit.bounds import counts_p_value, delta_claim_p_value

    p_eps = counts_p_value(result.bound, result.claimed_epsilon)
    dt = getattr(result, "delta_test", None)
    if dt is None or not dt.certified:
        return p_eps  # the ε test had (all of, or its share of) α; a share-weighted p is ≥ this one
    a_eps, a_delta = 1.0 - result.bound.confidence, 1.0 - dt.confidence
    p_delta = delta_claim_p_value(dt.false_hits, dt.samples_per_side, dt.samples_per_side - dt.hits,
                                  dt.samples_per_side, dt.claimed_epsilon, dt.claimed_delta, dt.fp_share)
    return float(min(1.0, p_eps * (a_eps + a_delta) / a_eps, p_delta * (a_eps + a_delta) / a_delta))


class AuditCommand:
    help = "empirical ε lower bounds"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        mode = p.add_argument_group("what to audit (exactly one of --mechanism, --run, --self-test, --system)")
        mode.add_argument("--mechanism", help="registered mechanism name (laplace, prs, gaussian-analytic, ...)")
        mode.add_argument("--system", metavar="SPEC",
                          help="any System: a registered name (pgc-a3c, pendulum-gaussian-pg, private-fedlinucb, ...), "
                               "MODULE:FACTORY (an installed module or one in the current folder) or "
                               "path/to/file.py:FACTORY; audited per channel through audit.audit_system")
        mode.add_argument("--pair", help="--system: one of the system's named canary pairs (default: its first)")
        mode.add_argument("--secrets", nargs=2, metavar=("SECRET", "SECRET_PRIME"),
                          help="--system: the two neighbouring secrets as JSON values (e.g. 9.7 9.9) instead of --pair")
        mode.add_argument("--adversarial", action="store_true",
                          help="--system: the aggregator chooses the broadcast (the system's crafted family, else "
                               "CMA-ES over its broadcast_space)")
        mode.add_argument("--run", help="a run folder written by `pgc train --out`")
        mode.add_argument("--self-test", action="store_true", help="audit every correct mechanism and every mutant")
        mode.add_argument("--one-run", metavar="RUN",
                          help="a run folder trained with canaries (pgc train --canaries): one-run audit of its "
                               "canary submissions, per channel")
        p.add_argument("--epsilon", type=positive_float, help="claimed ε per agent (mechanism mode: required)")
        p.add_argument("--clip", type=positive_float, help="clip C (default: the paper's for the mechanism)")
        p.add_argument("--reduced-dim", type=positive_int, help="PRS d̂ (default: the paper's rule)")
        p.add_argument("--rounds", type=positive_int, default=1,
                       help="submissions per agent with the §3.2.1 split; audited as one release (default 1)")
        p.add_argument("--white-box", action="store_true", help="PRS: audit its internal report (ũ, M)")
        p.add_argument("--only", nargs="+", metavar="CASE", help="--self-test: only these case names (default: every case)")
        p.add_argument("--float-exact", action="store_true",
                       help="audit the exact float64 outputs (default: rounded to 2^-30·C, blind to last-bit "
                            "floating-point leaks)")
        p.add_argument("--dim", type=positive_int, default=112, help="gradient dimension (default 112)")
        p.add_argument("--trial", type=int, default=0, help="run mode: trial index (default 0)")
        p.add_argument("--initial", action="store_true", help="run mode: audit at the initial weights")
        p.add_argument("--pairs", type=gravity_pair, nargs="+", default=None,
                       help="run mode: neighbouring gravities ψ:ψ' (default 9.7:9.9 5:15)")
        p.add_argument("--compositions", type=positive_int, nargs="*", default=[3],
                       help="run mode: k for k submissions from one environment (default 3; none: empty)")
        p.add_argument("--samples", type=sample_count,
                       help="certification samples per side (default 1,000,000; run mode's environment audit 100,000)")
        p.add_argument("--mechanism-samples", type=positive_int, default=1_000_000,
                       help="run mode: samples of the canary audit of the run's mechanism (default 1,000,000)")
        p.add_argument("--confidence", type=confidence_level, default=0.95, help="confidence level (default 0.95)")
        p.add_argument("--delta", type=float, default=None,
                       help="δ of the claim (default: the mechanism's own; 0, pure ε-DP, for laplace and prs; "
                            "required by gaussian and gaussian-analytic)")
        adv = p.add_argument_group("adversarial aggregator (the aggregator crafts the model)")
        adv.add_argument("--adversarial-model", action="store_true",
                         help="craft θ per pair (--pairs ψ:ψ' or LO..HI) and certify the channels at it")
        adv.add_argument("--adversarial-curve", action="store_true",
                         help="with --mechanism: ε_LB/ε against Δψ at the honest and the crafted θ")
        adv.add_argument("--channels", default=None,
                         help="adversarial channels: gradient,score,arrival,arrival-order,all (default "
                              "gradient,score,all; for a run with mitigations every channel)")
        adv.add_argument("--search-budget", choices=["default", "quick"], default="default",
                         help="crafted-model search budget (quick: about a quarter; enough for wide pairs)")
        adv.add_argument("--search-trials", type=positive_int, default=12,
                         help="optuna trials of the worst-pair search for a range (default 12)")
        adv.add_argument("--epsilons", type=positive_float, nargs="+", default=[1.0, 4.0],
                         help="--adversarial-curve: claimed ε values (default 1 4)")
        adv.add_argument("--distances", type=positive_float, nargs="+", default=None,
                         help="--adversarial-curve: Δψ values (default 0.2 0.5 1 2 5 10)")
        adv.add_argument("--honest-model", default=None,
                         help="--adversarial-curve: the honest θ (checkpoint file, init:SEED or run:DIR; "
                              "default init:0)")
        p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
        add_engine_arguments(p, "where the independent audits run (the run mode's pairs, the adversarial pairs and "
                            "curve points, the self-test cases): this process (local, default) or a Ray cluster, "
                            "one task each; same results")
        p.add_argument("--out", help="JSON result file (default runs/audit/<mode>.json)")
        p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                       help="progress (default on): a bar on a terminal, a dated line every 30 s otherwise")
        p.add_argument("--allow-long", action="store_true",
                       help=f"run an audit estimated to take longer than {MAX_ESTIMATED_HOURS:g} h on this machine")

    # ------------------------------------------------------------------------------------------
    def run(self, args: argparse.Namespace) -> int:
        modes = [m for m in ("mechanism", "run", "self_test", "system", "one_run") if getattr(args, m)]
        if args.run and args.mechanism:
            modes.remove("mechanism")  # --mechanism overrides the run's mechanism
        if len(modes) != 1:
            raise CLIError("give exactly one of --mechanism NAME, --run DIR, --self-test, --system SPEC, "
                           "--one-run RUN")
        if (args.pair or args.secrets or args.adversarial) and not args.system:
            raise CLIError("--pair, --secrets and --adversarial go with --system")
        if args.system and (args.adversarial_model or args.adversarial_curve):
            raise CLIError("--system takes --adversarial (the system's own crafted family or a search of its broadcasts)")
        if args.seed < 0:
            raise CLIError("--seed must be >= 0")
        if args.delta is not None and not (0.0 <= args.delta < 1.0):
            raise CLIError("--delta must lie in [0, 1)")
        if args.address is not None and args.engine != "ray":
            raise CLIError("--address is only for --engine ray")
        if args.compositions and any(k < 2 for k in args.compositions):
            raise CLIError("--compositions must be integers >= 2")
        if args.adversarial_model or args.adversarial_curve:
            if args.adversarial_model and args.adversarial_curve:
                raise CLIError("give one of --adversarial-model, --adversarial-curve")
            if args.self_test:
                raise CLIError("--adversarial-model/--adversarial-curve audit a mechanism or a run, not --self-test")
            if args.adversarial_curve and args.run:
                raise CLIError("--adversarial-curve works with --mechanism (the honest θ is --honest-model)")
            from pgc_audits.adversarial import ADVERSARIAL_CHANNELS

            chans = [c.strip() for c in (args.channels or "gradient,score,all").split(",") if c.strip()]
            bad = [c for c in chans if c not in ADVERSARIAL_CHANNELS]
            if bad or not chans:
                raise CLIError(f"--channels: unknown {bad or chans}; known: {', '.join(ADVERSARIAL_CHANNELS)}")
            args.channel_list = chans
        elif any(isinstance(p, GravityRange) for p in (args.pairs or [])):
            raise CLIError("a range LO..HI in --pairs needs --adversarial-model")
        progress = args.progress
        mode = modes[0]
        if args.adversarial_curve:
            mode = "adversarial_curve"
        elif args.adversarial_model and mode == "mechanism":
            mode = "adversarial"
        estimate = estimated_seconds(args, mode)
        if estimate is not None:
            print(f"estimated time: up to {_duration(estimate)} on a 2-core machine like this project's", flush=True)
            if estimate > MAX_ESTIMATED_HOURS * 3600 and not args.allow_long:
                raise CLIError(f"this audit would take about {_duration(estimate)} (more than {MAX_ESTIMATED_HOURS:g} h); "
                               "lower --samples or pass --allow-long")
        out = Path(args.out) if args.out else Path("runs/audit") / f"{mode.replace('_', '-')}.json"
        args.out_path = out
        if out.exists() and out.is_dir():
            raise CLIError(f"--out {out} is a folder; give a file name")
        start = time.perf_counter()
        report = {"kind": "audit", "mode": mode.replace("_", "-"), "confidence": args.confidence,
                  "delta": args.delta or 0.0, "seed": args.seed, "command": "pgc " + " ".join(sys.argv[1:]),
                  "channels": []}
        from pgc.rundir import output_lock

        out.parent.mkdir(parents=True, exist_ok=True)
        with output_lock(out):  # a second writer of the same file exits 2 at once
            with command_engine(args) as engine:  # None: the local engine, this process
                args.executor = engine
                # a task on the cluster shows no progress bar (its output stays on its worker)
                status = getattr(self, f"_{mode}")(args, report, progress and engine is None)
            report["wall_time_s"] = time.perf_counter() - start
            write_json_atomic(out, schemas.dump(report["kind"], report))
        print(f"wrote {out} ({report['wall_time_s']:.1f}s)")
        return status

    # ------------------------------------------------------------------------------------------
    def _build_mechanism(self, name: str, epsilon: float | None, clip, reduced_dim, rounds: int,
                         delta: float | None = None):
        from mechanisms import MECHANISMS, make_mechanism, split_rounds

        from audit.mutants import RepeatedSubmissions

        if name not in MECHANISMS:
            raise CLIError(f"unknown mechanism {name!r}; known: {', '.join(sorted(MECHANISMS))}")
        if name == "none":
            raise CLIError("the 'none' mechanism claims ε = ∞: there is nothing to refute")
        if epsilon is None:
            raise CLIError("--epsilon is required with --mechanism")
        from mechanisms import DELTA_MECHANISMS

        if name in DELTA_MECHANISMS and not delta:
            raise CLIError(f"--mechanism {name} needs --delta in (0, 1) (its (ε, δ) claim)")
        base = make_mechanism(name, epsilon, clip, reduced_dim, delta=delta)
        return base if rounds == 1 else RepeatedSubmissions(split_rounds(base, rounds), rounds, epsilon)

    def _mechanism_audit(self, mech, args, samples: int, progress: bool, white_box: bool):
        from audit import audit_mechanism, audit_prs_whitebox

        if white_box:
            if not callable(getattr(mech, "release", None)):
                raise CLIError("--white-box needs a mechanism with a release() report (prs)")
            return audit_prs_whitebox(mech, dim=args.dim, samples=samples, confidence=args.confidence,
                                      seed=args.seed, delta=args.delta or 0.0, progress=progress)
        return audit_mechanism(mech, dim=args.dim, samples=samples, confidence=args.confidence, seed=args.seed,
                               delta=args.delta, float_exact=getattr(args, "float_exact", False), progress=progress)

    def _print_mechanism(self, result) -> None:
        b = result.bound
        print(f"{result.mechanism} [{result.mode}]: claimed ε = {_fmt(result.claimed_epsilon)}, "
              f"ε_LB = {result.epsilon_lower_bound:.3f} at {100 * result.confidence:g}% confidence "
              f"(n = {b.samples_per_side:,}/side, cap {b.max_certifiable_epsilon:.2f}, smallest detectable "
              f"δ at ε={b.detectable_delta_at:g}: {b.smallest_detectable_delta:.2e}) -> {result.verdict.upper()}")
        print(f"  ε test: {b.hypothesis}, statistic {b.statistic}, FP {b.false_positives}, FN {b.false_negatives}; "
              f"{result.wall_time_s:.1f}s")
        dt = getattr(result, "delta_test", None)
        if dt is not None:
            if dt.certified:
                print(f"  δ test: {dt.statistic} on {dt.hypothesis} ({dt.direction}), {dt.hits} hits vs {dt.false_hits} "
                      f"of {dt.samples_per_side:,}/side -> δ_LB = {dt.delta_lower_bound:.2e} at ε = "
                      f"{_fmt(dt.claimed_epsilon)} (claimed δ {dt.claimed_delta:g}; alone at "
                      f"{100 * dt.confidence:g}%)")
            else:
                print("  δ test: no point mass or exact release seen on the training split (δ_LB = 0)")
        if getattr(result, "reason", ""):
            print(f"  verdict: {result.reason}")

    def _mechanism(self, args, report: dict, progress: bool) -> int:
        mech = self._build_mechanism(args.mechanism, args.epsilon, args.clip, args.reduced_dim, args.rounds,
                                     args.delta)
        samples = args.samples or 1_000_000
        from audit.blackbox import describe

        print(f"auditing {describe(mech)} [{'white-box' if args.white_box else 'black-box'}]: canary pairs of "
              f"d = {args.dim} inputs, {samples:,} certification outputs per side after a training split", flush=True)
        result = self._mechanism_audit(mech, args, samples, progress, args.white_box)
        self._print_mechanism(result)
        report["mechanism_audits"] = [result.to_dict()]
        report["channels"].append(_channel_row("mechanism", f"canary ({result.mode})", result.claimed_epsilon,
                                               result.epsilon_lower_bound, result.confidence,
                                               result.bound.samples_per_side, result.bound.max_certifiable_epsilon,
                                               result.verdict, True, mechanism=result.mechanism,
                                               p_value=_mechanism_p_value(result),
                                               delta_lower_bound=getattr(result, "delta_lower_bound", 0.0)))
        return 0

    def _run(self, args, report: dict, progress: bool) -> int:
        from pgc.rundir import load_run

        from pgc_audits.environment import environment_audit

        run_dir = Path(args.run)
        if not run_dir.is_dir():
            raise CLIError(f"--run {run_dir} is not a folder")
        summary, trials = load_run(run_dir)
        if not 0 <= args.trial < len(trials):
            raise CLIError(f"--trial {args.trial} out of range: the run has {len(trials)} trial(s)")
        trial = trials[args.trial]
        config = trial.config  # TrainConfig.from_dict reads the "inf" strings JSON needs
        if args.mechanism:
            mech = self._build_mechanism(args.mechanism, args.epsilon, args.clip, args.reduced_dim, 1, args.delta)
            source = "override"
        else:
            if config.mechanism == "none":
                raise CLIError("the run used no mechanism (ε = ∞); give --mechanism/--epsilon to audit one at its model")
            from mechanisms import MechanismUnavailableError

            try:  # the mechanism the run recorded (name, parameters, fingerprint); never a guess
                mech = trial.mechanism()  # per-submission mechanism (ε split over rounds)
            except MechanismUnavailableError as exc:
                raise CLIError(f"cannot audit the run's mechanism: {exc}") from None
            source = "run"
        theta = trial.initial_theta() if args.initial else trial.theta()
        report.update(run=str(run_dir), trial=args.trial, model="initial" if args.initial else "final",
                      mechanism_source=source, run_config=config.to_dict())
        pairs = args.pairs or [gravity_pair(p) for p in DEFAULT_PAIRS]
        if args.adversarial_model:  # the run's mechanism and settings at crafted models (no canary audit)
            report.update(mode="adversarial", model="adversarial")
            protection = {}
            if config.protect:  # the run's mitigations; every channel against the total claim
                from pgc_audits.adversarial import PROTECTED_ADVERSARIAL_CHANNELS

                if args.channels is None:
                    args.channel_list = list(PROTECTED_ADVERSARIAL_CHANNELS)
                score_mech = config.build_score_mechanism()
                protection = {"protect": config.protect, "workers": config.workers, "population": config.gravities,
                              "score_epsilon": score_mech.epsilon if score_mech is not None else None}
                report["protection"] = {"protect": list(config.protect),
                                        "gradient_epsilon": float(mech.epsilon),
                                        "score_epsilon": protection["score_epsilon"] or 0.0,
                                        "claimed_epsilon_total": float(mech.epsilon) + (protection["score_epsilon"] or 0.0)}
            report["adversarial_audits"] = self._adversarial_pairs(args, mech, pairs, report, progress,
                                                                   hyper=config.hyper, physics=config.physics,
                                                                   **protection)
            return 0
        from audit import audit_mechanism
        from tasks import call_with_keywords, map_tasks

        # the canary audit and one environment audit per pair: independent tasks (each its own seeds)
        canary = dict(mechanism=mech, dim=args.dim, samples=args.mechanism_samples, confidence=args.confidence,
                      seed=args.seed, delta=args.delta, float_exact=args.float_exact, progress=progress)
        environment = dict(theta=theta, mechanism=mech, samples=args.samples or 100_000, confidence=args.confidence,
                           seed=args.seed, hyper=config.hyper, physics=config.physics, workers=config.workers,
                           population=config.gravities, compositions=tuple(args.compositions), progress=progress,
                           protect=config.protect,  # the run's mitigations; claim = ε_gradient + ε_score
                           score_epsilon=getattr(config.build_score_mechanism(), "epsilon", None))
        calls = [(audit_mechanism, canary)] + [(environment_audit, {**environment, "psi": psi, "psi_prime": psi_prime})
                                               for psi, psi_prime in pairs]
        results = map_tasks(args.executor, call_with_keywords, [fn for fn, _ in calls], [kw for _, kw in calls])
        mres = next(results)
        self._print_mechanism(mres)
        report["mechanism_audits"] = [mres.to_dict()]
        report["channels"].append(_channel_row("mechanism", "canary (black-box)", mres.claimed_epsilon,
                                               mres.epsilon_lower_bound, mres.confidence, mres.bound.samples_per_side,
                                               mres.bound.max_certifiable_epsilon, mres.verdict, True,
                                               mechanism=mres.mechanism,
                                               p_value=_mechanism_p_value(mres),
                                               delta_lower_bound=getattr(mres, "delta_lower_bound", 0.0)))
        envs = []
        for (psi, psi_prime), res in zip(pairs, results):
            envs.append(res.to_dict())
            print(f"environment ψ={psi:g} vs ψ'={psi_prime:g} at the {report['model']} model "
                  f"(mean score {res.score_means[0]:.1f} vs {res.score_means[1]:.1f}; {res.wall_time_s:.1f}s):")
            for c in res.channels:
                print(f"  {c.channel:<20} claim {_fmt(c.claimed_epsilon):>6}  ε_LB {c.epsilon_lower_bound:7.3f}  "
                      f"(n={c.samples_per_side:,}, cap {c.max_certifiable_epsilon:.2f})  {c.verdict}")
                report["channels"].append(_channel_row(f"environment {psi:g} vs {psi_prime:g}", c.channel,
                                                       c.claimed_epsilon, c.epsilon_lower_bound, c.confidence,
                                                       c.samples_per_side, c.max_certifiable_epsilon, c.verdict,
                                                       c.covered, statistic=c.statistic, note=c.note,
                                                       **({"protect": list(config.protect)} if config.protect else {}),
                                                       **{k: v for k, v in c.to_dict().items()
                                                          if k in ("p_value", "p_value_leak")}))
        report["environment_audits"] = envs
        return 0

    def _adversarial(self, args, report: dict, progress: bool) -> int:
        mech = self._build_mechanism(args.mechanism, args.epsilon, args.clip, args.reduced_dim, args.rounds)
        pairs = args.pairs or [gravity_pair(p) for p in DEFAULT_PAIRS]
        report.update(mode="adversarial", model="adversarial")
        report["adversarial_audits"] = self._adversarial_pairs(args, mech, pairs, report, progress)
        return 0

    def _adversarial_pairs(self, args, mech, pairs, report: dict, progress: bool, hyper=None, physics=None,
                           **protection) -> list:
        from pgc.model import save_checkpoint

        from pgc.crafted import QUICK_SEARCH, SearchSettings
        from pgc_audits.adversarial import adversarial_pair_audits

        settings = QUICK_SEARCH if args.search_budget == "quick" else SearchSettings()
        report["search_settings"] = settings.to_dict()
        audits = []
        # one task per pair (its seed: the pair's child of SeedSequence(--seed)); results in pair order
        results = adversarial_pair_audits(
            mech, [tuple(p) for p in pairs], seed=args.seed, executor=args.executor,
            search_ranges=[isinstance(p, GravityRange) for p in pairs],
            search_objective="gradient" if any(c != "score" for c in args.channel_list) else "score",
            search_trials=args.search_trials, settings=settings, physics=physics, hyper=hyper,
            samples=args.samples or 200_000, channels=args.channel_list, confidence=args.confidence,
            progress=progress, **protection)
        for pair, (found, res) in zip(pairs, results):
            psi, psi_prime = res.psi, res.psi_prime
            extra = {}
            if found is not None:
                print(f"worst pair in {pair[0]:g}..{pair[1]:g} ({args.search_trials} optuna trials, "
                      f"{found.wall_time_s:.0f}s): {found.psi:.4g} vs {found.psi_prime:.4g} "
                      f"(search objective {found.value:.3f}); certified on fresh samples")
                extra["worst_pair_search"] = {"range": list(pair), **found.to_dict()}
            d = {**res.to_dict(), **extra, "theta_files": {}}
            stem = args.out_path.with_suffix("")
            for objective, theta in res.thetas.items():
                path = Path(f"{stem}-theta-{psi:g}-{psi_prime:g}-{objective}.pt")
                path.parent.mkdir(parents=True, exist_ok=True)
                save_checkpoint(theta, path, {"crafted_for": f"{psi:g} vs {psi_prime:g}", "objective": objective})
                d["theta_files"][objective] = path.name
            d["theta_file"] = d["theta_files"].get("gradient", next(iter(d["theta_files"].values())))
            audits.append(d)
            nf = res.noise_free_epsilon_lower_bound
            if protection:
                print(f"protected configuration ({', '.join(protection['protect'])}): every channel against the "
                      f"total claim ε = {res.claimed_epsilon:g} (gradient {float(mech.epsilon):g} + score "
                      f"{protection['score_epsilon'] or 0:g})")
            print(f"adversarial model, ψ={psi:g} vs ψ'={psi_prime:g}, {res.mechanism} "
                  f"(search {sum(s.wall_time_s for s in res.searches.values()):.0f}s, total {res.wall_time_s:.0f}s)"
                  + (f"; noise-free gradient ε_LB {nf:.3f}" if nf is not None else ""))
            for r in res.rows:
                ratio = "" if r.ratio != r.ratio else f"  ε_LB/ε {r.ratio:.3f}"
                print(f"  {r.channel:<10} claim {_fmt(r.claimed_epsilon):>6}  ε_LB {r.epsilon_lower_bound:7.3f}{ratio}  "
                      f"(n={r.audit.samples_per_side:,}, cap {r.audit.max_certifiable_epsilon:.2f}, "
                      f"θ crafted for {r.objective})  {r.verdict}")
                row = r.to_dict()
                report["channels"].append(_channel_row(
                    f"adversarial {psi:g} vs {psi_prime:g}", r.channel, r.claimed_epsilon, r.epsilon_lower_bound,
                    r.audit.confidence, r.audit.samples_per_side, r.audit.max_certifiable_epsilon, r.verdict,
                    r.audit.covered, model="adversarial", ratio=r.ratio, statistic=r.audit.statistic, p_value=row["p_value"],
                    **({"protect": list(protection["protect"])} if protection else {}),
                    **({"p_value_leak": row["p_value_leak"]} if "p_value_leak" in row else {})))
        return audits

    def _adversarial_curve(self, args, report: dict, progress: bool) -> int:
        from mechanisms import make_mechanism

        from attacks.sweep import ModelSpec
        from pgc.crafted import QUICK_SEARCH, SearchSettings
        from pgc_audits.studies import CURVE_DISTANCES, adversarial_curve

        self._build_mechanism(args.mechanism, args.epsilons[0], args.clip, args.reduced_dim, 1)  # validates them
        try:
            honest = ModelSpec.parse(args.honest_model or "init:0")
        except (ValueError, FileNotFoundError) as exc:
            raise CLIError(f"--honest-model: {exc}") from None
        distances = tuple(args.distances or CURVE_DISTANCES)
        print(f"adversarial curve: {args.mechanism} ε {args.epsilons}, Δψ {list(distances)}, honest θ "
              f"{honest.label}, {args.samples or 100_000:,} samples per side")
        res = adversarial_curve(lambda e: make_mechanism(args.mechanism, e, args.clip, args.reduced_dim),
                                args.epsilons, honest_theta=honest.theta, distances=distances,
                                channels=args.channel_list, samples=args.samples or 100_000, seed=args.seed,
                                confidence=args.confidence, log=lambda line: print(line, flush=True),
                                settings=QUICK_SEARCH if args.search_budget == "quick" else SearchSettings(),
                                executor=args.executor)
        report.update(mode="adversarial", model="adversarial", honest_model=honest.label, **res)
        for p in res["curve"]:
            report["channels"].append(_channel_row(
                f"{p['model']} {p['psi']:g} vs {p['psi_prime']:g} ε={p['epsilon']:g}", p["channel"], p["epsilon"],
                p["epsilon_lower_bound"], args.confidence, p["samples_per_side"], math.nan,
                p["verdict"], p["covered"], model=p["model"],
                ratio=p["ratio"], p_value=p["p_value"]))
        return 0

    def _system(self, args, report: dict, progress: bool) -> int:
        import json

        from audit.system_audit import audit_system, check_system, describe_secret
        from systems.registry import make_system

        system = make_system(args.system)
        check_system(system)
        canaries = system.canaries() if callable(getattr(system, "canaries", None)) else {}
        if args.secrets:
            try:
                secret, secret_prime = (json.loads(x) for x in args.secrets)
            except json.JSONDecodeError:
                raise CLIError("--secrets takes two JSON values (numbers, strings in quotes, lists)") from None
            pair = None
        else:
            if not canaries:
                raise CLIError(f"{system.name} names no canary pairs: give --secrets SECRET SECRET_PRIME")
            pair = args.pair or next(iter(canaries))
            if pair not in canaries:
                raise CLIError(f"--pair {pair!r}: {system.name} has {', '.join(map(repr, canaries))}")
            secret, secret_prime = canaries[pair]
        channels = None if args.channels is None else [c.strip() for c in args.channels.split(",") if c.strip()]
        samples = args.samples or 100_000
        what = f"pair {pair!r}" if pair else f"{describe_secret(system, secret)} vs {describe_secret(system, secret_prime)}"
        print(f"auditing {system.name}: {what}, claim ε = "
              f"{_fmt(float(system.claim.epsilon))}, δ = {system.claim.delta:g} covering "
              f"{', '.join(system.claim.covers) or 'nothing'}; {samples:,} releases per side"
              + (", adversarial broadcast" if args.adversarial else ""), flush=True)
        result = audit_system(system, secret, secret_prime, samples=samples, seed=args.seed,
                              confidence=args.confidence, adversarial=args.adversarial, channels=channels,
                              pair=pair, float_exact=args.float_exact, progress=progress)
        for r in result.rows:
            extra = "" if r.accountant_epsilon is None else f"  accountant ε {r.accountant_epsilon:.3f}"
            extra += "" if r.gdp_mu_estimate is None else f"  μ̂ {r.gdp_mu_estimate:.3f} (estimate)"
            print(f"  {r.channel:<20} claim ({_fmt(r.claimed_epsilon)}, {r.claimed_delta:g})  ε_LB {r.epsilon_lower_bound:7.3f}"
                  f"  δ_LB {r.delta_lower_bound:.2e}  p {r.p_value:.2g}  [{r.broadcast}, {r.statistic}]  "
                  f"{r.verdict}{'  (Holm)' if r.holm_rejected else ''}{extra}")
        print(f"verdict (Holm over {len(result.rows)} rows at {100 * args.confidence:g}%): {result.verdict.upper()}")
        command = report["command"]
        report.clear()
        report.update(result.to_dict())
        report["command"] = command
        return 0

    def _one_run(self, args, report: dict, progress: bool) -> int:
        import numpy as np

        from audit.one_run import ONE_RUN_CHANNELS, MAX_SIMULATED_BROADCASTS, one_run_audit
        from pgc.transcript import transcript_releases
        from pgc.system import PGCA3CSystem
        from audit.system_audit import row_verdict
        from pgc.rundir import load_run

        _, trials = load_run(args.one_run)
        if not 0 <= args.trial < len(trials):
            raise CLIError(f"{args.one_run} has {len(trials)} trial(s); no trial {args.trial}")
        trial = trials[args.trial]
        config = trial.config
        if not config.canaries:
            raise CLIError(f"{args.one_run} was trained without canaries (pgc train --canaries M --canary-pair A:B)")
        try:
            canaries = trial.canaries()
            transcript = trial.transcript()
        except FileNotFoundError as exc:
            raise CLIError(f"{args.one_run}: {exc}") from None
        channels = ONE_RUN_CHANNELS if args.channels is None else tuple(
            c.strip() for c in args.channels.split(",") if c.strip())
        bad = [c for c in channels if c not in ONE_RUN_CHANNELS]
        if bad or not channels:
            raise CLIError(f"--channels: unknown {bad or list(channels)}; the one-run audit has "
                           f"{', '.join(ONE_RUN_CHANNELS)}")
        secret, secret_prime = config.canary_pair
        positions = canaries.positions
        # the coins: evaluation-only, read to count correct guesses after every choice is made
        truth = (trial.ground_truth().psi[positions] == secret_prime).astype(np.int64)
        if canaries.theta is not None:
            broadcasts = [canaries.theta]
        else:  # live canaries: the θ versions they played, up to MAX_SIMULATED_BROADCASTS spread over them
            versions = np.sort(transcript.model_version[positions])
            picks = np.unique(versions[np.linspace(0, versions.size - 1, MAX_SIMULATED_BROADCASTS).astype(int)])
            where = {int(v): i for i, v in enumerate(transcript.theta_versions)}
            broadcasts = [transcript.thetas[where[int(v)]] for v in picks]
        system = PGCA3CSystem(trial.mechanism(), broadcasts[0], hyper=config.hyper, physics=config.physics,
                              protect=config.protect,
                              score_epsilon=config.score_epsilon_total if "score" in config.protect else None)
        print(f"one-run audit of {args.one_run} trial {args.trial}: {positions.size:,} {canaries.setup['canary_model']} "
              f"canaries, {secret:g} vs {secret_prime:g}, claim ε = {_fmt(float(system.claim.epsilon))}; simulating at "
              f"{len(broadcasts)} model(s)", flush=True)
        rows = one_run_audit(system, secret, secret_prime, transcript_releases(transcript, positions), truth,
                             broadcasts, channels=channels, samples=args.samples, seed=args.seed,
                             confidence=args.confidence)
        scope = f"one-run {canaries.setup['canary_model']} {secret:g} vs {secret_prime:g}"
        for r in rows:
            covered = r["channel"] in system.claim.covers
            verdict = row_verdict(r["claimed_epsilon"], r["epsilon_lower_bound"], covered)
            report["channels"].append(_channel_row(
                scope, r["channel"], r["claimed_epsilon"], r["epsilon_lower_bound"], args.confidence,
                r["samples_per_side"], r["max_certifiable_epsilon"], verdict, covered, audit="one-run",
                claimed_delta=r["claimed_delta"], canaries=r["canaries"], guesses=r["guesses"], correct=r["correct"],
                accuracy=r["accuracy"], p_value=r["p_value"], statistic=r["statistic"],
                simulated_epsilon_lower_bound=r["simulated_epsilon_lower_bound"]))
            print(f"  {r['channel']:<9} claim {_fmt(r['claimed_epsilon'])}  ε_LB {r['epsilon_lower_bound']:.3f} "
                  f"(ε_LB/ε {r['epsilon_lower_bound'] / r['claimed_epsilon']:.3f})  {r['correct']:,}/{r['guesses']:,} "
                  f"right of M={r['canaries']:,}  max {r['max_certifiable_epsilon']:.3f}  [{r['statistic']}]  {verdict}")
        report.update(run=str(args.one_run), trial=args.trial, canary_setup=canaries.setup,
                      canary_submissions=int(positions.size), simulated_models=len(broadcasts),
                      protection=config.protection() if config.protect else None)
        return 0

    def _self_test(self, args, report: dict, progress: bool) -> int:
        from audit.selftest import TABLE_HEADER, format_row, run_self_test, self_test_cases

        samples = args.samples or 1_000_000
        known = {c.name for c in self_test_cases()}
        if args.only and set(args.only) - known:
            raise CLIError(f"--only: unknown case(s) {sorted(set(args.only) - known)}; known: {', '.join(sorted(known))}")
        print(f"self-test: {samples:,} certification samples per side, {100 * args.confidence:g}% confidence, "
              f"seed {args.seed}")
        print(TABLE_HEADER)
        rows = run_self_test(samples=samples, confidence=args.confidence, seed=args.seed, dim=args.dim,
                             progress=progress, on_row=lambda r: print(format_row(r), flush=True), only=args.only,
                             executor=args.executor)
        report["self_test"] = [r.to_dict() for r in rows]
        for r in rows:
            report["channels"].append(_channel_row("self-test", f"{r.case.name} ({r.case.mode})",
                                                   r.result.claimed_epsilon, r.result.epsilon_lower_bound,
                                                   r.result.confidence, r.result.bound.samples_per_side,
                                                   r.result.bound.max_certifiable_epsilon, r.result.verdict, True,
                                                   correct_mechanism=r.case.correct, passed=r.passed,
                                                   true_epsilon=r.true_epsilon))
        failed = [r for r in rows if not r.passed]
        print(f"{len(rows) - len(failed)}/{len(rows)} judged correctly"
              + (f"; MISJUDGED: {', '.join(r.case.name for r in failed)}" if failed else ""))
        return 1 if failed else 0
