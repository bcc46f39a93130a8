"""``pgc train``: K independent PGC-A3C trials in one vectorised batch."""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pgc.a3c.protect import CHANNELS, parse_protect
from pgc.errors import UserError
from pgc.files import read_json
from pgc.mechanisms import MECHANISMS
from pgc.options import (
    add_force,
    add_out,
    add_progress,
    add_seed,
    gravity_pair,
    positive_float,
    positive_int,
    probability,
)
from pgc.outdirs import check_output_dir, output_lock

if TYPE_CHECKING:  # the trainer (torch, the kernel) loads only where a command trains
    from pgc.a3c.trainer import TrainConfig

# CLI flag -> TrainConfig field
_FLAGS = {
    "mechanism": "mechanism",
    "epsilon": "epsilon",
    "delta": "delta",
    "clip": "clip",
    "reduced_dim": "reduced_dim",
    "buffer": "buffer_size",
    "submissions": "submissions",
    "workers": "workers",
    "lr": "learning_rate",
    "rounds": "rounds",
    "stop_at_success": "stop_at_success",
    "protect": "protect",
    "score_epsilon": "score_epsilon",
    "canaries": "canaries",
    "canary_model": "canary_model",
    "canary_update": "canary_update",
    "canary_start": "canary_start",
}


def protect_list(text: str) -> tuple[str, ...]:
    """``score,timing,order`` or ``all``."""
    try:
        return parse_protect(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def canary_pair(text: str) -> tuple[float, float]:
    """``5:15``: the two gravities ψ:ψ′ a canary agent plays by its coin."""
    return gravity_pair(text)


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """Config file (JSON, TrainConfig fields) first, explicit flags on top."""
    from pgc.a3c.trainer import TrainConfig

    data: dict = {}
    if args.config:
        data = read_json(Path(args.config))
        if not isinstance(data, dict):
            raise UserError(f"config file {args.config} must hold a JSON object")
    for flag, field_name in _FLAGS.items():
        value = getattr(args, flag)
        if value is not None:
            data[field_name] = value
    if args.gravities is not None:
        data["gravities"] = tuple(args.gravities)
    for flag in ("action_selection", "biases"):  # A3CHyperparams fields
        if getattr(args, flag) is not None:
            hyper = data.get("hyper") or {}
            data["hyper"] = {**(hyper if isinstance(hyper, dict) else {}), flag: getattr(args, flag)}
    if args.canary_pair is not None:
        data["canary_pair"] = args.canary_pair
    if data.get("canaries") and data.get("canary_model") == "crafted" and data.get("canary_theta") is None:
        from pgc.a3c.crafted import canary_model

        theta = canary_model(
            data.get("canary_pair"),
            data.get("hyper"),
            theta_file=args.canary_theta,
            quick=args.canary_search == "quick",
            seed=args.seed,
        )
        data["canary_theta"] = tuple(float(x) for x in theta)
    if data.get("mechanism") == "none":
        data["epsilon"] = math.inf
    if args.clip is not None and math.isinf(args.clip):
        data["clip"] = math.inf if data.get("mechanism") == "none" else args.clip
    return TrainConfig.from_dict(data)


class TrainCommand:
    help = "train PGC-A3C"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--config", help="JSON file with TrainConfig fields (flags override it)")
        p.add_argument("--mechanism", choices=sorted(MECHANISMS), help="gradient mechanism (default laplace)")
        p.add_argument("--epsilon", type=positive_float, help="ε per agent (default 1; ignored for none)")
        p.add_argument(
            "--clip",
            type=positive_float,
            help="clip C (default: paper's, 0.01 laplace/none, 1 prs; 'inf' with none = unclipped)",
        )
        p.add_argument("--reduced-dim", type=positive_int, help="PRS d̂ (default max{1, min{d, ⌊ε/2.5⌋}})")
        p.add_argument(
            "--delta", type=probability, help="δ of the (ε, δ) claim per agent (gaussian, gaussian-analytic)"
        )
        p.add_argument("--buffer", type=positive_int, help="MAX_BUF (default 1)")
        p.add_argument("--submissions", type=positive_int, help="N submissions per trial (default 10000)")
        p.add_argument("--workers", type=positive_int, help="W concurrent workers (default 9)")
        p.add_argument("--lr", type=positive_float, help="η (default 0.5)")
        p.add_argument("--rounds", type=positive_int, help="submissions per agent, ε split (§3.2.1; default 1)")
        p.add_argument("--gravities", type=float, nargs="+", help="Ψ (default 9.7 9.8 9.9)")
        p.add_argument("--action-selection", choices=["greedy", "sample"], help="greedy = Alg. 1 (default)")
        p.add_argument(
            "--biases",
            action="store_true",
            default=None,
            help="Dense layers with biases, d = 131 (default: the paper's d = 112, no biases)",
        )
        p.add_argument("--stop-at-success", action="store_true", default=None, help="end a trial at its FST")
        p.add_argument(
            "--protect",
            type=protect_list,
            metavar="CHANNELS",
            help=f"mitigations, comma-separated: {','.join(CHANNELS)} or all (default none; "
            "see docs/README-mitigations.md)",
        )
        p.add_argument(
            "--score-epsilon",
            type=positive_float,
            help="with --protect score: ε_score out of the total ε (default 10%% of ε); "
            "the gradient runs at ε − ε_score",
        )
        p.add_argument(
            "--canaries",
            type=int,
            metavar="M",
            help="M canary agents for the one-run audit (pgc audit one-run; docs/README-one-run.md)",
        )
        p.add_argument(
            "--canary-pair",
            type=canary_pair,
            metavar="PSI:PSI_PRIME",
            help="the two gravities a canary plays by its fair coin, e.g. 5:15",
        )
        p.add_argument(
            "--canary-model",
            choices=["live", "crafted"],
            help="live: canaries play the current θ; crafted: a model crafted for the pair (default live)",
        )
        p.add_argument(
            "--canary-theta",
            metavar="FILE",
            help="with --canary-model crafted: the crafted θ (.pt checkpoint or .npy); default: searched",
        )
        p.add_argument(
            "--canary-search",
            choices=["default", "quick"],
            default="default",
            help="--canary-model crafted without --canary-theta: the crafted-model search's budget (quick: "
            "about a quarter of the time; enough for wide pairs)",
        )
        p.add_argument(
            "--canary-update",
            choices=["exclude", "include"],
            help="whether canary submissions enter the model update (default exclude)",
        )
        p.add_argument(
            "--canary-start",
            type=int,
            metavar="K",
            help="regular agents started before the first canary (default 0; live canaries at a trained model)",
        )
        p.add_argument("--trials", type=positive_int, default=1, help="K trials, seeds S..S+K-1 (default 1)")
        add_seed(p, default=0, help="first seed (default 0)")
        p.add_argument(
            "--processes",
            type=positive_int,
            default=1,
            help="spread the trials over this many processes (default 1; results do not depend on it)",
        )
        add_out(p, default="runs/train", help="output folder (default runs/train)")
        add_force(p, help="replace a non-empty output folder")
        p.add_argument("--no-transcript", action="store_true", help="do not record transcripts")
        add_progress(p, help="progress (default on): a bar on a terminal, a dated line every 30 s otherwise")

    def run(self, args: argparse.Namespace) -> int:
        from pgc.a3c.rundir import save_run
        from pgc.a3c.trainer import MAX_TRIALS, check_batch_size, train_batch

        if args.seed < 0:
            raise UserError("--seed must be >= 0")
        if args.canaries is not None and args.canaries < 0:
            raise UserError("--canaries must be >= 0")
        if args.canaries and args.no_transcript:
            raise UserError("--canaries needs the transcript (drop --no-transcript): the one-run audit reads it")
        base = config_from_args(args)
        check_batch_size([base] * min(args.trials, MAX_TRIALS + 1), not args.no_transcript)  # before allocating
        configs = [base.replace(seed=args.seed + i) for i in range(args.trials)]
        out = Path(args.out)
        check_output_dir(out, force=args.force, command="train")
        # the folder's lock is held from here to the final rename: a second writer exits at once
        with output_lock(out):
            check_output_dir(out, force=args.force, command="train")
            progress = args.progress
            start = time.perf_counter()
            results = train_batch(
                configs, record_transcripts=not args.no_transcript, progress=progress, processes=args.processes
            )
            wall = time.perf_counter() - start
            save_run(results, out, wall_time=wall, overwrite=args.force)
        steps = sum(r.agent_steps for r in results)
        print(
            f"{base.mechanism} ε={base.epsilon:g} C={base.build_mechanism().__dict__.get('clip')} "
            f"|B|={base.buffer_size} "
            f"N={base.submissions} W={base.workers} trials={len(results)}: {wall:.1f}s, {steps:,} agent-steps "
            f"({steps / wall:.3g}/s)"
        )
        if base.protect:
            prot = base.protection()
            print(
                f"protected: {', '.join(base.protect)}; total claim ε={base.epsilon:g} per agent = gradient "
                f"{prot['gradient_epsilon']:g} + score {prot['score_epsilon']:g}; "
                f"metrics from {prot['metrics_from']}"
            )
            if "score" in base.protect and "timing" not in base.protect:
                print("  note: without --protect timing the arrival tick (start + score) still reveals the true score")
        for r in results:
            s = r.summary()
            final = "n/a" if s["final_mu"] is None else f"{s['final_mu']:.1f}"
            true = f"  (true scores: FST={s['fst_true_scores']})" if "fst_true_scores" in s else ""
            print(
                f"  seed {s['seed']}: FST={s['fst']}{true}  final μ={final}  updates={s['updates']}"
                + (f"  non-finite gradients={s['nonfinite_gradients']}" if s["nonfinite_gradients"] else "")
            )
        if base.canaries:
            got = [0 if r.canaries is None else int(r.canaries.positions.size) for r in results]
            print(
                f"canaries: {base.canaries:,} {base.canary_model} agents playing {base.canary_pair[0]:g} or "
                f"{base.canary_pair[1]:g} ({base.canary_update}d from the update); submitted per trial: "
                f"{', '.join(f'{g:,}' for g in got)}; audit them with pgc audit one-run {out}"
            )
        print(f"wrote {out}/summary.json and {len(results)} trial folder(s)")
        return 0
