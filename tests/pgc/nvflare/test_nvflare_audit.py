"""NVFlare filters as Systems: the real process() path, the claims read from the filters' parameters and recorded
accounting, the channels the server receives, and the seeding of numpy's global generator."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

pytest.importorskip("nvflare")

from nvflare.app_common.filters import ExcludeVars, PercentilePrivacy, SVTPrivacy  # noqa: E402

from audit.engine.system_audit import audit_system  # noqa: E402
from pgc.nvflare.claims import svt_budget  # noqa: E402
from pgc.nvflare.system import FilterSystem, numbers_in  # noqa: E402
from pgc.nvflare.updates import BOUND, EQUAL, UNEQUAL, bound_pair, update_pairs  # noqa: E402


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))


def small_updates():
    g = rng(42)
    a = {
        "fc.weight": g.normal(0, 0.01, (20, 10)),
        "fc.bias": g.normal(0, 0.01, 20),
        "bn.num_batches_tracked": np.array(7),
    }
    b = {
        "fc.weight": g.normal(0, 0.01, (20, 10)),
        "fc.bias": g.normal(0, 0.01, 20),
        "bn.num_batches_tracked": np.array(9),
    }
    return {"a": (a, 7), "b": (b, 9)}


def system_of(flt, **kw):
    return FilterSystem(flt, small_updates(), {"a vs b": ("a", "b")}, **kw)


def test_svt_claim_is_its_recorded_accounting():
    system = system_of(SVTPrivacy())
    budget = svt_budget(system.filter, 221)  # 200 + 20 array entries and one scalar: c = ⌈22.1⌉ = 23
    assert budget["n_upload"] == 23 and budget["epsilon_release"] == pytest.approx(2.3)
    assert budget["epsilon_threshold"] == pytest.approx(0.1 / (1 + 46 ** (2 / 3)))
    assert system.recorded_budget["epsilon_total"] == pytest.approx(budget["epsilon_total"])
    assert system.claim.epsilon == pytest.approx(2.4) and system.claim.covers == ("update",)
    assert system.channels == ("update", "scalars", "meta")
    assert any("noise_var" in r["parameter"] for r in system.readings)


def test_exclude_vars_at_its_defaults_passes_the_update_through():
    system = system_of(ExcludeVars())
    out = system.release("a", 3, rng())
    entries = small_updates()["a"][0]
    expected = np.concatenate([entries["fc.bias"], entries["fc.weight"].ravel()])  # name order
    np.testing.assert_array_equal(out["update"], np.tile(expected, (3, 1)))
    np.testing.assert_array_equal(out["scalars"], [[7.0]] * 3)
    assert math.isinf(system.claim.epsilon) and system.claim.covers == ()


def test_exclude_vars_drops_what_it_is_told_to():
    system = system_of(ExcludeVars(exclude_vars=["fc.weight"]))
    assert system.release("a", 1, rng())["update"].shape == (1, 20)


def test_percentile_privacy_zeroes_the_smallest_and_truncates_at_gamma():
    system = system_of(PercentilePrivacy(percentile=30, gamma=0.01))
    entries, steps = small_updates()["a"]
    out = system.release("a", 1, rng())["update"][0]
    flat = np.concatenate([entries["fc.bias"], entries["fc.weight"].ravel()]) / steps
    scalar = np.abs(np.concatenate([flat, [7.0 / steps]]))
    cutoff = np.percentile(scalar, 30)
    want = np.where(np.abs(flat) < cutoff, 0.0, np.clip(flat, -0.01, 0.01)) * steps
    np.testing.assert_allclose(out, want)


def test_weights_are_sent_with_the_global_model_and_received_minus_it():
    global_model = {k: np.full(np.shape(v), 0.5) for k, v in small_updates()["a"][0].items()}
    system = system_of(ExcludeVars(), data_kind="WEIGHTS", global_model=global_model)
    entries = small_updates()["a"][0]
    np.testing.assert_allclose(
        system.release("a", 1, rng())["update"][0], np.concatenate([entries["fc.bias"], entries["fc.weight"].ravel()])
    )


def test_svt_releases_come_from_the_audit_stream_and_leave_the_globals_alone():
    system = system_of(SVTPrivacy())
    np_state, py_state = np.random.get_state()[1].copy(), random.getstate()
    a, b = system.release("b", 40, rng(3)), system.release("b", 40, rng(3))
    for channel in system.channels:
        np.testing.assert_array_equal(a[channel], b[channel])
    np.testing.assert_array_equal(np.random.get_state()[1], np_state)
    assert random.getstate() == py_state
    assert np.all((a["update"] != 0).sum(axis=1) <= 23)  # at most c = 23 entries uploaded
    meta = dict(zip(system.layout["meta"], a["meta"][0], strict=False))
    assert meta["NUM_STEPS_CURRENT_ROUND"] == 9 and meta["svt_privacy_accountant.calls"] == 1  # a fresh run each


def test_a_deterministic_filter_is_an_unprotected_channel():
    result = audit_system(system_of(PercentilePrivacy()), "a", "b", samples=500, seed=0)
    assert result.verdict == "unprotected channel"
    assert result.row("update").epsilon_lower_bound > 4.0  # the two outputs never coincide: at the cap of n = 500


def test_the_built_in_pairs_and_the_bound():
    pairs = update_pairs(1e-5)
    assert set(pairs) == {EQUAL, UNEQUAL, BOUND}
    plus, minus = bound_pair({"w": np.zeros(3), "n": np.array(4)}, 1e-5, 5)
    assert plus[0]["w"].tolist() == [1e-5] * 3 and minus[0]["w"].tolist() == [-1e-5] * 3
    assert plus[0]["n"] == minus[0]["n"] == 0 and plus[1] == 5


def test_bad_input_is_refused():
    with pytest.raises(TypeError, match="nvflare Filter"):
        FilterSystem(object(), small_updates(), {"a vs b": ("a", "b")})
    with pytest.raises(ValueError, match="data_kind"):
        system_of(ExcludeVars(), data_kind="METRICS")
    with pytest.raises(ValueError, match="names one of the updates"):
        system_of(ExcludeVars()).release("c", 1, rng())
    assert numbers_in({"a": {"b": 1, "c": "x"}, "d": True}) == {"a.b": 1.0, "d": 1.0}


NOISY_FILTER = '''
import numpy as np
from nvflare.apis.dxo import from_shareable
from nvflare.apis.filter import Filter


class NoisyFilter(Filter):
    """Laplace noise on every entry; it states no claim."""

    def process(self, shareable, fl_ctx):
        dxo = from_shareable(shareable)
        dxo.data = {k: np.asarray(v) + np.random.laplace(0.0, 1.0, np.shape(v)) for k, v in dxo.data.items()}
        return dxo.update_shareable(shareable)
'''


def test_a_stated_claim_replaces_the_one_the_adapter_reads(tmp_path):
    from pgc.cli.commands.audit.library import nvflare_system
    from pgc.cli.main import main

    (tmp_path / "my_filters.py").write_text(NOISY_FILTER)
    spec = f"{tmp_path / 'my_filters.py'}:NoisyFilter"
    assert nvflare_system(spec, {}).claim.epsilon == math.inf  # the filter states none: no claim read
    system = nvflare_system(spec, {}, (0.5, 1e-6))  # what pgc audit nvflare SPEC --claim 0.5,1e-6 audits
    assert (system.claim.epsilon, system.claim.delta, system.claim.covers) == (0.5, 1e-6, ("update",))
    assert system.library_record()["readings"][0]["why"].startswith("stated by the user (--claim")
    out = tmp_path / "a.json"
    for bad in ("0", "x", "1,2", "1,0.1,3"):
        with pytest.raises(SystemExit) as refused:
            main(["audit", "nvflare", spec, "--claim", bad, "--out", str(out)])
        assert refused.value.code == 2 and not out.exists()
