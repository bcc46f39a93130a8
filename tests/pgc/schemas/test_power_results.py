"""The power study writes its typed result at a tiny size, with no result parsed from a dict on the way."""

from __future__ import annotations

import json

import pytest

import pgc.schemas as schemas
from audit.power import study as power


@pytest.mark.parametrize(
    "make",
    [
        lambda: power.miscalibrated(n=2_000),
        lambda: power.detectability(n=2_000, runs=2),
        lambda: power.point_mass_detectability(n=2_000, runs=2, dim=1),
        lambda: power.sequential_null(runs=4, n_first=200, budget=1_000),
    ],
    ids=["miscalibrated", "detectability", "point-mass", "sequential-null"],
)
def test_a_study_writes_its_typed_result(make, tmp_path, no_result_parsing):
    study = make()
    power.write_study(tmp_path / "study.json", schemas.PowerStudy(study=study, wall_time_s=0.1, command="x"))
    data = json.loads((tmp_path / "study.json").read_text())
    no_result_parsing.undo()
    loaded = schemas.load(data)
    assert isinstance(loaded, schemas.PowerStudy) and loaded.study == study and type(loaded.study) is type(study)


def test_curve_vs_threshold_writes_its_typed_studies(tmp_path, no_result_parsing):
    result = power.run_study("curve-vs-threshold", curve_settings=[(2.0, 1e-5, 2_000, 2, 20)])
    power.write_study(tmp_path / "curve.json", result)
    data = json.loads((tmp_path / "curve.json").read_text())
    assert data["kind"] == "power-study" and data["studies"][0]["runs"][0]["verdict"] in ("consistent", "inconclusive")
    no_result_parsing.undo()
    loaded = schemas.load(data)
    assert loaded.studies[0].fractions == result.studies[0].fractions and loaded.command == result.command
