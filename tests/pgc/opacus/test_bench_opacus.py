"""``pgc bench opacus`` end to end at a small size: the adapter's updates equal the plain loop's on the same seeds,
and the result file states every pace."""

from __future__ import annotations

import json

from pgc.cli.main import main


def test_the_bench_compares_the_adapter_with_the_plain_loop_on_the_same_seeds(tmp_path, capsys, no_result_parsing):
    out = tmp_path / "bench.json"
    code = main(["bench", "opacus", "--releases", "30", "--workers", "1", "--out", str(out)])
    result = json.loads(out.read_text())
    assert code in (0, 1) and result["kind"] == "bench-opacus" and result["bench"] == "opacus"
    assert result["identical"] is True and result["parameters"] == 1020
    assert set(result["rates"]) == {"plain loop", "plain loop, one thread", "adapter, 1 workers"}
    assert all(rate > 0 for rate in result["rates"].values())
    assert "adapter / plain loop" in capsys.readouterr().out
