"""scripts/rejudge_results.py re-judges a system audit's rows from their counts and runs Holm once per test: a joint
row ``all`` that records the one released channel's own test stays in the file outside the family."""

import copy
import importlib.util
from pathlib import Path

from audit.engine.system_audit import audit_system
from pgc.toysystems import LaplaceCountSystem

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location(
        "pgc_scripts_rejudge_results", ROOT / "scripts" / "rejudge_results.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _single_channel_result_with_a_joint_row(p_value: float, joint_changes: dict | None = None) -> dict:
    """A single-channel system audit as a file holds it, with a joint row beside its channel that repeats its test
    (``joint_changes``: fields where the joint row's test differs), both at ``p_value``."""
    data = audit_system(LaplaceCountSystem(1.0), 1.0, 0.0, samples=2_000, seed=0).to_dict()
    assert [r["channel"] for r in data["rows"]] == ["count"]
    data["rows"][0]["p_value"] = p_value
    joint = {**copy.deepcopy(data["rows"][0]), "channel": "all", **(joint_changes or {})}
    data["rows"].append(joint)
    return data


def test_a_repeated_joint_row_is_counted_once_by_holm_and_takes_its_channels_outcome():
    rejudge = _script()
    # p = 0.03 at α = 0.05: rejected with one test in the family, not with the same test counted twice (0.06)
    data = _single_channel_result_with_a_joint_row(0.03)
    assert rejudge.repeated_joint_row(data["rows"]) == 1
    rejudge.rejudge(data, "test")
    assert [r["holm_rejected"] for r in data["rows"]] == [True, True]
    assert [r["channel"] for r in data["rows"]] == ["count", "all"]  # the file keeps its rows

    # a joint row whose counts differ records another test: both count, and Holm's m is 2
    other = _single_channel_result_with_a_joint_row(0.03, {"false_positives": data["rows"][0]["false_positives"] + 1})
    assert rejudge.repeated_joint_row(other["rows"]) is None
    rejudge.rejudge(other, "test")
    assert [r["holm_rejected"] for r in other["rows"]] == [False, False]
