"""Result documents of three kinds as their commands write them, shared by the schema and report tests, and a walk
over the records a loaded result holds."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from pgc.schemas.base import Record


def reachable_records(obj: Any) -> Iterator[Record]:
    """Every record reachable from ``obj`` (itself included) through record fields, lists, tuples and dicts."""
    if isinstance(obj, Record):
        yield obj
        for f in dataclasses.fields(obj):
            if f.name != "extra":
                yield from reachable_records(getattr(obj, f.name))
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from reachable_records(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from reachable_records(item)


def _curve(algorithm: str, label: str, epsilon, regret: list[float], final: float) -> dict:
    return {
        "algorithm": algorithm,
        "label": label,
        "n_silos": 10,
        "epsilon": epsilon,
        "delta": None if epsilon is None else 0.1,
        "batch": 10,
        "sigma": 0.0 if epsilon is None else 4.5,
        "lambda": 10.0,
        "threshold": None,
        "mean_syncs": 10.0,
        "t": [1, 10, 100],
        "time_averaged_group_regret": regret,
        "lower": [r * 0.9 for r in regret],
        "upper": [r * 1.1 for r in regret],
        "group_regret_at_T": {"mean": final, "interval": [final - 5, final + 5]},
    }


def _attack_row(system: str, channel: str, accuracy: float, interval: list[float], epsilon, ceiling: float) -> dict:
    return {
        "system": system,
        "pair": "a-toy-first-user",
        "channel": channel,
        "test_channel": channel,
        "covered_by_claim": True,
        "accuracy": accuracy,
        "interval": interval,
        "level": 0.95,
        "correct": round(accuracy * 400),
        "n_test": 400,
        "n_train_per_world": 400,
        "chance": 0.5,
        "ceiling": ceiling,
        "claim": {"epsilon": epsilon, "delta": 0.001 if epsilon != "inf" else 0.0},
        "above_ceiling": interval[0] > ceiling,
        "above_chance": interval[0] > 0.5,
    }


def system_audit_fixture() -> dict:
    row = {
        "channel": "gradient",
        "claimed_epsilon": 1.0,
        "claimed_delta": 1e-5,
        "epsilon_lower_bound": 0.8,
        "delta_lower_bound": 0.0,
        "p_value": 0.9,
        "verdict": "consistent",
        "holm_rejected": False,
        "statistic": "llr",
        "samples_per_side": 10000,
        "max_certifiable_epsilon": 7.9,
        "accountant_epsilon": 0.97,
        "gdp_mu_estimate": None,
    }
    return {
        "kind": "system-audit",
        "format_version": 2,
        "system": "examples.fedavg:make",
        "pair": "a:b",
        "secret": "a",
        "secret_prime": "b",
        "broadcast": "crafted",
        "claim": {"epsilon": 1.0, "delta": 1e-5, "covers": ["gradient"]},
        "confidence": 0.95,
        "samples_per_side": 10000,
        "seed": 0,
        "rows": [
            {**row, "covered": True, "p_value_leak": 0.4},
            {
                **row,
                "channel": "score",
                "epsilon_lower_bound": "inf",
                "max_certifiable_epsilon": "inf",
                "p_value": 1.0,
                "p_value_leak": 1e-9,
                "covered": False,
                "verdict": "unprotected channel",
                "holm_rejected": True,
                "accountant_epsilon": None,
            },
            {
                **row,
                "channel": "all",
                "epsilon_lower_bound": 6.5,
                "p_value": 1e-9,
                "verdict": "violated",
                "holm_rejected": True,
            },
        ],
        "verdict": "violated",
        "accountant": {"epsilon": 0.97, "delta": 1e-5, "description": "RDP, 100 steps"},
        "wall_time_s": 1.5,
    }


def bandit_regret_fixture() -> dict:
    """The layout ``pgc bandit regret`` writes (results/fedlinucb/regret.json), three points per curve."""
    return {
        "kind": "bandit-regret",
        "format_version": 1,
        "label": "smoke",
        "settings": {"n_silos": 10, "horizon": 100, "n_arms": 5, "dim": 3, "runs": 4, "epsilons": [1.0]},
        "curves": [
            _curve("fedlinucb", "FedLinUCB (non-private), M=10", None, [0.5, 0.3, 0.2], 20.0),
            _curve("private-fedlinucb", "Private-FedLinUCB eps=1, M=10", 1.0, [0.9, 0.8, 1.2], 120.0),
        ],
        "privacy_cost": [
            {
                "n_silos": m,
                "privacy_cost_mean": c,
                "interval": [c * 0.9, c * 1.1],
                "private_regret_at_T": c + 10,
                "nonprivate_regret_at_T": 10.0,
            }
            for m, c in ((2, 1.0), (4, 1.4), (8, 2.0))
        ],
        "fit": {
            "exponent": 0.5,
            "intercept": 0.0,
            "interval": [0.4, 0.6],
            "level": 0.95,
            "resamples": 200,
            "method": "OLS on log mean cost vs log M",
            "theory": {"zhou_chowdhury_M_exponent": 0.75, "dp20_M_exponent": 0.5},
            "epsilon": 1.0,
        },
        "elapsed_seconds": 3.0,
        "cpu_count": 2,
    }


def bandit_attack_fixture() -> dict:
    """The layout ``pgc bandit attack`` writes (results/fedlinucb/attack.json)."""
    return {
        "kind": "bandit-attack",
        "format_version": 1,
        "settings": {
            "systems": ["dp20-feducb", "fedlinucb"],
            "pair": "a-toy-first-user",
            "epsilons": [1.0],
            "delta": 0.001,
            "train_per_world": 400,
            "test": 400,
            "seed": 0,
        },
        "rows": [
            _attack_row("dp20-feducb", "messages", 0.51, [0.46, 0.56], 1.0, 0.7313),
            _attack_row("dp20-feducb", "schedule", 0.9, [0.87, 0.93], 1.0, 0.7313),
            _attack_row("fedlinucb", "messages", 1.0, [0.99, 1.0], "inf", 1.0),
        ],
    }


def audit_file(kind: str, channels: list[dict], **fields) -> dict:
    """A result of one of ``pgc audit``'s mechanism and PGC-A3C kinds (``run-audit``, ``one-run-audit``, ...) as the
    command writes it, holding ``channels``; the parts the kind requires are filled with small valid values, and
    ``fields`` set or replace any of them."""
    canary = {
        "mechanism": "Laplace(epsilon=1.0)",
        "mode": "black-box",
        "row": {"channel": "canary (black-box)", "epsilon_lower_bound": 0.0},
        "wall_time_s": 1.0,
        "cpu_time_s": 1.0,
    }
    own = {
        "mechanism-audit": {"mechanism_audit": canary},
        "self-test": {"self_test": []},
        "run-audit": {
            "run": "runs/x",
            "trial": 0,
            "mechanism_source": "run",
            "model": "final",
            "mechanism_audit": canary,
            "environment_audits": [],
        },
        "one-run-audit": {
            "run": "runs/x",
            "trial": 0,
            "canary_setup": {
                "canaries": 100,
                "canary_pair": [5.0, 15.0],
                "canary_model": "live",
                "canary_update": "exclude",
                "canary_start": 0,
            },
            "canary_submissions": 100,
            "simulated_models": 10,
        },
        "adversarial-audit": {
            "search_settings": {
                "screen_controllers": 100,
                "screen_episodes": 300,
                "generations": 15,
                "population": 10,
                "episodes": 250,
                "restarts": 1,
                "detector_screen": 20,
                "exploration": 0.0,
            },
            "adversarial_audits": [],
        },
        "adversarial-curve": {"honest_model": "init:0", "curve": [], "adversarial_audits": [], "honest_audits": []},
    }[kind]
    return {"kind": kind, "format_version": 1, "confidence": 0.95, "seed": 0, "channels": channels, **own, **fields}
