"""The attacks on the thesis' systems (:mod:`pgc.dprl`) beside the thesis' tables (``pgc thesis``).

* :func:`membership_study` — ML-Leaks membership inference (and an adaptive attacker, and a label-only one)
  against a small MLP on scikit-learn's digits, undefended and behind the one-parameter defence (ch. 6,
  :func:`pgc.dprl.oneparam.defend_rows`), beside Table 6.2;
* :func:`map_recovery_study` — Pan et al.'s map-recovery attack against a grid agent trained with and
  without DP-DRL (ch. 5), beside Tables 5.1 and 5.3, with a chance row.

Each logs its progress and its table as it goes and returns the result record (kinds "thesis-membership"
and "thesis-map-recovery").
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable


def membership_study(settings, *, command: str, log: Callable[[str], None] = print) -> dict:
    """:func:`attacks.membership.run_membership` against the one-parameter defence at ``settings.epsilons``;
    its table beside Table 6.2."""
    from attacks.membership import TABLE_6_2, run_membership
    from pgc.dprl.oneparam import defend_rows

    start = time.perf_counter()
    log("training target and shadow MLPs on digits, then the attackers at each ε")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's convergence notes: the MLPs fit their members
        result = run_membership(settings, defend_rows, lambda text: log("  " + text))
    models = result["models"]
    log(
        f"target MLP: train accuracy {models['train_accuracy']:.3f}, test {models['test_accuracy']:.3f} "
        f"({models['members']} members, {models['non_members']} non-members)"
    )
    log(f"{'defence':<14}{'ε':>6}  {'attacker':<19}{'accuracy':>9}  95% interval     Table 6.2 (MNIST)")
    for r in result["rows"]:
        key = "none" if r["epsilon"] is None else r["epsilon"]
        thesis = TABLE_6_2.get(key) if r["attacker"] == "ml-leaks" else None
        log(
            f"{r['defence']:<14}{'' if r['epsilon'] is None else format(r['epsilon'], 'g'):>6}  {r['attacker']:<19}"
            f"{r['accuracy']:>9.3f}  [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]  "
            + ("" if thesis is None else f"{thesis / 100:.3f}")
        )
    return {
        "kind": "thesis-membership",
        "format_version": 1,
        "settings": vars(settings) | {"epsilons": list(settings.epsilons)},
        "table_6_2_ml_leaks": {str(k): v for k, v in TABLE_6_2.items()},
        **result,
        "wall_time_s": time.perf_counter() - start,
        "command": command,
    }


def map_recovery_study(
    size: tuple[int, int],
    maps: int,
    defences: list,
    training,
    genetic,
    seed: int,
    *,
    command: str,
    log: Callable[[str], None] = print,
) -> dict:
    """:func:`attacks.map_recovery.run_map_recovery` on ``maps`` random maps of ``size``, with no defence and
    DP-DRL at each of ``defences``; its table beside Tables 5.1 and 5.3."""
    from attacks.map_recovery import run_map_recovery

    start = time.perf_counter()
    h, w = size
    log(
        f"{maps} random {h}x{w} maps: train with no defence and DP-DRL at {defences}, "
        "then recover each map from one greedy run"
    )
    result = run_map_recovery(size, maps, list(defences), training, genetic, seed, lambda text: log("  " + text))
    log(
        f"{'defence':<26}{'GRR':>7} {'95% interval':<17}{'NRR':>7} {'95% interval':<17} Table 5.1 GRR/NRR   "
        "reward  steps  Table 5.3 (12x11)"
    )
    for r in result["rows"]:
        thesis = r.get("thesis_grr_nrr")
        util = r.get("thesis_table_5_3")
        log(
            f"{r['defence']:<26}{r['grr']['mean']:>7.3f} [{r['grr']['ci'][0]:.3f}, {r['grr']['ci'][1]:.3f}]  "
            f"{r['nrr']['mean']:>7.3f} [{r['nrr']['ci'][0]:.3f}, {r['nrr']['ci'][1]:.3f}]  "
            + (f"{thesis[0] / 100:.3f}/{thesis[1] / 100:.3f}" if thesis else " " * 11)
            + (f"       {r['reward']['mean']:6.3f} {r['steps']['mean']:6.1f}" if "reward" in r else "")
            + (f"  {util[0]:.2f}/{util[1]:.1f}" if util else "")
        )
    return {
        "kind": "thesis-map-recovery",
        "format_version": 1,
        **result,
        "training": vars(training),
        "genetic": vars(genetic),
        "seed": seed,
        "wall_time_s": time.perf_counter() - start,
        "command": command,
    }
