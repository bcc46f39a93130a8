"""``pgc audit --ldp``, ``pgc audit --nvflare``, ``pgc bench ldp`` and the report's library section, end to end at
small n; bad input exits 2 with one line and nothing written."""

from __future__ import annotations

import json

import pytest

from pgc.cli.main import main

pytest.importorskip("multi_freq_ldpy")
pytest.importorskip("pure_ldp")


@pytest.mark.parametrize(
    "argv",
    [
        ["--ldp", "multi-freq-ldpy:GRR", "--setting", "epsilon=1"],  # no k
        ["--ldp", "nosuch:GRR", "--setting", "k=4", "--setting", "epsilon=1"],
        ["--ldp", "pure-ldp:NOPE", "--setting", "k=4", "--setting", "epsilon=1"],
        ["--ldp", "pure-ldp:DE", "--setting", "k=1", "--setting", "epsilon=1"],
        ["--ldp", "pure-ldp:DE", "--setting", "k=4", "--setting", "epsilon=-2"],
        ["--ldp", "pure-ldp:DE", "--setting", "k=4", "--setting", "epsilon=1", "--setting", "bogus=3"],
        ["--ldp", "pure-ldp:DE", "--setting", "k=4", "--setting", "epsilon=1", "--setting", "pair=[1, 9]"],
        ["--nvflare", "nvflare.app_common.filters:NoSuchFilter"],
        ["--nvflare", "nvflare.app_common.filters:SVTPrivacy", "--setting", "bogus=1"],
        ["--nvflare", "nvflare.app_common.filters:ExcludeVars", "--pair", "no such pair"],
    ],
)
def test_bad_input_exits_2_with_one_line(argv, tmp_path, capsys):
    out = tmp_path / "a.json"
    assert main(["audit", *argv, "--samples", "1000", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert not out.exists() and err.startswith("pgc audit: error:") and "\n" not in err


def test_ldp_audit_flags_the_ordered_subset_and_records_the_library(tmp_path, capsys):
    out = tmp_path / "ss.json"
    assert (
        main(
            [
                "audit",
                "--ldp",
                "multi-freq-ldpy:SS",
                "--setting",
                "k=25",
                "--setting",
                "epsilon=1",
                "--samples",
                "2000",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    assert result["kind"] == "system-audit" and result["verdict"] == "violated"
    assert result["library"]["library"] == "multi-freq-ldpy" and result["library"]["exact_epsilon"] == "inf"
    assert result["report_section"] == "library-audits"
    assert "exact ε of the release" in capsys.readouterr().out


def test_a_correct_library_protocol_audits_consistent(tmp_path):
    out = tmp_path / "de.json"
    assert (
        main(
            [
                "audit",
                "--ldp",
                "pure-ldp:DE",
                "--setting",
                "k=4",
                "--setting",
                "epsilon=1",
                "--samples",
                "5000",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    assert result["verdict"] == "consistent" and result["rows"][0]["epsilon_lower_bound"] <= 1.0


def test_nvflare_audit_and_the_report_section(tmp_path):
    pytest.importorskip("nvflare")
    out = tmp_path / "exclude.json"
    assert (
        main(
            [
                "audit",
                "--nvflare",
                "nvflare.app_common.filters:ExcludeVars",
                "--pair",
                "at the bound",
                "--samples",
                "300",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    assert result["verdict"] == "unprotected channel" and result["library"]["protocol"] == "ExcludeVars"
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert "## Library audits" in text and "ExcludeVars" in text and "no DP claim" in text


def test_bench_ldp_writes_cells_a_table_and_a_figure(tmp_path, no_result_parsing):
    out = tmp_path / "bench.json"
    assert (
        main(
            [
                "bench",
                "ldp",
                "--libraries",
                "reference",
                "multi-freq-ldpy",
                "--protocols",
                "SS",
                "--ks",
                "25",
                "--epsilons",
                "1",
                "--samples",
                "2000",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    assert result["kind"] == "ldp-bench" and result["complete"] and len(result["cells"]) == 2
    cell = next(c for c in result["cells"] if c["library"] == "multi-freq-ldpy" and c["protocol"] == "SS")
    assert {"epsilon_lower_bound", "reference_epsilon_lower_bound", "exact_epsilon"} <= set(cell)
    assert cell["exact_epsilon"] == "inf" and cell["verdict"] == "violated"
    assert result["summary"]["broken_cells"] == 1 and result["summary"]["broken_flagged"] == 1
    assert out.with_suffix(".md").read_text().startswith("# pgc bench ldp")
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_bench_ldp_parts_merge_into_the_whole_grid(tmp_path, capsys):
    # two processes run one library each; the whole grid with --merge audits nothing again and keeps every cell
    common = ["--protocols", "GRR", "--ks", "2", "--epsilons", "1", "--samples", "2000"]
    parts = []
    for library in ("reference", "multi-freq-ldpy"):
        parts.append(tmp_path / f"{library}.json")
        assert main(["bench", "ldp", "--libraries", library, *common, "--out", str(parts[-1])]) == 0
    cells = [json.loads(p.read_text())["cells"][0] for p in parts]
    capsys.readouterr()
    out = tmp_path / "bench.json"
    assert (
        main(
            [
                "bench",
                "ldp",
                "--libraries",
                "reference",
                "multi-freq-ldpy",
                *common,
                "--out",
                str(out),
                "--merge",
                *map(str, parts),
            ]
        )
        == 0
    )
    merged = json.loads(out.read_text())
    assert merged["cells"] == cells and merged["merged"] == [str(p) for p in parts]
    assert merged["complete"] and merged["summary"]["cells"] == 2
    # a part made with other settings is refused in one line
    assert (
        main(
            [
                "bench",
                "ldp",
                "--libraries",
                "reference",
                *common[:-1],
                "3000",
                "--out",
                str(tmp_path / "x.json"),
                "--merge",
                str(parts[0]),
            ]
        )
        == 2
    )


def test_the_per_protocol_table_counts_an_equal_bound_up_to_rounding_as_at_least_the_reference():
    from pgc.benchmarks.ldp import summary
    from pgc.benchmarks.ldp_render import summary_lines
    from pgc.schemas import LdpBench, LdpBenchCell, LdpBenchSettings, LdpCellOracle, Verdict

    def cell(k: int, ours: float, reference: float) -> LdpBenchCell:
        return LdpBenchCell(
            oracle=LdpCellOracle(library="reference", protocol="GRR", k=k, epsilon=1.0),
            claimed_epsilon=1.0,
            exact_epsilon=1.0,
            samples_per_side=1_000_000,
            verdict=Verdict.CONSISTENT,
            p_value=0.5,
            epsilon_lower_bound=ours,
            reference_epsilon_lower_bound=reference,
            wall_s=0.0,
        )

    cells = [cell(2, 0.99, 0.99 + 1e-12), cell(25, 0.97, 0.98)]  # the same counts; a test that lost
    bench = LdpBench(settings=LdpBenchSettings(samples=1_000_000, confidence=0.95, seed=0), cells=cells, complete=True)
    row = summary_lines(bench)[2].split(" | ")
    assert row[7] == "1" and summary(cells, [], 0.95).bounds.ours_at_least_reference == 1
