"""The compiled core's packed-array layout and its numba cache key."""

import os

import numpy as np
import pytest

from pgc.a3c import kernel
from pgc.a3c.kernel import _cache, layout


def test_index_constants_are_the_positions_of_the_named_fields():
    assert kernel.I_WORKERS == layout.INT_SETTINGS.index("workers")
    assert kernel.F_MECH_SCALE == layout.FLOAT_SETTINGS.index("mech_scale")
    assert kernel.C_PENDING_BAD == layout.COUNTERS.index("pending_bad")
    assert kernel.R_NONFINITE == layout.RECORD_INTS.index("nonfinite")
    assert kernel.L_WAITING == layout.LANE_INTS.index("waiting")
    assert (kernel.N_COUNTERS, kernel.N_ICFG, kernel.N_FCFG, kernel.N_LANE_I, kernel.N_REC_I) == (
        len(layout.COUNTERS),
        len(layout.INT_SETTINGS),
        len(layout.FLOAT_SETTINGS),
        len(layout.LANE_INTS),
        len(layout.RECORD_INTS),
    )
    for prefix, names in [("C", layout.COUNTERS), ("I", layout.INT_SETTINGS), ("F", layout.FLOAT_SETTINGS)]:
        indices = sorted(getattr(layout, f"{prefix}_{name.upper()}") for name in names)
        assert indices == list(range(len(names)))  # one slot per field, none shared


def test_pack_places_values_by_name_and_refuses_missing_or_unknown_fields():
    names = ("a", "b", "c")
    np.testing.assert_array_equal(layout.pack(names, {"c": 3, "a": 1, "b": 2}, np.int64), [1, 2, 3])
    with pytest.raises(ValueError, match=r"missing \['b'\]"):
        layout.pack(names, {"a": 1, "c": 3}, np.int64)
    with pytest.raises(ValueError, match=r"unknown \['d'\]"):
        layout.pack(names, {"a": 1, "b": 2, "c": 3, "d": 4}, np.int64)


def test_cache_key_covers_every_source_the_compiled_functions_read(tmp_path, monkeypatch):
    files = [tmp_path / "physics.py", tmp_path / "trial.py"]
    for f in files:
        f.write_text("x = 1\n")
    monkeypatch.setattr(_cache, "source_files", lambda: [str(f) for f in files])
    before = _cache.package_stamp()
    files[0].write_text("x = 2\n")  # an edit in a module other than the compiled function's own
    assert _cache.package_stamp() != before


def test_compiled_functions_carry_the_package_wide_key():
    sources = {path.rsplit("/", 1)[-1] for path in _cache.source_files()}
    assert {"layout.py", "network.py", "physics.py", "mechanism_twins.py", "trial.py", "env.py"} <= sources
    for function in (kernel.run_trial, kernel.privatize_row, kernel.episode_gradient):
        locator = function._cache._impl.locator  # numba's cache locator of the dispatcher
        assert type(locator).__name__.startswith("PackageStamped")
        assert locator.get_source_stamp() == _cache.package_stamp()
        # named by the sources' hash, not their location: a checkout and an installed wheel share one cache
        folder = locator.get_cache_path()
        assert os.path.basename(folder) == "pgc-a3c-kernel-" + _cache.package_stamp().hex()[:32]
        assert os.path.dirname(_cache.__file__) not in folder
