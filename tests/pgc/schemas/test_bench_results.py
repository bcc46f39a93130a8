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
        (["catalogue", "--algorithms", "NoisyHist2", "--total", "6000", "--seeds", "0"], schemas.CatalogueBench),
        (["shapes", "--cases", "location", "--samples", "2000", "--repeats", "1"], schemas.ShapesBench),
        (["one-run", "--canaries", "10", "--submissions", "1", "--samples", "200"], schemas.OneRunBench),
    ],
    ids=["gaussian", "catalogue-oracle", "flower", "catalogue", "shapes", "one-run"],
)
def test_a_bench_writes_its_typed_kind(argv, kind, tmp_path, no_result_parsing):
    from pgc.catalogue import BROKEN

    argv = [a.format(broken=next(iter(BROKEN))) for a in argv]
    result = _bench(argv, tmp_path / "bench.json", no_result_parsing)
    assert type(result) is kind and result.KIND == f"bench-{argv[0]}" and result.bench == argv[0]
    assert json.loads((tmp_path / "bench.json").read_text())["kind"] == result.KIND


def test_bench_audit_writes_its_typed_rows(tmp_path, no_result_parsing):
    out = tmp_path / "audit.json"
    argv = ["bench", "audit", "--only", "whitebox", "float-exact", "--samples", "2000", "--json", str(out)]
    assert main(argv) in (0, 1)  # the targets are missed at this size
    data = json.loads(out.read_text())
    no_result_parsing.undo()
    result = schemas.load(data)
    assert isinstance(result, schemas.AuditBenchmark) and result.laplace is None and result.false_alarms is None
    assert [r.epsilon for r in result.prs_white_box] == [1.0, 2.0, 5.0, 10.0] and result.prs_white_box[0].target == 0.97
    assert [type(r) for r in result.float_exact] == [schemas.FloatExactAudit] * 2
    assert result.to_dict() == data


def test_the_sequential_estimates_script_writes_its_typed_kind(tmp_path, monkeypatch, no_result_parsing):
    spec = importlib.util.spec_from_file_location("sequential_estimates", ROOT / "scripts/sequential_estimates.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(script, "CASES", [("toy-grr", {"epsilon": 0.5}, 20_000)])
    monkeypatch.setattr("sys.argv", ["sequential_estimates.py", "--out", str(tmp_path / "s.json")])
    script.main()
    data = json.loads((tmp_path / "s.json").read_text())
    no_result_parsing.undo()
    result = schemas.load(data)
    assert isinstance(result, schemas.SequentialEstimates) and data["kind"] == "bench-sequential-estimates"
    assert result.rows[0].settings == {"epsilon": 0.5} and result.rows[0].stages_run[0] == 10_000


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
        ("results/audit/planning/calibration.json", schemas.AuditTimeEstimates),
        ("results/opacus/bench.json", schemas.OpacusBench),
        ("results/flower/bench.json", schemas.FlowerBench),
        ("results/versions/matrix.json", schemas.VersionsBench),
        ("results/catalogue/race/catalogue-floor10.json", schemas.CatalogueBench),
        ("results/catalogue/dpsniper-check/dpsniper-check.json", schemas.DpsniperCheck),
        ("results/shapes/shapes.json", schemas.ShapesBench),
        ("results/audit/one-run/bench.json", schemas.OneRunBench),
        ("results/audit/sequential-estimates.json", schemas.SequentialEstimates),
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


def test_an_oracle_file_of_the_older_layout_loads_without_standard_errors():
    """The oracle's file as written before its bounds carried standard errors: the older kind "bench" and no
    ``bound_standard_error`` anywhere (made from the committed file by removing them) loads as CatalogueOracle, with
    the errors None, and writes back as it was read."""
    data = json.loads((ROOT / "results/catalogue/oracle/oracle.json").read_text())
    assert data["kind"] == schemas.CatalogueOracle.KIND
    older = {**data, "kind": "bench"}
    older["algorithms"] = [
        {
            **{k: v for k, v in row.items() if k != "bound_standard_error"},
            "pairs": {
                name: {k: v for k, v in pair.items() if k != "bound_standard_error"}
                for name, pair in row["pairs"].items()
            },
        }
        for row in data["algorithms"]
    ]
    result = schemas.load(older)
    assert isinstance(result, schemas.CatalogueOracle) and result.KIND == "bench" and not result.extra
    assert all(row.bound_standard_error is None for row in result.algorithms)
    assert all(pair.bound_standard_error is None for row in result.algorithms for pair in row.pairs.values())
    back = json.loads(json.dumps(result.to_dict()))
    assert {k: v for k, v in back.items() if k != "format_version"} == {
        k: v for k, v in older.items() if k != "format_version"
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
    catalogue = schemas.load(json.loads((ROOT / "results/catalogue/race/catalogue-floor10.json").read_text()))
    assert catalogue.cells[0].ours.split.rule == "quarter" and catalogue.cells[0].dpsniper.stages.n_final > 0
    assert sum(c.broken_flagged for c in catalogue.summary.ours_holm_per_seed.values()) >= 0
    shapes = schemas.load(json.loads((ROOT / "results/shapes/shapes.json").read_text()))
    assert shapes.cells[0].claimed_epsilon == shapes.cells[0].claim.epsilon == 1.0  # a flat part's key by its name
    assert shapes.cells[0].split.certification_per_side > 0 and shapes.summary.cases["scale"].verdicts
    audit = schemas.load(json.loads((ROOT / "results/audit/bench.json").read_text()))
    assert audit.prs_black_box[0].naive_ratio > 0 and audit.laplace[0].cpu_seconds > 0 and audit.float_exact is None
