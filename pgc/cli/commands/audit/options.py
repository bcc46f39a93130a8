"""``pgc audit``'s options: the parsers of their values, the options its subcommands share (each defined once
here, with the subcommand's own ``--samples`` default and help), the option groups several subcommands take,
and the checks of their values. Only argparse and :mod:`pgc.options` at import: ``pgc audit ... --help``
loads nothing else."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from pgc.errors import UserError
from pgc.options import (  # noqa: F401  (re-used by the audit modes)
    AutoSamples,
    GravityRange,
    add_confidence,
    add_engine,
    add_force,
    add_out,
    add_progress,
    add_samples,
    add_seed,
    certification_samples,
    gravity_pair,
    positive_float,
    positive_int,
    sample_count,
)

DEFAULT_PAIRS = ("9.7:9.9", "5:15")
MAX_ESTIMATED_HOURS = 2.0  # an audit estimated longer than this is refused without --allow-long
ADVERSARIAL_CHANNELS_DEFAULT = "gradient,score,all"


def sample_count_or_auto(text: str) -> int | AutoSamples:
    """Certification samples per side (see :func:`certification_samples`), or ``auto`` / ``auto:BUDGET`` with
    a budget that holds at least the first stage
    (:func:`audit.certification.sequential.audit_system_until_decisive`)."""
    if text == "auto":
        return AutoSamples()
    if text.startswith("auto:"):
        import inspect

        from audit.certification.sequential import audit_system_until_decisive

        first = inspect.signature(audit_system_until_decisive).parameters["n_first"].default
        budget = sample_count(text[len("auto:") :])
        if budget < first:
            raise argparse.ArgumentTypeError(f"{text!r}: the budget must hold the first stage of {first:,} per side")
        return AutoSamples(budget)
    return certification_samples(text)


@dataclass(frozen=True)
class Samples:
    """A subcommand's ``--samples``: its default (stated once, in its help) and what a sample is there."""

    default: int | None
    help: str
    auto: bool = False  # also auto[:BUDGET] (the System audits)

    def add(self, p) -> None:
        if self.auto:
            add_samples(
                p,
                type=sample_count_or_auto,
                default=self.default,
                help=f"{self.help}; auto[:BUDGET]: stages of 10,000·2^k until the verdict is decisive, "
                "within BUDGET per side (default 1e6)",
            )
        else:
            add_samples(p, default=self.default, help=self.help)


# --- the options every subcommand shares ----------------------------------------------------------------


def add_shared_arguments(
    p: argparse.ArgumentParser,
    default_file: str,
    samples: Samples | None,
    engine: str | None,
    estimates: bool,
    seeded: bool = True,
) -> None:
    """The options of every ``pgc audit`` subcommand, in one group: ``--out``, ``--force``, ``--seed``,
    ``--confidence``, ``--samples`` (with the subcommand's default), ``--engine``/``--address`` where the
    subcommand has independent audits to run as tasks (``engine``: which), ``--allow-long`` where it estimates
    its wall time first, ``--progress``, ``--fail-on``. Not ``seeded``: no ``--seed`` or ``--confidence`` (a
    subcommand that re-runs a recorded audit with the audit's own)."""
    group = p.add_argument_group("output, sizes and exit code")
    if samples is not None:
        samples.add(group)
    if seeded:
        add_confidence(group, default=0.95, help="confidence level of every certified bound (default 0.95)")
        add_seed(group, default=0, help="root seed (default 0)")
    else:
        p.set_defaults(confidence=0.95, seed=0)
    add_out(
        group,
        help=f"JSON result file (default {default_file}, new for every run; a name ending in / is a folder for it)",
    )
    add_force(group, help="replace an existing --out result (and its θ files)")
    if engine is not None:
        add_engine(
            group, f"where {engine} run: this process (local, default) or a Ray cluster, one task each; same results"
        )
    add_progress(group, help="progress (default on): a bar on a terminal, a dated line every 30 s otherwise")
    group.add_argument(
        "--fail-on",
        choices=["violated", "inconclusive"],
        default=None,
        help="exit 1 when a row's verdict is violated (or an unprotected channel); with "
        "inconclusive, also when a row is inconclusive (for CI scripts; default: the audit's "
        "own exit code)",
    )
    if estimates:
        group.add_argument(
            "--allow-long",
            action="store_true",
            help=f"run an audit estimated to take longer than {MAX_ESTIMATED_HOURS:g} h on this machine",
        )
    else:
        p.set_defaults(allow_long=False)
    if engine is None:
        p.set_defaults(engine="local", address=None)


# --- option groups several subcommands take ---------------------------------------------------------------


def add_mechanism_settings(p, *, epsilon: str, rounds: bool = True, delta: bool = True) -> None:
    """``--epsilon``, ``--clip``, ``--reduced-dim`` (and ``--rounds``, ``--delta``): the registered mechanism's
    settings (:func:`pgc.audits.mechanism.named_mechanism`)."""
    p.add_argument("--epsilon", type=positive_float, help=epsilon)
    p.add_argument("--clip", type=positive_float, help="clip C (default: the paper's for the mechanism)")
    p.add_argument("--reduced-dim", type=positive_int, help="PRS d̂ (default: the paper's rule)")
    if rounds:
        p.add_argument(
            "--rounds",
            type=positive_int,
            default=1,
            help="submissions per agent with the §3.2.1 split, audited as one release (default 1)",
        )
    if delta:
        p.add_argument(
            "--delta",
            type=float,
            default=None,
            help="δ of the claim (default: the mechanism's own; 0, pure ε-DP, for laplace and prs; "
            "required by gaussian and gaussian-analytic)",
        )


def train_fraction(text: str) -> float | None:
    """``--train-fraction``: a number in (0, 1], or ``auto``."""
    if text == "auto":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number in (0, 1] or auto") from None
    if not (0.0 < value <= 1.0):
        raise argparse.ArgumentTypeError(f"{text!r} is not in (0, 1]")
    return value


def add_selection_options(p) -> None:
    """``--train-fraction`` and ``--certification-seed``: how a System audit selects its tests and where its
    certification releases come from."""
    p.add_argument(
        "--train-fraction",
        type=train_fraction,
        default=None,
        metavar="F|auto",
        help="the training split per side, spent on choosing the test, as a fraction of the certification "
        "releases, at least 1,000 per side whatever F (auto unless given: a quarter, and for a claimed ε < 0.5 "
        "at least 20,000 or as many as the certification releases if fewer); the result records the size "
        "drawn (train_per_side)",
    )
    p.add_argument(
        "--shape-power",
        action="store_true",
        help="also state, per leak shape, the smallest leak planted in each row's own training releases "
        "that the audit flags (tens of seconds per channel)",
    )
    p.add_argument(
        "--certification-seed",
        type=int,
        default=None,
        help="draw the certification releases from this seed, everything before them from --seed "
        "(pgc audit recertify sets it)",
    )


def add_dim(p) -> None:
    p.add_argument("--dim", type=positive_int, default=112, help="gradient dimension (default 112)")


def add_float_exact(p) -> None:
    p.add_argument(
        "--float-exact",
        action="store_true",
        help="audit the exact float64 outputs (default: rounded to 2^-30·C, blind to last-bit floating-point leaks)",
    )


def add_trial(p) -> None:
    p.add_argument("--trial", type=int, default=0, help="the run's trial index (default 0)")


def add_pairs(p, help: str) -> None:
    p.add_argument("--pairs", type=gravity_pair, nargs="+", default=None, help=help)


def add_adversarial_search(p, *, trials: bool) -> None:
    """``--channels``, ``--search-budget`` (and ``--search-trials``): the crafted model's search."""
    p.add_argument(
        "--channels",
        default=None,
        help="channels: gradient,score,arrival,arrival-order,all (default gradient,score,all; for a run "
        "with mitigations every channel)",
    )
    p.add_argument(
        "--search-budget",
        choices=["default", "quick"],
        default="default",
        help="crafted-model search budget (quick: about a quarter; enough for wide pairs)",
    )
    if trials:
        p.add_argument(
            "--search-trials",
            type=positive_int,
            default=12,
            help="optuna trials of the worst-pair search for a range LO..HI in --pairs (default 12)",
        )


def stated_claim(text: str) -> tuple[float, float]:
    """``--claim EPSILON[,DELTA]``: the (ε, δ) a user states for code whose claim the adapter does not read."""
    import math

    parts = text.split(",")
    try:
        epsilon, delta = float(parts[0]), float(parts[1]) if len(parts) == 2 else 0.0
    except (ValueError, IndexError):
        raise argparse.ArgumentTypeError(f"expected EPSILON or EPSILON,DELTA, got {text!r}") from None
    if len(parts) > 2 or not (epsilon > 0 and not math.isnan(epsilon)) or not 0 <= delta < 1:
        raise argparse.ArgumentTypeError(f"expected ε > 0 and 0 ≤ δ < 1 as EPSILON[,DELTA], got {text!r}")
    return epsilon, delta


def add_stated_claim(p, covers: str) -> None:
    """``--claim``: the claim a user states for the audited code, which replaces the one the adapter reads."""
    p.add_argument(
        "--claim",
        type=stated_claim,
        metavar="EPSILON[,DELTA]",
        help=f"the (ε, δ) the code promises on its {covers}, stated instead of the claim the adapter reads from "
        "the library (for a release whose parameters it cannot read, or a filter that states none)",
    )


def add_system_channels(p) -> None:
    p.add_argument(
        "--channels", default=None, help="the channels to audit, comma-separated (default: every channel of the system)"
    )


# --- checks ------------------------------------------------------------------------------------------------


def check_shared(args: argparse.Namespace) -> None:
    """What the shared options refuse together (argparse checks each value)."""
    if args.address is not None and args.engine != "ray":
        raise UserError("--address is only for --engine ray")
    delta = getattr(args, "delta", None)
    if delta is not None and not (0.0 <= delta < 1.0):
        raise UserError("--delta must lie in [0, 1)")


def adversarial_channels(args: argparse.Namespace) -> list[str]:
    """The crafted model's channels of ``--channels`` (default gradient, score, all)."""
    from pgc.audits.adversarial import ADVERSARIAL_CHANNELS

    chans = [c.strip() for c in (args.channels or ADVERSARIAL_CHANNELS_DEFAULT).split(",") if c.strip()]
    bad = [c for c in chans if c not in ADVERSARIAL_CHANNELS]
    if bad or not chans:
        raise UserError(f"--channels: unknown {bad or chans}; known: {', '.join(ADVERSARIAL_CHANNELS)}")
    return chans


def estimated_seconds(
    args: argparse.Namespace, mode: str, mechanism=None, episode_length: float | None = None
) -> float | None:
    """The audit's expected wall time on the project's machine (:mod:`audit.power.planning`) for the mechanism
    it audits (PRS: its d̂) and, for a run, its model's episode length; None where none is made."""
    from audit.power.planning import adversarial_audit_seconds, environment_audit_seconds, mechanism_audit_seconds

    pairs = len(getattr(args, "pairs", None) or DEFAULT_PAIRS)
    prs = callable(getattr(mechanism, "reduced_dim_for", None))  # PRS draws a d̂ × d matrix per output
    reduced_dim = mechanism.reduced_dim_for(args.dim) if prs else 1
    if mode == "mechanism":
        return mechanism_audit_seconds(args.samples, args.dim, reduced_dim, args.rounds, prs)
    if mode == "adversarial" or (mode == "run" and args.adversarial_model):
        return adversarial_audit_seconds(args.samples, pairs, args.search_budget)
    if mode == "run":
        return mechanism_audit_seconds(
            args.mechanism_samples, args.dim, reduced_dim, 1, prs
        ) + environment_audit_seconds(args.samples, pairs, episode_length, args.compositions)
    return None
