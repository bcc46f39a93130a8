"""The reading search: scoring against known numbers, the control gate, knob names, and
`pgc replicate --search` / `--confirms` end to end on a tiny grid (resume, fresh-seed refusal)."""

from __future__ import annotations

import json
import math

import pytest

from pgc.cli.main import main
from pgc.replication.grid import (
    KNOBS,
    LITERAL_KNOBS,
    READINGS,
    GridSpec,
    Setting,
    get_reading,
    knob_reading,
    knob_reading_name,
    reading_knobs,
    setting_configs,
)
from pgc.replication.search import SearchSpec, auc_penalty, control_gate, fst_penalty, reading_fit, success_loglik
from pgc.schemas.replicate_kinds import (
    AucEstimate,
    ComparedCounts,
    ComparedTests,
    ControlComparison,
    MedianFst,
    PaperCell,
    ReplicateResult,
    ReplicateSetting,
    ReplicateSpec,
    SettingCell,
)


def _log_binom(k, n, p):
    return math.log(math.comb(n, k)) + k * math.log(p) + (n - k) * math.log(1 - p)


def test_success_loglik_known_values():
    # K = 20, p = 0.8: the mode is 16, so 16 successes score 0 and 10 score log-pmf(10) − log-pmf(16)
    assert success_loglik(16, 20, 0.8) == pytest.approx(0.0, abs=1e-12)
    assert success_loglik(10, 20, 0.8) == pytest.approx(_log_binom(10, 20, 0.8) - _log_binom(16, 20, 0.8))
    # the paper's 1.0 is read as 0.98: 20/20 is the mode, 0/20 is very unlikely but finite
    assert success_loglik(20, 20, 1.0) == pytest.approx(0.0, abs=1e-12)
    assert -200 < success_loglik(0, 20, 1.0) < -70
    assert success_loglik(19, 20, 1.0) < 0


def test_fst_and_auc_penalties_known_values():
    assert fst_penalty(1769.0, 1769.0, 90_000) == 0.0
    assert fst_penalty(2 * 1769.0, 1769.0, 90_000) == pytest.approx(0.5)
    assert fst_penalty(1769.0 / 2, 1769.0, 90_000) == pytest.approx(0.5)
    assert fst_penalty(math.inf, 18377.0, 90_000) == pytest.approx(0.5 * math.log2(180_000 / 18377.0) ** 2)
    assert auc_penalty(0.673, 0.673) == 0.0
    assert auc_penalty(0.673 * 2**0.2, 0.673) == pytest.approx(0.5)
    assert auc_penalty(math.nan, 0.673) == auc_penalty(0.01, 0.673)


def _spec(epsilons, cap=90_000):
    return ReplicateSpec(
        reading="sampled",
        trials=20,
        cap=cap,
        epsilons=list(epsilons),
        mechanisms=["laplace", "prs"],
        controls="eps1",
        curve_trials=0,
        curve_submissions=1000,
        workers=9,
        seed=0,
    )


def _row(key, mechanism, epsilon, **fields):
    cell = SettingCell(key=key, mechanism=mechanism, epsilon=epsilon, control=False)
    return ReplicateSetting(cell=cell, fst=MedianFst(median_fst=fields.pop("median_fst", None)), **fields)


def _result(successes, control_successes, p_mwu, p_fisher):
    rows = [
        _row("table/laplace/eps=1/B=1", "laplace", 1.0),
        _row("table/prs/eps=1/B=100", "prs", 1.0),
        _row("table/laplace/eps=2/B=1", "laplace", 2.0),
    ]
    comps = [
        ControlComparison(
            setting=r.cell.key,
            control=f"{r.cell.key}/control",
            matched=True,
            counts=ComparedCounts(
                successes=successes, control_successes=control_successes, median_fst=1.0, control_median_fst=2.0
            ),
            tests=ComparedTests(p_mwu=p_mwu, p_fisher=p_fisher),
        )
        for r in rows
    ]
    return ReplicateResult(spec=_spec([1.0, 2.0]), settings=rows, control_comparisons=comps)


def test_control_gate_requires_every_smallest_eps_cell_to_beat_its_control():
    assert control_gate(_result(9, 1, 0.001, 0.004), 0.05).passed
    assert not control_gate(_result(5, 4, 0.30, 0.50), 0.05).passed
    gate = control_gate(_result(5, 4, 0.04, 0.50), 0.05)  # MWU alone suffices ...
    assert gate.passed and len(gate.cells) == 2  # ... and only ε = 1 cells are gated
    assert not control_gate(_result(5, 4, 0.04, 0.50), 0.01).passed


def test_reading_fit_is_zero_for_the_papers_own_numbers_and_negative_otherwise():
    from pgc.replication.grid import PAPER_FST_MEDIAN, PAPER_RELATIVE_AUC, PAPER_SUCCESS_RATIO

    def rows(scale):
        out = []
        for (mech, eps), sr in PAPER_SUCCESS_RATIO.items():
            k = min(20, math.floor(21 * min(max(sr, 0.02), 0.98)))
            out.append(
                _row(
                    f"table/{mech}/eps={eps}",
                    mech,
                    eps,
                    successes=k,
                    trials=20,
                    median_fst=PAPER_FST_MEDIAN[(mech, eps)] * scale,
                    paper=PaperCell(),
                    relative_auc={"C=0.01": AucEstimate(value=PAPER_RELATIVE_AUC[(mech, eps)])},
                )
            )
        return ReplicateResult(spec=_spec([1.0]), primary_reference="table/none/eps=inf/B=1/C=0.01", settings=out)

    exact = reading_fit(rows(1.0))
    assert exact.success == pytest.approx(0) and exact.fst == pytest.approx(0) and exact.auc == pytest.approx(0)
    assert exact.order == pytest.approx(0)
    assert reading_fit(rows(2.0)).fst == pytest.approx(-0.5 * len(PAPER_SUCCESS_RATIO))


def test_knob_reading_names_round_trip_and_the_literal_one_equals_the_preset():
    name = knob_reading_name({"reward": "term", "returns": "n5", "bootstrap": "noboot"})
    assert name == "kn-term-n5-noboot-greedy-sum-sgd-aagent-c0.01"
    r = get_reading(name)
    assert (r.hyper.reward, r.hyper.n_step, r.hyper.bootstrap_truncated) == ("terminal", 5, False)
    rms = knob_reading(knob_reading_name({"optimizer": "rms", "alpha": "astep", "clip_inf": "c10"}))
    assert (rms.optimizer, rms.learning_rate, rms.exploration_clock) == ("rmsprop", 5e-3, "steps")
    assert rms.nonprivate_variants[0].clip == 10.0 and rms.nonprivate_variants[0].learning_rate == 5e-3
    for bad in (
        "kn-term",
        "kn-x-full-boot-greedy-sum-sgd-aagent-c0.01",
        "literal2",
        "kn-unit-n0-boot-greedy-sum-sgd-aagent-c0.01",
    ):
        with pytest.raises(ValueError):
            get_reading(bad)
    with pytest.raises(ValueError):
        knob_reading_name({"colour": "red"})
    assert len(KNOBS) == 9 and all(len(v) == 2 for v in KNOBS.values())
    # the biases knob is spelled only when on, so names from before it existed name the same reading
    biased = knob_reading_name({"reward": "term", "biases": "bias"})
    assert biased == "kn-term-full-boot-greedy-sum-sgd-aagent-c0.01-bias" and get_reading(biased).hyper.biases
    assert not get_reading("kn-term-full-boot-greedy-sum-sgd-aagent-c0.01").hyper.biases
    assert reading_knobs(biased)["biases"] == "bias" and reading_knobs(name)["biases"] == "nobias"
    with pytest.raises(ValueError):
        get_reading("kn-term-full-boot-greedy-sum-sgd-aagent-c0.01-nobias")  # not the canonical spelling
    literal = knob_reading_name(LITERAL_KNOBS)
    for setting in (Setting("laplace", 1.0, 1), Setting("prs", 5.0, 100), Setting("laplace", 1.0, 1, control=True)):
        a = setting_configs(GridSpec(reading=literal, trials=2), setting)
        b = setting_configs(GridSpec(reading="literal", trials=2), setting)
        assert a == b
    assert "literal" in READINGS


def test_search_spec_validation():
    for bad in ({"trials": 3}, {"readings": 0}, {"gate_alpha": 1.0}, {"seed": -1}):
        with pytest.raises(ValueError):
            SearchSpec(**bad)
    assert SearchSpec(trials=5, seed=7).seeds == [7, 8, 9, 10, 11]


TINY = ["--trials", "4", "--cap", "1500", "--no-progress"]


def test_search_resumes_and_confirmation_needs_fresh_seeds(tmp_path, capsys):
    out = tmp_path / "search"
    assert main(["replicate", "--search", "--search-readings", "2", *TINY, "--out", str(out)]) == 0
    first = json.loads((out / "search.json").read_text())
    assert first["proposals"] == 2 and first["readings_tried"] == 2
    assert first["readings"][-1]["reading"] in {e["reading"] for e in first["readings"]}
    assert first["spec"]["search_seeds"] == list(range(1_000_000, 1_000_004))
    tried = {e["reading"]: e for e in first["readings"]}
    assert knob_reading_name(LITERAL_KNOBS) in tried  # the literal reading is always tried first
    for e in tried.values():
        assert set(e["fit"]) == {"success", "fst", "auc", "order", "total"}
        assert e["rejected"] == (not e["control_gate"]["passed"])
    # resume: the two readings are kept (not re-run), one more is asked for by name (--search-also)
    also = knob_reading_name({"reward": "term", "returns": "n5", "biases": "bias"})
    assert (
        main(["replicate", "--search", "--search-readings", "3", *TINY, "--out", str(out), "--search-also", also]) == 0
    )
    second = json.loads((out / "search.json").read_text())
    assert second["proposals"] == 3 and also in {e["reading"] for e in second["readings"]}
    for name, e in tried.items():
        again = next(x for x in second["readings"] if x["reading"] == name)
        assert again["fit"] == e["fit"] and again["first_trial"] == e["first_trial"]
    # other settings in the same folder are refused
    assert (
        main(
            [
                "replicate",
                "--search",
                "--search-readings",
                "3",
                "--trials",
                "5",
                "--cap",
                "1500",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert main(["replicate", "--search-also", also, *TINY, "--out", str(tmp_path / "x")]) == 2  # needs --search
    with pytest.raises(SystemExit) as exc:  # argparse refuses a name that is no knob reading
        main(["replicate", "--search", "--search-also", "kn-bogus", *TINY, "--out", str(out)])
    assert exc.value.code == 2
    capsys.readouterr()
    # confirmation: seeds that overlap the search's are refused, fresh ones are recorded
    name = knob_reading_name(LITERAL_KNOBS)
    grid = [
        "replicate",
        "--reading",
        name,
        "--confirms",
        str(out / "search.json"),
        *TINY,
        "--epsilons",
        "1",
        "--mechanisms",
        "laplace",
        "--curve-trials",
        "0",
    ]
    assert main([*grid, "--seed", "1000002", "--out", str(tmp_path / "bad")]) == 2
    assert "overlap the search seeds" in capsys.readouterr().err
    assert not (tmp_path / "bad" / name).exists()
    assert main([*grid, "--out", str(tmp_path / "confirm")]) == 0
    result = json.loads((tmp_path / "confirm" / name / "replicate.json").read_text())
    assert result["role"] == "confirmation"
    conf = result["confirmation"]
    assert conf["reading"] == name and conf["confirmation_seeds"] == [0, 1, 2, 3]
    assert conf["search_seeds"] == list(range(1_000_000, 1_000_004)) and conf["readings_tried_by_search"] == 3
    assert (
        main([*grid[:2], "kn-unit-full-boot-sample-mean-rms-astep-c10", *grid[3:], "--out", str(tmp_path / "untried")])
        == 2
    )  # a reading the search never tried
