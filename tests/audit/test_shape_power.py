"""audit.power.planted: planted leaks of every shape, each of known size, and the smallest the whole selection and
certification flag. Seeded; a short list of candidate statistics keeps each planted audit cheap."""

import math

import numpy as np
import pytest

from audit.power.planted import (
    PLANTINGS,
    Columns,
    PlantedAudits,
    plant_dependence,
    plant_location,
    plant_scale,
    plant_structure,
    planted_power,
)
from audit.statistics import SparseProjection
from audit.statistics.shapes import CovarianceDirections, NormStatistic, PresenceCount, SquaredDeviation
from pgc.errors import UserError


def _statistics():
    return [SparseProjection(dense=True), NormStatistic(2), SquaredDeviation(), CovarianceDirections(), PresenceCount()]


def _gaussian(n, k, seed=1, absent=0.0):
    rng = np.random.default_rng(seed)
    base = rng.normal(3.0, 2.0, size=(n, k))
    return np.where(rng.random((n, k)) < absent, np.nan, base)


def _power(base, shapes, seq, claimed=math.inf):
    return planted_power(
        base,
        _statistics(),
        claimed_epsilon=claimed,
        delta=0.0,
        confidence=0.95,
        two_sided=False,
        seq=seq,
        shapes=shapes,
    )


def test_each_planting_has_its_stated_size():
    base = _gaussian(200_000, 4, absent=0.2)
    cols = Columns.of(base)
    rng = np.random.default_rng(0)
    shifted = plant_location(base, 2.0, cols, rng)
    assert np.nanmean(shifted - base, axis=0) == pytest.approx(2.0 * cols.spread / math.sqrt(4))  # d′ = 2
    scaled = plant_scale(base, 0.5, cols, rng)
    assert np.nanstd(scaled, axis=0) / np.nanstd(base, axis=0) == pytest.approx(1.5)
    mixed = plant_dependence(base, 0.3, cols, rng)
    both = ~np.isnan(mixed[:, 0]) & ~np.isnan(mixed[:, 1])
    assert np.corrcoef(mixed[both, 0], mixed[both, 1])[0, 1] == pytest.approx(0.3, abs=0.01)
    assert np.nanstd(mixed, axis=0) == pytest.approx(np.nanstd(base, axis=0), rel=0.01)  # marginals kept
    # absent entries stay absent; the structure planting removes each present entry w.p. size
    assert np.array_equal(np.isnan(mixed), np.isnan(base)) and np.array_equal(np.isnan(shifted), np.isnan(base))
    holed = plant_structure(base, 0.25, cols, rng)
    assert np.isnan(holed[np.isnan(base)]).all()
    assert np.isnan(holed[~np.isnan(base)]).mean() == pytest.approx(0.25, abs=0.005)


def test_the_smallest_flagged_scale_leak_falls_as_the_base_grows():
    small, large = (_power(_gaussian(n, 3), ("scale",), np.random.SeedSequence(11))[0] for n in (1_000, 16_000))
    assert large.samples_per_side == 4_000 and small.samples_per_side == 250
    assert small.smallest is not None and large.smallest is not None
    assert large.smallest < small.smallest
    # a claim of ε = 1 is exceeded only by a larger leak than one that is merely told apart (ε_LB > 0)
    above_claim = _power(_gaussian(16_000, 3), ("scale",), np.random.SeedSequence(11), claimed=1.0)[0]
    assert above_claim.smallest is not None and above_claim.smallest > large.smallest


def test_a_leak_above_the_smallest_is_flagged_by_fresh_planted_audits_and_one_below_mostly_not():
    base = _gaussian(4_000, 2, seed=5)
    found = _power(base, ("location",), np.random.SeedSequence(21))[0]
    assert found.smallest is not None and found.smallest < PLANTINGS["location"].largest
    fresh = PlantedAudits(base, Columns.of(base), _statistics(), 0.0, 0.95, 0.0, False, np.random.SeedSequence(22))
    planting, index = PLANTINGS["location"], list(PLANTINGS).index("location")
    above = sum(fresh.epsilon(planting, index, 2.5 * found.smallest, r) > 0 for r in range(5))
    below = sum(fresh.epsilon(planting, index, found.smallest / 6, r) > 0 for r in range(5))
    assert above >= 4 and below <= 2


def test_releases_with_absent_entries_are_planted_and_audited():
    base = _gaussian(4_000, 3, seed=2, absent=0.2)
    found = {p.shape: p for p in _power(base, ("structure", "dependence", "location"), np.random.SeedSequence(3))}
    assert found["structure"].smallest is not None and found["structure"].smallest < PLANTINGS["structure"].largest
    assert found["location"].smallest is not None
    assert found["dependence"].parameter == PLANTINGS["dependence"].parameter
    assert "planted structure leak" in found["structure"].words()


def test_the_words_state_the_count_of_planted_audits_and_one_column_has_no_dependence_to_plant():
    base = _gaussian(2_000, 1, seed=5)
    found = _power(base, ("location", "dependence"), np.random.SeedSequence(8))
    assert [p.shape for p in found] == ["location"]  # one column: nothing correlates
    words = found[0].words()
    assert found[0].flags_needed == 4 and "was flagged in at least 4 of 5 planted audits at 500 per side" in words
    assert words.startswith(f"a planted location leak of size {found[0].smallest:.3g}") and "w.p." not in words
    first = found[0].__class__(**{**found[0].to_dict(), "smallest": PLANTINGS["location"].smallest})
    assert f"of size {PLANTINGS['location'].smallest:.3g} (the smallest tried) — d′" in first.words()


def test_a_consistent_row_names_structure_as_not_covered_with_its_reason():
    from audit.verdicts import shape_words
    from pgc.schemas.audit_rows import AuditRow
    from pgc.schemas.row_parts import PlantedLeak

    row = AuditRow.from_dict({"channel": "x", "epsilon_lower_bound": 0.0, "shapes_searched": ["location", "scale"]})
    assert shape_words(row).endswith("(not: dependence, structure, learned)")
    planted = PlantedLeak(
        shape="structure", parameter="p", smallest=0.01, largest_tried=0.9, repeats=5, samples_per_side=9
    )
    words = shape_words(row.updated(planted_power=[planted]))
    assert "(not: dependence, structure: no absent entries or recurring values to read, learned); a planted" in words


def test_planted_power_is_reproducible_from_its_seed():
    base = _gaussian(1_000, 2, seed=4)
    seq = np.random.SeedSequence(7)
    first = _power(base, ("scale", "location"), seq)
    assert seq.n_children_spawned == 0  # the sequence is read, not advanced
    assert _power(base, ("scale", "location"), seq) == first
    assert _power(base, ("scale", "location"), np.random.SeedSequence(7)) == first
    assert [p.shape for p in first] == ["scale", "location"]


@pytest.mark.parametrize(
    "base, kwargs, match",
    [
        (np.zeros((100, 2)), {}, "n ≥ 200"),
        (np.full((400, 2), np.inf), {}, "inf"),
        (np.zeros((400, 2)), {"shapes": ("colour",)}, "unknown shapes"),
        (np.zeros((400, 2)), {"claimed_epsilon": -1.0}, "claimed_epsilon"),
    ],
)
def test_bad_input_is_a_clear_error(base, kwargs, match):
    args = {"claimed_epsilon": 1.0, "delta": 0.0, "confidence": 0.95, "two_sided": False, "seq": 0, **kwargs}
    with pytest.raises(UserError, match=match):
        planted_power(base, None, **args)


def test_bench_shapes_writes_ours_beside_the_oracle_and_refuses_bad_input(tmp_path, capsys, no_result_parsing):
    import json

    from pgc.cli.main import main

    out = tmp_path / "shapes.json"
    for argv in (["--cases", "colour"], ["--confidence", "1.5"], ["--samples", "100"]):
        try:
            code = main(["bench", "shapes", *argv, "--out", str(out)])
        except SystemExit as exc:
            code = exc.code
        assert code == 2 and not out.exists()
        assert "error" in capsys.readouterr().err
    assert (
        main(["bench", "shapes", "--cases", "location", "--samples", "2000", "--repeats", "1", "--out", str(out)]) == 0
    )
    data = json.loads(out.read_text())
    cell = data["cells"][0]
    assert data["kind"] == "bench-shapes" and data["bench"] == "shapes"
    # 1,600 certification and 400 training releases per side: the oracle is counted on the audit's own releases
    assert (cell["certification_per_side"], cell["train_per_side"]) == (1_600, 400)
    assert cell["oracle"]["epsilon_lower_bound"] > 0 and cell["epsilon_lower_bound"] > 0
    assert data["summary"]["cases"]["location"]["repeats"] == 1 and out.with_suffix(".md").is_file()
