"""``pgc thesis``: the attacks on the thesis' systems (dprl) and the tables beside the thesis' numbers.

  pgc thesis membership [--epsilons 0.1 0.7 1.4 2.0] [--out results/thesis/membership.json] [--force]
      ML-Leaks membership inference (and an adaptive attacker, and a label-only one) against a small MLP on
      scikit-learn's digits, undefended and behind the one-parameter defence (ch. 6), beside Table 6.2.

  pgc thesis map-recovery [--size 7x7] [--maps 20] [--defences 0.1 dynamic] [--learner table|dqn] [--sees-cell]
                          [--out results/thesis/map-recovery-7x7.json] [--force]
      Pan et al.'s map-recovery attack (genetic search, fitness = agreement of the induced optimal policy with
      the agent's actions) against a grid agent trained with and without DP-DRL (ch. 5), beside Tables 5.1
      and 5.3, with a chance row.

Output: a JSON result (atomic write; without --out a new runs/thesis/<name>-<date>-<time>.json for every
run) and a table on stdout. The studies themselves: :mod:`pgc.studies.thesis`.
"""

from __future__ import annotations

import argparse
import sys

from pgc.options import add_force, add_out, add_seed, positive_float, positive_int

from ..outputs import ResultFile


class ThesisCommand:
    help = "attacks on the thesis' systems (ch. 6 membership inference) beside the thesis' tables"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
        m = sub.add_parser("membership", help="ML-Leaks against the one-parameter defence (ch. 6) on digits")
        m.add_argument(
            "--epsilons",
            type=positive_float,
            nargs="+",
            default=[0.1, 0.7, 1.4, 2.0],
            help="the defence's ε (default: §6.5's 0.1 0.7 1.4 2.0)",
        )
        m.add_argument("--hidden", type=positive_int, default=128, help="hidden units of the MLPs (default 128)")
        add_seed(m, default=0, help="root seed (default 0)")
        add_out(m, help="JSON result file (default runs/thesis/membership-<date>-<time>.json, new for every run)")
        add_force(m, help="replace an existing --out result")

        g = sub.add_parser("map-recovery", help="Pan et al.'s map-recovery attack against DP-DRL (ch. 5)")
        g.add_argument("--size", type=_shape, default=(7, 7), help="map size HxW (default 7x7)")
        g.add_argument("--maps", type=positive_int, default=20, help="random maps under the constraints (default 20)")
        g.add_argument(
            "--defences",
            nargs="+",
            type=_defence,
            default=[0.1, "dynamic"],
            help="DP-DRL settings beside no defence: fixed ε values and/or 'dynamic' (default 0.1 dynamic)",
        )
        g.add_argument("--episodes", type=positive_int, default=2_000, help="training episodes (default 2000)")
        g.add_argument("--max-steps", type=positive_int, default=100, help="steps per episode (default 100)")
        g.add_argument("--generations", type=positive_int, default=60, help="genetic-search generations (default 60)")
        g.add_argument(
            "--learner",
            choices=("table", "dqn"),
            default="table",
            help="Algorithm 11's learner: tabular Q-learning (default) or a small DQN (pgc.dprl.dqn)",
        )
        g.add_argument(
            "--sees-cell",
            action="store_true",
            help="the agent's state is its cell and its 8-cell observation (default: the observation only)",
        )
        add_seed(g, default=0, help="root seed (default 0)")
        add_out(g, help="JSON result file (default runs/thesis/map-recovery-HxW-<date>-<time>.json, new for every run)")
        add_force(g, help="replace an existing --out result")

    def run(self, args: argparse.Namespace) -> int:
        return _membership(args) if args.action == "membership" else _map_recovery(args)


def _shape(text: str) -> tuple[int, int]:
    try:
        h, w = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a map size is HxW, e.g. 7x7; got {text!r}") from None
    if not (5 <= h <= 30 and 5 <= w <= 30):
        raise argparse.ArgumentTypeError("a map size's sides lie in 5..30")
    return h, w


def _defence(text: str):
    if text == "dynamic":
        return text
    return positive_float(text)


def _map_recovery(args) -> int:
    from attacks.map_recovery import GeneticSettings
    from pgc.dprl.gridworld import TrainingSettings
    from pgc.studies.thesis import map_recovery_study

    training = TrainingSettings(
        episodes=args.episodes, max_steps=args.max_steps, learner=args.learner, sees_cell=args.sees_cell
    )
    genetic = GeneticSettings(generations=args.generations)
    h, w = args.size
    with ResultFile(args.out, command="thesis", name=f"map-recovery-{h}x{w}", force=args.force) as result_file:
        result = map_recovery_study(
            args.size,
            args.maps,
            list(args.defences),
            training,
            genetic,
            args.seed,
            command="pgc " + " ".join(sys.argv[1:]),
            log=_say,
        )
        path = result_file.write(result.to_dict())
    print(f"wrote {path}")
    return 0


def _membership(args) -> int:
    from attacks.membership import MembershipSettings
    from pgc.studies.thesis import membership_study

    settings = MembershipSettings(tuple(args.epsilons), args.hidden, args.seed)
    with ResultFile(args.out, command="thesis", name="membership", force=args.force) as result_file:
        result = membership_study(settings, command="pgc " + " ".join(sys.argv[1:]), log=_say)
        path = result_file.write(result.to_dict())
    print(f"wrote {path}")
    return 0


def _say(line: str) -> None:
    print(line, flush=True)
