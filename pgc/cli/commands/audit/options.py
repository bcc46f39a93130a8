"""``pgc audit``'s options: the parsers of its values, its argument groups and the checks of their
combinations."""

from __future__ import annotations

import argparse

from pgc.errors import UserError
from pgc.options import GravityRange, gravity_pair  # noqa: F401  (re-used by the audit modes)
from pgc.options import (AutoSamples, add_confidence, add_engine, add_force, add_out, add_progress, add_samples,
                         add_seed, add_setting, certification_samples, positive_float, positive_int, sample_count)

DEFAULT_PAIRS = ("9.7:9.9", "5:15")
MAX_ESTIMATED_HOURS = 2.0  # an audit estimated longer than this is refused without --allow-long
MODES = ("mechanism", "run", "self_test", "system", "one_run", "flower", "flower_one_run", "ldp", "nvflare")


def sample_count_or_auto(text: str) -> "int | AutoSamples":
    """Certification samples per side (see :func:`certification_samples`), or ``auto`` / ``auto:BUDGET`` with
    a budget that holds at least the first stage (:func:`audit.sequential.audit_system_until_decisive`)."""
    if text == "auto":
        return AutoSamples()
    if text.startswith("auto:"):
        import inspect

        from audit.sequential import audit_system_until_decisive

        first = inspect.signature(audit_system_until_decisive).parameters["n_first"].default
        budget = sample_count(text[len("auto:"):])
        if budget < first:
            raise argparse.ArgumentTypeError(f"{text!r}: the budget must hold the first stage of {first:,} per side")
        return AutoSamples(budget)
    return certification_samples(text)


def add_mode_arguments(p: argparse.ArgumentParser) -> None:
    mode = p.add_argument_group("what to audit (exactly one of --mechanism, --run, --self-test, --system)")
    mode.add_argument("--mechanism", help="registered mechanism name (laplace, prs, gaussian-analytic, ...)")
    mode.add_argument("--system", metavar="SPEC",
                      help="any System: a registered name (pgc-a3c, pendulum-gaussian-pg, private-fedlinucb, ...), "
                           "MODULE:FACTORY (an installed module or one in the current folder) or "
                           "path/to/file.py:FACTORY; audited per channel through audit.audit_system")
    mode.add_argument("--flower", metavar="MODULE:APP",
                      help="a Flower ClientApp (mods included), audited through Flower's Message path; the module "
                           "defines initial_parameters() and AUDIT_PAIRS or takes --datasets (docs/README-flower.md)")
    mode.add_argument("--flower-one-run", choices=["local-dp", "central-dp"],
                      help="one federated run on Flower's simulation engine with --canaries canary clients beside "
                           "--real-clients real ones; the one-run audit of what the server and a third party see")
    mode.add_argument("--canaries", type=positive_int, default=1000, help="--flower-one-run: canary clients (1000)")
    mode.add_argument("--real-clients", type=positive_int, default=20, help="--flower-one-run: real clients (20)")
    mode.add_argument("--noise-multiplier", type=positive_float, default=1.0,
                      help="--flower-one-run central-dp: the server's noise multiplier z (default 1)")
    mode.add_argument("--datasets", nargs=2, metavar=("A", "B"),
                      help="--flower: the two neighbouring local data sets, by the names the client_fn reads")
    mode.add_argument("--pair", help="--system, --flower: one of the named canary pairs (default: the first)")
    mode.add_argument("--secrets", nargs=2, metavar=("SECRET", "SECRET_PRIME"),
                      help="--system: the two neighbouring secrets as JSON values (e.g. 9.7 9.9) instead of --pair")
    add_setting(mode, help="--system: a keyword of the system's factory (VALUE as JSON, else as text), e.g. "
                           "--setting epsilon=0.7 --setting relation=member; repeatable")
    mode.add_argument("--search-pair", action="store_true",
                      help="--system: search the system's secret_space for the worst neighbouring pair (CMA-ES on "
                           "a search stream) and certify that pair on fresh releases")
    mode.add_argument("--adversarial", action="store_true",
                      help="--system: the aggregator chooses the broadcast (the system's crafted family, else "
                           "CMA-ES over its broadcast_space)")
    mode.add_argument("--run", help="a run folder written by `pgc train --out`")
    mode.add_argument("--self-test", action="store_true", help="audit every correct mechanism and every mutant")
    mode.add_argument("--one-run", metavar="RUN",
                      help="a run folder trained with canaries (pgc train --canaries): one-run audit of its "
                           "canary submissions, per channel")


def add_audit_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=positive_float, help="claimed ε per agent (mechanism mode: required)")
    p.add_argument("--clip", type=positive_float, help="clip C (default: the paper's for the mechanism)")
    p.add_argument("--reduced-dim", type=positive_int, help="PRS d̂ (default: the paper's rule)")
    p.add_argument("--rounds", type=positive_int, default=1,
                   help="submissions per agent with the §3.2.1 split, audited as one release; --flower-one-run: "
                        "training rounds (default 1)")
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
    add_samples(p, type=sample_count_or_auto,
                   help="certification samples per side (default 1,000,000; run mode's environment audit 100,000; "
                        "--system 100,000); --system also takes auto[:BUDGET]: stages of 10,000·2^k until the "
                        "verdict is decisive, within BUDGET per side (default 1e6)")
    p.add_argument("--mechanism-samples", type=certification_samples, default=1_000_000,
                   help="run mode: samples of the canary audit of the run's mechanism (default 1,000,000)")
    add_confidence(p, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--delta", type=float, default=None,
                   help="δ of the claim (default: the mechanism's own; 0, pure ε-DP, for laplace and prs; "
                        "required by gaussian and gaussian-analytic)")


def add_adversarial_arguments(p: argparse.ArgumentParser) -> None:
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


def add_output_arguments(p: argparse.ArgumentParser) -> None:
    add_seed(p, default=0, help="root seed (default 0)")
    add_engine(p, "where the independent audits run (the run mode's pairs, the adversarial pairs and "
                  "curve points, the self-test cases): this process (local, default) or a Ray cluster, "
                  "one task each; same results")
    add_out(p, help="JSON result file (default runs/audit/<mode>-<date>-<time>.json, new for every run)")
    add_force(p, help="replace an existing --out result (and its θ files)")
    add_progress(p, help="progress (default on): a bar on a terminal, a dated line every 30 s otherwise")
    p.add_argument("--fail-on", choices=["violated", "inconclusive"], default=None,
                   help="exit 1 when a row's verdict is violated (or an unprotected channel); with inconclusive, "
                        "also when a row is inconclusive (for CI scripts; default: the mode's own exit code)")
    p.add_argument("--allow-long", action="store_true",
                   help=f"run an audit estimated to take longer than {MAX_ESTIMATED_HOURS:g} h on this machine")


def chosen_mode(args: argparse.Namespace) -> str:
    """The audit mode the options ask for; a UserError for a combination that makes no sense."""
    modes = [m for m in MODES if getattr(args, m)]
    if args.run and args.mechanism:
        modes.remove("mechanism")  # --mechanism overrides the run's mechanism
    if len(modes) != 1:
        raise UserError("give exactly one of --mechanism NAME, --run DIR, --self-test, --system SPEC, "
                       "--one-run RUN, --flower MODULE:APP, --flower-one-run MODE, --ldp LIBRARY:PROTOCOL, "
                       "--nvflare MODULE:FILTER")
    if (args.secrets or args.adversarial) and not args.system:
        raise UserError("--secrets and --adversarial go with --system")
    if args.pair and not (args.system or args.flower or args.nvflare):
        raise UserError("--pair goes with --system, --flower or --nvflare")
    if args.datasets and not args.flower:
        raise UserError("--datasets goes with --flower")
    if args.system and (args.adversarial_model or args.adversarial_curve):
        raise UserError("--system takes --adversarial (the system's own crafted family or a search of its broadcasts)")
    if isinstance(args.samples, AutoSamples) and not (args.system or args.flower or args.ldp or args.nvflare):
        raise UserError("--samples auto[:BUDGET] works with --system, --flower, --ldp and --nvflare")
    if args.seed < 0:
        raise UserError("--seed must be >= 0")
    if args.delta is not None and not (0.0 <= args.delta < 1.0):
        raise UserError("--delta must lie in [0, 1)")
    if args.address is not None and args.engine != "ray":
        raise UserError("--address is only for --engine ray")
    if args.compositions and any(k < 2 for k in args.compositions):
        raise UserError("--compositions must be integers >= 2")
    if args.adversarial_model or args.adversarial_curve:
        args.channel_list = adversarial_channels(args)
    elif any(isinstance(p, GravityRange) for p in (args.pairs or [])):
        raise UserError("a range LO..HI in --pairs needs --adversarial-model")
    if args.adversarial_curve:
        return "adversarial_curve"
    return "adversarial" if args.adversarial_model and modes[0] == "mechanism" else modes[0]


def adversarial_channels(args: argparse.Namespace) -> list[str]:
    if args.adversarial_model and args.adversarial_curve:
        raise UserError("give one of --adversarial-model, --adversarial-curve")
    if args.self_test:
        raise UserError("--adversarial-model/--adversarial-curve audit a mechanism or a run, not --self-test")
    if args.adversarial_curve and args.run:
        raise UserError("--adversarial-curve works with --mechanism (the honest θ is --honest-model)")
    from pgc.audits.adversarial import ADVERSARIAL_CHANNELS

    chans = [c.strip() for c in (args.channels or "gradient,score,all").split(",") if c.strip()]
    bad = [c for c in chans if c not in ADVERSARIAL_CHANNELS]
    if bad or not chans:
        raise UserError(f"--channels: unknown {bad or chans}; known: {', '.join(ADVERSARIAL_CHANNELS)}")
    return chans


def estimated_seconds(args: argparse.Namespace, mode: str, mechanism=None,
                      episode_length: float | None = None) -> float | None:
    """The audit's expected wall time on the project's machine (:mod:`audit.planning`) for the mechanism
    it audits (PRS: its d̂) and, for a run, its model's episode length; None where none is made."""
    from audit.planning import adversarial_audit_seconds, environment_audit_seconds, mechanism_audit_seconds

    pairs = len(args.pairs or DEFAULT_PAIRS)
    prs = callable(getattr(mechanism, "reduced_dim_for", None))  # PRS draws a d̂ × d matrix per output
    reduced_dim = mechanism.reduced_dim_for(args.dim) if prs else 1
    if mode == "mechanism":
        return mechanism_audit_seconds(args.samples or 1_000_000, args.dim, reduced_dim, args.rounds, prs)
    if mode == "adversarial" or (mode == "run" and args.adversarial_model):
        return adversarial_audit_seconds(args.samples or 200_000, pairs, args.search_budget)
    if mode == "run":
        return (mechanism_audit_seconds(args.mechanism_samples, args.dim, reduced_dim, 1, prs)
                + environment_audit_seconds(args.samples or 100_000, pairs, episode_length, args.compositions))
    return None
