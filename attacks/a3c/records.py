"""The parts of an attack's typed result (kind "attack", :mod:`pgc.schemas.attack_kinds`) built from what the
attack computed: its rows, threat model, comparison of the attackers and what it ran over."""

from __future__ import annotations

import pgc.schemas as schemas

_ACCURACY = (
    "correct",
    "ci",
    "confidence",
    "chance",
    "below_chance",
    "prior_best_guess",
    "advantage",
    "normalized_advantage",
    "ceiling",
    "ceiling_applies",
    "self_assessed_accuracy",
)
_REGRESSION = ("prior_mae", "prior_rmse", "mae_skill", "rmse_skill")


def row_record(r: dict) -> schemas.AttackRow:
    """One row of :func:`attacks.a3c.runner.run_attack` (a sweep's with its model and channel set)."""
    classification = None
    if "accuracy" in r:
        classification = schemas.AttackAccuracy(accuracy=r["accuracy"], **{k: r.get(k) for k in _ACCURACY})
    regression = None
    if "mae" in r:
        regression = schemas.AttackRegression(mae=r["mae"], rmse=r["rmse"], **{k: r.get(k) for k in _REGRESSION})
    return schemas.AttackRow(
        attacker=r["attacker"],
        channels=list(r["channels"]),
        budget=r.get("budget"),
        k=r.get("k"),
        epsilon=r.get("epsilon"),
        n_targets=r.get("n_targets"),
        classification=classification,
        regression=regression,
        verdict=r.get("verdict"),
        model=r.get("model"),
        threat_channels=r.get("threat_channels"),
    )


def threat_record(threat) -> schemas.AttackThreat:
    """A :class:`attacks.a3c.threat.ThreatModel` as its record."""
    return described_threat(threat.describe())


def described_threat(d: dict) -> schemas.AttackThreat:
    """The record of what :meth:`attacks.a3c.threat.ThreatModel.describe` says."""
    m = d["mechanism"]
    return schemas.AttackThreat(
        adversary=d["adversary"],
        mechanism=schemas.AttackMechanism(
            name=m["name"], epsilon=m["epsilon"], clip=m["clip"], reduced_dim=m.get("reduced_dim")
        ),
        channels=d["channels"],
        protected_only=d["protected_only"],
        candidates=d["candidates"],
        psi_range=d["psi_range"],
        prior=d["prior"],
        budget_per_psi=d["budget_per_psi"],
        knows_theta=d["knows_theta"],
        hyper=schemas.AttackHyper(**d["hyper"]),
    )


def spread_record(res: dict) -> schemas.AttackSpread:
    """What one run of :func:`attacks.a3c.runner.run_attack` ran over."""
    return schemas.AttackSpread(
        skipped=[schemas.AttackSkipped(attacker=s["attacker"], reason=s["reason"]) for s in res["skipped"]],
        kde_bandwidth=res["kde_bandwidth"],
        contexts=res["contexts"],
        n_submissions=res["n_submissions"],
        n_targets=res["n_targets"],
        grid=list(res["grid"]),
    )


def comparison_record(c: dict) -> schemas.AttackComparison:
    """One item of :func:`attacks.a3c.runner.compare`."""
    return schemas.AttackComparison(
        k=c["k"],
        budget=c["budget"],
        best_attacker=c["best_attacker"],
        best_accuracy=c["best_accuracy"],
        best_ci=list(c["best_ci"]),
        ceiling=c["ceiling"],
        ceiling_minus_best=c["ceiling_minus_best"],
        learned_minus_likelihood=c.get("learned_minus_likelihood"),
    )


def search_record(d: dict) -> schemas.CraftedSearch:
    """A crafted-model search's record (:meth:`pgc.a3c.crafted.SearchResult.to_dict` or a layout search's)."""
    return schemas.CraftedSearch(
        objective=d["objective"],
        value=d.get("value"),
        axes=d.get("axes"),
        epsilon=d.get("epsilon"),
        evaluations=d.get("evaluations"),
        wall_time_s=d.get("wall_time_s"),
        vector=d.get("vector"),
        means=d.get("means"),
        spreads=d.get("spreads"),
        history=d.get("history"),
    )
