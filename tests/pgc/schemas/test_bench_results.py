"""The benchmarks that write their own JSON write their typed kind at a tiny size, with no result parsed from a dict
on the way; the older kind ``bench`` loads as the typed kind its ``bench`` names and writes back unchanged."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import pgc.schemas as schemas
from pgc.cli.main import main

ROOT = Path(__file__).resolve().parents[3]


def _bench(argv: list[str], out: Path, no_result_parsing) -> schemas.Result:
    """``pgc bench ARGV --out OUT`` (goals may be missed at this size), then the file loaded once parsing is back."""
    assert main(["bench", *argv, "--out", str(out)]) in (0, 1)
    data = json.loads(out.read_text())
    no_result_parsing.undo()
    return schemas.load(data)


@pytest.mark.parametrize(
    "argv, kind",
    [
        (["gaussian", "--epsilons", "1", "--samples", "2000", "--seeds", "1", "--dim", "2"], schemas.GaussianBench),
        (
            ["catalogue-oracle", "--algorithms", "{broken}", "--totals", "100", "--draws", "400"],
            schemas.CatalogueOracle,
        ),
        (
            ["flower", "--samples", "2000", "--seeds", "1", "--seed-samples", "1000", "--tightness-seeds", "1"],
            schemas.FlowerBench,
        ),
    ],
    ids=["gaussian", "catalogue-oracle", "flower"],
)
def test_a_bench_writes_its_typed_kind(argv, kind, tmp_path, no_result_parsing):
    from pgc.catalogue import BROKEN

    argv = [a.format(broken=next(iter(BROKEN))) for a in argv]
    result = _bench(argv, tmp_path / "bench.json", no_result_parsing)
    assert type(result) is kind and result.KIND == f"bench-{argv[0]}" and result.bench == argv[0]
    assert json.loads((tmp_path / "bench.json").read_text())["kind"] == result.KIND


def test_the_laplace_small_epsilon_script_writes_its_typed_kind(tmp_path, no_result_parsing):
    spec = importlib.util.spec_from_file_location("laplace_small_epsilon", ROOT / "scripts/laplace_small_epsilon.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    result = script.audit_seeds([0], samples=2_000, command="x")
    (tmp_path / "r.json").write_text(json.dumps(result.to_dict()))
    no_result_parsing.undo()
    loaded = schemas.load(json.loads((tmp_path / "r.json").read_text()))
    assert isinstance(loaded, schemas.LaplaceSmallEpsilon) and loaded.to_dict() == result.to_dict()
    assert loaded.cells[0].seed == 0 and loaded.total_per_side == 2_500


@pytest.mark.parametrize(
    "path, kind",
    [
        ("results/audit/gaussian/bench.json", schemas.GaussianBench),
        ("results/audit/adversarial/bench.json", schemas.AdversarialBench),
        ("results/audit/adversarial/false-alarms.json", schemas.AdversarialFalseAlarms),
        ("results/audit/systems/bench.json", schemas.SystemsBench),
        ("results/shapes/laplace-eps0.1.json", schemas.LaplaceSmallEpsilon),
        ("results/audit/planning/calibration.json", schemas.AuditTimeEstimates),
        ("results/opacus/bench.json", schemas.OpacusBench),
        ("results/flower/bench.json", schemas.FlowerBench),
        ("results/versions/matrix.json", schemas.VersionsBench),
        ("results/catalogue/oracle/oracle.json", schemas.CatalogueOracle),
    ],
)
def test_an_older_bench_file_loads_as_its_typed_kind(path, kind):
    data = json.loads((ROOT / path).read_text())
    assert data["kind"] == "bench"
    result = schemas.load(data)
    assert isinstance(result, kind) and result.KIND == "bench" and not result.extra
    back = json.loads(json.dumps(result.to_dict()))
    assert back["kind"] == "bench" and schemas.load(back) == result
    if kind is not schemas.FlowerBench:  # its audit rows write their coverage as one key (AuditRow's migration)
        assert {k: v for k, v in back.items() if k != "format_version"} == {
            k: v for k, v in data.items() if k != "format_version"
        }


def test_the_older_kinds_parts_are_typed():
    systems = schemas.load(json.loads((ROOT / "results/audit/systems/bench.json").read_text()))
    assert systems.contract.bounds["gradient"] == systems.contract.bounds["gradient"] and systems.broken[0].verdict
    versions = schemas.load(json.loads((ROOT / "results/versions/matrix.json").read_text()))
    ran = [c for c in versions.cells if c.run is not None]
    assert ran and all(isinstance(c.run.seconds, float) for c in ran)
    flower = schemas.load(json.loads((ROOT / "results/flower/bench.json").read_text()))
    assert flower.rows["flower"].epsilon_lower_bound == flower.rows["numpy reference"].epsilon_lower_bound
    assert flower.false_alarms.flagged == 0 and flower.audit_over_oracle_over_seeds.curve.share_at_least_09 >= 0
