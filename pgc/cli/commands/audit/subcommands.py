"""The subcommands of ``pgc audit``, one class each (the style of :mod:`pgc.cli.main`'s commands): a positional
target, the subcommand's own options and defaults, and the options they all share (:mod:`.options`).

A subcommand only parses and checks: its audit (:mod:`.system`, :mod:`.mechanism`, :mod:`.run`, ...) is
imported when it runs (:func:`mode_function`), so ``pgc audit SUBCOMMAND --help`` and a refused option import
neither torch, numba, the PGC-A3C kernel nor the auditor's statistics.

``mode`` names the audit a subcommand runs: the result's ``"mode"`` field (``_`` written ``-``), its default
file name and the function of :data:`MODE_FUNCTIONS`.
"""

from __future__ import annotations

import argparse
import importlib

from pgc.errors import UserError
from pgc.options import add_setting, certification_samples, positive_float, positive_int

from .options import (
    GravityRange,
    Samples,
    add_adversarial_search,
    add_dim,
    add_float_exact,
    add_mechanism_settings,
    add_pairs,
    add_selection_options,
    add_shared_arguments,
    add_stated_claim,
    add_system_channels,
    add_trial,
    adversarial_channels,
    check_shared,
)

# mode -> the function that audits it: (args, report, progress) -> exit status; imported when it runs
MODE_FUNCTIONS = {
    "system": ".system:audit_any_system",
    "flower": ".system:audit_flower_client",
    "ldp": ".library:audit_ldp",
    "nvflare": ".library:audit_nvflare",
    "opacus": ".opacus:audit_opacus_client",
    "opacus_one_run": ".opacus:audit_opacus_one_run",
    "mechanism": ".mechanism:audit_named_mechanism",
    "run": ".run:audit_run",
    "one_run": ".one_run:audit_one_run",
    "flower_one_run": ".flower_one_run:audit_flower_one_run",
    "self_test": ".mechanism:self_test",
    "adversarial": ".adversarial:audit_adversarial_mechanism",
    "adversarial_curve": ".adversarial:adversarial_curve",
    "recertify": ".recertify:recertify_result",
}


def mode_function(mode: str):
    module, function = MODE_FUNCTIONS[mode].split(":")
    return getattr(importlib.import_module(module, __package__), function)


SYSTEM_SAMPLES = Samples(100_000, "releases per side (default 100,000)", auto=True)


class AuditSubcommand:
    """One ``pgc audit`` subcommand: ``name``, ``help`` (one line), ``mode``; ``add_arguments(parser)`` adds its
    target and options; ``mode_of(args)`` checks what argparse cannot and names the audit to run."""

    name: str
    help: str
    mode: str
    samples: Samples | None = None
    engine: str | None = None  # what runs as Ray tasks with --engine ray (None: no --engine)
    estimates: bool = False  # prints its estimated wall time first (and takes --allow-long)
    seeded: bool = True  # takes --seed and --confidence (False: re-runs a recorded audit with its own)

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        self.add_target(p)
        self.add_options(p.add_argument_group(f"{self.name} options"))
        add_shared_arguments(p, self.default_file, self.samples, self.engine, self.estimates, self.seeded)

    @property
    def default_file(self) -> str:
        """Where the result goes without --out (:class:`pgc.cli.outputs.ResultFile`, named by the mode)."""
        return f"runs/audit/{self.mode.replace('_', '-')}-<date>-<time>.json"

    def add_target(self, p: argparse.ArgumentParser) -> None:
        pass

    def add_options(self, p) -> None:
        pass

    def check(self, args: argparse.Namespace) -> None:
        pass

    def mode_of(self, args: argparse.Namespace) -> str:
        check_shared(args)
        self.check(args)
        return self.mode


# --- Systems: the auditor's one engine (audit.engine.system_audit.audit_system) ---------------------------------


class SystemSubcommand(AuditSubcommand):
    name, mode = "system", "system"
    help = "any System, per channel: a registered name, MODULE:FACTORY or path/to/file.py:FACTORY"
    samples = SYSTEM_SAMPLES

    def add_target(self, p):
        p.add_argument(
            "system",
            metavar="SPEC",
            help="a registered System (pgc-a3c, pendulum-gaussian-pg, private-fedlinucb, "
            "toy-laplace-count, ...), MODULE:FACTORY (an installed module or one in the current "
            "folder) or path/to/file.py:FACTORY",
        )

    def add_options(self, p):
        add_setting(
            p,
            help="a keyword of the system's factory (VALUE as JSON, else as text), e.g. "
            "--setting epsilon=0.7 --setting relation=member; repeatable",
        )
        which = p.add_mutually_exclusive_group()  # one way of naming the pair
        which.add_argument(
            "--pair",
            help="one of the system's named canary pairs (default: the first); any: the one whose "
            "releases lie furthest apart on a search stream, certified on fresh releases",
        )
        which.add_argument(
            "--secrets",
            nargs=2,
            metavar=("SECRET", "SECRET_PRIME"),
            help="the two neighbouring secrets as JSON values (e.g. 9.7 9.9) instead of --pair",
        )
        which.add_argument(
            "--search-pair",
            action="store_true",
            help="search the system's secret_space for the worst neighbouring pair (CMA-ES on a search "
            "stream) and certify that pair on fresh releases",
        )
        p.add_argument(
            "--adversarial",
            action="store_true",
            help="the aggregator chooses the broadcast (the system's crafted family, else CMA-ES over "
            "its broadcast_space)",
        )
        add_system_channels(p)
        add_float_exact(p)
        add_selection_options(p)


class FlowerSubcommand(AuditSubcommand):
    name, mode = "flower", "flower"
    help = "a Flower ClientApp (mods included), audited through Flower's Message path"
    samples = SYSTEM_SAMPLES

    def add_target(self, p):
        p.add_argument(
            "flower",
            metavar="MODULE:APP",
            help="the ClientApp; its module defines initial_parameters() and AUDIT_PAIRS, or give "
            "--datasets (docs/README-flower.md)",
        )

    def add_options(self, p):
        p.add_argument(
            "--datasets",
            nargs=2,
            metavar=("A", "B"),
            help="the two neighbouring local data sets, by the names the client_fn reads",
        )
        p.add_argument("--pair", help="one of the module's AUDIT_PAIRS (default: the first)")
        add_system_channels(p)
        add_float_exact(p)
        add_selection_options(p)
        p.set_defaults(secrets=None, adversarial=False)


class LdpSubcommand(AuditSubcommand):
    name, mode = "ldp", "ldp"
    help = "an LDP frequency oracle of multi-freq-ldpy, pure-ldp or the reference"
    samples = SYSTEM_SAMPLES

    def add_target(self, p):
        p.add_argument(
            "ldp",
            metavar="LIBRARY:PROTOCOL",
            help="multi-freq-ldpy:OLH, pure-ldp:DE, reference:SS, ... (docs/README-ldp.md)",
        )

    def add_options(self, p):
        add_setting(
            p,
            help="k=K and epsilon=E (both required), and the protocol's own settings, e.g. hashes=2 "
            "for RAPPOR; pair=[0, 5] for another pair than 0 vs k − 1; decoders=false to offer "
            "the auditor no statistic on the protocol's decoding; repeatable",
        )
        add_system_channels(p)
        add_float_exact(p)
        add_selection_options(p)
        p.set_defaults(pair=None, secrets=None, adversarial=False)


class NvflareSubcommand(AuditSubcommand):
    name, mode = "nvflare", "nvflare"
    help = "an NVIDIA FLARE filter through its process() path, on built-in client updates"
    samples = SYSTEM_SAMPLES

    def add_target(self, p):
        p.add_argument(
            "nvflare",
            metavar="MODULE:FILTER",
            help="nvflare.app_common.filters:SVTPrivacy, or a user's my_filters.py:MyFilter (docs/README-nvflare.md)",
        )

    def add_options(self, p):
        add_setting(
            p,
            help="a keyword of the filter's constructor (VALUE as JSON, else as text); "
            "data_kind=WEIGHTS filters full weights instead of WEIGHT_DIFF; repeatable",
        )
        p.add_argument("--pair", help="one of the built-in client updates' pairs (default: the first)")
        add_stated_claim(p, "update")
        add_system_channels(p)
        add_float_exact(p)
        add_selection_options(p)
        p.set_defaults(secrets=None, adversarial=False)


# --- PGC-A3C: mechanisms, runs and their crafted models ----------------------------------------------------


class MechanismSubcommand(AuditSubcommand):
    name, mode = "mechanism", "mechanism"
    help = "black-box canary audit of a registered mechanism (--white-box: PRS from its ũ and M)"
    samples = Samples(1_000_000, "certification outputs per side (default 1,000,000)")
    estimates = True

    def add_target(self, p):
        p.add_argument(
            "mechanism", metavar="NAME", help="a registered mechanism (laplace, prs, gaussian, gaussian-analytic, ...)"
        )

    def add_options(self, p):
        add_mechanism_settings(p, epsilon="claimed ε per agent (required)")
        p.add_argument("--white-box", action="store_true", help="PRS: audit its internal report (ũ, M)")
        add_float_exact(p)
        add_dim(p)


class RunSubcommand(AuditSubcommand):
    name, mode = "run", "run"
    help = (
        "a training run: its mechanism (canary audit) and its model per transcript channel, for each pair of gravities"
    )
    samples = Samples(100_000, "releases per side of each environment audit (default 100,000)")
    engine = "the canary audit and each pair's environment audit"
    estimates = True

    def add_target(self, p):
        p.add_argument("run", metavar="DIR", help="a run folder written by `pgc train --out`")

    def add_options(self, p):
        p.add_argument("--mechanism", metavar="NAME", help="audit this registered mechanism instead of the run's")
        add_mechanism_settings(p, epsilon="--mechanism: its claimed ε per agent", rounds=False)
        add_trial(p)
        p.add_argument("--initial", action="store_true", help="audit at the initial weights (default: the final)")
        add_pairs(p, "neighbouring gravities ψ:ψ' (default 9.7:9.9 5:15)")
        p.add_argument(
            "--compositions",
            type=positive_int,
            nargs="*",
            default=[3],
            help="k for k submissions from one environment (default 3; none: empty)",
        )
        p.add_argument(
            "--mechanism-samples",
            type=certification_samples,
            default=1_000_000,
            help="certification outputs per side of the mechanism's canary audit (default 1,000,000)",
        )
        add_float_exact(p)
        add_dim(p)
        p.set_defaults(adversarial_model=False)

    def check(self, args):
        if args.compositions and any(k < 2 for k in args.compositions):
            raise UserError("--compositions must be integers >= 2")
        if any(isinstance(p, GravityRange) for p in args.pairs or []):
            raise UserError("a range LO..HI in --pairs needs a crafted model (pgc audit adversarial-model)")


class OneRunSubcommand(AuditSubcommand):
    name, mode = "one-run", "one_run"
    help = "one-run audit of a run trained with canary agents (pgc train --canaries), per channel"
    samples = Samples(None, "simulated releases per side (default max(40,000, 4 × the canary submissions))")

    def add_target(self, p):
        p.add_argument("one_run", metavar="RUN", help="a run folder trained with canaries")

    def add_options(self, p):
        add_trial(p)
        p.add_argument(
            "--channels", default=None, help="gradient, score and/or all, comma-separated (default: all three)"
        )


class FlowerOneRunSubcommand(AuditSubcommand):
    name, mode = "flower-one-run", "flower_one_run"
    help = "one federated run on Flower's simulation engine with canary clients, audited in one run"

    def add_target(self, p):
        p.add_argument(
            "flower_one_run",
            metavar="MODE",
            choices=["local-dp", "central-dp"],
            help="local-dp (each client adds noise) or central-dp (the server adds noise)",
        )

    def add_options(self, p):
        p.add_argument("--canaries", type=positive_int, default=1000, help="canary clients (default 1000)")
        p.add_argument("--real-clients", type=positive_int, default=20, help="real clients (default 20)")
        p.add_argument("--rounds", type=positive_int, default=1, help="training rounds (default 1)")
        p.add_argument("--epsilon", type=positive_float, default=1.0, help="claimed ε (default 1)")
        p.add_argument("--delta", type=float, default=1e-5, help="claimed δ (default 1e-5)")
        p.add_argument(
            "--noise-multiplier",
            type=positive_float,
            default=1.0,
            help="central-dp: the server's noise multiplier z (default 1)",
        )


def add_opacus_client(p, more: str) -> None:
    """The MODULE:FACTORY target of the Opacus subcommands."""
    p.add_argument(
        "opacus",
        metavar="MODULE:FACTORY",
        help=f"a factory returning pgc.opacus.OpacusClient (model, data, DP-SGD settings); {more}",
    )


class OpacusSubcommand(AuditSubcommand):
    name, mode = "opacus", "opacus"
    help = "a client that trains with Opacus (DP-SGD as shipped): the server's view of its update"
    samples = Samples(20_000, "releases per side (default 20,000; one release is one Opacus training round)")

    def add_target(self, p):
        add_opacus_client(p, "as MODULE:FACTORY or path/to/file.py:FACTORY")

    def add_options(self, p):
        add_setting(p, help="a keyword of the factory (VALUE as JSON, else as text); repeatable")
        p.add_argument(
            "--relation",
            choices=["add-remove", "replace-one"],
            default="add-remove",
            help="the neighbouring data sets: one record added or removed (Opacus's accounting; default) or "
            "one replaced by a canary",
        )
        p.add_argument(
            "--record",
            default="0",
            help="the record that differs: an index of the client's data (default 0), canary (add-remove: an "
            "input-space canary added) or gradient (add-remove: a Dirac gradient canary of norm C, white-box)",
        )
        p.add_argument(
            "--workers",
            type=positive_int,
            default=1,
            help="processes that train releases (default 1; the releases are the same for any number)",
        )
        p.add_argument(
            "--per-step",
            action="store_true",
            help="also release each local step's change (channel steps: every intermediate model, white-box)",
        )
        p.add_argument(
            "--black-box",
            action="store_true",
            help="release only the trained model's loss on the differing record (channel loss: membership "
            "inference from the final model; --record I or canary)",
        )
        add_selection_options(p)


class OpacusOneRunSubcommand(AuditSubcommand):
    name, mode = "opacus-one-run", "opacus_one_run"
    help = "gradient canaries in one real Opacus training, audited in one run (white-box and the final model)"

    def add_target(self, p):
        add_opacus_client(p, "its local_steps is the training's length")

    def add_options(self, p):
        add_setting(p, help="a keyword of the factory (VALUE as JSON, else as text); repeatable")
        p.add_argument(
            "--canaries",
            type=positive_int,
            default=1000,
            help="gradient canaries, one parameter coordinate each, each included by a fair coin (default 1000)",
        )


class SelfTestSubcommand(AuditSubcommand):
    name, mode = "self-test", "self_test"
    help = "audit every correct mechanism and every planted bug; exit code 1 if any is misjudged"
    samples = Samples(1_000_000, "certification outputs per side (default 1,000,000)")
    engine = "the cases"

    def add_options(self, p):
        p.add_argument("--only", nargs="+", metavar="CASE", help="only these case names (default: every case)")
        add_dim(p)


class AdversarialModelSubcommand(AuditSubcommand):
    name, mode = "adversarial-model", "adversarial"
    help = (
        "the aggregator crafts θ for each pair of gravities and the channels are certified at it: a "
        "mechanism, or a run's mechanism and settings"
    )
    samples = Samples(200_000, "releases per side of each pair's audit (default 200,000)")
    engine = "the pairs"
    estimates = True

    def add_target(self, p):
        p.add_argument(
            "mechanism",
            metavar="MECHANISM",
            nargs="?",
            help="a registered mechanism (laplace, prs, ...); with --run it replaces the run's",
        )

    def add_options(self, p):
        p.add_argument("--run", metavar="DIR", help="a run folder (pgc train --out): its mechanism and settings")
        add_trial(p)
        add_mechanism_settings(p, epsilon="claimed ε per agent (required with MECHANISM)")
        add_pairs(
            p,
            "neighbouring gravities ψ:ψ', or a range LO..HI: an optuna search for the pair the crafted "
            "model separates best (default 9.7:9.9 5:15)",
        )
        add_adversarial_search(p, trials=True)
        p.set_defaults(adversarial_model=True, initial=False, dim=112)

    def mode_of(self, args):
        check_shared(args)
        if args.mechanism is None and args.run is None:
            raise UserError("give a MECHANISM (with --epsilon) or --run DIR")
        args.channel_list = adversarial_channels(args)
        return "run" if args.run else "adversarial"  # a run: its audit function, at crafted models


class AdversarialCurveSubcommand(AuditSubcommand):
    name, mode = "adversarial-curve", "adversarial_curve"
    help = "ε_LB/ε of a mechanism against the neighbour distance Δψ, at the honest and the crafted θ"
    samples = Samples(100_000, "releases per side of each point (default 100,000)")
    engine = "the points (Δψ, ε)"

    def add_target(self, p):
        p.add_argument("mechanism", metavar="MECHANISM", help="a registered mechanism (laplace, prs, ...)")

    def add_options(self, p):
        p.add_argument(
            "--epsilons", type=positive_float, nargs="+", default=[1.0, 4.0], help="claimed ε values (default 1 4)"
        )
        p.add_argument(
            "--distances", type=positive_float, nargs="+", default=None, help="Δψ values (default 0.2 0.5 1 2 5 10)"
        )
        p.add_argument(
            "--honest-model", default=None, help="the honest θ (checkpoint file, init:SEED or run:DIR; default init:0)"
        )
        p.add_argument("--clip", type=positive_float, help="clip C (default: the paper's for the mechanism)")
        p.add_argument("--reduced-dim", type=positive_int, help="PRS d̂ (default: the paper's rule)")
        add_adversarial_search(p, trials=False)

    def check(self, args):
        args.channel_list = adversarial_channels(args)


class RecertifySubcommand(AuditSubcommand):
    name, mode = "recertify", "recertify"
    seeded = False
    help = "a System audit's chosen tests re-fitted from its seed and counted on fresh releases"

    def add_target(self, p):
        p.add_argument("recorded", metavar="RESULT", help="a result of pgc audit system, flower, ldp or nvflare")

    def add_options(self, p):
        p.add_argument(
            "--certification-seed",
            type=int,
            default=1,
            help="seed of the fresh certification releases (default 1; the selection keeps the result's own seed)",
        )


SUBCOMMANDS: dict[str, AuditSubcommand] = {
    cls.name: cls()
    for cls in (
        SystemSubcommand,
        MechanismSubcommand,
        RunSubcommand,
        OneRunSubcommand,
        FlowerSubcommand,
        FlowerOneRunSubcommand,
        LdpSubcommand,
        NvflareSubcommand,
        OpacusSubcommand,
        OpacusOneRunSubcommand,
        SelfTestSubcommand,
        AdversarialModelSubcommand,
        AdversarialCurveSubcommand,
        RecertifySubcommand,
    )
}
