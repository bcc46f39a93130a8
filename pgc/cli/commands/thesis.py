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
run) and a table on stdout.
"""

from __future__ import annotations

from pgc.options import add_force, add_out, add_seed

import argparse
import sys
import time
import warnings

import numpy as np
import pgc.schemas as schemas

from pgc.options import positive_float, positive_int
from ..outputs import ResultFile

TABLE_6_2: dict = {"none": 70.4, 0.1: 49.8, 2.0: 52.0}  # ML-Leaks accuracy (%) on MNIST, Table 6.2


class ThesisCommand:
    help = "attacks on the thesis' systems (ch. 6 membership inference) beside the thesis' tables"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
        m = sub.add_parser("membership", help="ML-Leaks against the one-parameter defence (ch. 6) on digits")
        m.add_argument("--epsilons", type=positive_float, nargs="+", default=[0.1, 0.7, 1.4, 2.0],
                       help="the defence's ε (default: §6.5's 0.1 0.7 1.4 2.0)")
        m.add_argument("--hidden", type=positive_int, default=128, help="hidden units of the MLPs (default 128)")
        add_seed(m, default=0, help="root seed (default 0)")
        add_out(m, help="JSON result file (default runs/thesis/membership-<date>-<time>.json, new for "
                                     "every run)")
        add_force(m, help="replace an existing --out result")

        g = sub.add_parser("map-recovery", help="Pan et al.'s map-recovery attack against DP-DRL (ch. 5)")
        g.add_argument("--size", type=_shape, default=(7, 7), help="map size HxW (default 7x7)")
        g.add_argument("--maps", type=positive_int, default=20, help="random maps under the constraints (default 20)")
        g.add_argument("--defences", nargs="+", type=_defence, default=[0.1, "dynamic"],
                       help="DP-DRL settings beside no defence: fixed ε values and/or 'dynamic' (default 0.1 dynamic)")
        g.add_argument("--episodes", type=positive_int, default=2_000, help="training episodes (default 2000)")
        g.add_argument("--max-steps", type=positive_int, default=100, help="steps per episode (default 100)")
        g.add_argument("--generations", type=positive_int, default=60, help="genetic-search generations (default 60)")
        g.add_argument("--learner", choices=("table", "dqn"), default="table",
                       help="Algorithm 11's learner: tabular Q-learning (default) or a small DQN (pgc.dprl.dqn)")
        g.add_argument("--sees-cell", action="store_true",
                       help="the agent's state is its cell and its 8-cell observation (default: the observation only)")
        add_seed(g, default=0, help="root seed (default 0)")
        add_out(g, help="JSON result file (default runs/thesis/map-recovery-HxW-<date>-<time>.json, new "
                                     "for every run)")
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

    training = TrainingSettings(episodes=args.episodes, max_steps=args.max_steps, learner=args.learner,
                                sees_cell=args.sees_cell)
    genetic = GeneticSettings(generations=args.generations)
    start = time.perf_counter()
    h, w = args.size
    with ResultFile(args.out, command="thesis", name=f"map-recovery-{h}x{w}", force=args.force) as result_file:
        path = result_file.write(schemas.dump("thesis-map-recovery", _map_recovery_result(
            args, training, genetic, start)))
    print(f"wrote {path}")
    return 0


def _map_recovery_result(args, training, genetic, start: float) -> dict:
    from attacks.map_recovery import run_map_recovery

    h, w = args.size
    print(f"{args.maps} random {h}x{w} maps: train with no defence and DP-DRL at {args.defences}, "
          "then recover each map from one greedy run", flush=True)
    result = run_map_recovery(args.size, args.maps, list(args.defences), training, genetic, args.seed,
                              lambda text: print("  " + text, flush=True))
    print(f"{'defence':<26}{'GRR':>7} {'95% interval':<17}{'NRR':>7} {'95% interval':<17} Table 5.1 GRR/NRR   "
          "reward  steps  Table 5.3 (12x11)")
    for r in result["rows"]:
        thesis = r.get("thesis_grr_nrr")
        util = r.get("thesis_table_5_3")
        print(f"{r['defence']:<26}{r['grr']['mean']:>7.3f} [{r['grr']['ci'][0]:.3f}, {r['grr']['ci'][1]:.3f}]  "
              f"{r['nrr']['mean']:>7.3f} [{r['nrr']['ci'][0]:.3f}, {r['nrr']['ci'][1]:.3f}]  "
              + (f"{thesis[0] / 100:.3f}/{thesis[1] / 100:.3f}" if thesis else " " * 11)
              + (f"       {r['reward']['mean']:6.3f} {r['steps']['mean']:6.1f}" if "reward" in r else "")
              + (f"  {util[0]:.2f}/{util[1]:.1f}" if util else ""))
    return {"kind": "thesis-map-recovery", "format_version": 1, **result,
            "training": vars(training), "genetic": vars(genetic), "seed": args.seed,
            "wall_time_s": time.perf_counter() - start, "command": "pgc " + " ".join(sys.argv[1:])}


def defend_rows(scores: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Each confidence vector through the one-parameter defence (one release each; a score of exactly 1 is
    moved just inside [0, 1), the range Algorithm 12 divides)."""
    from pgc.dprl.oneparam import system

    defence = system(epsilon=epsilon, k=scores.shape[1])
    out = np.empty_like(scores)
    for i, y in enumerate(np.minimum(scores, 1.0 - 1e-12)):
        out[i] = defence.release(y, 1, rng)["scores"][0]
    return out


def _membership(args) -> int:
    from attacks.membership import MembershipSettings

    settings = MembershipSettings(tuple(args.epsilons), args.hidden, args.seed)
    start = time.perf_counter()
    with ResultFile(args.out, command="thesis", name="membership", force=args.force) as result_file:
        path = result_file.write(schemas.dump("thesis-membership", _membership_result(settings, start)))
    print(f"wrote {path}")
    return 0


def _membership_result(settings, start: float) -> dict:
    from attacks.membership import run_membership

    print("training target and shadow MLPs on digits, then the attackers at each ε", flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's convergence notes: the MLPs fit their members
        result = run_membership(settings, defend_rows, lambda text: print("  " + text, flush=True))
    models = result["models"]
    print(f"target MLP: train accuracy {models['train_accuracy']:.3f}, test {models['test_accuracy']:.3f} "
          f"({models['members']} members, {models['non_members']} non-members)")
    print(f"{'defence':<14}{'ε':>6}  {'attacker':<19}{'accuracy':>9}  95% interval     Table 6.2 (MNIST)")
    for r in result["rows"]:
        key = "none" if r["epsilon"] is None else r["epsilon"]
        thesis = TABLE_6_2.get(key) if r["attacker"] == "ml-leaks" else None
        print(f"{r['defence']:<14}{'' if r['epsilon'] is None else format(r['epsilon'], 'g'):>6}  {r['attacker']:<19}"
              f"{r['accuracy']:>9.3f}  [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]  "
              + ("" if thesis is None else f"{thesis / 100:.3f}"))
    return {"kind": "thesis-membership", "format_version": 1,
            "settings": vars(settings) | {"epsilons": list(settings.epsilons)},
            "table_6_2_ml_leaks": {str(k): v for k, v in TABLE_6_2.items()}, **result,
            "wall_time_s": time.perf_counter() - start, "command": "pgc " + " ".join(sys.argv[1:])}
