"""The attacks on the thesis' systems (:mod:`pgc.dprl`) beside the thesis' tables (``pgc thesis``).

* :func:`membership_study` — ML-Leaks membership inference (and an adaptive attacker, and a label-only one)
  against a small MLP on scikit-learn's digits, undefended and behind the one-parameter defence (ch. 6,
  :func:`pgc.dprl.oneparam.defend_rows`), beside Table 6.2;
* :func:`map_recovery_study` — Pan et al.'s map-recovery attack against a grid agent trained with and
  without DP-DRL (ch. 5), beside Tables 5.1 and 5.3, with a chance row.

Each logs its progress and its table as it goes and returns the typed result (kinds "thesis-membership"
and "thesis-map-recovery").
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import pgc.schemas as schemas


def membership_study(settings, *, command: str, log: Callable[[str], None] = print) -> schemas.ThesisMembership:
    """:func:`attacks.membership.run_membership` against the one-parameter defence at ``settings.epsilons``;
    its table beside Table 6.2."""
    from attacks.membership import TABLE_6_2, run_membership
    from pgc.dprl.oneparam import defend_rows

    start = time.perf_counter()
    log("training target and shadow MLPs on digits, then the attackers at each ε")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's convergence notes: the MLPs fit their members
        result = run_membership(settings, defend_rows, lambda text: log("  " + text))
    models = schemas.TargetModel(**result["models"])
    log(
        f"target MLP: train accuracy {models.train_accuracy:.3f}, test {models.test_accuracy:.3f} "
        f"({models.members} members, {models.non_members} non-members)"
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
    return schemas.ThesisMembership(
        settings=vars(settings) | {"epsilons": list(settings.epsilons)},
        table_6_2_ml_leaks={str(k): float(v) for k, v in TABLE_6_2.items()},
        models=models,
        rows=[_membership_row(r) for r in result["rows"]],
        wall_time_s=time.perf_counter() - start,
        command=command,
    )


def _membership_row(r: dict[str, Any]) -> schemas.MembershipRow:
    """One attacker's row as :func:`attacks.membership.run_membership` measures it."""
    return schemas.MembershipRow(
        defence=r["defence"],
        attacker=r["attacker"],
        accuracy=float(r["accuracy"]),
        ci=[float(v) for v in r["ci"]],
        n=int(r["n"]),
        chance=float(r["chance"]),
        epsilon=None if r["epsilon"] is None else float(r["epsilon"]),
    )


def _mean_interval(pair: dict[str, Any] | None) -> schemas.MeanInterval | None:
    if pair is None:
        return None
    return schemas.MeanInterval(mean=float(pair["mean"]), ci=[float(v) for v in pair["ci"]])


def _recovery_row(r: dict[str, Any]) -> schemas.MapRecoveryRow:
    """One defence's row (or the chance row) as :func:`attacks.map_recovery.run_map_recovery` measures it."""
    grr, nrr = _mean_interval(r["grr"]), _mean_interval(r["nrr"])
    assert grr is not None and nrr is not None
    return schemas.MapRecoveryRow(
        defence=r["defence"],
        grr=grr,
        nrr=nrr,
        reward=_mean_interval(r.get("reward")),
        steps=_mean_interval(r.get("steps")),
        success=_mean_interval(r.get("success")),
        thesis_grr_nrr=None if r.get("thesis_grr_nrr") is None else [float(v) for v in r["thesis_grr_nrr"]],
        thesis_table_5_3=None if r.get("thesis_table_5_3") is None else [float(v) for v in r["thesis_table_5_3"]],
    )


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
) -> schemas.ThesisMapRecovery:
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
    return schemas.ThesisMapRecovery(
        shape=[int(v) for v in result["shape"]],
        maps=int(result["maps"]),
        rows=[_recovery_row(r) for r in result["rows"]],
        training=vars(training),
        genetic=vars(genetic),
        seed=seed,
        wall_time_s=time.perf_counter() - start,
        command=command,
    )
